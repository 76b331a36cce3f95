//! Targets that misbehave: dying, never ready, deaf to SIGTERM, a taken port, a flooded log, a
//! forking tree killed; an external target sampled through its pid file; a series never
//! scraped; a working directory that is not there. Results are read through their types.

use headroom_results::{Exit, Failure};

use super::*;

#[test]
fn a_target_that_dies_during_a_point_is_a_named_failure() {
    let (output, results) = run_fixture("dies", &[], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::Died { exit, stderr_tail }) = &run.failure else {
        panic!("died: {:?}", run.failure);
    };
    assert_eq!(*exit, Exit::Code(3));
    assert!(stderr_tail.iter().any(|line| line.contains("--exit-after")));
    assert!(leftovers("1003B").is_empty());
    clean("dies");
}

#[test]
fn a_target_that_never_gets_ready_is_a_named_failure() {
    let (output, results) = run_fixture("never-ready", &[], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::NeverReady {
        waited_s, check, ..
    }) = &run.failure
    else {
        panic!("never ready: {:?}", run.failure);
    };
    assert!(*waited_s >= 1.0, "{waited_s}");
    assert!(check.contains("/healthz"), "{check}");
    assert!(leftovers("1004B").is_empty());
    clean("never-ready");
}

#[test]
fn a_target_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let (output, results) = run_fixture("ignores-sigterm", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let stopped = run.stopped.as_ref().expect("stopped");
    assert!(stopped.killed, "{stopped:?}");
    assert_eq!(stopped.exit, Some(Exit::Signal(9)), "{stopped:?}");
    assert!(leftovers("1005B").is_empty());
    clean("ignores-sigterm");
}

#[test]
fn a_target_whose_port_is_taken_exits_early() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("address").port().to_string();
    let (output, results) = run_fixture("port-taken", &[], &[("HEADROOM_TEST_TAKEN_PORT", port)]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::ExitedEarly { stderr_tail, .. }) = &run.failure else {
        panic!("exited early: {:?}", run.failure);
    };
    assert!(
        stderr_tail
            .iter()
            .any(|line| line.to_lowercase().contains("in use")),
        "{stderr_tail:?}"
    );
    drop(taken);
    assert!(leftovers("1006B").is_empty());
    clean("port-taken");
}

