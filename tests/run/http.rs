//! HTTP load: the open model's counts and a stall's tail, a server that never accepts or never
//! answers, the mix and its seed, a request measured apart, answers checked, virtual users' data.
//! Results are read through their types.

use headroom_results::{Failure, HistogramKey, RequestResult, Results, ScenarioResult};

use headroom_test_support::hostile;

use super::*;

/// A scenario's result in the first run.
fn first_scenario<'a>(results: &'a Results, name: &str) -> &'a ScenarioResult {
    typed_runs(results)[0]
        .scenarios
        .get(name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

/// A named request of a scenario, measured apart.
fn apart<'a>(scenario: &'a ScenarioResult, request: &str) -> &'a RequestResult {
    scenario
        .by_request
        .get(request)
        .unwrap_or_else(|| panic!("no request {request} apart"))
}

#[test]
fn open_model_request_counts_match_rate_times_duration() {
    let (output, results) = run_fixture("open-model", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let all = typed_runs(&results);
    assert_eq!(all.len(), 2);
    for (run, rate) in all.iter().zip([50.0, 100.0]) {
        let api = run.scenarios.get("api").expect("api");
        let expected = rate * 3.0;
        let requests = api.requests as f64;
        assert!(
            (requests - expected).abs() <= expected * 0.02,
            "{requests} requests at {rate}/s over 3 s"
        );
        assert_eq!(api.errors.status, 0);
        // The server counted what was sent: the metrics series is present and agrees.
        let answered = api.requests + api.outside_hold.as_ref().map_or(0, |r| r.requests);
        assert_eq!(
            run.metrics.steady.get("list_requests"),
            Some(&(answered as f64))
        );
        let steady = run.process.steady.expect("read at the steady state");
        assert!(steady.rss_bytes > 1 << 20, "{steady:?}");
        assert_eq!(run.slo.len(), 2);
        assert!(
            run.slo.iter().all(|v| v.pass == Some(true)),
            "{:?}",
            run.slo
        );
        assert!(run.load_average.min <= run.load_average.max);
        let latency = api.histogram(HistogramKey::Latency).expect("a histogram");
        assert!(!latency.is_empty());
    }
    let environment = &results.environment;
    assert!(environment.logical_cores >= Some(1), "{environment:?}");
    assert!(environment.memory_bytes > Some(0), "{environment:?}");
    assert!(!environment.kernel.is_empty());
    assert!(leftovers("1001B").is_empty());
    clean("open-model");
}

/// The latency at `quantile` of arrivals spread evenly over time, against a server that holds
/// every request arriving during a stall of `stall` once every `every` until the stall ends
/// and answers the others at once: one arriving `s` into the stall waits `stall - s`.
fn stall_truth_ms(quantile: f64, every: f64, stall: f64) -> f64 {
    let stalled = stall / every;
    if quantile <= 1.0 - stalled {
        return 0.0;
    }
    stall * (quantile - (1.0 - stalled)) / stalled * 1000.0
}

/// A duration option of the fixture's target command (`--stall-for 200ms`), in seconds.
fn command_seconds(spec: &str, option: &str) -> f64 {
    let rest = &spec[spec.find(option).expect("the option") + option.len()..];
    let value = rest.split('"').nth(2).expect("its value");
    let (number, scale) = match value.strip_suffix("ms") {
        Some(ms) => (ms, 1e-3),
        None => (value.trim_end_matches('s'), 1.0),
    };
    number.parse::<f64>().expect("a number") * scale
}

/// Issue 15: against a server that stalls 200 ms every second, at 2,000 requests a second, the
/// open model's p90 and p99 are within 8 % of the truth: the server's own account of each
/// answer's time (a stall's wait, and the burst of answers after it, included). Issue 15's 5 %
/// is the bench's (`scripts/bench-generator.sh --stall-only`, generator pinned to its own core:
/// 1.030 and 1.002); here server and generator share two cores unpinned, and on a CI runner one
/// run came 6.6 % over at p90 (the 400 answers after a stall read late by a generator that
/// had no core), so the hold spans 8 stalls, not 4, and the bound is 8 %: a generator that
/// timed from the actual send (coordinated omission) would be off by a factor. That truth
/// follows the stall's shape computed from the fixture's options: at or over it, by at most a
/// quarter (the 400 answers held by each stall are written after it, which takes the debug-
/// built server, sharing two cores with the generator, 5 to 13 ms: p90 1.05 to 1.13 of the
/// shape; the check is that the fixture stalls as set, not how fast it catches up).
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_stalling_target_shows_in_the_open_model_tail() {
    let spec =
        std::fs::read_to_string(root().join("tests/fixtures/run/stall.toml")).expect("the fixture");
    let (every, stall) = (
        command_seconds(&spec, "--stall-every"),
        command_seconds(&spec, "--stall-for"),
    );
    assert_eq!((every, stall), (1.0, 0.2));
    let out = fresh_out("stall");
    let out_arg = out.display().to_string();
    let output = headroom_alone(&["run", "tests/fixtures/run/stall.toml", "--out", &out_arg]);
    let results = typed(&read_results(&out));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = typed_runs(&results)[0];
    let latency = &first_scenario(&results, "api").latency;
    let steady = &run.metrics.steady;
    for (key, measured, series, quantile) in [
        ("p90", latency.p90_ms, "server_p90", 0.9),
        ("p99", latency.p99_ms, "server_p99", 0.99),
    ] {
        let server = steady.get(series).expect(series) * 1000.0;
        let shape = stall_truth_ms(quantile, every, stall);
        assert!(
            (measured / server - 1.0).abs() <= 0.08,
            "{key}: headroom measured {measured} ms, the server answered in {server} ms"
        );
        assert!(
            (0.95..=1.25).contains(&(server / shape)),
            "{key}: the server answered in {server} ms, the stall makes {shape} ms"
        );
    }
    // Most requests fall between stalls and are answered at once.
    assert!(latency.p50_ms < 2.0, "{latency:?}");
    assert!(leftovers("1002B").is_empty());
    clean("stall");
}

/// Issue 15: a server whose listen backlog is full (it never accepts), loaded at 110 requests
/// a second for 3 s with a 2 s timeout. A connect to it would wait out the kernel's SYN
/// retries (two minutes); the point ends within the hold, the timeout and 5 s, every request is
/// a `connect` error (or a `timeout`, for a connection the kernel completed into the queue),
/// and the waiting is the connection's, not the generator's.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_server_that_never_accepts_fails_every_request_within_the_timeout() {
    let server = hostile::NeverAccepting::start();
    let port = server.port();
    // Alone: its generator's schedule lag is asserted (5.5 ms once beside a busy neighbour);
    // the machine is taken before the clock starts, so waiting for it is not counted.
    let machine = whole();
    // Its readiness port: the first few requests (the readiness check) are answered.
    let ready = hostile::dying_after(8);
    let started = std::time::Instant::now();
    let (output, results) = run_fixture_with(
        headroom_unlocked,
        "starving",
        &["--no-page"],
        &[
            ("HEADROOM_TEST_STARVING_PORT", port.to_string()),
            ("HEADROOM_TEST_READY_PORT", ready.port().to_string()),
        ],
    );
    let took = started.elapsed();
    drop((server, ready, machine));
    // No request got an answer: nothing of the server was measured, and the run says so.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(
        matches!(run.failure, Some(Failure::NothingMeasured { .. })),
        "{:?}",
        run.failure
    );
    let api = first_scenario(&results, "api");
    assert_eq!(api.latency.count, 0, "a failure has no latency");
    assert_eq!(api.requests, 330);
    let errors = &api.errors;
    assert_eq!(errors.connect + errors.timeout, api.requests, "{errors:?}");
    assert!(errors.connect >= api.requests - 10, "{errors:?}");
    // The load: 3 s; the last requests give up 2 s after their start; 5 s more at most.
    let load = run.duration_s;
    assert!(load <= 3.0 + 2.0 + 5.0, "the run took {load} s");
    assert!(took.as_secs_f64() < 30.0, "headroom took {took:?}");
    assert!(!run.generator.bound, "{:?}", run.generator);
    assert!(api.schedule_lag.p99_ms < 5.0, "{:?}", api.schedule_lag);
    assert!(
        api.connection_wait.p50_ms > 1_000.0,
        "{:?}",
        api.connection_wait
    );
    clean("starving");
}

