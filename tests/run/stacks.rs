//! Stacks and kept targets: a stack that fails by service and step, one target kept for a
//! whole phase, a killed run that leaves nothing. Results are read through their types.

use headroom_results::{Exit, Failure, PhaseResults, Results, RunLimits, RunResult, ServiceResult};

use super::*;

/// The db was never ready: the api never started; the db was stopped.
fn assert_db_never_ready(never_ready: &RunResult) {
    // The db was never ready: the api never started; the db was stopped.
    let Some(Failure::Service {
        service: failed,
        failure,
    }) = &never_ready.failure
    else {
        panic!("a service failed: {:?}", never_ready.failure);
    };
    assert_eq!(failed, "db");
    let Failure::NeverReady {
        waited_s,
        stderr_tail,
        ..
    } = failure.as_ref()
    else {
        panic!("never ready: {failure:?}");
    };
    assert!(*waited_s >= 2.0, "{waited_s}");
    assert!(
        stderr_tail.iter().any(|line| line.contains("listening on")),
        "{stderr_tail:?}"
    );
    let db_stopped = service(never_ready, "db").stopped.as_ref();
    assert_eq!(db_stopped.and_then(|s| s.exit.clone()), Some(Exit::Code(0)));
    assert!(!never_ready.services.contains_key("api"));
}

/// The seed step exits 7: its own lines, both streams; no load was sent.
fn assert_seed_step_failed(setup_fails: &RunResult) {
    // The seed step exits 7: its own lines, both streams; no load was sent.
    let Some(Failure::Step {
        step,
        when,
        exit,
        output_tail,
        ..
    }) = &setup_fails.failure
    else {
        panic!("a step failed: {:?}", setup_fails.failure);
    };
    assert_eq!((step.as_str(), when.as_str()), ("seed", "setup"));
    assert_eq!(*exit, Some(Exit::Code(7)));
    let tail = output_tail.join("\n");
    assert!(
        tail.contains("seeding the db on port") && tail.contains("relation"),
        "{tail}"
    );
    assert!(setup_fails.scenarios.is_empty());
    assert_eq!(setup_fails.steps[0].exit, Some(Exit::Code(7)));
}

/// The db dies 1.5 s after it started, during the load: named, with its last line.
fn assert_db_died(dies: &RunResult) {
    // The db dies 1.5 s after it started, during the load: named, with its last line.
    let Some(Failure::Service {
        service: failed,
        failure,
    }) = &dies.failure
    else {
        panic!("a service failed: {:?}", dies.failure);
    };
    assert_eq!(failed, "db");
    let Failure::Died { exit, stderr_tail } = failure.as_ref() else {
        panic!("died: {failure:?}");
    };
    assert_eq!(*exit, Exit::Code(3));
    assert!(stderr_tail.iter().any(|line| line.contains("--exit-after")));
    assert!(scenario(dies, "api").requests > 0);
}

/// The stack that works: both services in order, on their own ports, sampled apart; the
/// run's process is their sum; the api in its own cgroup.
fn assert_whole_stack(whole: &RunResult) {
    // The stack that works: both services started in order, on their own ports, sampled
    // apart; the run's process is their sum.
    assert!(whole.failure.is_none(), "{:?}", whole.failure);
    let (db, api) = (service(whole, "db"), service(whole, "api"));
    assert_ne!(db.port, api.port);
    assert_eq!(whole.port, api.port, "the load goes to the front");
    let rss = |service: &ServiceResult| service.process.steady.map_or(0, |s| s.rss_bytes);
    assert!(
        rss(db) > 1_000_000 && rss(api) > 1_000_000,
        "{db:?} {api:?}"
    );
    let steady = whole.process.steady.expect("the stack's sum");
    assert_eq!(steady.rss_bytes, rss(db) + rss(api));
    assert_eq!(steady.processes, 2);
    assert_eq!(whole.steps[0].exit, Some(Exit::Code(0)));
    // The api's own cgroup; the db, without limits, has none.
    let Some(RunLimits::Applied(limits)) = &api.limits else {
        panic!("the api's limits: {:?}", api.limits);
    };
    assert_eq!(limits.memory_bytes, Some(256 << 20));
    assert!(db.limits.is_none(), "{:?}", db.limits);
}

