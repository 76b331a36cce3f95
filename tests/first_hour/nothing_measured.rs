//! No figure from nothing: a target that is not running, a scenario no answer of which was
//! expected, a pid file that names headroom's own ancestor.

use super::*;

/// An external target that is not running: each run fails by name before any load, `--check`
/// exits non-zero, and no latency figure is written (the SLO reads not measured, never 0).
#[test]
fn an_external_target_that_is_not_running_fails_every_run_by_name() {
    let port = free_port();
    let (output, results) = run_fixture(
        "external-down",
        &["--check", "--no-page"],
        &[("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())],
    );
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let all = typed_runs(&results);
    assert_eq!(all.len(), 2, "both repeats are recorded");
    for run in &all {
        let Some(Failure::NeverReady { check, .. }) = &run.failure else {
            panic!("never ready, not {:?}", run.failure);
        };
        assert!(
            check.contains(&format!("127.0.0.1:{port}")),
            "names where it waited: {check}"
        );
        assert!(
            run.scenarios.is_empty(),
            "no load, so no figure: {:?}",
            run.scenarios
        );
        for verdict in &run.slo {
            assert_ne!(verdict.pass, Some(true), "{verdict:?}");
        }
    }
    let said = stderr(&output);
    assert!(said.contains("was not ready"), "{said}");
    clean("external-down");
}

/// A scenario whose every request fails to connect, and one whose every answer is a 404:
/// neither has a latency (count 0, not 0 ms), the 404s' latency is kept apart as unexpected,
/// the run fails naming the scenario and what its requests met, and the latency SLOs read not
/// measured, so `--check` fails.
#[test]
fn a_scenario_with_no_expected_answer_has_no_latency() {
    let dead = free_port();
    let (output, results) = run_fixture(
        "unanswered",
        &["--check", "--no-page"],
        &[("HEADROOM_TEST_DEAD_PORT", dead.to_string())],
    );
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let all = typed_runs(&results);
    assert_eq!(all.len(), 1);
    let run = all[0];
    let scenario = |name: &str| {
        run.scenarios
            .get(name)
            .unwrap_or_else(|| panic!("no scenario {name}"))
    };
    let gone = scenario("gone");
    let requests = gone.requests;
    assert!(requests >= 60, "40/s over 2 s were sent: {requests}");
    assert_eq!(gone.errors.connect, requests);
    assert_eq!(gone.latency.count, 0);
    assert_eq!(gone.latency.p95_ms, 0.0);
    assert!(gone.unexpected_latency.is_none(), "{gone:?}");
    let wrong = scenario("wrong");
    let answered = wrong.requests;
    assert!(answered >= 60, "{answered}");
    assert_eq!(wrong.errors.status, answered);
    assert_eq!(wrong.latency.count, 0);
    let unexpected = wrong
        .unexpected_latency
        .as_ref()
        .expect("the 404s' latency is kept apart");
    assert_eq!(unexpected.count, answered);
    // The run names the first scenario that measured nothing, and why.
    let Some(Failure::NothingMeasured { why, .. }) = &run.failure else {
        panic!("nothing measured, not {:?}", run.failure);
    };
    assert!(why.contains("got an expected answer"), "{why}");
    assert!(why.contains("could not connect"), "{why}");
    for name in ["gone_fast", "wrong_fast"] {
        let verdict = slo(run, name);
        assert_eq!(verdict.pass, None, "{verdict:?}");
        assert_eq!(verdict.value, None, "{verdict:?}");
        let note = verdict.note.as_deref().expect("a note");
        assert!(note.starts_with("none of the"), "{note}");
    }
    let note = slo(run, "wrong_fast").note.as_deref().unwrap_or_default();
    assert!(note.contains("unexpected status"), "{note}");
    clean("unanswered");
}

/// `pid_file` naming pid 1 once sampled the whole machine (79 processes, headroom among them)
/// as "the server": a pid whose tree holds headroom itself (here, this test's own, the parent
/// of the headroom it starts) is refused, and so is pid 1 (its tree holds headroom), each named
/// with its command line; each run fails by name rather than read as measured.
#[test]
fn a_pid_file_naming_an_ancestor_of_headroom_is_refused() {
    let (mut server, port) = start_demo_target("1044B");
    let pid_file = fresh_out("pid-one").with_file_name("server.pid");
    std::fs::create_dir_all(pid_file.parent().expect("dir")).expect("dir");
    let own = std::process::id().to_string();
    for (pid, said) in [
        (own.as_str(), "holds headroom itself"),
        ("1", "names pid 1 (`"),
    ] {
        std::fs::write(&pid_file, format!("{pid}\n")).expect("pid file");
        let (output, results) = run_fixture(
            "external",
            &["--no-page"],
            &[
                ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
                ("HEADROOM_TEST_PID_FILE", pid_file.display().to_string()),
            ],
        );
        assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
        for run in typed_runs(&typed(&results)) {
            let Some(Failure::Load { message }) = &run.failure else {
                panic!("a load failure, not {:?}", run.failure);
            };
            assert!(message.starts_with("`pid_file`: "), "{message}");
            assert!(message.contains(said), "{message}");
            assert!(message.contains("it is not the server"), "{message}");
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    clean("external");
    clean("pid-one");
}
