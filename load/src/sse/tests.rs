//! The stream parser against a loopback server that writes each event one byte at a time, each
//! byte its own HTTP chunk: every event read exactly, whatever the chunk boundaries.

use super::parser::{MAX_EVENT, Parser, TooLarge};
use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Events as a server may write them: LF, CRLF and lone CR line ends, a BOM, comments as
/// keep-alives, `data:` over several lines, with and without the space after the colon, an
/// event type, ids (one with a NULL, ignored), `retry:`, an event with no data (not
/// dispatched) and a field with no colon.
const WRITTEN: &str = "\u{feff}: hello\n\nid: 1\ndata: {\"stamp\":\"a\"}\n\n\
    event: chat\r\ndata: first line\r\ndata:second line\r\nid: 2\r\nretry: 250\r\n\r\n\
    : keep-alive\r\rdata: lone carriage returns\rid: 3\r\r\
    id: 4\n\n\
    data\ndata: after an empty data field\nid: bad\u{0}id\n\n";

fn endpoint(address: SocketAddr) -> Endpoint {
    Endpoint {
        address,
        authority: address.to_string(),
        path: "/sub/{room}".to_owned(),
        tls: None,
        authorization: Some("Basic dTpw".to_owned()),
    }
}

fn plan(address: SocketAddr) -> Plan {
    Plan {
        stream: endpoint(address),
        publish: None,
        headers: vec![(HeaderName::from_static("x-peer"), "p-{peer}".to_owned())],
        publish_headers: Vec::new(),
        reconnect: false,
        timeout: Duration::from_secs(1),
        figures: Figures::new(),
    }
}

/// Serves one stream: reads the request head, answers with `head_extra` headers, then writes
/// `body` one byte per chunk. Returns the request it read.
async fn serve_one(
    listener: tokio::net::TcpListener,
    content_type: &'static str,
    body: &'static str,
) -> String {
    let (mut socket, _) = listener.accept().await.expect("a connection");
    socket.set_nodelay(true).expect("no delay");
    let mut request = Vec::new();
    let mut buffer = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buffer).await.expect("the request");
        assert!(n > 0, "the request ended early");
        request.extend_from_slice(&buffer[..n]);
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.expect("the head");
    for byte in body.as_bytes() {
        socket.write_all(b"1\r\n").await.expect("a chunk's size");
        socket.write_all(&[*byte]).await.expect("a byte");
        socket.write_all(b"\r\n").await.expect("a chunk's end");
        socket.flush().await.expect("flushed");
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    socket.write_all(b"0\r\n\r\n").await.expect("the end");
    String::from_utf8_lossy(&request).into_owned()
}

#[tokio::test]
async fn events_written_a_byte_at_a_time_are_parsed_exactly() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(serve_one(
        listener,
        "text/event-stream; charset=utf-8",
        WRITTEN,
    ));
    let plan = plan(address);
    let (transport, _) = Transport::open(address, crate::tls::Origin::default(), None)
        .await
        .expect("connected");
    let mut stream = subscribe(transport, &plan, (7, 3), Some("41"))
        .await
        .expect("the stream opened");
    let mut read = Vec::new();
    let Stream { body, parser } = &mut stream;
    loop {
        let more = tokio::time::timeout(Duration::from_secs(10), body.fill())
            .await
            .expect("the stream ends by itself")
            .expect("read");
        let ended = body.decode(&mut |data| {
            parser
                .feed(data, |event| read.push(owned(event)))
                .expect("within the bound");
        });
        if let Some(end) = ended {
            assert_eq!(end, body::BodyEnd::Ended);
            break;
        }
        assert!(more, "the connection closed before the last chunk");
    }
    let request = server.await.expect("the server");
    assert!(request.starts_with("GET /sub/7 HTTP/1.1\r\n"), "{request}");
    let lower = request.to_ascii_lowercase();
    for header in [
        "accept: text/event-stream",
        "cache-control: no-cache",
        "last-event-id: 41",
        "x-peer: p-3",
        "authorization: basic dtpw",
    ] {
        assert!(lower.contains(header), "{header} in {request}");
    }
    assert_eq!(read, expected());
    assert_eq!(stream.parser.last_event_id(), b"4");
    assert_eq!(stream.parser.retry(), Some(Duration::from_millis(250)));
    assert_eq!(stream.parser.comments, 2);
}

type Owned = (String, String, String);

fn owned(event: parser::Event<'_>) -> Owned {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (text(event.kind), text(event.data), text(event.id))
}

/// What [`WRITTEN`] dispatches.
fn expected() -> Vec<Owned> {
    let event =
        |kind: &str, data: &str, id: &str| (kind.to_owned(), data.to_owned(), id.to_owned());
    vec![
        event("message", "{\"stamp\":\"a\"}", "1"),
        event("chat", "first line\nsecond line", "2"),
        event("message", "lone carriage returns", "3"),
        // `data` alone is an empty data line; the id with a NULL is ignored, so the last id
        // (4, set by an event without data) stands.
        event("message", "\nafter an empty data field", "4"),
    ]
}

/// Split anywhere (a CRLF, the BOM, a field name cut in two), the stream reads the same.
#[test]
fn every_split_of_the_stream_reads_the_same() {
    let bytes = WRITTEN.as_bytes();
    for cut in 0..=bytes.len() {
        let mut parser = Parser::default();
        let mut read = Vec::new();
        for part in [&bytes[..cut], &bytes[cut..]] {
            parser.feed(part, |e| read.push(owned(e))).expect("bounded");
        }
        assert_eq!(read, expected(), "cut at {cut}");
        assert_eq!(parser.comments, 2, "cut at {cut}");
    }
}

