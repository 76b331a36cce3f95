//! The page of results edited through their types: limits ignored or applied, machine facts
//! not recorded, a spec edited since, a run that never loaded; and files of another format or
//! shape, refused by name.

use headroom_results::{Failure, LoadAverage, RunLimits};
use headroom_test_support::fixtures::RELAY_RESULTS;

use super::*;

/// `limits` as the results file records them.
fn limits(limits: serde_json::Value) -> Option<RunLimits> {
    Some(serde_json::from_value(limits).expect("limits as recorded"))
}

/// The relay fixture with `value` at `pointer` (a JSON pointer, the place an error names).
fn broken_at(pointer: &str, value: serde_json::Value) -> String {
    let mut results: serde_json::Value = serde_json::from_str(RELAY_RESULTS).expect("JSON");
    let place = results
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("the fixture has no {pointer}"));
    *place = value;
    results.to_string()
}

/// Issue 14: runs whose limits were ignored (--ignore-limits) say so on the page, in plain
/// words, under each phase and among the caveats.
#[test]
fn limits_that_were_ignored_are_on_the_page() {
    let page = page_of_edited_results("limits-ignored", |results| {
        each_run(results, |run| {
            run.limits = Some(RunLimits::Ignored);
        });
    });
    assert!(
        page.contains("- The spec's `[target] limits` were ignored (--ignore-limits): the target ran with the whole machine's CPUs and memory, not the instance size the limits describe. Read every figure as this machine's."),
        "{page}"
    );
    assert!(
        page.contains("`[target] limits` were ignored (--ignore-limits): measured with the whole machine, not the instance size."),
        "{page}"
    );
}

/// Issue 14: a phase measured in a cgroup says in what shape, and the worst throttling.
#[test]
fn the_shape_a_phase_was_measured_in_is_on_the_page() {
    let mut share = 0;
    let page = page_of_edited_results("limits-applied", |results| {
        each_run(results, |run| {
            share += 10;
            run.limits = limits(serde_json::json!({
                "status": "applied", "cgroup": "v1", "cpus": 0.5, "memory_bytes": 1073741824u64,
                "swap_off": true, "pinned_cpus": "1", "cpu_periods": 100, "throttled_periods": share,
                "throttled_s": 1.0, "memory_peak_bytes": 1048576, "oom_kills": 0
            }));
        });
    });
    assert!(
        page.contains("Measured in 0.5 CPU, 1GiB memory, no swap (cgroup v1, pinned to cores 1); the CPU quota stopped the target in up to "),
        "{page}"
    );
    assert!(!page.contains("were ignored"), "{page}");
    // Memory alone: no CPU quota, so nothing is said of throttling.
    let page = page_of_edited_results("limits-memory", |results| {
        each_run(results, |run| {
            run.limits = limits(serde_json::json!({
                "status": "applied", "cgroup": "v2", "memory_bytes": 268435456u64,
                "swap_off": false, "cpu_periods": 0, "throttled_periods": 0,
                "throttled_s": 0.0, "oom_kills": 0
            }));
        });
    });
    assert!(
        page.contains("\nMeasured in 256MiB memory (cgroup v2).\n"),
        "{page}"
    );
    assert!(!page.contains("CPU quota"), "{page}");
}

/// A results file that does not record the machine's cores or memory gets a page that says
/// so, never "0 logical cores, 0 B of RAM".
#[test]
fn machine_facts_that_were_not_recorded_are_not_zero() {
    let page = page_of_edited_results("unrecorded", |results| {
        results.environment.logical_cores = None;
        results.environment.memory_bytes = None;
    });
    assert!(
        page.contains("an unrecorded number of logical cores, an unrecorded amount of RAM"),
        "{page}"
    );
}

/// Results of an earlier version of the spec render with one note saying so (the page's own
/// plan read the results too and once said it a second time).
#[test]
fn results_of_an_edited_spec_are_noted_once() {
    let (_, stderr, path) = render_edited("edited-spec", |results| {
        results.spec.hash = "an earlier version".to_owned();
    });
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("changed since"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].starts_with(&format!("warning: reading {path}, run on ")),
        "{stderr}"
    );
    assert!(
        said[0].ends_with(
            "from a different spec (examples/relay.toml changed since they were written)"
        ),
        "{stderr}"
    );
}

/// A run that ended before its load (never ready) measured neither the generator nor the load
/// average: its zeros do not become the page's lowest figures.
#[test]
fn a_run_that_never_loaded_adds_no_zeros() {
    let page = page_of_edited_results("never-loaded", |results| {
        let run = &mut results.phases[0].points[0].runs[0];
        run.failure = Some(Failure::NeverReady {
            waited_s: 30.0,
            check: "GET /healthz".to_owned(),
            stderr_tail: Vec::new(),
        });
        run.scenarios.clear();
        run.load_average = LoadAverage { min: 0.0, max: 0.0 };
        run.generator = serde_json::from_value(serde_json::json!({
            "schedule_lag_p99_ms": 0.0, "cpu_cores": 0.0, "cores_available": 0, "bound": false
        }))
        .expect("a generator that measured nothing");
    });
    // The fixture's other runs: load average 0.96 to 1.33, generator 0.0034 to 0.013 cores.
    assert!(
        page.contains("The 1-minute load average was between 1.0 and 1.3 during the runs."),
        "{page}"
    );
    assert!(
        page.contains("The load generator used 0.00 to 0.01 of the 2 cores it could use"),
        "{page}"
    );
    assert!(page.contains("1 of 12 runs failed"), "{page}");
}

/// Issue 13: results are read through their types. A file of another format is named as one
/// (both versions), and a field that does not fit is named by its place, by `plan` and
/// `render` alike; nothing renders blanks.
#[test]
fn results_of_another_format_or_shape_are_refused_by_name() {
    let dir = scratch("other-format");
    // Files no headroom writes, so broken at a place, not edited through their types.
    let other_format = written(&dir, &broken_at("/format", 3.into()));
    let other_format_arg = other_format.display().to_string();
    let (code, _, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &other_format_arg,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: {other_format_arg}: a results file of format 3, and this headroom reads formats 1 and 2: re-run `headroom run` with this headroom, or read it with the headroom that wrote it\n"
        )
    );
    let place = "/phases/0/points/1/runs/0/process/steady/rss_bytes";
    let misshapen = written(&dir, &broken_at(place, "lots".into()));
    let misshapen_arg = misshapen.display().to_string();
    let out = dir.join("page.md").display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &misshapen_arg,
        "--out",
        &out,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {misshapen_arg}: results of format 1 with a field that does not fit at `phases[0].points[1].runs[0].process.steady.rss_bytes`: invalid type: string \"lots\", expected u64"
        )),
        "{stderr}"
    );
    assert!(!dir.join("page.md").exists());
    let _ = std::fs::remove_dir_all(dir);
}
