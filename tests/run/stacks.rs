//! Stacks and kept targets: a stack that fails by service and step, one target kept for a
//! whole phase, a killed run that leaves nothing.

use super::*;

/// Issue 19: a stack's failures are named after the service or step, with its last lines:
/// a service never ready, a setup step that exits 7, a service that dies mid-point; the stack
/// that works is sampled apart and summed; nothing of any of them is left running.
#[test]
fn a_stack_fails_by_service_and_step_and_leaves_nothing() {
    let (output, results) = run_fixture("stack", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let runs = runs(&results);
    let [never_ready, setup_fails, dies, whole] = runs[..] else {
        panic!("four runs: {runs:?}");
    };
    // The db was never ready: the api never started; the db was stopped.
    let failure = &never_ready["failure"];
    assert_eq!(failure["kind"], "service", "{failure}");
    assert_eq!(failure["service"], "db");
    assert_eq!(failure["failure"]["kind"], "never_ready");
    assert!(common::number(&failure["failure"]["waited_s"]) >= 2.0);
    assert!(
        failure["failure"]["stderr_tail"]
            .to_string()
            .contains("listening on"),
        "{failure}"
    );
    assert_eq!(never_ready["services"]["db"]["stopped"]["exit"]["code"], 0);
    assert!(never_ready["services"].get("api").is_none());
    // The seed step exits 7: its own lines, both streams; no load was sent.
    let failure = &setup_fails["failure"];
    assert_eq!(failure["kind"], "step", "{failure}");
    assert_eq!(
        (&failure["step"], &failure["when"]),
        (&Value::from("seed"), &Value::from("setup"))
    );
    assert_eq!(failure["exit"]["code"], 7);
    let tail = failure["output_tail"].to_string();
    assert!(
        tail.contains("seeding the db on port") && tail.contains("relation"),
        "{tail}"
    );
    assert!(
        setup_fails["scenarios"]
            .as_object()
            .is_none_or(|s| s.is_empty())
    );
    assert_eq!(setup_fails["steps"][0]["exit"]["code"], 7);
    // The db dies 1.5 s after it started, during the load: named, with its last line.
    let failure = &dies["failure"];
    assert_eq!(
        (&failure["kind"], &failure["service"]),
        (&Value::from("service"), &Value::from("db")),
        "{failure}"
    );
    assert_eq!(failure["failure"]["kind"], "died");
    assert_eq!(failure["failure"]["exit"]["code"], 3);
    assert!(
        failure["failure"]["stderr_tail"]
            .to_string()
            .contains("--exit-after")
    );
    assert!(common::number(&dies["scenarios"]["api"]["requests"]) > 0.0);
    // The stack that works: both services started in order, on their own ports, sampled
    // apart; the run's process is their sum.
    assert!(whole.get("failure").is_none(), "{}", whole["failure"]);
    let (db, api) = (&whole["services"]["db"], &whole["services"]["api"]);
    assert_ne!(db["port"], api["port"]);
    assert_eq!(whole["port"], api["port"], "the load goes to the front");
    let rss = |service: &Value| common::number(&service["process"]["steady"]["rss_bytes"]);
    assert!(rss(db) > 1e6 && rss(api) > 1e6, "{db} {api}");
    assert_eq!(
        common::number(&whole["process"]["steady"]["rss_bytes"]),
        rss(db) + rss(api)
    );
    assert_eq!(whole["process"]["steady"]["processes"], 2);
    assert_eq!(whole["steps"][0]["exit"]["code"], 0);
    // The api's own cgroup; the db, without limits, has none.
    let limits = &api["limits"];
    assert_eq!(limits["status"], "applied", "{limits}");
    assert_eq!(limits["memory_bytes"].as_u64(), Some(256 << 20));
    assert!(db.get("limits").is_none(), "{db}");
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
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|results| !runs(&results).is_empty())
    };
    wait_until(Duration::from_secs(30), ran_once);
    send("INT", &child);
    let status = child.wait().expect("headroom ends");
    assert_eq!(status.code(), Some(130));
    let results = read_results(&interrupted);
    let target = &results["phases"][0]["target"];
    assert_eq!(target["interrupted"], true, "{target}");
    assert!(target.get("failure").is_none(), "{target}");
    assert_eq!(target["stopped"]["exit"]["code"], 0, "{target}");
    assert_eq!(target["steps"][1]["name"], "report", "{target}");
    assert!(leftovers("1042B").is_empty(), "{:?}", leftovers("1042B"));
    clean("per-phase");
}

