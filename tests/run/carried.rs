//! Issue 41: a pass means the box held it. Scenarios that run together are measured over the
//! same seconds (the run's hold, which starts once every scenario is at its load), and a
//! closed model's users stuck in the server fail the probe.

use super::*;
use headroom_runner::results::ProbeOutcome;

/// An HTTP scenario at its rate from its first second beside 5,000 sockets opened over 3 s:
/// the run's hold starts once the last socket opened and lasts the phase's 4 s; both scenarios
/// held their load over exactly it (the results say so, scenario by scenario), the HTTP
/// figures count the requests intended in it (the 3 s before it apart), the rooms sent over
/// it, and the server's CPU is read over it.
#[test]
fn scenarios_are_measured_over_one_hold() {
    let _machine = shared();
    let (output, results) = run_fixture("together", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let Some(hold) = run.hold else {
        panic!("no run hold: {run:?}");
    };
    common::say(&format!(
        "the run's hold: {:.3} s to {:.3} s",
        hold.from_s, hold.to_s
    ));
    assert!((hold.length_s() - 4.0).abs() < 1e-3, "{hold:?}");
    // The sockets opened over 3 s: the hold starts after the last of them.
    let chat = rooms_in(run, "chat");
    assert_eq!(chat.sockets.opened, 5_000, "{:?}", chat.sockets);
    assert!(hold.from_s >= 3.0, "{hold:?}");
    // Each scenario's part of it is all of it: the same seconds.
    for name in ["api", "chat"] {
        let held = run.scenarios[name].held;
        assert_eq!(held, Some(hold), "{name}");
    }
    // HTTP: 200/s from its first second. Its figures count the requests intended in the hold,
    // 800 of them; the ones before it (while the sockets opened) are counted apart.
    let api = headroom_test_support::results::scenario(run, "api");
    assert!((799..=801).contains(&api.requests), "{}", api.requests);
    assert_eq!(api.ok, api.requests);
    // Its first arrival comes a few tens of milliseconds after the run's clock starts (the
    // load threads' start-up).
    let before = api.outside_hold.as_ref().expect("counted apart").requests as f64;
    assert!(
        before <= 200.0 * hold.from_s + 1.0 && before >= 200.0 * (hold.from_s - 0.1),
        "{before} requests before a hold starting at {:.3} s",
        hold.from_s
    );
    assert!((api.rate - 200.0).abs() < 1.0, "{}", api.rate);
    // Rooms: 250 rooms sending 2 a second over the same 4 s.
    let sent = chat.messages.sent;
    assert!((1_999..=2_001).contains(&sent), "{:?}", chat.messages);
    assert_eq!(chat.messages.delivered, chat.messages.expected);
    // The server's CPU is read over the run's hold, from the samples inside it.
    let samples = &run.process.samples;
    let (mut busy, mut covered) = (0.0, 0.0);
    for pair in samples.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if let Some(pct) = b.cpu_pct
            && a.t_s >= hold.from_s
            && b.t_s <= hold.to_s
        {
            busy += pct / 100.0 * (b.t_s - a.t_s);
            covered += b.t_s - a.t_s;
        }
    }
    let Some(cpu) = run.process.hold_cpu_cores else {
        panic!("no CPU over the hold: {:?}", run.process);
    };
    assert!(
        (cpu - busy / covered).abs() < 1e-9,
        "{cpu} against {}",
        busy / covered
    );
    for verdict in &run.slo {
        assert_eq!(verdict.pass, Some(true), "{verdict:?}");
    }
    assert!(leftovers("1074B").is_empty());
    clean("together");
}

/// Users thinking 100 ms against a server that holds one request in ten for 20 s: the
/// answers that came are fast and the failed share is under its SLO, yet the users sent a
/// fraction of their pace. The search's probe fails as "users stuck", naming the rate, the
/// pace and the timeouts, and the run's line and the page say it.
#[test]
fn users_stuck_in_the_server_fail_the_probe() {
    let out = out("users-stuck");
    let out_arg = out.display().to_string();
    let spec = "tests/fixtures/run/users-stuck.toml";
    let output = headroom(&["run", spec, "--out", &out_arg], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&read_results(&out));
    let run = typed_runs(&results)[0];
    let Some(headroom_results::Failure::UsersStuck { scenario, why }) = &run.failure else {
        panic!("not stuck: {:?}", run.failure);
    };
    common::say(&format!("users stuck in `{scenario}`: {why}"));
    assert_eq!(scenario, "browse");
    // The SLOs alone would have passed it: the answers that came were fast.
    assert!(
        run.slo.iter().all(|v| v.pass == Some(true)),
        "{:?}",
        run.slo
    );
    let browse = headroom_test_support::results::scenario(run, "browse");
    let kept = headroom_figures::users::keeping_up(browse).expect("closed, with think");
    assert!(kept.share < 0.5, "{kept:?}");
    assert!(browse.errors.timeout > 0, "{:?}", browse.errors);
    assert!(why.contains(" requests timed out"), "{why}");
    let record = results.phases[0].search.as_ref().expect("a search");
    let first = &record.probes[0];
    assert_eq!(first.verdict, ProbeOutcome::Fail, "{first:?}");
    assert!(
        first
            .why
            .as_deref()
            .is_some_and(|why| why.starts_with("users stuck in `browse`: ")),
        "{first:?}"
    );
    // The run's line and the page say it.
    let said = stderr(&output);
    assert!(said.contains("failed: users stuck in `browse`: "), "{said}");
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("the page");
    assert!(page.contains("users stuck in `browse`"), "{page}");
    assert!(page.contains("requests timed out"), "{page}");
    assert!(leftovers("1014B").is_empty());
    clean("users-stuck");
}
