use super::recorder::Failed;
use super::*;
use crate::live::Live;
use crate::results::Window;
use headroom_test_support::hostile;
use std::sync::atomic::AtomicU64;

/// Issue 11, item 6: latencies and counts are the hold's; a slow ramp (a server still warm-
/// ing up) stays out of them and is counted on its own. Issue 17: of two requests, the named
/// one is measured apart (the hold's only), the unnamed one only in the scenario's figures.
#[tokio::test]
async fn only_the_hold_is_measured() {
    let start = Instant::now();
    // The run's hold: this scenario alone, at its load when its 10 s ramp-up ends, for 20 s.
    let (hold, mut members) = crate::hold::RunHold::new(start, Duration::from_secs(20), 1);
    members[0].at_load(start + Duration::from_secs(10));
    let windows = Arc::new(Windows::new(1, "api"));
    let live = Arc::new(Live::default());
    let mut recorder = Recorder::new(start, hold, 2, Arc::clone(&windows), Arc::clone(&live));
    let at = |s: f64| start + Duration::from_secs_f64(s);
    let done = |intended: f64, ms: u64| recorder::Times {
        intended: at(intended),
        released: at(intended),
        sent: at(intended),
        done: at(intended) + Duration::from_millis(ms),
    };
    // Ramp-up: slow and failing; hold: 5 ms each; ramp-down: slow again.
    // Request 0 (`fast`) at the even steps of the hold, request 1 (unnamed, 4 ms) at the odd.
    for t in [1.0, 5.0, 9.0] {
        recorder.done(done(t, 900), 0, Err(Failed::Status(503)));
    }
    for i in 0..100 {
        let (request, ms) = if i % 2 == 0 { (0, 5) } else { (1, 4) };
        recorder.done(done(10.0 + 0.19 * f64::from(i), ms), request, Ok(()));
    }
    recorder.dropped(at(35.0));
    recorder.done(done(31.0, 800), 0, Ok(()));
    let names = [Some("fast".to_owned()), None];
    let result = recorder::merge(vec![recorder.finish()], windows.finish(&live), &names);
    // Issue 33: the live view had every second the results hold, in order, with the errors
    // by why (the ramp's three failures are unexpected statuses) and the drop counted.
    let seconds = live.take_seconds();
    let handed: Vec<&Window> = seconds.iter().map(|second| &second.window).collect();
    assert_eq!(handed, result.windows.iter().collect::<Vec<_>>());
    assert!(seconds.iter().all(|second| second.scenario == "api"));
    let statuses: u64 = seconds
        .iter()
        .filter_map(|second| second.window.errors_by_kind.as_ref())
        .map(|kinds| kinds.status)
        .sum();
    assert_eq!(statuses, 3);
    assert_eq!(seconds.last().map(|s| s.gauges.dropped), Some(1));
    let fast = &result.by_request["fast"];
    assert_eq!((fast.requests, fast.ok), (50, 50));
    assert!(
        (fast.latency.p50_ms - 5.0).abs() < 0.01,
        "{:?}",
        fast.latency
    );
    assert!(!fast.histogram.is_empty());
    assert_eq!(result.by_request.len(), 1, "only the named request");
    // One window a second, from the first to the last with a request.
    assert_eq!(result.windows.len(), 36, "{:?}", result.windows);
    assert_eq!(result.windows[10].requests, 6);
    assert_eq!((result.requests, result.ok, result.dropped), (100, 100, 0));
    assert_eq!(result.errors.total(), 0);
    assert!(result.latency.max_ms < 6.0, "{:?}", result.latency);
    let ramps = result.outside_hold.expect("ramp counts");
    assert_eq!((ramps.requests, ramps.ok, ramps.dropped), (4, 1, 1));
    assert_eq!(ramps.errors.status, 3);
    // By code too: the page and the run line say `3 unexpected status (3 × 503)`.
    assert_eq!(ramps.errors.statuses, [(503, 3)].into());
    assert_eq!(ramps.errors.describe(), "3 unexpected status (3 × 503)");
}

/// Runs `scenario` against `127.0.0.1:{port}` on `threads` load threads, never cancelled.
async fn run_local(
    scenario: &HttpScenario,
    port: u16,
    live: Arc<Live>,
    threads: usize,
) -> ScenarioResult {
    run_from(scenario, port, live, threads, None).await
}