/// A server that accepts every connection, reads its request and never answers (a hung
/// worker), loaded like the one that never accepts: every request is a `timeout` after its 2 s,
/// none a connect error; each reached the server; nothing was measured, and the run says so.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_server_that_stalls_fails_every_request_by_its_timeout() {
    // The fixture's results folder is the never-accepting test's too: one at a time. The
    // machine is taken first: a test server lives a minute, and the wait for the machine can
    // be longer (its connects were refused once, 132 of 330, after the wait for an example).
    let machine = whole();
    let server = hostile::stalling();
    let ready = hostile::dying_after(8);
    let (output, results) = run_fixture_with(
        headroom_unlocked,
        "starving",
        &["--no-page"],
        &[
            ("HEADROOM_TEST_STARVING_PORT", server.port().to_string()),
            ("HEADROOM_TEST_READY_PORT", ready.port().to_string()),
        ],
    );
    drop((ready, machine));
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::NothingMeasured { why, .. }) = &run.failure else {
        panic!("nothing measured, not {:?}", run.failure);
    };
    assert!(why.contains("timed out"), "{why}");
    let api = first_scenario(&results, "api");
    assert_eq!(api.requests, 330);
    assert_eq!(
        api.latency.count, 0,
        "a request never answered has no latency"
    );
    assert_eq!(api.errors.timeout, api.requests, "{:?}", api.errors);
    assert_eq!(
        server.requests(),
        api.requests,
        "each request reached the server"
    );
    assert_eq!(server.answered(), 0);
    assert!(run.duration_s <= 3.0 + 2.0 + 5.0, "{}", run.duration_s);
    clean("starving");
}

