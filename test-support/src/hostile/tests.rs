use super::*;

fn address(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Sends `request` and reads the answer until the server closes, or `None` at `timeout`.
fn exchange(port: u16, request: &[u8], timeout: Duration) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&address(port), timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.write_all(request).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";

#[test]
fn a_server_that_never_accepts_lets_no_connect_through() {
    let server = NeverAccepting::start();
    let started = Instant::now();
    let connect = TcpStream::connect_timeout(&address(server.port()), Duration::from_millis(300));
    let error = connect.err().map(|e| e.kind());
    assert_eq!(error, Some(ErrorKind::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_stalling_server_reads_the_request_and_never_answers() {
    let server = stalling();
    let answer = exchange(server.port(), GET, Duration::from_millis(400));
    assert_eq!(answer, None);
    assert_eq!(
        (server.accepted(), server.requests(), server.answered()),
        (1, 1, 0)
    );
    // Dropped, it lets go of its connection at once, not at the end of its lifetime.
    let started = Instant::now();
    drop(server);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// A client that gives up (closes its connection) frees the stalled connection's thread: a
/// long run against a stalling server does not run out of them.
#[test]
fn a_stalling_server_lets_go_of_a_connection_its_client_closed() {
    let server = stalling();
    for _ in 0..3 {
        let answer = exchange(server.port(), GET, Duration::from_millis(100));
        assert_eq!(answer, None);
    }
    assert_eq!(server.requests(), 3);
    let freed = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        server.counts.open.load(Ordering::Relaxed) == 0
    });
    assert!(freed, "{:?}", server.counts);
}

#[test]
fn a_dying_server_answers_its_share_then_refuses_connects() {
    let server = dying_after(2);
    for _ in 0..2 {
        let answer = exchange(server.port(), GET, Duration::from_secs(2)).expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    }
    assert_eq!(server.answered(), 2);
    let refused = wait_until_refused(server.port());
    assert!(refused, "still accepting after its last answer");
}

fn wait_until_refused(port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match TcpStream::connect_timeout(&address(port), Duration::from_millis(200)) {
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => return true,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn a_slow_reader_answers_once_the_body_is_read_at_its_pace() {
    let server = reading_slowly(1024, Duration::from_millis(20));
    let body = vec![b'x'; 10 * 1024];
    let mut request = format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let started = Instant::now();
    let answer = exchange(server.port(), &request, Duration::from_secs(5)).expect("an answer");
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    // 10 KiB and the headers, 1 KiB a read: at least 10 pauses of 20 ms.
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(server.answered(), 1);
}

#[test]
fn headers_end_at_the_blank_line_and_say_the_body_length() {
    let request = b"POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\nbody";
    let end = header_end(request).expect("an end");
    assert_eq!(&request[end..], b"body");
    assert_eq!(content_length(&request[..end]), 12);
    assert_eq!(content_length(b"GET / HTTP/1.1\r\n\r\n"), 0);
    assert_eq!(header_end(b"GET / HTTP/1.1\r\n"), None);
}