/// `run_local`, its connections from `sources`.
async fn run_from(
    scenario: &HttpScenario,
    port: u16,
    live: Arc<Live>,
    threads: usize,
    sources: Option<&headroom_spec::source::SourceAddresses>,
) -> ScenarioResult {
    let (_, cancel) = tokio::sync::watch::channel(false);
    let reach = Reach::new(
        port,
        std::path::Path::new("headroom"),
        &crate::web::Allowed::new(&[]),
        threads,
        &crate::tls::Trust::default(),
        sources,
        crate::stripe::Segment::WHOLE,
    );
    let hold = scenario.stages.hold.map_or(Duration::ZERO, |h| h.as_std());
    run(
        scenario,
        &reach,
        cancel,
        live,
        crate::hold::RunHold::alone(hold),
    )
    .await
    .expect("the scenario ran")
}

/// A scenario of the open model at `rate` for a `hold` against `127.0.0.1:{port}`.
fn open_scenario(rate: &str, hold: &str, timeout: &str, connect_timeout: &str) -> HttpScenario {
    serde_json::from_value(serde_json::json!({
        "name": "api",
        "executor": "constant-arrival-rate",
        "rate": rate,
        "arrivals": "fixed",
        "max_in_flight": 10_000,
        "timeout": timeout,
        "connect_timeout": connect_timeout,
        "stages": { "ramp_up": "0s", "hold": hold, "ramp_down": "0s" },
        "requests": [{ "url": "http://127.0.0.1:{port}/" }],
    }))
    .expect("a scenario")
}

/// `vus` virtual users thinking 10 ms between requests to `127.0.0.1:{port}` for a `hold`.
fn closed_scenario(vus: u64, hold: &str) -> HttpScenario {
    serde_json::from_value(serde_json::json!({
        "name": "api",
        "executor": "constant-vus",
        "vus": vus,
        "arrivals": "poisson",
        "max_in_flight": 10_000,
        "max_connections": 10_000,
        "think": "10ms",
        "timeout": "2s",
        "connect_timeout": "1s",
        "stages": { "ramp_up": "0s", "hold": hold, "ramp_down": "0s" },
        "requests": [{ "url": "http://127.0.0.1:{port}/" }],
    }))
    .expect("a scenario")
}

/// Issue 15: a server whose listen backlog is full (it never accepts) drops SYNs, and a
/// connect would wait out the kernel's retries (two minutes). Every request is a `connect`
/// error after `connect_timeout`, the scenario ends within its hold and the timeout, and the
/// wait is the connection's, not the generator's lag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_accepts_costs_a_connect_timeout_not_minutes() {
    let server = tokio::task::spawn_blocking(hostile::NeverAccepting::start)
        .await
        .expect("a server that never accepts");
    let port = server.port();
    let scenario = open_scenario("20/s", "1s", "700ms", "200ms");
    let started = std::time::Instant::now();
    let result = run_local(&scenario, port, Arc::new(Live::default()), 1).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2_500), "took {took:?}");
    assert_eq!(result.requests, 20, "{result:?}");
    // A connection the kernel completed into the full queue may be handed out and then
    // never answered: that request times out. Every other is a connect error.
    assert_eq!(
        result.errors.connect + result.errors.timeout,
        20,
        "{:?}",
        result.errors
    );
    assert!(result.errors.connect >= 15, "{:?}", result.errors);
    assert!(
        result.schedule_lag.p99_ms < 50.0,
        "{:?}",
        result.schedule_lag
    );
    assert!(
        (150.0..450.0).contains(&result.connection_wait.p50_ms),
        "{:?}",
        result.connection_wait
    );
    drop(server);
}

#[test]
fn the_schedule_ramps_up_holds_and_ramps_down() {
    let schedule = Schedule {
        ramp_up: 10.0,
        hold: 20.0,
        ramp_down: 10.0,
    };
    assert_eq!(schedule.at(0.0, 0.0, 100.0), 0.0);
    assert_eq!(schedule.at(5.0, 0.0, 100.0), 50.0);
    assert_eq!(schedule.at(15.0, 0.0, 100.0), 100.0);
    assert_eq!(schedule.at(35.0, 0.0, 100.0), 50.0);
    assert_eq!(schedule.total(), Duration::from_secs(40));
    let flat = Schedule {
        ramp_up: 0.0,
        hold: 10.0,
        ramp_down: 0.0,
    };
    assert_eq!(flat.at(0.0, 7.0, 7.0), 7.0);
}

/// A keep-alive server on loopback answering every request `ok` after `service`; it counts
/// the connections it accepted.
async fn keep_alive_server(service: Duration) -> (u16, Arc<AtomicU64>) {
    let (port, accepted, _) = keep_alive_server_seeing(service).await;
    (port, accepted)
}