/// Issue 17: two routes of very different speed in one scenario (3 % of the requests cost
/// 30 ms of CPU). Each named request is measured apart: the run table and the page show both,
/// and the SLO on the slow one fails while the scenario's overall p95 passes.
/// `--seed` repeats what is drawn at random, not only the Poisson arrivals: the weighted mix
/// of an open model (each numbered arrival picks by its own draw, whichever thread takes it)
/// and a rooms scenario's Poisson sends and reloads (each socket its own draws). Two runs of
/// one seed send the same requests of each kind and the same messages (the hold's edges
/// apart); the mix keeps its weights (5 : 3 : 2).
#[test]
fn a_seed_repeats_the_mix_and_the_gaps() {
    let counts = |results: &Value| {
        let results = typed(results);
        let run = typed_runs(&results)[0];
        assert!(run.failure.is_none(), "{:?}", run.failure);
        let api = first_scenario(&results, "api");
        let rooms = rooms_in(run, "chat");
        let by_request: Vec<f64> = ["health", "notes", "page"]
            .iter()
            .map(|name| apart(api, name).requests as f64)
            .collect();
        let reloads = rooms.reload.as_ref().map_or(0, |r| r.requests);
        (by_request, rooms.messages.sent as f64, reloads as f64)
    };
    let (_, first) = run_fixture("seeded", &["--no-page", "--seed", "11"], &[]);
    let (_, again) = run_fixture("seeded", &["--no-page", "--seed", "11"], &[]);
    let (by_request, sent, reloads) = counts(&first);
    // The same draws; each run's hold begins when its sockets have opened, a few milliseconds
    // apart, so a draw at either edge of the hold may fall in one run's and not the other's:
    // at most one an edge. Two seeds differ by ~20 a kind (Poisson counts of ~200).
    let (by_request_again, sent_again, reloads_again) = counts(&again);
    let pairs = by_request
        .iter()
        .zip(&by_request_again)
        .chain([(&sent, &sent_again), (&reloads, &reloads_again)]);
    for (first, again) in pairs {
        assert!(
            (first - again).abs() <= 2.0,
            "{:?} then {:?}",
            (&by_request, sent, reloads),
            (&by_request_again, sent_again, reloads_again)
        );
    }
    // 200 arrivals a second over the 2 s hold; 2 rooms sending 20 a second; 10 sockets
    // reloading every 500 ms on average: Poisson counts, within four standard deviations.
    let total: f64 = by_request.iter().sum();
    assert!((400.0 - 80.0..=400.0 + 80.0).contains(&total), "{total}");
    for (count, weight) in by_request.iter().zip([0.5, 0.3, 0.2]) {
        let share = count / total;
        assert!(
            (share - weight).abs() < 0.1,
            "{share} for {weight}: {by_request:?}"
        );
    }
    assert!((80.0 - 36.0..=80.0 + 36.0).contains(&sent), "{sent}");
    assert!((40.0 - 26.0..=40.0 + 26.0).contains(&reloads), "{reloads}");
    assert!(leftovers("1043B").is_empty());
    clean("seeded");
}

