//! `headroom run` end to end against the built-in demo target, on loopback: the figures in the
//! results file, and what happens when the target misbehaves or the runner is interrupted.
//! Every fault test asserts the named verdict, a results file that matches its schema and holds
//! the completed runs, and that no target process is left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use common::root;
use common::run::*;

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

#[test]
fn a_target_that_dies_during_a_point_is_a_named_failure() {
    let (output, results) = run_fixture("dies", &[], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert_eq!(run["failure"]["kind"], "died", "{}", run["failure"]);
    assert_eq!(run["failure"]["exit"]["code"], 3);
    assert!(
        run["failure"]["stderr_tail"]
            .to_string()
            .contains("--exit-after")
    );
    assert!(leftovers("1003B").is_empty());
    clean("dies");
}

/// Issue 16: `on_failure = "stop"` with repeats in rounds. The second point's target dies
/// during its hold: the third point never runs, in either round; the first two run in rounds
/// (life 30s, 500ms, then again), each twice.
#[test]
fn a_stopped_phase_runs_its_rounds_up_to_the_failed_point() {
    let (output, results) = run_fixture("stop", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let points = results["phases"][0]["points"].as_array().expect("points");
    let lives: Vec<&str> = points
        .iter()
        .map(|p| p["at"]["life"].as_str().expect("life"))
        .collect();
    assert_eq!(lives, ["30s", "500ms"]);
    let mut order: Vec<(u64, &str, u64, bool)> = points
        .iter()
        .flat_map(|point| {
            point["runs"].as_array().expect("runs").iter().map(|run| {
                (
                    run["started_ms"].as_u64().expect("started"),
                    point["at"]["life"].as_str().expect("life"),
                    run["repeat"].as_u64().expect("repeat"),
                    run["failure"].is_null(),
                )
            })
        })
        .collect();
    order.sort_unstable();
    let order: Vec<(&str, u64, bool)> = order.into_iter().map(|(_, l, r, ok)| (l, r, ok)).collect();
    assert_eq!(
        order,
        [
            ("30s", 1, true),
            ("500ms", 1, false),
            ("30s", 2, true),
            ("500ms", 2, false)
        ]
    );
    assert!(leftovers("1031B").is_empty());
    clean("stop");
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

/// Writes `tls.toml` (the fixture, edited by `edit`) beside a self-signed certificate for
/// localhost and 127.0.0.1 made here (`server.pem`, `server.key`) and the CA file the spec
/// trusts (`ca.pem`: that certificate, or `ca` when given); the spec's path.
fn tls_spec(test: &str, ca: Option<&str>, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = fresh_out(test).parent().expect("a folder").to_path_buf();
    std::fs::create_dir_all(&dir).expect("test folder");
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("a certificate");
    std::fs::write(dir.join("server.pem"), certified.cert.pem()).expect("write");
    std::fs::write(
        dir.join("server.key"),
        certified.signing_key.serialize_pem(),
    )
    .expect("write");
    let trusted = ca.map_or_else(|| certified.cert.pem(), str::to_owned);
    std::fs::write(dir.join("ca.pem"), trusted).expect("write");
    let fixture = std::fs::read_to_string(root().join("tests/fixtures/run/tls.toml"))
        .expect("the tls fixture");
    let spec = dir.join("tls.toml");
    std::fs::write(&spec, edit(fixture)).expect("write");
    spec
}

/// Issue 17: HTTPS over HTTP/1.1 and HTTP/2 and WSS rooms against the demo target serving a
/// certificate made in the test, trusted through `ca`: every answer passes its check, every
/// frame arrives, readiness and scrapes go over HTTPS too, and HTTP/2 carries requests held by
/// the target's stalls (50 ms, twice a second) on fewer connections than HTTP/1.1 needs.
#[test]
fn https_http2_and_wss_run_against_a_certificate_made_here() {
    let spec = tls_spec("tls", None, |text| text);
    let out = out("tls");
    let (spec_arg, out_arg) = (spec.display().to_string(), out.display().to_string());
    let output = headroom(&["run", &spec_arg, "--out", &out_arg, "--no-page"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(&out);
    let run = runs(&results)[0];
    assert!(run["failure"].is_null(), "{}", run["failure"]);
    let opened = |name: &str| {
        let scenario = &run["scenarios"][name];
        let requests = count(&scenario["requests"]);
        assert!(requests >= 150, "{name}: {scenario}");
        assert_eq!(count(&scenario["ok"]), requests, "{name}: {scenario}");
        // Every connection opened was a TLS session, its handshake timed apart.
        let opened = count(&scenario["connections"]["opened"]);
        assert_eq!(
            count(&scenario["tls"]["handshakes"]),
            opened,
            "{name}: {scenario}"
        );
        assert!(common::number(&scenario["tls"]["handshake"]["p50_ms"]) > 0.0);
        opened
    };
    let (h1, h2) = (opened("h1"), opened("h2"));
    // 100/s held 50 ms: about five requests at once on HTTP/1.1, each on its own connection;
    // HTTP/2 multiplexes twice the rate on one connection per load thread.
    assert!(h1 >= 5, "HTTP/1.1 opened {h1}");
    assert!(h2 < h1 && h2 <= 4, "HTTP/2 opened {h2}, HTTP/1.1 {h1}");
    let (_, rooms) = rooms_run(&results, "chat");
    let messages = &rooms["messages"];
    assert!(count(&messages["sent"]) >= 30, "{messages}");
    assert_eq!(count(&messages["expected"]), count(&messages["sent"]) * 4);
    assert_eq!(messages["delivered"], messages["expected"], "{messages}");
    assert_eq!(count(&rooms["sockets"]["opened"]), 10);
    assert_eq!(count(&run["scenarios"]["chat"]["tls"]["handshakes"]), 10);
    // The run's line counts every handshake, apart from the requests' latencies.
    let line = stderr(&output);
    assert!(
        line.contains(&format!("{} TLS handshakes, p50 ", h1 + h2 + 10)),
        "{line}"
    );
    // The scrape went over HTTPS (to 127.0.0.1: the certificate's address name).
    assert_eq!(common::number(&run["metrics"]["steady"]["peers"]), 10.0);
    assert!(leftovers("1034B").is_empty());
    clean("tls");
}

/// Issue 17: a certificate not signed by the CA the spec trusts fails the point before any
/// load, naming the host and the fix (readiness by TCP here, so the load's own check says it).
/// `headroom ARGS` in a network namespace of its own whose ephemeral port range is 1,000
/// ports (`40000 40999`): one source address can hold 1,000 sockets to a server there. `None`
/// when this machine cannot make one (not root, no `unshare`): the test says it skipped.
fn headroom_in_narrow_namespace(args: &[&str]) -> Option<Output> {
    let script = "ip link set lo up && sysctl -q -w net.ipv4.ip_local_port_range='40000 40999' && exec \"$0\" \"$@\"";
    let probe = Command::new("unshare")
        .args(["-n", "sh", "-c", script, "true"])
        .output();
    match probe {
        Ok(probe) if probe.status.success() => {}
        Ok(probe) => {
            common::say(&format!(
                "skipped: cannot make a network namespace with a narrow port range here (needs root): {}",
                String::from_utf8_lossy(&probe.stderr).trim()
            ));
            return None;
        }
        Err(e) => {
            common::say(&format!(
                "skipped: `unshare` (util-linux) cannot run here: {e}"
            ));
            return None;
        }
    }
    let _machine = shared();
    let output = Command::new("unshare")
        .args(["-n", "sh", "-c", script, env!("CARGO_BIN_EXE_headroom")])
        .args(args)
        .current_dir(root())
        .output()
        .expect("run headroom in a namespace");
    Some(output)
}

/// Issue 18, item 0: 1,500 sockets to one server where an address has 1,000 ports. From one
/// address the run is refused before it starts, naming the fix (it would be a false cliff);
/// with `source_addresses = "spread"` every socket opens from its own loopback address, every
/// frame arrives, the server counts 1,500 peers and the results 1,500 addresses.
#[test]
fn spread_source_addresses_hold_more_sockets_than_one_address_has_ports() {
    let out = fresh_out("spread");
    let dir = out.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let spec = std::fs::read_to_string(root().join("tests/fixtures/run/spread.toml"))
        .expect("the fixture");
    let single = dir.join("single.toml");
    let without: String = spec
        .lines()
        .filter(|line| !line.starts_with("[generator]") && !line.starts_with("source_addresses"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(without, spec, "the fixture spreads its sources");
    std::fs::write(&single, without).expect("a spec");
    let single_out = dir.join("single").join("results.json");
    let args = [
        "run",
        single.to_str().expect("a path"),
        "--out",
        single_out.to_str().expect("a path"),
    ];
    let Some(refused) = headroom_in_narrow_namespace(&args) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("holds 1,500 sockets open at once, from one source address, which has 1,000 local ports here")
            && stderr.contains("set `source_addresses = \"spread\"` in [generator]"),
        "{stderr}"
    );
    assert!(!single_out.exists(), "refused before any run");

    let out_arg = out.display().to_string();
    let args = ["run", "tests/fixtures/run/spread.toml", "--out", &out_arg];
    let output = headroom_in_narrow_namespace(&args).expect("the namespace made before");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let results = read_results(&out);
    let run = &results["phases"][0]["points"][0]["runs"][0];
    let chat = &run["scenarios"]["chat"];
    assert_eq!(chat["source_addresses"], 1500, "{chat}");
    let sockets = &chat["rooms"]["sockets"];
    assert_eq!(sockets["opened"], 1500, "{sockets}");
    for why in ["refused", "status", "timeout", "other", "ports"] {
        assert_eq!(sockets["failed"][why], 0, "{why}: {sockets}");
    }
    let messages = &chat["rooms"]["messages"];
    assert_eq!(messages["delivered"], messages["expected"], "{messages}");
    assert!(common::number(&messages["delivered"]) > 0.0, "{messages}");
    assert_eq!(common::number(&run["metrics"]["steady"]["peers"]), 1500.0);
    assert!(leftovers("1037B").is_empty());
    clean("spread");
}

#[test]
fn a_certificate_from_another_ca_fails_with_the_host_named() {
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "another CA");
    let key = rcgen::KeyPair::generate().expect("key");
    let stranger = params.self_signed(&key).expect("another certificate");
    let spec = tls_spec("tls-wrong-ca", Some(&stranger.pem()), |text| {
        text.replace(
            r#"ready = { http = "https://localhost:{port}/healthz", timeout = "20s" }"#,
            r#"ready = { tcp = true, timeout = "20s" }"#,
        )
        // A marker of its own: the other TLS test may run beside it.
        .replace("1034B", "1035B")
        .replace("metrics = \"https://127.0.0.1:{port}/metrics\"\n", "")
        .replace(
            "[measure]\nseries = [{ name = \"peers\", metric = \"demo_peers\" }]\n",
            "",
        )
    });
    let out = out("tls-wrong-ca");
    let (spec_arg, out_arg) = (spec.display().to_string(), out.display().to_string());
    let output = headroom(&["run", &spec_arg, "--out", &out_arg, "--no-page"], &[]);
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(&out);
    let failure = runs(&results)[0]["failure"].to_string();
    assert!(
        failure.contains("TLS to `localhost:") && failure.contains("not signed by a CA"),
        "{failure}"
    );
    assert!(failure.contains("ca = "), "{failure}");
    assert!(leftovers("1035B").is_empty());
    clean("tls-wrong-ca");
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

#[test]
fn a_target_that_never_gets_ready_is_a_named_failure() {
    let (output, results) = run_fixture("never-ready", &[], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert_eq!(run["failure"]["kind"], "never_ready", "{}", run["failure"]);
    assert!(common::number(&run["failure"]["waited_s"]) >= 1.0);
    assert!(
        run["failure"]["check"]
            .as_str()
            .is_some_and(|c| c.contains("/healthz"))
    );
    assert!(leftovers("1004B").is_empty());
    clean("never-ready");
}

#[test]
fn a_target_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let (output, results) = run_fixture("ignores-sigterm", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert!(run["failure"].is_null());
    assert_eq!(run["stopped"]["killed"], true, "{}", run["stopped"]);
    assert_eq!(run["stopped"]["exit"]["signal"], 9);
    assert!(leftovers("1005B").is_empty());
    clean("ignores-sigterm");
}

#[test]
fn a_target_whose_port_is_taken_exits_early() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("address").port().to_string();
    let (output, results) = run_fixture("port-taken", &[], &[("HEADROOM_TEST_TAKEN_PORT", port)]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert_eq!(run["failure"]["kind"], "exited_early", "{}", run["failure"]);
    assert!(
        run["failure"]["stderr_tail"]
            .to_string()
            .to_lowercase()
            .contains("in use"),
        "{}",
        run["failure"]
    );
    drop(taken);
    assert!(leftovers("1006B").is_empty());
    clean("port-taken");
}

#[test]
fn a_target_that_floods_its_log_is_cut_at_the_limit() {
    let (output, results) = run_fixture("log-spam", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert!(run["failure"].is_null(), "{}", run["failure"]);
    let log = out("log-spam")
        .parent()
        .expect("dir")
        .join(run["log"].as_str().expect("log"));
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
fn an_interrupted_run_keeps_its_results_and_leaves_no_process() {
    let _machine = shared();
    // Ctrl-C, and what `timeout`, CI runners and systemd send (issue 12), end a run alike.
    for signal in ["INT", "TERM", "HUP"] {
        let out = fresh_out("interrupted");
        let child = start_in_background("interrupted", &out, "1008B");
        // The load has begun; then signal the runner.
        std::thread::sleep(Duration::from_secs(2));
        send(signal, &child);
        let output = child.wait_with_output().expect("wait");
        assert_eq!(
            output.status.code(),
            Some(130),
            "{signal}: {}",
            stderr(&output)
        );
        let results = read_results(&out);
        let run = runs(&results)[0];
        assert_eq!(run["failure"]["kind"], "interrupted", "{signal}");
        assert!(
            common::number(&run["scenarios"]["api"]["requests"]) > 0.0,
            "{signal}: the requests before the signal are kept"
        );
        // The rooms stop too: their messages so far are kept and every open socket was closed.
        let rooms = &run["scenarios"]["chat"]["rooms"];
        assert!(count(&rooms["messages"]["sent"]) > 0, "{signal}: {rooms}");
        assert_eq!(count(&rooms["sockets"]["opened"]), 20, "{signal}: {rooms}");
        assert_eq!(
            count(&rooms["sockets"]["closed_by_us"]),
            20,
            "{signal}: {rooms}"
        );
        assert!(
            leftovers("1008B").is_empty(),
            "{signal}: {:?}",
            leftovers("1008B")
        );
        assert!(
            !out.with_file_name("results.json.lock").exists(),
            "{signal}: the lock is gone"
        );
        clean("interrupted");
    }
}

#[test]
fn notes_api_runs_quick_end_to_end() {
    let _alone = examples_one_at_a_time();
    let out = fresh_out("notes-api");
    let out_arg = out.display().to_string();
    let output = headroom(
        &[
            "run",
            "--quick",
            "examples/notes-api.toml",
            "--out",
            &out_arg,
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(&out);
    assert_eq!(results["quick"], true);
    let phases = results["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2);
    // Memory grows with the swept note count (0, 40,000, 80,000 notes of 2 KiB).
    let notes = &phases[0];
    assert_eq!(notes["name"], "notes");
    let rss: Vec<u64> = notes["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            p["runs"][0]["process"]["steady"]["rss_bytes"]
                .as_u64()
                .expect("rss")
        })
        .collect();
    assert_eq!(rss.len(), 3);
    assert!(rss.windows(2).all(|w| w[0] < w[1]), "{rss:?}");
    // 80,000 notes of 2 KiB are 160 MiB of bodies; the resident set holds at least 120 MiB more.
    assert!(rss[2] - rss[0] >= 120 << 20, "{rss:?}");
    for run in runs(&results) {
        assert!(run["failure"].is_null(), "{}", run["failure"]);
        let steady = &run["metrics"]["steady"];
        assert!(
            steady["notes"].as_f64().is_some() && steady["notes_memory"].as_f64().is_some(),
            "{steady}"
        );
        assert!(run["load_average"]["max"].as_f64().is_some());
        for scenario in ["browse", "write"] {
            assert!(
                common::number(&run["scenarios"][scenario]["requests"]) > 0.0,
                "{scenario}"
            );
        }
        // 50 people × 20 sockets, each push expected at the person's 19 other sockets: every
        // socket opens and every push arrives.
        let rooms = &run["scenarios"]["sockets"]["rooms"];
        assert_eq!(rooms["sockets"]["planned"], 1000);
        assert_eq!(rooms["sockets"]["opened"], 1000, "{rooms}");
        assert_eq!(rooms["sockets"]["closed_by_server"], 0, "{rooms}");
        let messages = &rooms["messages"];
        let sent = messages["sent"].as_u64().expect("sent");
        assert!(sent > 0, "{messages}");
        assert_eq!(messages["expected"].as_u64(), Some(sent * 19), "{messages}");
        assert_eq!(messages["delivered"], messages["expected"], "{messages}");
        assert_eq!(messages["reached_all"].as_u64(), Some(sent), "{messages}");
        assert!(
            common::number(&rooms["seen_by_all"]["max_ms"])
                >= common::number(&rooms["seen"]["max_ms"])
        );
        for verdict in run["slo"].as_array().expect("slo") {
            let name = verdict["name"].as_str().unwrap_or_default();
            if name.starts_with("sockets") || name == "pushes" {
                assert_eq!(verdict["pass"], true, "{verdict}");
            }
        }
    }
    let seeded: Vec<f64> = notes["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            p["runs"][0]["metrics"]["steady"]["notes"]
                .as_f64()
                .expect("notes")
        })
        .collect();
    assert!(seeded[2] >= 80_000.0 && seeded[0] < 1_000.0, "{seeded:?}");
    assert!(
        results["environment"]["cpu_model"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    notes_api_page_and_plots(&out);
    assert!(leftovers("2KiB").is_empty());
    notes_api_fit_and_plan(&out_arg);
}

/// The page `run` wrote beside the notes-api results, and its plots.
fn notes_api_page_and_plots(out: &std::path::Path) {
    // The run ends with the capacity page beside the results.
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("the page");
    assert!(page.starts_with("# Capacity: notes-api"), "{page}");
    assert!(page.contains("| readers = 100 | 1 |"), "{page}");
    assert!(page.contains("## Cost per user"), "{page}");
    // Issue 11, item 17: no memory phase is named, so the page says which phase the fit is
    // from and why, and three points make it a weak fit, said as one.
    assert!(
        page.contains("Least squares over the `load` phase (`capacity.memory_phase` is not set"),
        "{page}"
    );
    assert!(page.contains("| rss (weak) |"), "{page}");
    // …and its plots, linked from it: memory over the readers, latency per scenario of the
    // ceiling phase, each an SVG with its title in it.
    for (plot, title) in [
        ("memory.svg", "rss per user over the `load` phase"),
        (
            "latency-browse.svg",
            "browse: latency by step of the `load` phase",
        ),
        (
            "latency-write.svg",
            "write: latency by step of the `load` phase",
        ),
        (
            "latency-sockets.svg",
            "sockets: latency by step of the `load` phase",
        ),
    ] {
        assert!(page.contains(&format!("]({plot})")), "{plot} not linked");
        let svg = std::fs::read_to_string(out.with_file_name(plot)).expect(plot);
        assert!(svg.starts_with("<svg") && svg.contains(title), "{plot}");
    }
}

/// `fit` and `plan` over the notes-api results: memory per note, and the spec's instances
/// priced.
fn notes_api_fit_and_plan(out_arg: &str) {
    // The planner's fit reads the same file: memory per note is a note's 2 KiB and change.
    let output = headroom(&["fit", "--json", out_arg], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("fit json");
    let rss = report["fits"]
        .as_array()
        .expect("fits")
        .iter()
        .find(|f| f["sweep"] == "notes" && f["series"] == "rss")
        .expect("an rss fit of the notes sweep");
    let per_note = rss["slope"].as_f64().expect("slope");
    assert!(
        (2048.0..4096.0).contains(&per_note),
        "{per_note} bytes per note"
    );
    assert!(common::number(&rss["r2"]) > 0.99, "{rss}");
    // And the planner plans from it, with the spec's instances (Hetzner, in euros).
    let output = headroom(
        &["plan", "examples/notes-api.toml", "--results", out_arg],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    for figure in ["CX22", "€3.79", "CAX11", "CPX21", "730 hours"] {
        assert!(table.contains(figure), "{figure} not in\n{table}");
    }
    assert!(
        table.contains("(slo)") || table.contains("(memory)"),
        "a binding ceiling in\n{table}"
    );
    clean("notes-api");
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
    let all = runs(&results);
    assert_eq!(all.len(), 2);
    for run in &all {
        assert!(
            run["notes"].to_string().contains("external target"),
            "{}",
            run["notes"]
        );
        assert!(
            common::number(&run["process"]["steady"]["rss_bytes"]) > 1_048_576.0,
            "{}",
            run["process"]
        );
        assert!(
            run["stopped"].is_null(),
            "an external target is not stopped by the runner"
        );
        let requests = run["scenarios"]["api"]["requests"]
            .as_f64()
            .expect("requests");
        assert!((requests - 80.0).abs() <= 80.0 * 0.02, "{requests}");
    }
    // One server for both runs: the second run's count includes the first's.
    let first = all[0]["metrics"]["steady"]["list_requests"]
        .as_f64()
        .expect("series");
    let second = all[1]["metrics"]["steady"]["list_requests"]
        .as_f64()
        .expect("series");
    assert_eq!(second - first, answered(&all[1]["scenarios"]["api"]));
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

/// Issue 18, item 2: a segment killed during its load never reaches the meeting after it;
/// the other segments fail that run naming it (`barrier`, segment 2), stop instead of waiting
/// at every later run, and exit; nothing of the run is left.
#[test]
fn a_segment_that_dies_fails_the_run_with_its_index() {
    let _machine = shared();
    let (mut server, port) = start_demo_target("1039B");
    let dir = fresh_out("segment-dies");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let barrier = format!("127.0.0.1:{}", free_port());
    let start = |i: u64| {
        Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args(["run", "tests/fixtures/run/segments.toml"])
            .args(["--segment", &format!("{i}/3"), "--barrier", &barrier])
            .args(["--barrier-timeout", "3s", "--out"])
            .arg(dir.join(format!("part-{i}.json")))
            .env("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())
            .env("HEADROOM_TEST_STEPS", dir.join("steps.txt"))
            .current_dir(root())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a segment")
    };
    let survivors = [start(0), start(1)];
    let mut doomed = start(2);
    // The load starts half a second after all three met; two seconds in, it is under way.
    std::thread::sleep(Duration::from_secs(2));
    let _ = doomed.kill();
    let _ = doomed.wait();
    let started = std::time::Instant::now();
    for (i, survivor) in survivors.into_iter().enumerate() {
        let output = survivor.wait_with_output().expect("a segment ran");
        assert_eq!(
            output.status.code(),
            Some(3),
            "segment {i}: {}",
            stderr(&output)
        );
        let results = read_results(&dir.join(format!("part-{i}.json")));
        let failure = &runs(&results)[0]["failure"];
        assert_eq!(failure["kind"], "barrier", "segment {i}: {failure}");
        if i == 0 {
            assert_eq!(failure["segments"], serde_json::json!([2]), "{failure}");
        }
        let message = failure["message"].as_str().expect("words");
        assert!(
            message.contains("segment 2/3 never reached the barrier"),
            "{message}"
        );
    }
    // Within the meeting's timeout, with room for the load and the exit.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(leftovers("1039B").is_empty());
    clean("segment-dies");
}

/// Issue 18: one demo target loaded by one process, then by three segment processes at once.
/// Merged, the shares are the whole run's load exactly: the open model's fixed arrivals over a
/// ramp and a hold to the request, the virtual users one each (3 + 2 + 2), the rooms whole
/// (2 + 2 + 1), every frame delivered. A share judges no SLO; the merge judges them on the
/// merged figures (90 requests a second pass `>= 80/s`, which no share's 30 would). Two of the
/// three parts are refused, naming the missing one. The setup and teardown steps run once, on
/// segment 0; without a barrier to wait for them, segments are refused.
#[test]
fn three_segments_merge_into_the_single_process_run() {
    let _machine = shared();
    let (mut server, port) = start_demo_target("1038B");
    let env = ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string());
    let dir = fresh_out("segments");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let spec = "tests/fixtures/run/segments.toml";
    let steps_file = dir.join("steps.txt");
    let steps = ("HEADROOM_TEST_STEPS", steps_file.display().to_string());
    let steps_run = || std::fs::read_to_string(&steps_file).unwrap_or_default();
    let whole_path = dir.join("whole.json");
    let whole_arg = whole_path.display().to_string();
    let whole = headroom_unlocked(
        &["run", spec, "--out", &whole_arg, "--no-page"],
        &[env.clone(), steps.clone()],
    );
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert_eq!(steps_run(), "sign-up\nseed\nclean-up\n");
    // Segments run steps with a barrier only: segment 0 runs them, the others wait for it.
    let refused = headroom_unlocked(
        &["run", spec, "--segment", "1/3", "--out", &whole_arg],
        &[env.clone(), steps.clone()],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("give every segment `--barrier HOST:PORT`"),
        "{}",
        stderr(&refused)
    );
    let barrier = format!("127.0.0.1:{}", free_port());
    let segments: Vec<std::process::Child> = (0..3)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args(["run", spec, "--segment", &format!("{i}/3")])
                .args(["--barrier", &barrier, "--out"])
                .arg(dir.join(format!("part-{i}.json")))
                .env(env.0, &env.1)
                .env(steps.0, &steps.1)
                .current_dir(root())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("a segment")
        })
        .collect();
    for segment in segments {
        let output = segment.wait_with_output().expect("a segment ran");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let _ = server.kill();
    let _ = server.wait();
    // Once more, by segment 0 alone: the others' runs say so.
    assert_eq!(steps_run(), "sign-up\nseed\nclean-up\n".repeat(2));
    let parts: Vec<String> = (0..3)
        .map(|i| dir.join(format!("part-{i}.json")).display().to_string())
        .collect();
    let shares: Vec<Value> = parts.iter().map(|p| read_results(Path::new(p))).collect();
    shares_start_together_each_with_its_own(&shares);

    let merged_path = dir.join("merged.json");
    let merged_arg = merged_path.display().to_string();
    // Results of another bench already there are kept, as `run --out` keeps them (a merge
    // replaced them silently).
    let other = std::fs::read_to_string(root().join("tests/fixtures/render/relay-results.json"))
        .expect("the relay fixture");
    std::fs::write(&merged_path, &other).expect("written");
    let mut args = vec!["merge", "--out", merged_arg.as_str()];
    args.extend(parts.iter().map(String::as_str));
    let merge = headroom_unlocked(&args, &[]);
    assert!(merge.status.success(), "{}", stderr(&merge));
    assert!(
        stderr(&merge).contains(&format!(
            "note: the results that were at {merged_arg} are kept as {merged_arg}.prev"
        )),
        "{}",
        stderr(&merge)
    );
    let kept = std::fs::read_to_string(dir.join("merged.json.prev")).expect("the earlier file");
    assert_eq!(kept, other, "the earlier file is kept whole");
    let merged = read_results(&merged_path);
    assert!(merged["segment"].is_null());
    let whole = read_results(&whole_path);
    the_merge_is_the_whole_run(&whole, &merged, &shares);

    let missing = headroom_unlocked(&["merge", &parts[0], &parts[1]], &[]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("segment 2/3 is missing: give all 3 segments"),
        "{}",
        stderr(&missing)
    );
    assert!(leftovers("1038B").is_empty());
    clean("segments");
}

/// Every share of the segmented run: its index, one seed, no SLO judged, steps on segment 0
/// only, one load start, and its own virtual users and whole rooms, their holds together.
fn shares_start_together_each_with_its_own(shares: &[Value]) {
    for (i, share) in shares.iter().enumerate() {
        assert_eq!(share["segment"]["index"], i, "{}", share["segment"]);
        assert_eq!(share["segment"]["count"], 3);
        assert_eq!(share["seed"], shares[0]["seed"], "one seed for every share");
        assert_eq!(
            runs(share)[0]["slo"],
            serde_json::json!([]),
            "a share judges no SLO"
        );
        let notes = runs(share)[0]["notes"].to_string();
        assert_eq!(
            i > 0,
            notes.contains("steps run on segment 0 only"),
            "{notes}"
        );
    }
    // One start for every share, announced by segment 0's barrier.
    let starts: Vec<u64> = shares
        .iter()
        .map(|s| runs(s)[0]["load_start_ms"].as_u64().expect("a load start"))
        .collect();
    assert!(starts.iter().all(|&s| s == starts[0]), "{starts:?}");
    let users: Vec<u64> = shares
        .iter()
        .map(|s| {
            runs(s)[0]["scenarios"]["users"]["connections"]["opened"]
                .as_u64()
                .expect("opened")
        })
        .collect();
    assert_eq!(users, [3, 2, 2], "seven virtual users, each in one share");
    let rooms: Vec<u64> = shares
        .iter()
        .map(|s| {
            runs(s)[0]["scenarios"]["chat"]["rooms"]["rooms"]
                .as_u64()
                .expect("rooms")
        })
        .collect();
    assert_eq!(rooms, [2, 2, 1], "five rooms, each whole in one share");
    // The rooms' holds start together too: the segments met once their sockets were open.
    let holds: Vec<f64> = shares
        .iter()
        .map(|s| common::number(&runs(s)[0]["scenarios"]["chat"]["rooms"]["hold_started_s"]))
        .collect();
    assert!(
        holds.iter().all(|h| (h - holds[0]).abs() < 0.05),
        "{holds:?}"
    );
}

/// The merge of the shares is the single-process run's load exactly, its histograms the
/// shares' added, its SLOs judged on the merged figures.
fn the_merge_is_the_whole_run(whole: &Value, merged: &Value, shares: &[Value]) {
    let (one, all) = (&runs(whole)[0]["scenarios"], &runs(merged)[0]["scenarios"]);
    // 45 arrivals over the 1 s ramp from 0 to 90/s, 180 over the 2 s hold: exactly.
    assert_eq!(one["api"]["requests"], 180);
    assert_eq!(all["api"]["requests"], 180);
    assert_eq!(one["api"]["ramps"]["requests"], 45);
    assert_eq!(all["api"]["ramps"]["requests"], 45);
    assert_eq!(
        all["api"]["latency"]["count"], 180,
        "the shares' histograms added"
    );
    // Its percentiles are those of every share's samples together, to the histogram's
    // precision: the three parts' histograms, read from their files and added here.
    let mut together = headroom_results::histogram::new();
    for share in shares {
        let text = runs(share)[0]["scenarios"]["api"]["histograms"]["latency"]
            .as_str()
            .expect("a histogram");
        let part = headroom_results::deserialize_histogram(text).expect("readable");
        together.add(&part).expect("same shape");
    }
    for (q, key) in [(0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")] {
        let expected = together.value_at_quantile(q) as f64 / 1000.0;
        let merged = common::number(&all["api"]["latency"][key]);
        assert!(
            (merged - expected).abs() <= expected * 0.001 + 0.001,
            "{key}: {merged} vs {expected}"
        );
    }
    assert_eq!(all["users"]["connections"]["opened"], 7);
    let (one_chat, all_chat) = (&one["chat"]["rooms"], &all["chat"]["rooms"]);
    assert_eq!(all_chat["sockets"]["opened"], 20);
    assert_eq!(all_chat["messages"]["sent"], one_chat["messages"]["sent"]);
    assert_eq!(
        all_chat["messages"]["delivered"],
        all_chat["messages"]["expected"]
    );
    let verdicts = &runs(merged)[0]["slo"];
    let throughput = verdicts
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["name"] == "throughput")
        .expect("judged on the merge");
    assert_eq!(throughput["pass"], true, "{throughput}");
    let rate = common::number(&all["api"]["rate"]);
    assert!((rate - 90.0).abs() < 0.5, "{rate}");
    assert_eq!(
        runs(merged)[0]["generator"]["segments"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[test]
fn a_phase_reruns_alone_and_the_file_keeps_the_others() {
    let (output, before) = run_fixture("phases", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let started = |results: &Value, phase: usize| {
        results["phases"][phase]["points"][0]["runs"][0]["started_ms"].as_u64()
    };
    let out = out("phases").display().to_string();
    let output = headroom(
        &[
            "run",
            "tests/fixtures/run/phases.toml",
            "--out",
            &out,
            "--phase",
            "second",
            "--check",
        ],
        &[],
    );
    // The impossible SLO fails, and `--check` says so with exit code 2.
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let after = read_results(Path::new(&out));
    assert_eq!(after["phases"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        started(&after, 0),
        started(&before, 0),
        "phase `first` was kept as it was"
    );
    assert!(
        started(&after, 1) > started(&before, 1),
        "phase `second` ran again"
    );
    assert_eq!(
        after["phases"][1]["points"][0]["runs"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let verdict = &after["phases"][1]["points"][0]["runs"][0]["slo"][0];
    assert_eq!(
        (verdict["name"].as_str(), verdict["pass"].as_bool()),
        (Some("impossible"), Some(false))
    );
    assert!(leftovers("1010B").is_empty());
    clean("phases");
}

/// A rooms scenario's `rooms` object and its run (the first), which did not fail.
fn rooms_run<'a>(results: &'a Value, scenario: &str) -> (&'a Value, &'a Value) {
    let (run, rooms) = rooms_of(results, scenario);
    assert!(run["failure"].is_null(), "{}", run["failure"]);
    (run, rooms)
}

/// A rooms scenario's `rooms` object and its run (the first), failed or not.
fn rooms_of<'a>(results: &'a Value, scenario: &str) -> (&'a Value, &'a Value) {
    let run = runs(results)[0];
    (run, &run["scenarios"][scenario]["rooms"])
}

fn verdict<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["slo"]
        .as_array()
        .expect("slo")
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no verdict {name}"))
}

fn count(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{value} is not a count"))
}

#[test]
fn rooms_on_a_healthy_target_deliver_every_frame() {
    let (output, results) = run_fixture("rooms", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (run, rooms) = rooms_run(&results, "chat");
    let sockets = &rooms["sockets"];
    assert_eq!(count(&sockets["opened"]), 40, "{sockets}");
    // The server closes a socket silent for 1 s and pings every 300 ms: nine peers of ten only
    // receive, so they stayed open because the driver answered the pings.
    assert_eq!(count(&sockets["closed_by_server"]), 0, "{sockets}");
    assert_eq!(count(&sockets["closed_by_us"]), 40, "{sockets}");
    assert!(count(&sockets["pings_received"]) > 40, "{sockets}");
    assert!(count(&sockets["pings_sent"]) > 40, "{sockets}");
    // 20 messages a second per room, four rooms, a 3 s hold (Poisson: ±5 σ).
    let messages = &rooms["messages"];
    let sent = count(&messages["sent"]);
    assert!((160..=320).contains(&sent), "{messages}");
    assert_eq!(count(&messages["expected"]), sent * 9, "{messages}");
    assert_eq!(messages["delivered"], messages["expected"], "{messages}");
    assert_eq!(count(&messages["reached_all"]), sent, "{messages}");
    assert_eq!(count(&messages["late"]), 0, "{messages}");
    // The server counted every frame it sent, and still held every socket at steady state.
    let steady = &run["metrics"]["steady"];
    assert_eq!(steady["broadcasts"].as_f64(), Some((sent * 9) as f64));
    assert_eq!(steady["peers"].as_f64(), Some(40.0), "{steady}");
    // Seen by everyone is the last recipient's time: never below a single recipient's.
    for statistic in ["p50_ms", "p95_ms", "max_ms"] {
        assert!(
            common::number(&rooms["seen_by_all"][statistic])
                >= common::number(&rooms["seen"][statistic]),
            "{statistic}"
        );
    }
    // Reloads: every peer about once a second during the hold, answered by the page route.
    let reload = &rooms["reload"];
    let reloads = count(&reload["requests"]);
    assert!((60..=200).contains(&reloads), "{reload}");
    assert_eq!(count(&reload["ok"]), reloads, "{reload}");
    assert_eq!(steady["page_requests"].as_f64(), Some(reloads as f64));
    for name in ["seen", "delivered", "sockets", "closed", "reloads"] {
        assert_eq!(verdict(run, name)["pass"], true, "{}", verdict(run, name));
    }
    assert!(leftovers("1010B").is_empty());
    clean("rooms");
}

#[test]
fn dropped_broadcasts_show_in_delivered_and_reach() {
    let (output, results) = run_fixture("rooms-drop", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (run, rooms) = rooms_run(&results, "chat");
    let messages = &rooms["messages"];
    // 100 messages a second over 3 s, each expected at the 19 other peers of its room.
    let sent = count(&messages["sent"]);
    assert!((295..=305).contains(&sent), "{messages}");
    let expected = count(&messages["expected"]);
    assert_eq!(expected, sent * 19);
    let delivered = count(&messages["delivered"]) as f64 / expected as f64;
    let reach = count(&messages["on_time"]) as f64 / expected as f64;
    assert!((delivered - 0.99).abs() <= 0.005, "delivered {delivered}");
    assert!((reach - 0.99).abs() <= 0.005, "reach {reach}");
    // What the server says it dropped is what we missed.
    let steady = &run["metrics"]["steady"];
    let missed = expected - count(&messages["delivered"]);
    assert_eq!(steady["dropped"].as_f64(), Some(missed as f64), "{steady}");
    assert!(count(&messages["incomplete"]) > 0);
    // A p95 that falls among messages that never reached everyone is "never": a failure with
    // no value, not a fast time.
    let seen = verdict(run, "seen");
    assert_eq!(seen["pass"], false, "{seen}");
    assert!(seen["value"].is_null(), "{seen}");
    assert!(seen["note"].as_str().is_some_and(|n| n.contains("never")));
    assert_eq!(verdict(run, "delivered")["pass"], false);
    assert_eq!(verdict(run, "reach")["pass"], true);
    assert!(leftovers("1011B").is_empty());
    clean("rooms-drop");
}

#[test]
fn a_stalling_target_shows_in_the_delivery_tail() {
    let (output, results) = run_fixture("rooms-stall", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (run, rooms) = rooms_run(&results, "typing");
    let messages = &rooms["messages"];
    assert_eq!(messages["delivered"], messages["expected"], "{messages}");
    // 200 ms stalls every second hold the messages that arrive during them.
    let seen = &rooms["seen"];
    assert!(common::number(&seen["p99_ms"]) >= 150.0, "{seen}");
    assert!(common::number(&seen["p50_ms"]) < 100.0, "{seen}");
    assert!(common::number(&rooms["seen_by_all"]["p99_ms"]) >= 150.0);
    assert_eq!(verdict(run, "seen")["pass"], false);
    assert!(leftovers("1012B").is_empty());
    clean("rooms-stall");
}

/// `headroom run --quick` on an example, checked against its schema; the runs, each whole.
/// The examples' quick runs load the machine (chat opens 12,800 sockets, and the demo target
/// holds 1.8 GiB for them): run together on two cores they starve each other's targets, and
/// sockets time out for reasons that are the test's, not the target's. One at a time.
fn examples_one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static EXAMPLES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    EXAMPLES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run_example_quick(name: &str, extra: &[&str]) -> Value {
    let _alone = examples_one_at_a_time();
    run_example_quick_beside_others(name, extra)
}

/// An example whose checks hold whatever runs beside it (counts, limits, what the page says;
/// no latency or CPU known answer), so it need not wait for the others: it shares the
/// machine with them.
fn run_example_quick_beside_others(name: &str, extra: &[&str]) -> Value {
    let out = fresh_out(name);
    run_spec_quick(name, &format!("examples/{name}.toml"), &out, extra)
}

/// `run --quick` of `spec` (relative to the repository) into `out`; every run must pass.
fn run_spec_quick(name: &str, spec: &str, out: &Path, extra: &[&str]) -> Value {
    let out_arg = out.display().to_string();
    let mut args = vec!["run", "--quick", spec, "--out", &out_arg];
    args.extend(extra);
    // The chat's phases are CPU sizes: another test's load would take CPU from its targets.
    let output = if name == "chat" {
        headroom_alone(&args)
    } else {
        headroom(&args, &[])
    };
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(out);
    for run in runs(&results) {
        assert!(run["failure"].is_null(), "{}", run["failure"]);
    }
    results
}

#[test]
fn chat_runs_quick_end_to_end() {
    // The half and the whole CPU hold the known answers; the two-CPU phase (the whole of this
    // machine's cores, none left to the generator) would double the test's time for none. The
    // sweeps are the quick sweep's first two steps, 100 and 1,600 people, where the known
    // answers are: its third, 12,800 people, took 123 s of the test's 158 on this machine.
    let _alone = examples_one_at_a_time();
    let out = fresh_out("chat");
    let example = std::fs::read_to_string(root().join("examples/chat.toml")).expect("the example");
    let cut = example.replace("to = 12800, factor = 2", "to = 1600, factor = 16");
    assert_eq!(
        cut.matches("to = 1600,").count(),
        3,
        "the chat's three sweeps"
    );
    let spec = out.with_file_name("chat.toml");
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("the test's folder");
    std::fs::write(&spec, cut).expect("the example, its sweeps cut");
    let spec_arg = spec.display().to_string();
    let phases_run = ["--phase", "cpu-0.5", "--phase", "cpu-1"];
    let results = run_spec_quick("chat", &spec_arg, &out, &phases_run);
    let phases = results["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2);
    let limited = headroom_runner::cgroup::detect().is_ok();
    for phase in phases {
        let mut rss = Vec::new();
        for point in phase["points"].as_array().expect("points") {
            let people = count(&point["at"]["people"]);
            let run = &point["runs"][0];
            let rooms = &run["scenarios"]["chat"]["rooms"];
            if limited {
                // Issue 14: each phase ran in its CPU size, and the server kept to it.
                assert_eq!(run["limits"]["status"], "applied", "{}", run["limits"]);
                let cpus = common::number(&run["limits"]["cpus"]);
                let cores = common::number(&run["process"]["hold_cpu_cores"]);
                assert!(
                    cores <= cpus * 1.1 + 0.02,
                    "{cores} cores under cpus = {cpus}"
                );
            }
            rss.push(count(&run["process"]["steady"]["rss_bytes"]));
            // 100 people (and 1,600 with a CPU or more) over 10 channels: every socket opens
            // and every post reaches everyone in its channel. Past what the CPU size holds,
            // sockets may time out and posts fall behind: that is what the phase measures.
            let holds = people <= 100 || (people <= 1600 && phase["name"] != "cpu-0.5");
            if !holds {
                continue;
            }
            assert_eq!(
                count(&rooms["sockets"]["opened"]),
                people,
                "{}",
                rooms["sockets"]
            );
            assert_eq!(count(&rooms["sockets"]["failed"]["timeout"]), 0);
            let messages = &rooms["messages"];
            assert_eq!(messages["delivered"], messages["expected"], "{messages}");
            if people == 1600 {
                assert!(count(&messages["expected"]) > 1000, "{messages}");
                assert!(count(&rooms["reload"]["requests"]) > 0);
            }
        }
        // The server holds more for more people online.
        assert!(rss.windows(2).all(|w| w[0] < w[1]), "{rss:?}");
    }
    if !limited {
        common::say("skipped the CPU sizes' ceilings: no writable cgroup, the phases ran alike");
        clean("chat");
        return;
    }
    // Issue 14: the CPU sizes give different ceilings. The demo server spends 250 µs a frame:
    // 1,600 people take about 0.65 of a core, more than half a CPU holds and less than one.
    let seen_at = |phase: usize, point: usize| {
        let verdicts = &results["phases"][phase]["points"][point]["runs"][0]["slo"];
        verdicts
            .as_array()
            .expect("verdicts")
            .iter()
            .find(|v| v["name"] == "seen")
            .map(|v| v["pass"].clone())
            .expect("the seen SLO")
    };
    assert_eq!(seen_at(0, 0), true, "cpu-0.5 holds 100 people");
    assert_eq!(seen_at(0, 1), false, "cpu-0.5 does not hold 1,600");
    assert_eq!(seen_at(1, 1), true, "cpu-1 holds 1,600");

    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    let row = |phase: &str, cpus: &str, good: &str, bad: &str| {
        let start = format!("| `{phase}` | {cpus} CPU, 4GiB memory, no swap (cgroup v");
        let end = format!(") | people = {good} | {bad} |");
        page.lines()
            .any(|l| l.starts_with(&start) && l.ends_with(&end))
    };
    assert!(row("cpu-0.5", "0.5", "100", "people = 1600"), "{page}");
    assert!(row("cpu-1", "1", "1600", "none: a lower bound"), "{page}");
    clean("chat");
}

#[test]
fn relay_runs_quick_end_to_end() {
    let results = run_example_quick("relay", &[]);
    let phases = results["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["memory", "edit-rate", "rooms"]);
    for phase in phases {
        for point in phase["points"].as_array().expect("points") {
            let rooms = &point["runs"][0]["scenarios"]["edits"]["rooms"];
            assert_eq!(rooms["sockets"]["opened"], rooms["sockets"]["planned"]);
            let messages = &rooms["messages"];
            assert!(count(&messages["sent"]) > 0, "{messages}");
            assert_eq!(messages["delivered"], messages["expected"], "{messages}");
            // An edit reaches the reader after the relay's 2.2 s save window and a rebuild
            // pass; at high edit rates, later edits join a window already open.
            let statistic = if phase["name"] == "edit-rate" {
                "max_ms"
            } else {
                "min_ms"
            };
            assert!(
                common::number(&rooms["seen_by_all"][statistic]) >= 2200.0,
                "{rooms}"
            );
        }
    }
    // Memory per open room: 220 KiB of document each, held while the sockets are open.
    let memory: Vec<(u64, u64)> = phases[0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            (
                count(&p["at"]["rooms"]),
                count(&p["runs"][0]["process"]["steady"]["rss_bytes"]),
            )
        })
        .collect();
    let (first, last) = (memory[0], memory[memory.len() - 1]);
    let per_room = (last.1 - first.1) as f64 / (last.0 - first.0) as f64;
    assert!(
        per_room >= 220.0 * 1024.0,
        "{per_room} bytes per room: {memory:?}"
    );
    // More rooms, more rebuild work per pass: the delivery time grows with the room count.
    let delivery: Vec<f64> = phases[2]["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| {
            p["runs"][0]["scenarios"]["edits"]["rooms"]["seen_by_all"]["max_ms"].as_f64()
        })
        .collect();
    assert!(delivery.windows(2).all(|w| w[0] < w[1]), "{delivery:?}");
    clean("relay");
}

#[test]
fn sockets_that_fail_are_counted_by_why() {
    let (output, results) = run_fixture("rooms-failures", &[], &[]);
    // A scenario none of whose sockets opened measured nothing: the run fails, named (issue
    // 12), and its SLOs are still judged on what was measured (every socket failed).
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let (run, missing) = rooms_of(&results, "missing");
    assert_eq!(
        run["failure"]["kind"], "nothing_measured",
        "{}",
        run["failure"]
    );
    assert_eq!(run["failure"]["scenario"], "missing");
    assert_eq!(
        run["failure"]["why"],
        "none of its 5 sockets opened (0 refused, 5 answered the upgrade with another status, 0 timed out, 0 other)"
    );
    assert_eq!(count(&missing["sockets"]["opened"]), 0);
    assert_eq!(
        count(&missing["sockets"]["failed"]["status"]),
        5,
        "{}",
        missing["sockets"]
    );
    let refused = &run["scenarios"]["refused"]["rooms"]["sockets"];
    assert_eq!(count(&refused["failed"]["refused"]), 5, "{refused}");
    let quiet = &run["scenarios"]["quiet"]["rooms"]["sockets"];
    assert_eq!(count(&quiet["opened"]), 5, "{quiet}");
    assert_eq!(count(&quiet["closed_by_server"]), 5, "{quiet}");
    assert_eq!(count(&quiet["closed_by_us"]), 0, "{quiet}");
    for name in ["missing", "refused", "quiet"] {
        let verdict = verdict(run, name);
        assert_eq!(verdict["pass"], false, "{verdict}");
        assert_eq!(verdict["value"].as_f64(), Some(1.0), "{verdict}");
    }
    assert!(leftovers("1013B").is_empty());
    clean("rooms-failures");
}

/// Issue 11, item 19: the first spec of docs/getting-started.md, run as a newcomer runs it,
/// finds its ceiling and prices an instance per request per second. The server spends 1 ms on
/// every request, one at a time, so it answers at most 1,000 a second: `--quick` runs 100, 400
/// and 1,600 a second, and the SLO ceiling is 400 (the first failing step 1,600). At 2 ms a
/// request, 400 a second was 80 % of the server and failed its p95 now and then on a shared
/// 2-core machine whose generator took CPU from it; at 40 % it holds.
#[test]
fn the_getting_started_spec_finds_its_ceiling_and_prices_it() {
    let _alone = examples_one_at_a_time();
    let docs = std::fs::read_to_string(root().join("docs/getting-started.md")).expect("docs");
    let spec = docs
        .split("```toml\n")
        .nth(1)
        .and_then(|block| block.split("```").next())
        .expect("the first spec block");
    assert!(spec.contains("name = \"first\""), "{spec}");
    let out = fresh_out("getting-started");
    let dir = out.parent().expect("dir");
    std::fs::create_dir_all(dir).expect("dir");
    let spec_path = dir.join("first.toml");
    std::fs::write(
        &spec_path,
        spec.replace("#:schema ../schemas/spec.schema.json\n", ""),
    )
    .expect("spec");
    let (spec_arg, out_arg) = (spec_path.display().to_string(), out.display().to_string());
    let output = headroom_alone(&["run", "--quick", &spec_arg, "--out", &out_arg]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = headroom(&["plan", &spec_arg, "--results", &out_arg, "--json"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("plan json");
    assert_eq!(report["unit"], "req/s");
    let slo = &report["slo_ceiling"];
    assert_eq!(slo["phase"], "rate");
    assert_eq!(common::number(&slo["units"]), 400.0, "{slo}");
    assert_eq!(common::number(&slo["first_failing"]), 1600.0, "{slo}");
    assert_eq!(slo["lower_bound"], false);
    for instance in report["instances"].as_array().expect("instances") {
        assert_eq!(instance["binding"]["resource"], "slo", "{instance}");
        assert_eq!(
            common::number(&instance["planned_units"]),
            400.0,
            "{instance}"
        );
        assert!(
            common::number(&instance["usd_per_unit_month"]) > 0.0,
            "{instance}"
        );
        assert!(instance["not_priced"].is_null(), "{instance}");
    }
    // Issue 14, item 3: the server's CPU is read over the hold, where the load is. The known
    // answer: 1 ms of CPU per request is at least 0.1 core at 100/s and 0.4 at 400/s (HTTP
    // handling adds to it); at 1,600/s the single-threaded server saturates near one core.
    let results = read_results(&out);
    let cores: Vec<f64> = results["phases"][0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|point| common::number(&point["runs"][0]["process"]["hold_cpu_cores"]))
        .collect();
    assert_eq!(cores.len(), 3, "{cores:?}");
    assert!((0.1..0.3).contains(&cores[0]), "{cores:?}");
    assert!((0.4..0.9).contains(&cores[1]), "{cores:?}");
    assert!((0.8..1.4).contains(&cores[2]), "{cores:?}");
    let output = headroom(&["fit", "--json", &out_arg], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let fits: Value = serde_json::from_slice(&output.stdout).expect("fit json");
    let cpu = fits["fits"]
        .as_array()
        .expect("fits")
        .iter()
        .find(|f| f["series"] == "cpu")
        .expect("a cpu fit over the hold");
    assert!(common::number(&cpu["slope"]) > 0.0, "{cpu}");
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    assert!(page.contains("## Cost per req/s"), "{page}");
    assert!(page.contains("| 400 (SLO) |"), "{page}");
    assert!(!page.contains("No instances were priced"), "{page}");
    clean("getting-started");
}

/// Issue 14: limits ignored with --ignore-limits are said in plain words, in each run's
/// results and notes and under the phase's table, not only in the results file.
#[test]
fn limits_that_were_ignored_are_said_on_the_run_table() {
    let (output, results) = run_fixture("limits", &["--no-page", "--ignore-limits"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("note: [target] limits were ignored (--ignore-limits): the target ran with the whole machine's CPUs and memory"),
        "{stdout}"
    );
    for run in runs(&results) {
        assert_eq!(run["notes"][0], headroom_runner::LIMITS_IGNORED);
        assert_eq!(run["limits"]["status"], "ignored");
    }
    // Issue 12: running again keeps the earlier file whole beside the new one, and the lock
    // is gone once the run ends.
    let first = std::fs::read(out("limits")).expect("first results");
    let out_arg = out("limits").display().to_string();
    let output = headroom(
        &[
            "run",
            "tests/fixtures/run/limits.toml",
            "--out",
            &out_arg,
            "--no-page",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is kept as") && stderr(&output).contains("results.json.prev"),
        "{}",
        stderr(&output)
    );
    let prev = out("limits").with_file_name("results.json.prev");
    assert_eq!(std::fs::read(prev).expect("the earlier results"), first);
    assert!(!out("limits").with_file_name("results.json.lock").exists());
    assert!(leftovers("1021B").is_empty());
    clean("limits");
}

/// Issue 12: `run --check` does not call an unmeasured SLO green: CPU read once at the steady
/// state is not measured, the table says so, and `--check` exits 2.
#[test]
fn check_fails_on_an_slo_that_was_not_measured() {
    let (output, results) = run_fixture("unmeasured", &["--check", "--no-page"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("error: 0 SLO verdicts failed and 1 were not measured"),
        "{}",
        stderr(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("not measured: cpu"), "{stdout}");
    let run = runs(&results)[0];
    assert!(run["failure"].is_null(), "{}", run["failure"]);
    assert_eq!(verdict(run, "cpu")["pass"], Value::Null);
    assert_eq!(verdict(run, "failed")["pass"], true);
    assert!(leftovers("1022B").is_empty());
    clean("unmeasured");
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

/// Issue 12: a metrics path that answers 404 on every scrape is not a silent gap: the failed
/// scrapes are counted with why, and the declared series that no scrape held fails the point,
/// named, instead of a page that says the metrics were read.
#[test]
fn a_series_no_scrape_held_fails_the_point() {
    let (output, results) = run_fixture("metrics-404", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let run = runs(&results)[0];
    assert_eq!(run["metrics"]["failed_scrapes"], 3, "{}", run["metrics"]);
    assert_eq!(
        run["metrics"]["scrape_error"],
        "GET /no-metrics-here answered 404"
    );
    assert_eq!(
        run["failure"]["kind"], "metrics_missing",
        "{}",
        run["failure"]
    );
    assert_eq!(run["failure"]["series"], serde_json::json!(["notes"]));
    assert_eq!(
        run["failure"]["why"],
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
    let run = runs(&results)[0];
    assert_eq!(run["failure"]["kind"], "spawn_failed");
    let message = run["failure"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("the target's working directory ")
            && message.ends_with(
                "no-such-folder does not exist (`cwd` in [target], relative to the spec)"
            ),
        "{message}"
    );
    clean("missing-cwd");
}

/// Issue 12: a second Ctrl-C stops waiting. The first stops the load and starts the stop's
/// 60 s grace (the target ignores SIGTERM); the second ends headroom at once, and nothing of
/// the run is left: the target's group is killed and the lock is gone.
#[test]
fn a_second_ctrl_c_stops_waiting() {
    let _machine = shared();
    let out = fresh_out("slow-stop");
    let child = start_in_background("slow-stop", &out, "1025B");
    std::thread::sleep(Duration::from_secs(1));
    send("INT", &child);
    std::thread::sleep(Duration::from_secs(1));
    // Still waiting on the grace: the target ignores SIGTERM.
    assert!(
        !leftovers("1025B").is_empty(),
        "the first Ctrl-C waits for the grace"
    );
    let second = std::time::Instant::now();
    send("INT", &child);
    let output = child.wait_with_output().expect("wait");
    assert!(
        second.elapsed() < Duration::from_secs(5),
        "{:?}",
        second.elapsed()
    );
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("interrupted again (Ctrl-C): not waiting"),
        "{}",
        stderr(&output)
    );
    wait_until(Duration::from_secs(5), || leftovers("1025B").is_empty());
    assert!(leftovers("1025B").is_empty(), "{:?}", leftovers("1025B"));
    assert!(!out.with_file_name("results.json.lock").exists());
    clean("slow-stop");
}

/// Whether this machine has a cgroup headroom may write; `false` printed as a skip, with why.
fn cgroups_writable(test: &str) -> bool {
    match headroom_runner::cgroup::detect() {
        Ok(_) => true,
        Err(why) => {
            common::say(&format!("skipped {test}: {why}"));
            false
        }
    }
}

/// The pids of the processes whose command line holds `marker` (a test's targets).
fn target_pids(marker: &str) -> Vec<u32> {
    leftovers(marker)
        .iter()
        .filter_map(|line| line.split(':').next()?.parse().ok())
        .collect()
}

/// The cgroup folders headroom made that `pid` is in, from /proc/PID/cgroup (hierarchies
/// mounted at /sys/fs/cgroup/CONTROLLERS for v1, /sys/fs/cgroup or its `unified` for v2).
fn headroom_cgroups_of(pid: u32) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let mut dirs = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !path
            .rsplit('/')
            .next()
            .unwrap_or("")
            .starts_with("headroom-")
        {
            continue;
        }
        let inside = path.trim_start_matches('/');
        let candidates = if controllers.is_empty() {
            vec![
                Path::new("/sys/fs/cgroup/unified").join(inside),
                Path::new("/sys/fs/cgroup").join(inside),
            ]
        } else {
            vec![Path::new("/sys/fs/cgroup").join(controllers).join(inside)]
        };
        dirs.extend(candidates.into_iter().filter(|d| d.is_dir()));
    }
    dirs
}

/// Issue 14: a target that spins two threads uses what its quota gives it, measured from
/// /proc (not the cgroup's counter): half a CPU under `cpus = 0.5`, one under `cpus = 1`.
#[test]
fn a_busy_target_is_held_to_its_cpu_quota() {
    if !cgroups_writable("a_busy_target_is_held_to_its_cpu_quota") {
        return;
    }
    // Another test's load would take CPU from the target: the machine is this test's alone.
    let out = fresh_out("busy");
    let out_arg = out.display().to_string();
    let spec = "tests/fixtures/run/busy.toml";
    let output = headroom_alone(&["run", spec, "--out", &out_arg, "--no-page"]);
    let results = read_results(&out);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("limits: a cgroup per run, in cgroup v"),
        "{}",
        stderr(&output)
    );
    let runs = runs(&results);
    assert_eq!(runs.len(), 2);
    for (run, cpus) in runs.iter().zip([0.5, 1.0]) {
        let limits = &run["limits"];
        assert_eq!(limits["status"], "applied", "{limits}");
        assert_eq!(common::number(&limits["cpus"]), cpus);
        assert!(
            common::number(&limits["throttled_periods"]) > 0.0,
            "spinning threads are throttled: {limits}"
        );
        let cores = common::number(&run["process"]["hold_cpu_cores"]);
        let tolerance = if cpus < 1.0 { 0.05 } else { 0.1 };
        assert!(
            (cores - cpus).abs() <= tolerance,
            "{cores} cores under cpus = {cpus}"
        );
    }
    assert!(leftovers("1026B").is_empty(), "{:?}", leftovers("1026B"));
    clean("busy");
}

/// Issue 14: a target that touches memory past its limit is killed by the kernel, and the run
/// says so by name; the points before it are intact and the results written.
#[test]
fn a_target_over_its_memory_limit_is_a_named_failure() {
    if !cgroups_writable("a_target_over_its_memory_limit_is_a_named_failure") {
        return;
    }
    let (output, results) = run_fixture("oom", &["--no-page"], &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("killed by the 256MiB memory limit at point rooms = 400"),
        "{stdout}"
    );
    let runs = runs(&results);
    assert_eq!(runs.len(), 3);
    for run in &runs[..2] {
        assert!(run["failure"].is_null(), "{run}");
        assert_eq!(count(&run["limits"]["oom_kills"]), 0);
        assert_eq!(
            run["scenarios"]["chat"]["rooms"]["sockets"]["opened"],
            run["scenarios"]["chat"]["rooms"]["sockets"]["planned"]
        );
    }
    let killed = &runs[2];
    assert_eq!(killed["failure"]["kind"], "out_of_memory", "{killed}");
    assert_eq!(killed["failure"]["at"], "rooms = 400");
    assert_eq!(count(&killed["limits"]["oom_kills"]), 1, "{killed}");
    // The peak reached the limit: the kernel killed it there.
    assert!(common::number(&killed["limits"]["memory_peak_bytes"]) >= 250.0 * 1048576.0);
    assert!(leftovers("1027B").is_empty(), "{:?}", leftovers("1027B"));
    clean("oom");
}

/// Issue 14: no cgroup outlives its run: not after Ctrl-C, not after headroom is killed with
/// SIGKILL (its guard removes it), and a stale one a dead headroom left is removed by the next
/// run.
#[test]
fn no_cgroup_is_left_behind() {
    let _machine = shared();
    if !cgroups_writable("no_cgroup_is_left_behind") {
        return;
    }
    // A cgroup named for a headroom that is gone (no such pid): the next run removes it.
    let Ok(
        headroom_runner::cgroup::Hierarchy::V1 { cpu: parent, .. }
        | headroom_runner::cgroup::Hierarchy::V2 { parent },
    ) = headroom_runner::cgroup::detect()
    else {
        panic!("a writable cgroup was detected above");
    };
    let stale = parent.join("headroom-2147483000-1-1");
    std::fs::create_dir(&stale).expect("a stale cgroup");
    for signal in ["INT", "KILL"] {
        let out = fresh_out("killed");
        let child = start_in_background("killed", &out, "1028B");
        assert!(!stale.exists(), "{} was left", stale.display());
        let target = target_pids("1028B");
        let dirs: Vec<PathBuf> = target
            .iter()
            .flat_map(|pid| headroom_cgroups_of(*pid))
            .collect();
        assert!(
            !dirs.is_empty(),
            "{signal}: the target is in a cgroup of headroom's"
        );
        send(signal, &child);
        let output = child.wait_with_output().expect("wait");
        wait_until(Duration::from_secs(5), || {
            dirs.iter().all(|d| !d.exists()) && leftovers("1028B").is_empty()
        });
        let left: Vec<_> = dirs.iter().filter(|d| d.exists()).collect();
        assert!(
            left.is_empty(),
            "{signal}: {left:?} left; {}",
            stderr(&output)
        );
        assert!(
            leftovers("1028B").is_empty(),
            "{signal}: {:?}",
            leftovers("1028B")
        );
    }
    clean("killed");
}

/// Issue 14: limits larger than the machine (more cores, more memory than is available) stop
/// the run before anything starts, naming both numbers; no results file is written.
#[test]
fn limits_larger_than_the_machine_are_refused_before_the_first_run() {
    for (phase, asked) in [
        ("cores", "asks for `cpus = 1000` and this machine has "),
        (
            "memory",
            "asks for `memory = \"900TiB\"` and this machine has ",
        ),
    ] {
        let (output, _) = run_without_results("too-big", &["--phase", phase]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let said = stderr(&output);
        assert!(
            said.contains(&format!("phase `{phase}` point 1 {asked}")),
            "{said}"
        );
        assert!(said.contains("or pass --ignore-limits"), "{said}");
        assert!(!out("too-big").exists(), "nothing ran, nothing is written");
        assert!(leftovers("1029B").is_empty());
    }
    clean("too-big");
}

/// Runs a fixture that is expected to write no results.
fn run_without_results(name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let out = fresh_out(name);
    let spec = format!("tests/fixtures/run/{name}.toml");
    let out_arg = out.display().to_string();
    let mut args = vec!["run", spec.as_str(), "--out", out_arg.as_str()];
    args.extend(extra);
    (headroom(&args, &[]), out)
}

/// Issue 14: `[plan] emulate` measures each instance's SLO ceiling in its shape. Known answer:
/// the demo target answers one request at a time in 1 ms of CPU, so at a t4g.small's 0.4 CPU
/// baseline it holds 200 a second and not 500, while a whole CPU (c7g.medium) holds 500; the
/// planner prices the sustained ceiling and the credits above it from those measurements.
#[test]
fn emulated_instances_have_measured_ceilings() {
    if !cgroups_writable("emulated_instances_have_measured_ceilings") {
        return;
    }
    let out = fresh_out("emulate");
    let out_arg = out.display().to_string();
    let output = headroom_alone(&["run", "tests/fixtures/run/emulate.toml", "--out", &out_arg]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(&out);
    let phases: Vec<&str> = results["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        phases,
        [
            "rate",
            "rate@c7g.medium",
            "rate@t4g.small",
            "rate@t4g.small-baseline"
        ]
    );
    let baseline = &results["phases"][3]["points"];
    for (point, (rate, pass)) in [("200/s", true), ("500/s", false)].iter().enumerate() {
        let run = &baseline[point + 1]["runs"][0];
        assert_eq!(common::number(&run["limits"]["cpus"]), 0.4, "{rate}");
        let p95 = run["slo"]
            .as_array()
            .expect("verdicts")
            .iter()
            .find(|v| v["name"] == "p95")
            .expect("p95");
        assert_eq!(p95["pass"], *pass, "{rate}: {p95}");
    }
    let json = headroom(
        &[
            "plan",
            "tests/fixtures/run/emulate.toml",
            "--results",
            &out_arg,
            "--json",
        ],
        &[],
    );
    let report: Value = serde_json::from_slice(&json.stdout).expect("plan --json");
    let instance = |name: &str| {
        report["instances"]
            .as_array()
            .expect("instances")
            .iter()
            .find(|i| i["name"] == name)
            .cloned()
            .expect("the instance")
    };
    let small = instance("t4g.small");
    assert_eq!(
        small["ceilings"]["cpu_sustained"]["units"], 200.0,
        "{small}"
    );
    assert_eq!(small["ceilings"]["slo"]["units"], 500.0, "{small}");
    assert!(
        small["measured"].as_str().is_some_and(|m| m
            .starts_with("SLO ceiling measured at 2 CPU, 1536MiB memory")
            && m.contains("and at its baseline, 0.4 CPU")),
        "{small}"
    );
    assert!(
        small["all_in"]["lines"]
            .to_string()
            .contains("surplus CPU credits"),
        "{small}"
    );
    let medium = instance("c7g.medium");
    assert_eq!(medium["ceilings"]["slo"]["units"], 500.0, "{medium}");
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    assert!(
        page.contains("| `rate@t4g.small-baseline` | 0.4 CPU, 1536MiB memory, no swap (cgroup v")
            && page.contains(") | rate = 200/s | rate = 500/s |"),
        "{page}"
    );
    assert!(
        page.contains("- t4g.small: SLO ceiling measured at 2 CPU"),
        "{page}"
    );
    assert!(leftovers("1030B").is_empty(), "{:?}", leftovers("1030B"));
    clean("emulate");
}

/// Issue 16: an A/A comparison end to end. The same spec against the demo target, run twice
/// with three repeats a point, compared: the points match, the machines are alike, every
/// figure is there on both sides, and none is called better or worse (three repeats a side
/// cannot reach 5 %, and the comparison says how many can).
#[test]
fn an_a_a_comparison_on_the_demo_target_calls_nothing() {
    let out = fresh_out("a-a");
    let (first, second) = (out.with_file_name("a.json"), out.with_file_name("b.json"));
    for file in [&first, &second] {
        let path = file.display().to_string();
        let output = headroom(
            &[
                "run",
                "tests/fixtures/run/a-a.toml",
                "--no-page",
                "--out",
                &path,
            ],
            &[],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let (a, b) = (first.display().to_string(), second.display().to_string());
    let output = headroom(&["compare", &a, &b, "--format", "json"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("compare json");
    common::assert_matches_schema("compare.schema.json", &report);
    assert_eq!(report["machine_differences"], serde_json::json!([]));
    let figures = report["figures"].as_array().expect("figures");
    let names: Vec<&str> = figures
        .iter()
        .filter_map(|f| f["figure"].as_str())
        .collect();
    for wanted in ["api.latency.p95", "api.rate", "api.failed", "rss", "cpu"] {
        assert!(names.contains(&wanted), "{wanted} in {names:?}");
    }
    for figure in figures {
        assert_eq!(figure["base"]["repeats"], 3, "{figure}");
        assert_eq!(figure["verdict"], "cannot_tell", "{figure}");
        let why = figure["why"].as_str().expect("why");
        assert!(why.contains("1 more a side would be enough"), "{why}");
    }
    assert!(leftovers("1003B").is_empty());
    clean("a-a");
}

/// Issue 16: a known regression is caught. The demo target's notes requests cost 4 ms of CPU,
/// then 4.8 ms (20 % more); a user sends one a second, in four steps of users, five repeats a
/// side. The latency, the CPU and the cost of a user-month on c7g.medium (priced by the CPU
/// per user) are worse beyond noise, and the spec's 10 % gates on the latency and the cost
/// (`[compare] fail_on`) exit 2.
#[test]
fn a_known_regression_is_worse_and_fails_the_gate() {
    let out = fresh_out("regression");
    let (before, after) = (
        out.with_file_name("4ms.json"),
        out.with_file_name("4.8ms.json"),
    );
    for (file, cpu) in [(&before, "4ms"), (&after, "4800us")] {
        let path = file.display().to_string();
        let output = headroom_whole(
            &[
                "run",
                "tests/fixtures/run/regression.toml",
                "--no-page",
                "--out",
                &path,
            ],
            &[("HEADROOM_TEST_REQUEST_CPU", cpu.to_owned())],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    // The repeats ran in rounds (interleaved, the default): every step once, then again.
    let mut starts: Vec<(u64, u64)> = runs(&read_results(&before))
        .iter()
        .map(|run| {
            let n = |key: &str| run[key].as_u64().expect(key);
            (n("started_ms"), n("repeat"))
        })
        .collect();
    starts.sort_unstable();
    let rounds: Vec<u64> = starts.iter().map(|(_, repeat)| *repeat).collect();
    let expected: Vec<u64> = (1..=5).flat_map(|repeat| [repeat; 4]).collect();
    assert_eq!(rounds, expected);
    let (a, b) = (before.display().to_string(), after.display().to_string());
    // The gates are the spec's (`[compare] fail_on`): 10 % on the latency and on the cost.
    let output = headroom(&["compare", &a, &b, "--format", "json"], &[]);
    let report: Value = serde_json::from_slice(&output.stdout).expect("compare json");
    let figures = |name: &str| -> Vec<Value> {
        let found: Vec<Value> = report["figures"]
            .as_array()
            .expect("figures")
            .iter()
            .filter(|f| f["figure"] == name)
            .cloned()
            .collect();
        assert!(!found.is_empty(), "{name} in {report}");
        found
    };
    // Every step of users: the CPU worse (by 11 to 20 % in the runs this was written from: the
    // demo's own work on a request, about 0.3 ms, and the idle process are not scaled, and a
    // step of 30 users is 0.14 cores read from 100 Hz ticks: 5 to 35 %), the median latency
    // worse (by 13 to 26 %; a request's wait for a busy worker adds noise: 5 to 50 %).
    // The latency's five repeats a side at a step can hold one slow outlier (a base repeat at
    // 6.4 ms among 4.9 ms ones, on a fresh clone's CI; two steps so in one run), which puts
    // that step within noise. What must hold: the latency is worse at half the steps at least,
    // better at none, and a step it does not call worse is one it says is noisy (its repeats
    // spread over 10 %): never "within noise" on quiet repeats.
    for (name, range, worse_at_least) in
        [("cpu", 0.05..0.35, 4), ("api.latency.p50", 0.05..0.50, 2)]
    {
        let steps = figures(name);
        assert_eq!(steps.len(), 4, "{name}: {steps:?}");
        let worse = steps.iter().filter(|s| s["verdict"] == "worse").count();
        assert!(
            worse >= worse_at_least,
            "{name}: worse at {worse}: {steps:?}"
        );
        for step in steps {
            assert_ne!(step["verdict"], "better", "{step}");
            assert!(range.contains(&common::number(&step["change"])), "{step}");
            let said_noisy = step["verdict"] == "within_noise" && step["noisy"] == true;
            assert!(step["verdict"] == "worse" || said_noisy, "{step}");
        }
    }
    // The cost of a user-month: CPU per user binds on c7g.medium (1 vCPU), so 20 % more CPU
    // is about 20 % more dollars a user (the ceiling is floored to whole users), and fewer users.
    let [cost] = &figures("plan.c7g.medium.usd_per_unit_month")[..] else {
        panic!("one cost figure: {report}")
    };
    assert_eq!(cost["verdict"], "worse", "{cost}");
    assert!(
        (0.12..0.30).contains(&common::number(&cost["change"])),
        "{cost}"
    );
    let [units] = &figures("plan.c7g.medium.units")[..] else {
        panic!("one units figure: {report}")
    };
    assert_eq!(units["verdict"], "worse", "{units}");
    // The CPU per user, fitted over every run of the sweep (20 points a side): 20 % steeper.
    let [slope] = &figures("fit.cpu.cores_per_unit")[..] else {
        panic!("one CPU slope: {report}")
    };
    assert_eq!(
        (&slope["verdict"], &slope["basis"]),
        (&"worse".into(), &"fit".into()),
        "{slope}"
    );
    assert!(
        (0.12..0.30).contains(&common::number(&slope["change"])),
        "{slope}"
    );
    assert_eq!(report["unit"], "user");
    assert_eq!(output.status.code(), Some(2), "{report}");
    assert_eq!(report["failed"], true);
    let failed: Vec<&str> = report["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .filter(|g| g["failed"] == true)
        .filter_map(|g| g["figure"].as_str())
        .collect();
    for figure in ["plan.c7g.medium.usd_per_unit_month", "api.latency.p50"] {
        assert!(failed.contains(&figure), "{figure} in {failed:?}");
    }
    assert!(leftovers("1004B").is_empty());
    clean("regression");
}

/// PostgreSQL from the project's own script (`scripts/postgres.sh install`); `None` with the
/// script's reason when it could not be installed here.
fn postgres_installed() -> Result<(), String> {
    let output = Command::new("scripts/postgres.sh")
        .arg("install")
        .current_dir(root())
        .output()
        .map_err(|e| format!("scripts/postgres.sh could not run: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(stderr(&output).trim().to_owned())
    }
}

/// Issue 19: the notes API and its PostgreSQL database as a stack, `--quick` end to end: both
/// started, each held to its limits and sampled apart, the data tier seeded before every
/// load and emptied after, the database's client connections counted during the load (the
/// API's pool of 10, every reading), and the page shows each service's memory and CPU.
#[test]
fn notes_api_postgres_runs_quick_end_to_end() {
    if let Err(why) = postgres_installed() {
        common::say(&format!("skipped: PostgreSQL not installed ({why})"));
        return;
    }
    // Its services run in half a CPU each and its checks are counts, limits and words (the
    // tier's slower reads are 4 s against 3 ms): it runs beside the other examples.
    let results = run_example_quick_beside_others("notes-api-postgres", &[]);
    let out = out("notes-api-postgres");
    let phases = results["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2);
    for run in runs(&results) {
        each_service_held_sampled_and_stepped(run);
    }
    // The tier is in the table before the load: 100,000 notes read slower than 1,000.
    let tier = &phases[0]["points"];
    let p50 =
        |k: usize| common::number(&tier[k]["runs"][0]["scenarios"]["browse"]["latency"]["p50_ms"]);
    assert!(p50(2) > p50(0), "{} vs {}", p50(2), p50(0));
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    for words in [
        "**The stack.** `db`, then `api` (after `db`)",
        "| point | api: memory | api: CPU | db: memory | db: CPU |",
        "`db` ran in 0.5 CPU, 512MiB memory",
        "`pg_connections` every 2s",
        "### Priced apart",
        "| `api` | c7g.medium |",
        "| `db` | r7g.medium |",
    ] {
        assert!(page.contains(words), "{words}\n{page}");
    }
    the_stack_is_priced_apart(&out);
    // Every cluster's folder went with its server, and no server is left.
    let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_owned());
    let folders: Vec<String> = std::fs::read_dir(tmp)
        .expect("the temporary folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("headroom-pg."))
        .collect();
    assert!(folders.is_empty(), "{folders:?}");
    let servers: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("headroom-pg."))
        .collect();
    assert!(servers.is_empty(), "{servers:?}");
    clean("notes-api-postgres");
}

/// One run of the stack: each service held to its limits, sampled apart and stopped; the
/// database's pool of 10 connections at every reading during the load; the tier seeded
/// before the load and emptied after.
fn each_service_held_sampled_and_stepped(run: &Value) {
    for (name, cpus, memory) in [("db", 0.5, 512u64 << 20), ("api", 0.5, 256 << 20)] {
        let service = &run["services"][name];
        assert!(
            common::number(&service["ready_after_s"]) > 0.0,
            "{name}: {service}"
        );
        let limits = &service["limits"];
        assert_eq!(limits["status"], "applied", "{name}: {limits}");
        assert_eq!(common::number(&limits["cpus"]), cpus, "{name}");
        assert_eq!(limits["memory_bytes"].as_u64(), Some(memory), "{name}");
        let process = &service["process"];
        assert!(
            process["samples"].as_array().is_some_and(|s| s.len() >= 4),
            "{name}"
        );
        assert!(
            common::number(&process["steady"]["rss_bytes"]) > 4e6,
            "{name}: {process}"
        );
        assert!(
            process["hold_cpu_cores"].as_f64().is_some(),
            "{name}: {process}"
        );
        assert_eq!(service["stopped"]["killed"], false, "{name}: {service}");
    }
    // The database is a tree: the server, its background workers and a backend per
    // connection of the pool; the API is one process.
    assert!(run["services"]["db"]["process"]["steady"]["processes"].as_u64() >= Some(12));
    assert_eq!(run["services"]["api"]["process"]["steady"]["processes"], 1);
    assert_eq!(run["services"]["db"]["stopped"]["signal"], "INT");
    // The pool: 10 client connections at every reading during the load, none more.
    let readings = run["series_samples"]["pg_connections"]
        .as_array()
        .expect("readings");
    assert!(readings.len() >= 2, "{readings:?}");
    // Read while the load ran: none after its last second of traffic (the windows are
    // whole seconds; a reading may start in the last one).
    let last_second = ["browse", "write"]
        .iter()
        .flat_map(|s| {
            run["scenarios"][s]["windows"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .map(|w| common::number(&w["t_s"]))
        .fold(0.0, f64::max);
    for reading in readings {
        assert_eq!(reading["value"], 10.0, "{readings:?}");
        let t = common::number(&reading["t_s"]);
        assert!(t <= last_second + 1.0, "{reading} after {last_second}");
    }
    assert_eq!(run["metrics"]["steady"]["pg_connections"], 10.0);
    let steps: Vec<(&str, &str)> = run["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or(""),
                s["when"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(steps, [("seed", "setup"), ("clean-up", "teardown")]);
    assert_eq!(run["steps"][0]["exit"]["code"], 0);
}

/// The stack priced apart: each service on its instance with its own fits, the stack's units
/// the fewer of theirs, a month both instances.
fn the_stack_is_priced_apart(out: &Path) {
    let out_arg = out.display().to_string();
    let plan = headroom(
        &[
            "plan",
            "examples/notes-api-postgres.toml",
            "--results",
            &out_arg,
            "--json",
        ],
        &[],
    );
    let plan: Value = serde_json::from_slice(&plan.stdout).expect("plan json");
    let placed = plan["placement"]["services"].as_array().expect("services");
    let services: Vec<&str> = placed
        .iter()
        .map(|s| s["service"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(services, ["api", "db"], "{}", plan["placement"]);
    let months: f64 = placed
        .iter()
        .map(|s| common::number(&s["instance"]["usd_month"]))
        .sum();
    assert!((common::number(&plan["placement"]["per_month"]) - months).abs() < 1e-9);
    let least = placed
        .iter()
        .filter_map(|s| s["instance"]["planned_units"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(plan["placement"]["planned_units"].as_f64(), Some(least));
}