/// The addresses a server saw connections from.
type Peers = Arc<std::sync::Mutex<std::collections::BTreeSet<std::net::IpAddr>>>;

/// The addresses a server saw, in order, as text.
fn addresses(peers: &Peers) -> Vec<String> {
    let seen = peers.lock().expect("peers");
    seen.iter().map(ToString::to_string).collect()
}

/// `keep_alive_server`, and the addresses its connections came from.
async fn keep_alive_server_seeing(service: Duration) -> (u16, Arc<AtomicU64>, Peers) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a listener");
    let port = listener.local_addr().expect("its address").port();
    let accepted = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&accepted);
    let peers = Peers::default();
    let seen = Arc::clone(&peers);
    tokio::spawn(async move {
        while let Ok((mut stream, from)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Ok(mut seen) = seen.lock() {
                seen.insert(from.ip());
            }
            tokio::spawn(async move {
                let mut pending = Vec::new();
                let mut buffer = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut buffer).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buffer[..n]);
                    // These requests have no body: each ends at its empty line.
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        tokio::time::sleep(service).await;
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (port, accepted, peers)
}

/// Issue 18, item 0: with `source_addresses`, the server sees each client from its address:
/// `spread` gives every virtual user its own (users on two threads included), a list is taken
/// in turn by the open model's connections; the results count the addresses used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_connect_from_their_source_addresses() {
    use headroom_spec::source::SourceAddresses;
    let (port, _, peers) = keep_alive_server_seeing(Duration::from_millis(1)).await;
    let closed = closed_scenario(5, "300ms");
    let spread = SourceAddresses::Named("spread".into());
    let result = run_from(&closed, port, Arc::default(), 2, Some(&spread)).await;
    let seen = addresses(&peers);
    assert_eq!(
        seen,
        [
            "127.0.0.1",
            "127.0.0.2",
            "127.0.0.3",
            "127.0.0.4",
            "127.0.0.5"
        ]
    );
    assert_eq!(result.source_addresses, Some(5));
    assert!(result.ok > 0 && result.ok == result.requests, "{result:?}");

    peers.lock().expect("peers").clear();
    // Six connections at most, their requests held 20 ms at 300 a second: all six open.
    let mut open = open_scenario("300/s", "500ms", "2s", "1s");
    open.max_connections = 6;
    let (port, _, peers) = keep_alive_server_seeing(Duration::from_millis(20)).await;
    let list = SourceAddresses::List(vec!["127.0.0.7".into(), "127.0.0.8".into()]);
    let result = run_from(&open, port, Arc::default(), 2, Some(&list)).await;
    let seen = addresses(&peers);
    assert_eq!(seen, ["127.0.0.7", "127.0.0.8"]);
    assert_eq!(result.source_addresses, Some(2));
    assert!(result.connections.expect("counted").opened >= 2);
    // Without them, the kernel's one address, and nothing recorded.
    let result = run_local(&open, port, Arc::default(), 1).await;
    assert_eq!(result.source_addresses, None);
}

/// Issue 15: the figures hold however many load threads share the load. Each thread runs its
/// share of the arrivals (staggered, so together they keep the fixed spacing) or of the users,
/// and their histograms, counts and windows add up exactly to the one-thread figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_threads_share_the_load_and_add_up_exactly() {
    let (port, accepted) = keep_alive_server(Duration::from_millis(1)).await;
    for threads in [1, 3] {
        let scenario = open_scenario("300/s", "1s", "2s", "1s");
        let live = Arc::new(Live::default());
        let before = accepted.load(std::sync::atomic::Ordering::Relaxed);
        let result = run_local(&scenario, port, Arc::clone(&live), threads).await;
        // 300 arrivals a second for one second, fixed spacing: 300, every one answered.
        assert_eq!(
            (result.requests, result.ok, result.dropped),
            (300, 300, 0),
            "{threads} threads: {result:?}"
        );
        let windowed: u64 = result.windows.iter().map(|w| w.requests).sum();
        assert_eq!(
            windowed, 300,
            "{threads} threads: {:?} {:?}",
            result.windows, result.outside_hold
        );
        assert_eq!(
            live.requests.load(std::sync::atomic::Ordering::Relaxed),
            300
        );
        // Each latency at least the server's millisecond, none near the timeout.
        assert!(
            result.latency.p50_ms >= 1.0 && result.latency.max_ms < 500.0,
            "{threads} threads: {:?}",
            result.latency
        );
        // Connections are kept alive: a few per thread, counted as the server counted them.
        let connections = result.connections.expect("HTTP counts its connections");
        let opened = accepted.load(std::sync::atomic::Ordering::Relaxed) - before;
        assert_eq!(connections.opened, opened, "{threads} threads");
        assert!(
            (threads as u64..=30).contains(&connections.opened),
            "{threads} threads opened {}",
            connections.opened
        );
        assert_eq!(connections.queued_at_limit, 0);
    }
}