/// Issue 19: a stack's failures are named after the service or step, with its last lines:
/// a service never ready, a setup step that exits 7, a service that dies mid-point; the stack
/// that works is sampled apart and summed; nothing of any of them is left running.
#[test]
fn a_stack_fails_by_service_and_step_and_leaves_nothing() {
    let (output, results) = run_fixture("stack", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let runs = typed_runs(&results);
    let [never_ready, setup_fails, dies, whole] = runs[..] else {
        panic!("four runs: {runs:?}");
    };
    assert_db_never_ready(never_ready);
    assert_seed_step_failed(setup_fails);
    assert_db_died(dies);
    assert_whole_stack(whole);
    assert!(leftovers("1040B").is_empty(), "{:?}", leftovers("1040B"));
    clean("stack");
}

/// Issue 19, per phase: one target for all a phase's runs. The demo's request counter carries
/// from run to run (the known answer: at every run it is every request the phase's runs so far
/// sent); steps run once a phase around the runs and at every point; each run has its own
/// share of the cgroup's counters. A target killed mid-phase fails its run and ends the phase
/// (the run after it not run); a once-a-phase setup step that fails runs nothing; Ctrl-C stops
/// the phase's target after its teardown; nothing is left running.
#[test]
fn a_target_kept_for_the_phase_serves_its_runs_and_ends_with_it() {
    let (output, results) = run_fixture("per-phase", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("1 of the runs failed and the targets of 2 phases failed"),
        "{}",
        stderr(&output)
    );
    let results = typed(&results);
    the_kept_phase_serves_all_its_runs(&results);

    a_killed_target_ends_its_phase(&results);

    a_failed_setup_runs_nothing(&results);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("failed: setup step `sign-up` failed after")
            && stdout.contains("2 runs not run"),
        "{stdout}"
    );
    assert!(leftovers("1042B").is_empty(), "{:?}", leftovers("1042B"));
    the_page_says_what_each_phase_target_did();

    // Ctrl-C after `kept`'s first run: the run in flight ends, the phase's teardown runs, its
    // target is stopped and said to be stopped early; nothing is left.
    let interrupted = out("per-phase").with_file_name("interrupted.json");
    // A share of the machine while it runs, as every run of headroom here takes.
    let _machine = shared();
    let mut child = start_in_background("per-phase", &interrupted, "1042B");
    let ran_once = || {
        std::fs::read_to_string(&interrupted)
            .ok()
            .and_then(|text| Results::from_json(&text).ok())
            .is_some_and(|results| !typed_runs(&results).is_empty())
    };
    wait_until(Duration::from_secs(30), ran_once);
    send("INT", &child);
    let status = child.wait().expect("headroom ends");
    assert_eq!(status.code(), Some(130));
    let results = typed(&read_results(&interrupted));
    let target = results.phases[0].target.as_ref().expect("a kept target");
    assert!(target.interrupted, "{target:?}");
    assert!(target.failure.is_none(), "{target:?}");
    let stopped = target.stopped.as_ref().and_then(|s| s.exit.clone());
    assert_eq!(stopped, Some(Exit::Code(0)), "{target:?}");
    assert_eq!(target.steps[1].name, "report", "{target:?}");
    assert!(leftovers("1042B").is_empty(), "{:?}", leftovers("1042B"));
    clean("per-phase");
}

/// A phase of the results by name.
fn phase_named<'a>(results: &'a Results, name: &str) -> &'a PhaseResults {
    results
        .phases
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

/// A phase's runs in the order they started.
fn phase_runs(phase: &PhaseResults) -> Vec<&RunResult> {
    let mut runs: Vec<&RunResult> = phase.points.iter().flat_map(|p| p.runs.iter()).collect();
    runs.sort_by_key(|run| run.started_ms);
    runs
}

/// `kept`: four runs on one target, started once and stopped once, the demo's counter carried
/// from run to run, each run its own share of the cgroup's counters.
fn the_kept_phase_serves_all_its_runs(results: &Results) {
    let kept = phase_named(results, "kept");
    let target = kept.target.as_ref().expect("a kept target");
    assert!(target.failure.is_none(), "{target:?}");
    assert_eq!(target.log.as_deref(), Some("logs/results/kept.log"));
    assert!(target.ready_after_s > Some(0.0), "{target:?}");
    let stopped = target.stopped.as_ref().expect("stopped");
    assert_eq!(
        (stopped.signal.as_str(), stopped.exit.clone()),
        ("TERM", Some(Exit::Code(0)))
    );
    let steps: Vec<(&str, &str, Option<Exit>)> = target
        .steps
        .iter()
        .map(|step| (step.name.as_str(), step.when.as_str(), step.exit.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            ("sign-up", "setup", Some(Exit::Code(0))),
            ("report", "teardown", Some(Exit::Code(0)))
        ]
    );
    let kept_runs = phase_runs(kept);
    assert_eq!(kept_runs.len(), 4);
    let mut sent_so_far = 0;
    let mut periods = 0;
    for run in &kept_runs {
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.port, target.port, "every run on the phase's target");
        assert_eq!(run.log.as_deref(), Some("logs/results/kept.log"));
        assert!(run.ready_after_s.is_none() && run.stopped.is_none());
        assert!(
            run.notes
                .iter()
                .any(|n| n.contains("kept for the whole phase")),
            "{:?}",
            run.notes
        );
        let steps: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(steps, ["seed"], "only the step run at every point");
        // The counter carried over: every request the phase has sent so far.
        let api = scenario(run, "api");
        sent_so_far += api.requests + api.outside_hold.as_ref().map_or(0, |r| r.requests);
        assert_eq!(
            run.metrics.steady.get("list_requests"),
            Some(&(sent_so_far as f64)),
            "{:?}",
            run.metrics
        );
        // The run's own share of the cgroup's counters; the peak is the phase's only.
        let Some(RunLimits::Applied(limits)) = &run.limits else {
            panic!("limits applied: {:?}", run.limits);
        };
        assert!(limits.cpu_periods > 0, "{limits:?}");
        assert!(limits.memory_peak_bytes.is_none(), "{limits:?}");
        periods += limits.cpu_periods;
    }
    assert!(sent_so_far >= 240, "{sent_so_far}");
    let Some(RunLimits::Applied(phase_limits)) = &target.limits else {
        panic!("the phase's limits: {:?}", target.limits);
    };
    assert!(phase_limits.cpu_periods >= periods);
    assert!(phase_limits.memory_peak_bytes > Some(0));
    let report = std::fs::read_to_string(
        out("per-phase")
            .parent()
            .expect("a folder")
            .join("logs/results/kept-teardown-report.log"),
    )
    .expect("the teardown's log");
    assert_eq!(report.trim(), "the phase is over");
}

