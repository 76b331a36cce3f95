//! What a spec cannot mean is refused, or warned of, at validate: keys that would do nothing,
//! names, a target a phase cannot keep, units, limits and sizes no machine should run.

use super::*;

/// Issue 11, items 8–10: every key that is accepted and not carried out says so at validate:
/// `ready.tcp = false` (E010), a region the
/// table does not price (E037), AWS lines in a Hetzner plan (W006), a budget in dollars for a
/// plan in euros (E021), and a readiness pattern that is not a regex (E036).
#[test]
fn keys_that_would_do_nothing_are_refused_or_warned() {
    let spec = spec_with(
        "ready = { tcp = false }",
        "\n[plan]\nprovider = \"hetzner\"\nregion = \"us-west-2\"\ninstances = [\"CX23\"]\nebs_gb = 40\negress_gb = 100\nbudget_usd_per_month = 50",
    );
    let compilation = compile(&spec);
    let found = codes(&compilation);
    for code in ["E010", "E037", "W006", "E021"] {
        assert!(found.contains(code), "{code} not in {found:?}");
    }
    let lines: Vec<&str> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::LineNotPriced)
        .map(|d| d.pointer.as_str())
        .collect();
    assert_eq!(lines, ["/plan/ebs_gb", "/plan/egress_gb"]);
    let pattern = compile(&spec_with("ready = { log = \"listening (on\" }", ""));
    assert_eq!(codes(&pattern), BTreeSet::from(["E036"]));
}

/// Names that figures, files and `--phase` are made of are checked like variables': a
/// scenario with a dot in its name would split its figures (`my.api.latency.p95` reads as the
/// scenario `my`), an empty one would leave `.latency.p95`; a phase or series named with
/// spaces or capitals is refused too (E032), each at its name, in one report, in the order they are written.
#[test]
fn scenario_phase_and_series_names_are_checked() {
    let spec = spec_with(
        "",
        "\n[measure]\nseries = [{ name = \"Pg-Connections\", metric = \"pg\" }]",
    )
    .replace("name = \"browse\"", "name = \"my.api\"")
    .replace("name = \"load\"", "name = \"Load Test\"");
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert_eq!(
        found,
        [
            ("E032", "/scenario/0/name"),
            ("E032", "/phase/0/name"),
            ("E032", "/measure/series/0/name"),
        ],
        "{:?}",
        compilation.diagnostics
    );
    let messages: Vec<&str> = compilation
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "\"my.api\" is not a valid scenario name",
            "\"Load Test\" is not a valid phase name",
            "\"Pg-Connections\" is not a valid series name",
        ]
    );
}

/// `process = "per-phase"` keeps one target for a phase: accepted when every point would
/// start the same target, refused (E045) where a swept variable reaches the target or a step
/// run once a phase, at the key it reaches; a step run once a phase needs such a target.
#[test]
fn one_target_a_phase_is_kept_only_when_its_points_agree() {
    let once = "[[target.setup]]\nname = \"sign-up\"\ncommand = [\"true\"]\nper = \"phase\"";
    let kept = compile(&spec_with(&format!("process = \"per-phase\"\n{once}"), ""));
    assert!(kept.diagnostics.is_empty(), "{:?}", kept.diagnostics);
    let matrix = kept.matrix.expect("a plan");
    assert_eq!(matrix.phases[0].process, ProcessMode::PerPhase);
    assert_eq!(
        matrix.phases[0].points[2].target.setup[0].per,
        StepScope::Phase
    );

    // `users` is swept into the command and into the step run once a phase.
    let swept = spec_with(
        "process = \"per-phase\"\nenv = { USERS = \"{users}\" }\n[[target.setup]]\nname = \"sign-up\"\ncommand = [\"sign-up\", \"{users}\"]\nper = \"phase\"\n[[target.setup]]\nname = \"warm\"\ncommand = [\"warm\", \"{users}\"]",
        "",
    );
    let refused = compile(&swept);
    assert!(refused.matrix.is_none());
    let found = codes_at(&refused);
    assert_eq!(
        found,
        [
            ("E045", "/target/env/USERS"),
            ("E045", "/target/setup/0/command/1")
        ],
        "the step at every point may vary: {:?}",
        refused.diagnostics
    );
    let message = &refused.diagnostics[0].message;
    assert!(
        message.contains("phase `load`") && message.contains("`env`"),
        "{message}"
    );
    assert_eq!(
        refused.diagnostics[0].label.as_deref(),
        Some("not the same at users = 10 and at users = 20")
    );

    // Once a phase, with a fresh target per point: no target lives for the phase.
    let orphan = compile(&spec_with(once, ""));
    let found = codes_at(&orphan);
    assert_eq!(found, [("E045", "/target/setup/0/per")]);
}