/// The closed model on several load threads: each user on one thread with its own kept-alive
/// connection, so the server sees exactly one connection a user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_on_load_threads_keep_one_connection_each() {
    let (port, accepted) = keep_alive_server(Duration::from_millis(1)).await;
    for threads in [1, 3] {
        let scenario = closed_scenario(4, "1s");
        let before = accepted.load(std::sync::atomic::Ordering::Relaxed);
        let result = run_local(&scenario, port, Arc::new(Live::default()), threads).await;
        let opened = accepted.load(std::sync::atomic::Ordering::Relaxed) - before;
        let connections = result.connections.expect("HTTP counts its connections");
        assert_eq!((connections.opened, opened), (4, 4), "{threads} threads");
        // Four users, each a request every 11 ms or a little more, for a second: at most 4 x
        // 91; a loaded machine makes fewer, never none.
        assert!(
            (100..=368).contains(&result.requests),
            "{threads} threads: {} requests",
            result.requests
        );
        assert_eq!(result.ok, result.requests);
        let windowed: u64 = result.windows.iter().map(|w| w.requests).sum();
        assert_eq!(windowed, result.requests, "{threads} threads");
    }
}

/// A server that reads every request and answers none (a hung worker): each request is a
/// `timeout` error after its `timeout`, none has a latency, and the scenario ends within its
/// hold and the timeout, whatever the server does with the connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalling_server_costs_each_request_its_timeout() {
    let server = hostile::stalling();
    let scenario = open_scenario("10/s", "1s", "300ms", "1s");
    let started = std::time::Instant::now();
    let result = run_local(&scenario, server.port(), Arc::new(Live::default()), 1).await;
    let took = started.elapsed();
    assert_eq!(result.requests, 10, "{result:?}");
    assert_eq!(result.ok, 0, "{result:?}");
    assert_eq!(result.errors.timeout, 10, "{:?}", result.errors);
    assert_eq!(
        result.latency.count, 0,
        "a request never answered has no latency"
    );
    assert!(took < Duration::from_millis(2_500), "took {took:?}");
    assert_eq!(server.requests(), 10, "each request reached the server");
    assert_eq!(server.answered(), 0);
}

/// A server that answers 10 requests and dies (its listener closed): the 10 are answered,
/// the other 30 of 40 are errors, connects refused at once (no timeout waited out) for all
/// but the few in flight as it died.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_load_fails_the_rest_at_once() {
    let server = hostile::dying_after(10);
    let scenario = open_scenario("20/s", "2s", "1s", "1s");
    let started = std::time::Instant::now();
    let result = run_local(&scenario, server.port(), Arc::new(Live::default()), 1).await;
    let took = started.elapsed();
    assert_eq!(result.requests, 40, "{result:?}");
    assert_eq!(result.ok, 10, "{result:?}");
    assert_eq!(server.answered(), 10);
    let errors = &result.errors;
    assert_eq!(
        errors.connect + errors.timeout + errors.protocol,
        30,
        "{errors:?}"
    );
    assert!(
        errors.connect >= 25,
        "refused connects are connect errors: {errors:?}"
    );
    assert!(took < Duration::from_millis(3_500), "took {took:?}");
}

/// A server that reads 1 KiB every 10 ms answers a 16 KiB POST no sooner than 150 ms after it
/// was sent: the latency is the server's reading, measured from the intended start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reading_server_is_as_slow_as_its_reading() {
    let server = hostile::reading_slowly(1024, Duration::from_millis(10));
    let mut scenario = open_scenario("5/s", "1s", "3s", "1s");
    scenario.requests[0].method = headroom_spec::scenario::Method::Post;
    scenario.requests[0].body = Some("x".repeat(16 * 1024));
    let result = run_local(&scenario, server.port(), Arc::new(Live::default()), 1).await;
    assert_eq!(result.requests, 5, "{result:?}");
    assert_eq!(result.ok, 5, "{:?}", result.errors);
    assert_eq!(server.answered(), 5);
    assert!(result.latency.p50_ms >= 150.0, "{:?}", result.latency);
    assert!(result.latency.p99_ms < 2_000.0, "{:?}", result.latency);
}
