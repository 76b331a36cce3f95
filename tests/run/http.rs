//! HTTP load: the open model's counts and a stall's tail, a server that never accepts, the
//! mix and its seed, a request measured apart, answers checked, virtual users' data.

use super::*;

#[test]
fn open_model_request_counts_match_rate_times_duration() {
    let (output, results) = run_fixture("open-model", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = runs(&results);
    assert_eq!(all.len(), 2);
    for (run, rate) in all.iter().zip([50.0, 100.0]) {
        let api = &run["scenarios"]["api"];
        let expected = rate * 3.0;
        let requests = api["requests"].as_f64().expect("requests");
        assert!(
            (requests - expected).abs() <= expected * 0.02,
            "{requests} requests at {rate}/s over 3 s"
        );
        assert_eq!(api["errors"]["status"], 0);
        // The server counted what was sent: the metrics series is present and agrees.
        let counted = run["metrics"]["steady"]["list_requests"]
            .as_f64()
            .expect("series");
        assert_eq!(counted, answered(api));
        assert!(run["process"]["steady"]["rss_bytes"].as_u64().expect("rss") > 1 << 20);
        assert_eq!(run["slo"].as_array().map(Vec::len), Some(2));
        assert!(
            run["slo"]
                .as_array()
                .expect("slo")
                .iter()
                .all(|v| v["pass"] == true),
            "{}",
            run["slo"]
        );
        assert!(
            common::number(&run["load_average"]["min"])
                <= common::number(&run["load_average"]["max"])
        );
        assert!(
            api["histograms"]["latency"]
                .as_str()
                .is_some_and(|h| !h.is_empty())
        );
    }
    let environment = &results["environment"];
    assert!(common::number(&environment["logical_cores"]) >= 1.0);
    assert!(common::number(&environment["memory_bytes"]) > 0.0);
    assert!(
        environment["kernel"]
            .as_str()
            .is_some_and(|k| !k.is_empty())
    );
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
    let results = read_results(&out);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = runs(&results)[0];
    let latency = &run["scenarios"]["api"]["latency"];
    let steady = &run["metrics"]["steady"];
    let figure = |key: &str| latency[key].as_f64().expect(key);
    for (key, series, quantile) in [
        ("p90_ms", "server_p90", 0.9),
        ("p99_ms", "server_p99", 0.99),
    ] {
        let measured = figure(key);
        let server = steady[series].as_f64().expect(series) * 1000.0;
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
    assert!(figure("p50_ms") < 2.0, "{latency}");
    assert!(leftovers("1002B").is_empty());
    clean("stall");
}

/// Issue 15: a server whose listen backlog is full (it never accepts), loaded at 110 requests
/// a second for 3 s with a 2 s timeout. A connect to it would wait out the kernel's SYN
/// retries (two minutes); the point ends within the hold, the timeout and 5 s, every request is
/// a `connect` error (or a `timeout`, for a connection the kernel completed into the queue),
/// and the waiting is the connection's, not the generator's.
#[test]
fn a_server_that_never_accepts_fails_every_request_within_the_timeout() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (listener, held, port) = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket
            .bind("127.0.0.1:0".parse().expect("an address"))
            .expect("bound");
        let listener = socket.listen(1).expect("listening");
        let port = listener.local_addr().expect("its address").port();
        // Fill the accept queue: what it holds completed its handshake and is never accepted.
        let mut held = Vec::new();
        for _ in 0..4 {
            let connect = tokio::net::TcpStream::connect(("127.0.0.1", port));
            if let Ok(Ok(stream)) =
                tokio::time::timeout(std::time::Duration::from_millis(300), connect).await
            {
                held.push(stream);
            }
        }
        (listener, held, port)
    });
    // Alone: its generator's schedule lag is asserted (5.5 ms once beside a busy neighbour);
    // the machine is taken before the clock starts, so waiting for it is not counted.
    let machine = whole();
    let ready = answer_ready();
    let started = std::time::Instant::now();
    let (output, results) = run_fixture_with(
        headroom_unlocked,
        "starving",
        &["--no-page"],
        &[
            ("HEADROOM_TEST_STARVING_PORT", port.to_string()),
            ("HEADROOM_TEST_READY_PORT", ready.to_string()),
        ],
    );
    let took = started.elapsed();
    drop((held, listener, machine));
    // No request got an answer: nothing of the server was measured, and the run says so.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert_eq!(
        run["failure"]["kind"], "nothing_measured",
        "{}",
        run["failure"]
    );
    let api = &run["scenarios"]["api"];
    assert_eq!(
        api["latency"]["count"], 0,
        "a failure has no latency: {api}"
    );
    let count = |value: &Value| value.as_u64().expect("a count");
    let requests = count(&api["requests"]);
    assert_eq!(requests, 330, "{api}");
    let errors = &api["errors"];
    assert_eq!(
        count(&errors["connect"]) + count(&errors["timeout"]),
        requests,
        "{errors}"
    );
    assert!(count(&errors["connect"]) >= requests - 10, "{errors}");
    // The load: 3 s; the last requests give up 2 s after their start; 5 s more at most.
    let load = run["duration_s"].as_f64().expect("the run's duration");
    assert!(load <= 3.0 + 2.0 + 5.0, "the run took {load} s");
    assert!(took.as_secs_f64() < 30.0, "headroom took {took:?}");
    let generator = &run["generator"];
    assert_eq!(generator["bound"], Value::Bool(false), "{generator}");
    assert!(
        api["schedule_lag"]["p99_ms"].as_f64().expect("lag") < 5.0,
        "{}",
        api["schedule_lag"]
    );
    assert!(
        api["connection_wait"]["p50_ms"].as_f64().expect("wait") > 1_000.0,
        "{}",
        api["connection_wait"]
    );
    clean("starving");
}

