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

/// Issue 46: `[plan] scale_cores` runs the ceiling phase once more per core count, each
/// point's server pinned to that many whole cores (its memory limit kept), and each probe of
/// a searched phase keeps the pinning. A count of 0, one listed twice, or no ceiling phase
/// is refused where it is written.
#[test]
fn scale_cores_runs_the_ceiling_phase_pinned_at_each_count() {
    let spec = spec_with(
        "limits = { memory = \"1GiB\" }",
        "ceiling_phase = \"load\"\n\n[plan]\ninstances = [\"c7g.large\"]\nscale_cores = [1, 3]",
    );
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = compilation.matrix.expect("a matrix");
    let names: Vec<&str> = matrix.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["load", "load@1-core", "load@3-cores"]);
    for (name, cores) in [("load@1-core", 1), ("load@3-cores", 3)] {
        let phase = matrix
            .phases
            .iter()
            .find(|p| p.name == name)
            .expect("the phase");
        let scaled = phase.scales.as_ref().expect("scaled");
        assert_eq!((scaled.of_phase.as_str(), scaled.cores), ("load", cores));
        for point in &phase.points {
            let limits = point.target.limits.as_ref().expect("limits");
            assert_eq!(limits.cpus, Some(f64::from(cores)));
            assert!(limits.pin);
            assert_eq!(
                limits.memory.map(|m| m.to_string()).as_deref(),
                Some("1GiB")
            );
        }
    }
    // Three repeats of three points in each of three phases.
    assert_eq!(matrix.runs.len(), 27);
}

/// A searched ceiling phase at a core count: its probes, made as the search goes, keep the
/// pinning.
#[test]
fn a_probe_at_a_core_count_is_pinned() {
    let source = r#"
[bench]
name = "searched"
unit = "req/s"

[vars]
rate = "100/s"

[target]
command = ["{headroom}", "demo-target", "--port", "{port}", "--request-cpu-each", "2ms"]

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/api/groups/1/notes" }]

[[phase]]
name = "rate"
hold = "3s"
vary = { rate = { search = { from = "100/s", to = "6400/s" } } }

[slo]
p95 = "api.latency.p95 < 100ms"

[capacity]
units = "rate"
ceiling_phase = "rate"

[plan]
instances = ["c7g.large"]
scale_cores = [1]
"#;
    let searched = compile(source);
    assert!(
        searched
            .diagnostics
            .iter()
            .all(|d| d.severity() != Severity::Error)
    );
    let matrix = searched.matrix.expect("a matrix");
    let phase = matrix
        .phases
        .iter()
        .find(|p| p.name == "rate@1-core")
        .expect("the ceiling phase at 1 core");
    let written: headroom_spec::Spec = toml::from_str(source).expect("the spec");
    let probe =
        headroom_compiler::matrix::probe_point(phase, &written.target, 4, 300.0).expect("a probe");
    let limits = probe.target.limits.expect("the probe is pinned too");
    assert_eq!((limits.cpus, limits.pin), (Some(1.0), true));
}

/// `scale_cores` with no ceiling phase, a count of 0 or one listed twice is refused where it
/// is written.
#[test]
fn scale_cores_refuses_what_it_cannot_run() {
    let refused = compile(&spec_with(
        "",
        "\n[plan]\ninstances = [\"c7g.large\"]\nscale_cores = [0, 2, 2]",
    ));
    let at = |pointer: &str| {
        refused
            .diagnostics
            .iter()
            .find(|d| d.pointer == pointer)
            .unwrap_or_else(|| panic!("nothing at {pointer}: {:?}", refused.diagnostics))
            .code
    };
    assert_eq!(at("/plan/scale_cores"), Code::MissingSetting);
    assert_eq!(at("/plan/scale_cores/0"), Code::OutOfRange);
    assert_eq!(at("/plan/scale_cores/2"), Code::OutOfRange);
    assert!(refused.matrix.is_none());
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
