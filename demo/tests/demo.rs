//! The demo target in process, on a free loopback port.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use headroom_demo::Options;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

async fn start(options: Options) -> SocketAddr {
    let server = headroom_demo::bind(options).await.expect("bind");
    let address = server.local_addr().expect("address");
    tokio::spawn(server.run());
    address
}

/// One HTTP/1.1 request on a fresh connection: (status, body).
async fn http(address: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[tokio::test]
async fn the_notes_api_stores_pages_and_searches() {
    let address = start(Options {
        seed_notes: 120,
        ..Options::default()
    })
    .await;
    assert_eq!(http(address, "GET", "/healthz", "").await.0, 200);
    let (status, body) = http(
        address,
        "POST",
        "/api/groups/1/notes",
        r#"{"title":"zeppelin","body":"rare"}"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (201, r#"{"id":120}"#));
    let (_, page3) = http(address, "GET", "/api/groups/1/notes?page=3", "").await;
    let page3: serde_json::Value = serde_json::from_str(&page3).expect("json");
    assert_eq!(page3["total"], 121);
    assert_eq!(page3["notes"].as_array().map(Vec::len), Some(21));
    let (_, found) = http(address, "GET", "/api/groups/1/notes?q=zeppelin", "").await;
    let found: serde_json::Value = serde_json::from_str(&found).expect("json");
    assert_eq!(found["total"], 1);
    let (_, metrics) = http(address, "GET", "/metrics", "").await;
    assert_eq!(metric(&metrics, "demo_notes"), 121.0);
    assert_eq!(
        metric(&metrics, "demo_http_requests_total{route=\"list\"}"),
        2.0
    );
}

#[tokio::test]
async fn a_room_broadcasts_to_the_other_peers_and_drops_the_share_asked() {
    let address = start(Options {
        room_state: "64KiB".parse().expect("size"),
        drop_broadcasts: "10%".parse().expect("percent"),
        ..Options::default()
    })
    .await;
    let url = format!("ws://{address}/rooms/7");
    let (mut a, _) = tokio_tungstenite::connect_async(&url).await.expect("a");
    let (mut b, _) = tokio_tungstenite::connect_async(&url).await.expect("b");
    // Both sockets are in the room once the server counts two peers.
    for _ in 0..100 {
        let (_, metrics) = http(address, "GET", "/metrics", "").await;
        if metric(&metrics, "demo_peers") == 2.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for i in 0..100 {
        a.send(Message::text(format!("edit {i}")))
            .await
            .expect("send");
    }
    let mut received = 0;
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_millis(500), b.next()).await
    {
        if message.is_text() {
            received += 1;
        }
    }
    // Exactly one in ten dropped; the sender hears nothing of its own.
    assert_eq!(received, 90);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), a.next())
            .await
            .is_err()
    );
    let (_, metrics) = http(address, "GET", "/metrics", "").await;
    assert_eq!(metric(&metrics, "demo_broadcasts_dropped_total"), 10.0);
    assert_eq!(metric(&metrics, "demo_rooms_open"), 1.0);
    assert_eq!(
        metric(&metrics, "demo_memory_bytes{segment=\"rooms\"}"),
        65536.0
    );
}

#[tokio::test]
async fn a_stall_holds_requests_for_its_length() {
    let address = start(Options {
        stall_every: Some("300ms".parse().expect("duration")),
        stall_for: "200ms".parse().expect("duration"),
        ..Options::default()
    })
    .await;
    // Over a second of back-to-back requests, the slowest one waited through a stall.
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut slowest = Duration::ZERO;
    while Instant::now() < deadline {
        let started = Instant::now();
        assert_eq!(http(address, "GET", "/healthz", "").await.0, 200);
        slowest = slowest.max(started.elapsed());
    }
    assert!(slowest >= Duration::from_millis(100), "slowest {slowest:?}");
}

#[tokio::test]
async fn healthz_waits_for_ready_after() {
    let address = start(Options {
        ready_after: Some("1h".parse().expect("duration")),
        ..Options::default()
    })
    .await;
    assert_eq!(http(address, "GET", "/healthz", "").await.0, 503);
}

#[tokio::test]
async fn edits_wait_for_the_save_pass() {
    let address = start(Options {
        save_window: "100ms".parse().expect("duration"),
        rebuild_cpu: "50ms".parse().expect("duration"),
        ..Options::default()
    })
    .await;
    let url = format!("ws://{address}/pads/1");
    let (mut a, _) = tokio_tungstenite::connect_async(&url).await.expect("a");
    let (mut b, _) = tokio_tungstenite::connect_async(&url).await.expect("b");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sent = Instant::now();
    a.send(Message::text("edit")).await.expect("send");
    let message = tokio::time::timeout(Duration::from_secs(2), b.next())
        .await
        .expect("in time");
    assert!(matches!(message, Some(Ok(m)) if m.is_text()));
    // The save window plus the pass: at least 150 ms.
    assert!(
        sent.elapsed() >= Duration::from_millis(150),
        "{:?}",
        sent.elapsed()
    );
}

/// `--request-cpu`: API requests are served one at a time, each taking the service time, so
/// ten sent together take ten service times; `/healthz` does not wait for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_cpu_serves_one_request_at_a_time() {
    let address = start(Options {
        request_cpu: headroom_spec::Duration::from_millis(20),
        ..Options::default()
    })
    .await;
    let started = Instant::now();
    let requests: Vec<_> = (0..10)
        .map(|_| tokio::spawn(http(address, "GET", "/api/groups/1/notes", "")))
        .collect();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let health = Instant::now();
    assert_eq!(http(address, "GET", "/healthz", "").await.0, 200);
    assert!(
        health.elapsed() < Duration::from_millis(100),
        "{:?}",
        health.elapsed()
    );
    for request in requests {
        assert_eq!(request.await.expect("request").0, 200);
    }
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(200), "10 × 20 ms in {took:?}");
}

/// `--answer-rate 50`: a burst of 40 requests at once is answered up to the bucket's five (a
/// tenth of a second's) and what refilled meanwhile, the rest 503 at once; readiness is never
/// refused; 200 ms later the bucket holds tokens again.
#[tokio::test]
async fn an_answer_rate_refuses_what_is_past_it() {
    let address = start(Options {
        answer_rate: Some(50.0),
        ..Options::default()
    })
    .await;
    let mut statuses = Vec::new();
    for _ in 0..40 {
        statuses.push(http(address, "GET", "/api/groups/1/notes", "").await.0);
    }
    let answered = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 503).count();
    assert_eq!(answered + refused, 40, "{statuses:?}");
    // Five in the bucket, and one more for each 20 ms the burst took.
    assert!((5..=20).contains(&answered), "{statuses:?}");
    assert_eq!(http(address, "GET", "/healthz", "").await.0, 200);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(http(address, "GET", "/api/groups/1/notes", "").await.0, 200);
}