/// A loopback port that answers `200` to its first few requests (a readiness check), from a
/// thread that ends after them: the port of a server that accepts nothing cannot say it is up.
fn answer_ready() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8).flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    port
}

/// Issue 17: two routes of very different speed in one scenario (3 % of the requests cost
/// 30 ms of CPU). Each named request is measured apart: the run table and the page show both,
/// and the SLO on the slow one fails while the scenario's overall p95 passes.
/// `--seed` repeats what is drawn at random, not only the Poisson arrivals: the weighted mix
/// of an open model (each numbered arrival picks by its own draw, whichever thread takes it)
/// and a rooms scenario's Poisson sends and reloads (each socket its own draws). Two runs of
/// one seed send the same requests of each kind and the same messages; the mix keeps its
/// weights (5 : 3 : 2).
#[test]
fn a_seed_repeats_the_mix_and_the_gaps() {
    let counts = |results: &Value| {
        let run = runs(results)[0];
        assert!(run.get("failure").is_none(), "{}", run["failure"]);
        let api = &run["scenarios"]["api"];
        let rooms = &run["scenarios"]["chat"]["rooms"];
        let by_request: Vec<f64> = ["health", "notes", "page"]
            .iter()
            .map(|name| common::number(&api["by_request"][name]["requests"]))
            .collect();
        (
            by_request,
            common::number(&rooms["messages"]["sent"]),
            common::number(&rooms["reload"]["requests"]),
        )
    };
    let (_, first) = run_fixture("seeded", &["--no-page", "--seed", "11"], &[]);
    let (_, again) = run_fixture("seeded", &["--no-page", "--seed", "11"], &[]);
    let (by_request, sent, reloads) = counts(&first);
    assert_eq!(counts(&again), (by_request.clone(), sent, reloads));
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
fn a_slow_route_is_measured_apart_and_fails_its_own_slo() {
    // The slow route burns half a core: alone, so it slows no other test's generator.
    let (output, results) = run_fixture_alone("routes", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = runs(&results)[0];
    let api = &run["scenarios"]["api"];
    let (health, notes) = (&api["by_request"]["health"], &api["by_request"]["notes"]);
    // Every request is one of the two: their counts add up to the scenario's.
    assert_eq!(
        common::number(&health["requests"]) + common::number(&notes["requests"]),
        common::number(&api["requests"]),
        "{api}"
    );
    assert!(common::number(&notes["requests"]) >= 5.0, "{notes}");
    // The notes route's own p95 is its 30 ms of CPU at least; the scenario's is the fast one's.
    assert!(
        common::number(&notes["latency"]["p95_ms"]) >= 30.0,
        "{notes}"
    );
    assert!(common::number(&api["latency"]["p95_ms"]) < 15.0, "{api}");
    let verdict = |name: &str| {
        run["slo"]
            .as_array()
            .expect("verdicts")
            .iter()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(verdict("overall")["pass"], true, "{}", verdict("overall"));
    assert_eq!(verdict("notes")["pass"], false, "{}", verdict("notes"));
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
/// `check` errors, counted per request and named in the run table.
#[test]
fn answers_are_checked_and_a_failed_check_is_its_own_error() {
    let (output, results) = run_fixture("checks", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let api = &runs(&results)[0]["scenarios"]["api"];
    let request = |name: &str| {
        let apart = &api["by_request"][name];
        let requests = common::number(&apart["requests"]);
        assert!(requests >= 20.0, "{name}: {apart}");
        (
            requests,
            common::number(&apart["errors"]["check"]),
            apart.clone(),
        )
    };
    for name in ["health", "notes"] {
        let (_, checks, apart) = request(name);
        assert_eq!(checks, 0.0, "{name}: {apart}");
        assert_eq!(
            common::number(&apart["ok"]),
            common::number(&apart["requests"]),
            "{apart}"
        );
    }
    let mut failed = 0.0;
    for name in ["wrong_text", "too_big"] {
        let (requests, checks, apart) = request(name);
        assert_eq!(checks, requests, "{name}: {apart}");
        assert_eq!(common::number(&apart["errors"]["status"]), 0.0, "{apart}");
        failed += checks;
    }
    assert_eq!(common::number(&api["errors"]["check"]), failed, "{api}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains(&format!("({failed} check)")), "{table}");
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
    let visit = &runs(&results)[0]["scenarios"]["visit"];
    let login = &visit["by_request"]["login"];
    let me = &visit["by_request"]["me"];
    // Three right passwords, each used once; the fourth fails every try.
    assert_eq!(count(&login["ok"]), 3, "{login}");
    assert!(count(&login["requests"]) >= 20, "{login}");
    assert_eq!(
        count(&login["errors"]["status"]),
        count(&login["requests"]) - 3,
        "{login}"
    );
    // Every `me` carried a valid token (none refused); the server named its user, and only
    // Ada's pass the check: about a third, each user browsing at the same pace.
    let (requests, ok) = (count(&me["requests"]), count(&me["ok"]));
    assert!(requests >= 60, "{me}");
    assert_eq!(count(&me["errors"]["status"]), 0, "{me}");
    assert_eq!(count(&me["errors"]["check"]), requests - ok, "{me}");
    let share = ok as f64 / requests as f64;
    assert!((0.25..=0.42).contains(&share), "Ada's share {share}: {me}");
    assert!(leftovers("1036B").is_empty());
    clean("login");
}