/// `people_per_unit = "{people}"` takes the variable's value: the plan carries 4, not a
/// variable every reader would read as 1. A variable a phase varies is refused.
#[test]
fn people_per_unit_takes_its_variables_value() {
    let compilation = compile(&spec_with("", "\n[plan]\ninstances = [\"t4g.medium\"]"));
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let plan = compilation.matrix.expect("a plan");
    assert_eq!(plan.bench.people_per_unit, 4);
    let swept = spec_with("", "\n[plan]\ninstances = [\"t4g.medium\"]").replace(
        "people_per_unit = \"{people}\"",
        "people_per_unit = \"{users}\"",
    );
    let compilation = compile(&swept);
    assert!(
        compilation
            .diagnostics
            .iter()
            .any(|d| d.code == Code::ConflictingSettings && d.pointer == "/bench/people_per_unit"),
        "{:?}",
        compilation.diagnostics
    );
}

/// Issue 11, item 13: the units variable may start at 0 (the baseline point, no load) and may
/// be a rate ("how many requests per second one box answers"). 0 stays refused for a count
/// that is not the units.
#[test]
fn units_may_be_a_rate_and_start_at_zero() {
    let baseline = spec_with("", "").replace("users = [10, 20, 40]", "users = [0, 10, 20]");
    let compilation = compile(&baseline);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let plan = compilation.matrix.expect("a plan");
    assert_eq!(plan.phases[0].points.len(), 3);
    let not_units = baseline.replace("units = \"users\"", "");
    assert!(codes(&compile(&not_units)).contains("E026"));
    let rate = r#"[bench]
name = "rate"
unit = "req/s"

[vars]
rate = "100/s"

[target]
command = ["{headroom}", "demo-target", "--port", "{port}"]

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/" }]

[[phase]]
name = "rate"
vary = { rate = ["100/s", "400/s", "1600/s"] }
hold = "10s"

[capacity]
units = "rate"
"#;
    let compilation = compile(rate);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
}

/// Issue 12: `[capacity] headroom` of 100 % or more leaves nothing to plan with.
#[test]
fn a_headroom_of_all_the_ceiling_is_refused() {
    let spec = spec_with("", "headroom = \"150%\"");
    let compilation = compile(&spec);
    let found: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.pointer == "/capacity/headroom")
        .collect();
    assert_eq!(found.len(), 1, "{:?}", compilation.diagnostics);
    assert_eq!(found[0].code, Code::OutOfRange);
    assert!(
        compile(&spec_with("", "headroom = \"25%\""))
            .diagnostics
            .is_empty()
    );
}

/// Issue 12, bounded by construction: a rate of 10¹²/s, ten million peers, a 1 GiB message and
/// a 10,000 × 1,000 product of ranges are refused at validate (E038); the product is counted
/// before anything is expanded.
#[test]
fn what_no_machine_should_run_is_refused_before_expanding() {
    let rooms = |extra: &str| {
        format!(
            r#"[bench]
name = "big"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "chat"
kind = "rooms"
url = "ws://127.0.0.1:{{port}}/rooms/{{room}}"
{extra}

[[phase]]
name = "load"
hold = "10s"
"#
        )
    };
    let found = |source: &str| -> Vec<String> {
        compile(source)
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::TooLarge)
            .map(|d| d.message.clone())
            .collect()
    };
    let peers = found(&rooms("rooms = 10\npeers_per_room = 1000000\nidle = true"));
    assert_eq!(
        peers,
        ["scenario `chat` opens 10,000,000 sockets in one run: at most 200,000"]
    );
    let size = found(&rooms(
        "rooms = 1\npeers_per_room = 2\nsend = { rate = \"1/s\", per = \"room\", size = \"1GiB\" }",
    ));
    assert_eq!(
        size,
        ["scenario `chat` sends messages of 1GiB: at most 16MiB"]
    );
    let rate = found(
        r#"
[bench]
name = "fixture"

[target]
command = ["{headroom}", "demo-target", "--port", "{port}"]

[[scenario]]
name = "browse"
kind = "http"
executor = "constant-arrival-rate"
rate = "1000000000000/s"
requests = [{ url = "http://127.0.0.1:{port}/" }]

[[phase]]
name = "load"
hold = "2s"
"#,
    );
    assert_eq!(rate.len(), 1, "{rate:?}");
    assert_eq!(
        rate,
        [
            "scenario `browse` at 1000000000000/s plans 2,000,000,000,000 requests in one run: at most 50,000,000"
        ]
    );
    let product = spec_with("env = { X = \"{x}\" }", "")
        .replace("[vars]\nusers = 10", "[vars]\nusers = 10\nx = 1")
        .replace(
            "vary = { users = [10, 20, 40] }",
            "vary = { users = { from = 1, to = 10000, step = 1 }, x = { from = 1, to = 1000, step = 1 } }",
        );
    let product = found(&product);
    assert_eq!(
        product,
        ["phase `load` has 10,000,000 points (10,000 `users` × 1,000 `x`): at most 10,000 can run"]
    );
}