/// `killed`: the second point's setup kills the target; its run fails, the third is not run.
fn a_killed_target_ends_its_phase(results: &Results) {
    let killed = phase_named(results, "killed");
    let killed_runs = phase_runs(killed);
    let [before, died] = killed_runs[..] else {
        panic!("two runs: {killed_runs:?}");
    };
    assert!(before.failure.is_none(), "{:?}", before.failure);
    assert!(
        matches!(died.failure, Some(Failure::Died { .. })),
        "{:?}",
        died.failure
    );
    let target = killed.target.as_ref().expect("a kept target");
    assert!(
        matches!(target.failure, Some(Failure::Died { .. })),
        "{target:?}"
    );
    assert_eq!(target.runs_not_run, 1);
    assert_eq!(target.steps[1].name, "report", "teardown still ran");
}

/// `sign-up-fails`: its once-a-phase setup exits 5: no run, the target stopped.
fn a_failed_setup_runs_nothing(results: &Results) {
    let failed = phase_named(results, "sign-up-fails");
    assert!(phase_runs(failed).is_empty());
    let target = failed.target.as_ref().expect("a kept target");
    let Some(Failure::Step {
        step,
        exit,
        output_tail,
        ..
    }) = &target.failure
    else {
        panic!("a step failed: {:?}", target.failure);
    };
    assert_eq!(
        (step.as_str(), exit.clone()),
        ("sign-up", Some(Exit::Code(5)))
    );
    assert_eq!(
        output_tail[0],
        format!("signing up on port {}", target.port)
    );
    assert_eq!(target.runs_not_run, 2);
    let stopped = target.stopped.as_ref().and_then(|s| s.exit.clone());
    assert_eq!(stopped, Some(Exit::Code(0)), "{target:?}");
}

/// The page says what each phase's target did; a spec without SLOs passes none of them.
fn the_page_says_what_each_phase_target_did() {
    // The page says what each phase's target did; a spec without SLOs passes none of them.
    let results_arg = out("per-phase").display().to_string();
    let page_arg = out("per-phase").with_file_name("page.md");
    let page_out = page_arg.display().to_string();
    let rendered = headroom(
        &[
            "render",
            "tests/fixtures/run/per-phase.toml",
            "--results",
            &results_arg,
            "--out",
            &page_out,
        ],
        &[],
    );
    assert_eq!(rendered.status.code(), Some(0), "{}", stderr(&rendered));
    let page = std::fs::read_to_string(&page_arg).expect("the page");
    for said in [
        "one server kept for each phase's runs; 1 failed; 3 not run.",
        "It was stopped after the phase's last run.",
        "It failed: the target died during the point (exit status 0); 1 run of the phase was not run.",
        "No run of this phase ran: the target kept for it failed before its first run.",
        "a run inherited what the phase's earlier runs left",
    ] {
        assert!(page.contains(said), "{said}\n{page}");
    }
    let kept_rows: Vec<&str> = page
        .lines()
        .filter(|line| line.starts_with("| rate = "))
        .collect();
    assert!(
        kept_rows.iter().all(|row| !row.ends_with("| pass |")),
        "{kept_rows:?}"
    );
    assert!(kept_rows[0].ends_with("| – |"), "{kept_rows:?}");
}

/// Issue 19: headroom killed with SIGKILL mid-load leaves nothing of a stack running: not the
/// services' groups, not their cgroups, not a server one of them started in a session of its
/// own (out of its process group, as PostgreSQL's backends are).
#[test]
fn a_killed_run_leaves_nothing_of_its_stack() {
    let _machine = shared();
    let out = fresh_out("stack-killed");
    let mut child = start_in_background("stack-killed", &out, "1041B");
    // Both services up (the api starts once the db is ready), and the guard has seen the tree.
    wait_until(Duration::from_secs(30), || leftovers("1041B").len() >= 3);
    let running = leftovers("1041B");
    assert!(running.len() >= 3, "{running:?}");
    std::thread::sleep(Duration::from_secs(2));
    send("KILL", &child);
    let _ = child.wait();
    wait_until(Duration::from_secs(5), || leftovers("1041B").is_empty());
    assert!(leftovers("1041B").is_empty(), "{:?}", leftovers("1041B"));
    clean("stack-killed");
}
