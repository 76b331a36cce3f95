//! Targets in an instance's shape: emulated instances for the ceiling phase, and stacks that
//! start in order or are refused.

use super::*;

/// Issue 14: `[plan] emulate` runs the ceiling phase once more per priced instance, each point
/// held to the instance's vCPUs and memory less the reserve; a burstable instance at its
/// baseline too. It needs a ceiling phase and a target headroom starts.
#[test]
fn emulate_runs_the_ceiling_phase_in_each_instances_shape() {
    let spec = spec_with(
        "",
        "ceiling_phase = \"load\"\nreserve = \"512MiB\"\n\n[plan]\ninstances = [\"c7g.medium\", \"t4g.small\"]\nemulate = true",
    );
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = compilation.matrix.expect("a matrix");
    let names: Vec<&str> = matrix.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "load",
            "load@c7g.medium",
            "load@t4g.small",
            "load@t4g.small-baseline"
        ]
    );
    let shape = |name: &str| {
        let phase = matrix
            .phases
            .iter()
            .find(|p| p.name == name)
            .expect("the phase");
        let emulated = phase.emulates.as_ref().expect("emulated");
        let limits = phase.points[0].target.limits.as_ref().expect("limits");
        assert_eq!(limits.cpus, Some(emulated.cpus));
        assert_eq!(limits.memory, Some(emulated.memory));
        assert_eq!(phase.points.len(), 3);
        (
            emulated.cpus,
            emulated.memory.to_string(),
            emulated.baseline,
        )
    };
    assert_eq!(shape("load@c7g.medium"), (1.0, "1536MiB".to_owned(), false));
    assert_eq!(shape("load@t4g.small"), (2.0, "1536MiB".to_owned(), false));
    // t4g.small sustains 20 % of each of its 2 vCPUs.
    assert_eq!(
        shape("load@t4g.small-baseline"),
        (0.4, "1536MiB".to_owned(), true)
    );
    // Three repeats of three points in each of four phases.
    assert_eq!(matrix.runs.len(), 36);
    let total: u64 = matrix.phases.iter().map(|p| p.estimated.as_micros()).sum();
    assert_eq!(matrix.estimated.as_micros(), total);

    let without = compile(&spec_with(
        "",
        "\n[plan]\ninstances = [\"c7g.medium\"]\nemulate = true",
    ));
    let missing = without
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/plan/emulate")
        .expect("refused");
    assert_eq!(missing.code, Code::MissingSetting);
}

/// A stack compiles to its services in start order, each point's steps with its variables
/// filled; `{port}` and `{port.NAME}` are left for the runner.
#[test]
fn a_stack_starts_in_order_with_its_steps_filled() {
    let compilation = compile(&example("notes-api-postgres"));
    assert_eq!(compilation.diagnostics, []);
    let plan = compilation.matrix.expect("plan");
    let tier = &plan.phases[0];
    let point = &tier.points[2];
    let target = &point.target;
    let names: Vec<&str> = target.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["db", "api"]);
    assert_eq!(target.front.as_deref(), Some("api"));
    assert!(target.is_started());
    let api = &target.services[1];
    assert!(
        api.command.contains(&"--pool".to_owned()) && api.command.contains(&"10".to_owned()),
        "{:?}",
        api.command
    );
    assert!(
        api.command
            .iter()
            .any(|a| a == "postgres://headroom@127.0.0.1:{port.db}/postgres")
    );
    let limits = api.limits.as_ref().expect("api limits");
    assert_eq!(limits.cpus, Some(0.5));
    // The tier's value is in the seed step at this point: 100,000 notes.
    let seed = target.setup[0].command.last().expect("sql");
    assert!(seed.contains("generate_series(1, 100000)"), "{seed}");
    assert_eq!(target.teardown[0].name, "clean-up");
}

/// A stack with a mistake of each kind: an unknown service and a service after itself, an
/// unknown port placeholder, no front, a step with no time, series read two ways or none.
const BROKEN_STACK: &str = r#"
[bench]
name = "x"

[target]
ready = { http = "/healthz" }

[target.services.db]
command = ["db", "--port", "{port}"]
after = ["cache"]

[target.services.api]
command = ["api", "--db", "{port.dbb}"]
after = ["api"]

[[target.setup]]
name = "seed"
command = ["seed", "{port.db}"]
timeout = "0s"

[[scenario]]
name = "visit"
kind = "http"
executor = "constant-vus"
vus = 1
requests = [{ url = "http://127.0.0.1:{port.api}/" }]

[measure]
series = [
  { name = "both", metric = "m", command = ["echo", "1"] },
  { name = "neither" },
  { name = "scraped", metric = "m", every = "2s" },
]

[[phase]]
name = "p"
hold = "2s"
repeats = 3
"#;

/// Each mistake of a stack is named where it was written.
#[test]
fn a_stack_that_cannot_start_is_refused() {
    let source = BROKEN_STACK;
    let compilation = compile(source);
    let found: Vec<(&str, &str, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_str(), d.message.as_str()))
        .collect();
    let expect = [
        (
            "E044",
            "/target/services/db/after/0",
            "service `db` starts after `cache`, which is no service",
        ),
        (
            "E044",
            "/target/services/api/after/0",
            "service `api` starts after itself",
        ),
        (
            "E012",
            "/target/services/api/command/2",
            "unknown placeholder `{port.dbb}`",
        ),
        (
            "E044",
            "/target/services",
            "a stack of several services and no `front`",
        ),
        (
            "E044",
            "/target/ready",
            "`ready` in [target] has no effect on a stack",
        ),
        (
            "E005",
            "/target/setup/0/timeout",
            "`timeout = \"0s\"` gives the step no time to run",
        ),
        (
            "E012",
            "/scenario/0/requests/0/url",
            "unknown placeholder `{port.api}`",
        ),
        (
            "E021",
            "/measure/series/0/command",
            "series `both` has both `metric` and `command`",
        ),
        (
            "E022",
            "/measure/series/1",
            "series `neither` has neither `metric` nor `command`",
        ),
        (
            "E021",
            "/measure/series/2/every",
            "series `scraped` has `every` and no `command`",
        ),
    ];
    for expected in expect {
        assert!(
            found.contains(&expected),
            "missing {expected:?} in {found:#?}"
        );
    }
    assert!(compilation.matrix.is_none());
}