/// A stream that is not BOM-led keeps its first bytes, even when they start like one.
#[test]
fn only_a_leading_bom_is_dropped() {
    let mut parser = Parser::default();
    let mut read = Vec::new();
    for byte in b"\xEFdata: x\n\ndata: \xEF\xBB\xBFy\n\n" {
        parser
            .feed(&[*byte], |e| read.push(owned(e)))
            .expect("bounded");
    }
    // The first line's field is `\xEFdata`, not `data`: ignored, as a browser ignores it.
    assert_eq!(
        read,
        vec![("message".to_owned(), "\u{feff}y".to_owned(), String::new())]
    );
}

/// A line that never ends breaks the stream at the bound rather than filling memory.
#[test]
fn an_endless_line_is_refused_at_the_bound() {
    let mut parser = Parser::default();
    let chunk = vec![b'x'; 1 << 20];
    let mut fed = Ok(());
    for _ in 0..=(MAX_EVENT >> 20) {
        fed = parser.feed(&chunk, |_| panic!("no event"));
        if fed.is_err() {
            break;
        }
    }
    assert_eq!(fed, Err(TooLarge));
}

#[tokio::test]
async fn an_answer_that_is_not_an_event_stream_is_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(serve_one(listener, "text/html", "<p>no</p>"));
    let plan = plan(address);
    let (transport, _) = Transport::open(address, crate::tls::Origin::default(), None)
        .await
        .expect("connected");
    let refused = subscribe(transport, &plan, (0, 0), None).await;
    assert!(matches!(refused, Err(Refused::Status)));
    server.abort();
}

#[test]
fn a_header_name_that_is_not_a_token_is_refused_by_name() {
    let written = std::collections::BTreeMap::from([("x api".to_owned(), "1".to_owned())]);
    let refused = headers(&written, "headers").expect_err("refused");
    assert!(refused.contains("`x api`"), "{refused}");
    let filled = filled_headers(
        &[(HeaderName::from_static("x-room"), "r-{room}\n".to_owned())],
        4,
        0,
    )
    .expect_err("a newline is no header value");
    assert!(filled.contains("room 4"), "{filled}");
}

/// Events that come in the same read as the head (a resumed stream's replay, written at once)
/// are read at once, not when the next bytes arrive.
#[tokio::test]
async fn events_that_come_with_the_head_are_read_at_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        let mut buffer = [0u8; 1024];
        let _ = socket.read(&mut buffer).await.expect("the request");
        socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nid: 7\ndata: replayed\n\n")
            .await
            .expect("the answer");
        // Nothing more for longer than the reader waits.
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let plan = plan(address);
    let (transport, _) = Transport::open(address, crate::tls::Origin::default(), None)
        .await
        .expect("connected");
    let mut stream = subscribe(transport, &plan, (0, 0), Some("6"))
        .await
        .expect("the stream opened");
    let more = tokio::time::timeout(Duration::from_secs(1), stream.body.fill())
        .await
        .expect("the bytes that came with the head, at once")
        .expect("read");
    assert!(more);
    let mut read = Vec::new();
    let Stream { body, parser } = &mut stream;
    let ended = body.decode(&mut |data| {
        parser
            .feed(data, |event| read.push(owned(event)))
            .expect("bounded");
    });
    assert_eq!(ended, None, "a body to the close goes on");
    assert_eq!(
        read,
        vec![("message".to_owned(), "replayed".to_owned(), "7".to_owned())]
    );
    server.abort();
}

/// A publish request: `POST` to the sender's path, its headers filled, `content-type:
/// application/json` unless given, the body as rendered; the answer's status returned, and the
/// connection used again for the next message.
#[tokio::test]
async fn a_publish_posts_the_message_with_its_headers_on_a_kept_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("one connection for both");
        let mut requests = Vec::new();
        for _ in 0..2 {
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            // A head and a 7-byte body.
            while !request.windows(4).any(|w| w == b"\r\n\r\n") || !request.ends_with(b"message") {
                let n = socket.read(&mut buffer).await.expect("the request");
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&buffer[..n]);
            }
            requests.push(String::from_utf8_lossy(&request).into_owned());
            socket
                .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\nok")
                .await
                .expect("the answer");
        }
        requests
    });
    let publish = endpoint(address);
    let headers = filled_headers(
        &[(HeaderName::from_static("x-room"), "room-{room}".to_owned())],
        5,
        1,
    )
    .expect("a header value");
    let publisher = Publisher::default();
    for _ in 0..2 {
        let status = publisher
            .post(
                &publish,
                "/pub/5",
                &headers,
                "message".to_owned(),
                Duration::from_secs(5),
            )
            .await;
        assert_eq!(status, Ok(202));
    }
    let requests = server.await.expect("the server");
    for request in &requests {
        let lower = request.to_ascii_lowercase();
        assert!(request.starts_with("POST /pub/5 HTTP/1.1\r\n"), "{request}");
        assert!(lower.contains("x-room: room-5"), "{request}");
        assert!(lower.contains("authorization: basic dtpw"), "{request}");
        assert!(
            lower.contains("content-type: application/json"),
            "{request}"
        );
        assert!(request.ends_with("\r\n\r\nmessage"), "{request}");
    }
}