/// A phase of the results by name.
fn phase_named(results: &Value, name: &str) -> Value {
    results["phases"]
        .as_array()
        .and_then(|phases| phases.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no phase {name}: {results}"))
        .clone()
}

/// A phase's runs in the order they started.
fn phase_runs(phase: &Value) -> Vec<Value> {
    let mut runs: Vec<Value> = phase["points"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|point| point["runs"].as_array().cloned().unwrap_or_default())
        .collect();
    runs.sort_by_key(|run| run["started_ms"].as_u64());
    runs
}

/// `kept`: four runs on one target, started once and stopped once, the demo's counter carried
/// from run to run, each run its own share of the cgroup's counters.
fn the_kept_phase_serves_all_its_runs(results: &Value) {
    let phase = |name: &str| phase_named(results, name);
    // `kept`: four runs on one target, started once and stopped once.
    let kept = phase("kept");
    let target = &kept["target"];
    assert!(target.get("failure").is_none(), "{target}");
    assert_eq!(target["log"], "logs/kept.log");
    assert!(common::number(&target["ready_after_s"]) > 0.0, "{target}");
    assert_eq!(target["stopped"]["signal"], "TERM");
    assert_eq!(target["stopped"]["exit"]["code"], 0, "{target}");
    let steps: Vec<(&Value, &Value, &Value)> = target["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|step| (&step["name"], &step["when"], &step["exit"]["code"]))
        .collect();
    assert_eq!(
        steps,
        [
            (
                &Value::from("sign-up"),
                &Value::from("setup"),
                &Value::from(0)
            ),
            (
                &Value::from("report"),
                &Value::from("teardown"),
                &Value::from(0)
            ),
        ]
    );
    let kept_runs = phase_runs(&kept);
    assert_eq!(kept_runs.len(), 4);
    let mut sent_so_far = 0.0;
    let mut periods = 0.0;
    for run in &kept_runs {
        assert!(run.get("failure").is_none(), "{}", run["failure"]);
        assert_eq!(
            run["port"], target["port"],
            "every run on the phase's target"
        );
        assert_eq!(run["log"], "logs/kept.log");
        assert!(run.get("ready_after_s").is_none() && run.get("stopped").is_none());
        assert!(
            run["notes"]
                .to_string()
                .contains("kept for the whole phase"),
            "{}",
            run["notes"]
        );
        let steps: Vec<&Value> = run["steps"].as_array().into_iter().flatten().collect();
        assert_eq!(
            steps.len(),
            1,
            "only the step run at every point: {steps:?}"
        );
        assert_eq!(steps[0]["name"], "seed");
        // The counter carried over: every request the phase has sent so far.
        sent_so_far += answered(&run["scenarios"]["api"]);
        assert_eq!(
            common::number(&run["metrics"]["steady"]["list_requests"]),
            sent_so_far,
            "{}",
            run["metrics"]
        );
        // The run's own share of the cgroup's counters; the peak is the phase's only.
        let limits = &run["limits"];
        assert_eq!(limits["status"], "applied", "{limits}");
        assert!(common::number(&limits["cpu_periods"]) > 0.0, "{limits}");
        assert!(limits.get("memory_peak_bytes").is_none(), "{limits}");
        periods += common::number(&limits["cpu_periods"]);
    }
    assert!(sent_so_far >= 240.0, "{sent_so_far}");
    assert!(common::number(&target["limits"]["cpu_periods"]) >= periods);
    assert!(common::number(&target["limits"]["memory_peak_bytes"]) > 0.0);
    let report = std::fs::read_to_string(
        out("per-phase")
            .parent()
            .expect("a folder")
            .join("logs/kept-teardown-report.log"),
    )
    .expect("the teardown's log");
    assert_eq!(report.trim(), "the phase is over");
}

/// `killed`: the second point's setup kills the target; its run fails, the third is not run.
fn a_killed_target_ends_its_phase(results: &Value) {
    let phase = |name: &str| phase_named(results, name);
    // `killed`: the second point's setup kills the target; its run fails, the third is not run.
    let killed = phase("killed");
    let killed_runs = phase_runs(&killed);
    assert_eq!(killed_runs.len(), 2, "{killed_runs:?}");
    let [before, died] = &killed_runs[..] else {
        panic!("two runs: {killed_runs:?}");
    };
    assert!(before.get("failure").is_none(), "{}", before["failure"]);
    assert_eq!(died["failure"]["kind"], "died", "{}", died["failure"]);
    let target = &killed["target"];
    assert_eq!(target["failure"]["kind"], "died", "{target}");
    assert_eq!(target["runs_not_run"], 1);
    assert_eq!(target["steps"][1]["name"], "report", "teardown still ran");
}

/// `sign-up-fails`: its once-a-phase setup exits 5: no run, the target stopped.
fn a_failed_setup_runs_nothing(results: &Value) {
    let phase = |name: &str| phase_named(results, name);
    // `sign-up-fails`: its once-a-phase setup exits 5: no run, the target stopped.
    let failed = phase("sign-up-fails");
    assert!(phase_runs(&failed).is_empty());
    let target = &failed["target"];
    let failure = &target["failure"];
    assert_eq!(
        (&failure["kind"], &failure["step"], &failure["exit"]["code"]),
        (
            &Value::from("step"),
            &Value::from("sign-up"),
            &Value::from(5)
        ),
        "{failure}"
    );
    assert_eq!(
        failure["output_tail"][0],
        format!("signing up on port {}", target["port"])
    );
    assert_eq!(target["runs_not_run"], 2);
    assert_eq!(target["stopped"]["exit"]["code"], 0, "{target}");
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