#[test]
fn a_target_that_floods_its_log_is_cut_at_the_limit() {
    let (output, results) = run_fixture("log-spam", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let log = out("log-spam")
        .parent()
        .expect("dir")
        .join(run.log.as_deref().expect("a log"));
    let size = std::fs::metadata(&log).expect("log").len();
    assert!(size <= (16 << 20) + 4096, "log of {size} bytes");
    assert!(
        size >= 16 << 20,
        "log of {size} bytes: the flood did not reach it"
    );
    assert!(leftovers("1007B").is_empty());
    clean("log-spam");
}

#[test]
fn an_external_target_is_loaded_and_sampled_through_its_pid_file() {
    let (mut server, port) = start_demo_target("1009B");
    let pid_file = fresh_out("external-pid").with_file_name("server.pid");
    std::fs::create_dir_all(pid_file.parent().expect("dir")).expect("dir");
    std::fs::write(&pid_file, server.id().to_string()).expect("pid file");
    let (output, results) = run_fixture(
        "external",
        &[],
        &[
            ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
            ("HEADROOM_TEST_PID_FILE", pid_file.display().to_string()),
        ],
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let all = typed_runs(&results);
    assert_eq!(all.len(), 2);
    for run in &all {
        assert!(
            run.notes
                .iter()
                .any(|note| note.contains("external target")),
            "{:?}",
            run.notes
        );
        let steady = run.process.steady.expect("read at the steady state");
        assert!(steady.rss_bytes > 1_048_576, "{steady:?}");
        assert!(
            run.stopped.is_none(),
            "an external target is not stopped by the runner"
        );
        let requests = scenario(run, "api").requests as f64;
        assert!((requests - 80.0).abs() <= 80.0 * 0.02, "{requests}");
    }
    // One server for both runs: the second run's count includes the first's.
    let series = |run: &headroom_results::RunResult| steady_series(run, "list_requests");
    let api = scenario(all[1], "api");
    let answered = api.requests + api.outside_hold.as_ref().map_or(0, |r| r.requests);
    assert_eq!(series(all[1]) - series(all[0]), answered as f64);
    // The page says what ran: one external server, not a fresh one per run.
    let page =
        std::fs::read_to_string(out("external").with_file_name("capacity.md")).expect("the page");
    assert!(
        page.contains("against an external server that headroom neither started nor stopped"),
        "{page}"
    );
    assert!(!page.contains("a fresh server per run"), "{page}");
    clean("external");
    clean("external-pid");
}

/// Issue 12: headroom killed with SIGKILL mid-run leaves nothing running, even when the target
/// forks (here `sh -c "server & wait"`: the server is a grandchild, which the kernel's
/// parent-death signal does not reach). The guard kills the whole group, and the port is free.
#[test]
fn a_killed_run_leaves_no_process_of_a_forking_target() {
    let _machine = shared();
    let out = fresh_out("forks");
    let mut child = start_in_background("forks", &out, "1023B");
    // The shell and, forked from it, the server.
    let running = leftovers("1023B");
    let server = running
        .iter()
        .find(|line| !line.contains("sh -c"))
        .unwrap_or_else(|| panic!("no server in {running:?}"));
    let port: u16 = server
        .split("--port ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|port| port.parse().ok())
        .expect("the server's port");
    std::thread::sleep(Duration::from_secs(1));
    send("KILL", &child);
    let _ = child.wait();
    wait_until(Duration::from_secs(5), || leftovers("1023B").is_empty());
    assert!(leftovers("1023B").is_empty(), "{:?}", leftovers("1023B"));
    // The port is free again (binding it opens no connection).
    let free = || std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    wait_until(Duration::from_secs(5), free);
    assert!(free(), "port {port} still taken");
    clean("forks");
}

/// Issue 12: a metrics path that answers 404 on every scrape is not a silent gap: the failed
/// scrapes are counted with why, and the declared series that no scrape held fails the point,
/// named, instead of a page that says the metrics were read.
#[test]
fn a_series_no_scrape_held_fails_the_point() {
    let (output, results) = run_fixture("metrics-404", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert_eq!(run.metrics.failed_scrapes, 3, "{:?}", run.metrics);
    assert_eq!(
        run.metrics.scrape_error.as_deref(),
        Some("GET /no-metrics-here answered 404")
    );
    let Some(Failure::MetricsMissing { series, why }) = &run.failure else {
        panic!("metrics missing: {:?}", run.failure);
    };
    assert_eq!(series, &["notes"]);
    assert_eq!(
        why,
        "3 of 3 scrapes failed (GET /no-metrics-here answered 404)"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("run failed: no scrape held notes"),
        "{stdout}"
    );
    assert!(leftovers("1024B").is_empty());
    clean("metrics-404");
}

/// Issue 12: a missing `cwd` is said as a missing folder, not as the program failing to start.
#[test]
fn a_missing_working_directory_is_named() {
    let (output, results) = run_fixture("missing-cwd", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::SpawnFailed { message }) = &run.failure else {
        panic!("spawn failed: {:?}", run.failure);
    };
    assert!(
        message.starts_with("the target's working directory ")
            && message.ends_with(
                "no-such-folder does not exist (`cwd` in [target], relative to the spec)"
            ),
        "{message}"
    );
    clean("missing-cwd");
}

/// Issue 43: two results files in one folder (a baseline, then a lever's run) each keep their
/// own target logs, `logs/NAME/…` for `NAME.json`: the second run no longer writes over the
/// first's log, and each file's log is its own run's (the port the demo said it listened on).
/// The lever's page names `cache = on (--set)`, and its "How to reproduce" sets it again.
#[test]
fn two_results_files_in_one_folder_keep_their_own_logs() {
    let folder = fresh_out("own-logs")
        .parent()
        .expect("a folder")
        .to_path_buf();
    std::fs::create_dir_all(&folder).expect("the folder");
    let spec = "tests/fixtures/run/own-logs.toml";
    for (name, set) in [("baseline", None), ("lever", Some("cache=on"))] {
        let out = folder.join(format!("{name}.json"));
        let out_arg = out.display().to_string();
        let mut args = vec!["run", spec, "--out", &out_arg];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let output = headroom(&args, &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    // The lever's page names the lever and reruns with it (it reran the baseline).
    let page = std::fs::read_to_string(folder.join("lever.capacity.md")).expect("the lever's page");
    assert!(
        page.contains("- **Set outside the spec.** `cache = on` (--set).\n"),
        "{page}"
    );
    let rerun = format!(
        "headroom run {spec} --set cache=on --out {}\n",
        folder.join("lever.json").display()
    );
    assert!(page.contains(&rerun), "{page}");
    let baseline = std::fs::read_to_string(folder.join("baseline.capacity.md")).expect("its page");
    assert!(!baseline.contains("Set outside the spec"), "{baseline}");
    for name in ["baseline", "lever"] {
        let results = typed(&read_results(&folder.join(format!("{name}.json"))));
        let run = typed_runs(&results)[0];
        let log = run.log.as_deref().expect("a log");
        assert_eq!(log, format!("logs/{name}/load-p1-r1.log"));
        let text = std::fs::read_to_string(folder.join(log)).expect("the log is there");
        let listening = format!("listening on 127.0.0.1:{}", run.port);
        assert!(text.contains(&listening), "{name}: {text}");
    }
    assert!(leftovers("1065B").is_empty(), "{:?}", leftovers("1065B"));
    clean("own-logs");
}