/// Issue 12, unclear errors: a 0 s hold is blamed on the hold (not on the rate), and a 0 s
/// ready timeout is refused at validate, not found at run time.
#[test]
fn zero_holds_and_zero_timeouts_are_blamed_where_they_are() {
    let spec =
        spec_with("", "").replace("stages = { hold = \"10s\" }", "stages = { hold = \"0s\" }");
    let compilation = compile(&spec);
    let found: Vec<(Code, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code, d.pointer.as_str()))
        .collect();
    assert!(
        found.contains(&(Code::OutOfRange, "/scenario/0/stages/hold")),
        "{found:?}"
    );
    assert!(
        !found
            .iter()
            .any(|(code, _)| *code == Code::RateRoundsToZero),
        "{found:?}"
    );
    let timeout = compile(&spec_with(
        "ready = { http = \"/healthz\", timeout = \"0s\" }",
        "",
    ));
    assert!(
        timeout
            .diagnostics
            .iter()
            .any(|d| d.code == Code::OutOfRange && d.pointer == "/target/ready/timeout"),
        "{:?}",
        timeout.diagnostics
    );
}

/// Issue 41: scenarios of one run hold their loads together over one hold. Two holds of
/// their own that differ cannot: refused naming both, at the second's; a phase's `hold`
/// gives both the same and compiles.
#[test]
fn scenarios_whose_holds_cannot_overlap_are_refused() {
    let second = r#"
[[scenario]]
name = "writers"
kind = "http"
executor = "constant-arrival-rate"
rate = "10/s"
requests = [{ url = "http://127.0.0.1:{port}/" }]
stages = { ramp_up = "5s", hold = "30s" }
"#;
    let spec = spec_with("", "").replace("[[phase]]", &format!("{second}\n[[phase]]"));
    let refused = compile(&spec);
    let found: Vec<(Code, &str, &str)> = refused
        .diagnostics
        .iter()
        .map(|d| (d.code, d.pointer.as_str(), d.message.as_str()))
        .collect();
    assert!(
        found.contains(&(
            Code::HoldsApart,
            "/scenario/1/stages/hold",
            "scenarios `browse` and `writers` of phase `load` cannot hold their loads together: `browse` holds 10s, `writers` holds 30s (at users = 10)"
        )),
        "{found:?}"
    );
    let one_hold = spec.replace("repeats = 3", "repeats = 3\nhold = \"20s\"");
    let compiled = compile(&one_hold);
    assert!(
        !compiled
            .diagnostics
            .iter()
            .any(|d| d.code == Code::HoldsApart),
        "{:?}",
        compiled.diagnostics
    );
    assert!(compiled.matrix.is_some(), "{:?}", compiled.diagnostics);
}

/// The run matrix is part of the results contract: what `compile --json` and the results
/// file write reads back into the same plan, for every example.
#[test]
fn the_resolved_plan_reads_back_as_written() {
    for name in ["relay", "chat", "notes-api", "pad"] {
        let plan = compile(&example(name))
            .matrix
            .unwrap_or_else(|| panic!("{name} compiles"));
        let written = serde_json::to_value(&plan).expect("serialises");
        let read: headroom_matrix::RunMatrix =
            serde_json::from_value(written.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            serde_json::to_value(&read).expect("serialises"),
            written,
            "{name}"
        );
    }
}

/// `cpu_target` is a share of the vCPUs: 0 % or over 100 % is refused where it is written.
#[test]
fn a_cpu_target_outside_its_share_is_refused() {
    for written in ["0%", "120%"] {
        let source = example("relay").replace(
            "[capacity]\n",
            &format!("[capacity]\ncpu_target = \"{written}\"\n"),
        );
        let compilation = compile(&source);
        let found = compilation
            .diagnostics
            .iter()
            .find(|d| d.pointer == "/capacity/cpu_target")
            .unwrap_or_else(|| panic!("{written}: {:?}", compilation.diagnostics));
        assert_eq!(found.code.as_str(), "E005", "{found:?}");
        assert!(found.message.contains(written), "{}", found.message);
    }
    let source = example("relay").replace("[capacity]\n", "[capacity]\ncpu_target = \"50%\"\n");
    let matrix = compile(&source).matrix.expect("a matrix");
    assert_eq!(matrix.capacity.cpu_target.fraction(), 0.5);
}

/// Issue 14: `[target] limits` no instance has (no CPU, a few MiB) are refused where they are
/// written, at the point they take that value; sound ones, pinned, compile clean.
#[test]
fn limits_no_instance_has_are_refused() {
    let refused = compile(&spec_with("limits = { cpus = 1, memory = \"1MiB\" }", ""));
    assert_eq!(refused.diagnostics.len(), 1, "{:?}", refused.diagnostics);
    let memory = refused
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/target/limits/memory")
        .expect("the memory refused");
    assert_eq!(memory.code, Code::OutOfRange);
    assert!(
        memory
            .message
            .starts_with("`memory = \"1MiB\"` is less than a server starts in: at least 16MiB"),
        "{}",
        memory.message
    );
    let zero = compile(&spec_with("limits = { cpus = 0.001 }", ""));
    let cpus = zero
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/target/limits/cpus")
        .expect("the quota refused");
    assert_eq!(
        cpus.message,
        "`cpus = 0.001` is not a CPU quota: 0.01 to 1024 CPUs (at users = 10)"
    );
    let sound = compile(&spec_with(
        "limits = { cpus = 0.5, memory = \"512MiB\", pin = true }",
        "",
    ));
    assert!(sound.diagnostics.is_empty(), "{:?}", sound.diagnostics);
}