#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_slow_route_is_measured_apart_and_fails_its_own_slo() {
    // The slow route burns half a core: alone, so it slows no other test's generator.
    let (output, results) = run_fixture_alone("routes", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let api = first_scenario(&results, "api");
    let (health, notes) = (apart(api, "health"), apart(api, "notes"));
    // Every request is one of the two: their counts add up to the scenario's.
    assert_eq!(health.requests + notes.requests, api.requests);
    assert!(notes.requests >= 5, "{notes:?}");
    // The notes route's own p95 is its 30 ms of CPU at least; the scenario's is the fast one's.
    assert!(notes.latency.p95_ms >= 30.0, "{notes:?}");
    assert!(api.latency.p95_ms < 15.0, "{:?}", api.latency);
    assert_eq!(
        slo(run, "overall").pass,
        Some(true),
        "{:?}",
        slo(run, "overall")
    );
    assert_eq!(
        slo(run, "notes").pass,
        Some(false),
        "{:?}",
        slo(run, "notes")
    );
    // The run table shows each request beside the other.
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("load, by request"), "{table}");
    for request in ["api.health", "api.notes"] {
        assert!(table.contains(request), "{request} in {table}");
    }
    // So does the page.
    let page =
        std::fs::read_to_string(out("routes").with_file_name("capacity.md")).expect("the page");
    // An SLO judges `api.notes` apart: the requests' table leads, with its threshold, and the
    // scenario's mixed figures follow.
    let leads = page
        .find("The SLOs judge requests apart, so their figures lead")
        .unwrap_or_else(|| panic!("{page}"));
    let mixed = page.find("| point | runs | RSS").expect("the mixed table");
    assert!(leads < mixed, "{page}");
    assert!(page.contains("| `api.notes` |"), "{page}");
    assert!(page.contains("| p95 < 15ms |"), "{page}");
    assert!(leftovers("1032B").is_empty());
    clean("routes");
}

/// Issue 17: checks on answers. Against known answers (the health page says "ok", the notes
/// list is JSON of three seeded notes, over 100 bytes), the checks that hold pass and the ones
/// that cannot (a text it does not say, a size it exceeds) fail every request of theirs, as
/// `check` errors, counted per request and named in the run table; an unexpected status is
/// counted by its code.
#[test]
fn answers_are_checked_and_a_failed_check_is_its_own_error() {
    let (output, results) = run_fixture("checks", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let api = first_scenario(&results, "api");
    let request = |name: &str| {
        let request = apart(api, name);
        assert!(request.requests >= 20, "{name}: {request:?}");
        request
    };
    for name in ["health", "notes"] {
        let request = request(name);
        assert_eq!(request.errors.check, 0, "{name}: {request:?}");
        assert_eq!(request.ok, request.requests, "{name}: {request:?}");
    }
    let mut failed = 0;
    for name in ["wrong_text", "too_big"] {
        let request = request(name);
        assert_eq!(
            request.errors.check, request.requests,
            "{name}: {request:?}"
        );
        assert_eq!(request.errors.status, 0, "{name}: {request:?}");
        failed += request.errors.check;
    }
    assert_eq!(api.errors.check, failed, "{:?}", api.errors);
    // Issue 43: an unexpected status is counted by its code, and said so on the run line,
    // the table and the page.
    let teapot = request("teapot");
    assert_eq!(teapot.errors.status, teapot.requests, "{teapot:?}");
    assert_eq!(teapot.errors.statuses, [(200, teapot.requests)].into());
    assert_eq!(api.errors.statuses, teapot.errors.statuses);
    let (statuses, all) = (teapot.requests, api.errors.total());
    let table = String::from_utf8_lossy(&output.stdout);
    let cell = format!("{all} ({statuses} × 200, {failed} check)");
    assert!(table.contains(&cell), "{table}");
    let line = format!("{statuses} unexpected status ({statuses} × 200), {failed} failed a check");
    assert!(stderr(&output).contains(&line), "{}", stderr(&output));
    assert!(leftovers("1033B").is_empty());
    clean("checks");
}

/// Issue 17: log in, then browse. Each virtual user takes its own row of the data file, logs
/// in once with it (`once`), captures its token and sends it with every later request; the
/// user whose password is wrong logs in again and again and never browses.
#[test]
fn virtual_users_log_in_with_their_rows_and_browse_with_their_tokens() {
    let (output, results) = run_fixture("login", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let visit = first_scenario(&results, "visit");
    let (login, me) = (apart(visit, "login"), apart(visit, "me"));
    // Three right passwords, each used once; the fourth fails every try. The first logins may
    // come before the run's hold (a closed model's hold starts once its users, spread over a
    // think time, all send: issue 41): they are counted outside it.
    let outside = login.outside_hold.clone().unwrap_or_default();
    assert_eq!(login.ok + outside.ok, 3, "{login:?}");
    assert!(login.requests >= 20, "{login:?}");
    assert_eq!(login.errors.status, login.requests - login.ok, "{login:?}");
    // Every `me` carried a valid token (none refused); the server named its user, and only
    // Ada's pass the check: about a third, each user browsing at the same pace.
    let (requests, ok) = (me.requests, me.ok);
    assert!(requests >= 60, "{me:?}");
    assert_eq!(me.errors.status, 0, "{me:?}");
    assert_eq!(me.errors.check, requests - ok, "{me:?}");
    let share = ok as f64 / requests as f64;
    assert!(
        (0.25..=0.42).contains(&share),
        "Ada's share {share}: {me:?}"
    );
    assert!(leftovers("1036B").is_empty());
    clean("login");
}
