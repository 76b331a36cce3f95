//! HTTP/1.1 on one keep-alive connection, as lean as wrk: the request's bytes are encoded
//! once per scenario, a send is one write, and the answer is read into the connection's own
//! buffer, its head parsed by httparse (hyper's parser) and its body framed (Content-Length,
//! chunked, or to the end of the connection) and skipped. A request never leaves the task
//! that sends it: hyper's client runs each connection as a task of its own and hands every
//! request and answer across a channel, which costs more CPU than the request itself.

use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;

use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::tls::{Origin, TlsTo, Transport};

/// The most header lines an answer may have.
const MAX_HEADERS: usize = 100;

/// The most bytes an answer's head may take.
const MAX_HEAD: usize = 64 * 1024;

/// Why an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WireError {
    /// The server closed (or reset) the connection before the first byte of an answer: on a
    /// reused connection, it closed an idle keep-alive connection and the request can be sent
    /// again on a new one.
    ClosedBeforeAnswer,
    /// Not HTTP/1.x, or cut in the middle of an answer.
    Protocol,
}

/// One open connection and what was read on it.
pub(super) struct Connection {
    stream: Transport,
    buffer: BytesMut,
}

/// One answer, read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Answer {
    pub(super) status: u16,
    /// Whether the connection can carry the next request.
    pub(super) keep_alive: bool,
    /// The body's length in bytes (decoded, for a chunked one).
    pub(super) body_size: u64,
}

/// Where an answer's body goes: counted always, and its first `limit` bytes kept when `kept`
/// is given (for the checks of `expect`).
pub(super) struct Sink<'a> {
    pub(super) kept: Option<&'a mut Vec<u8>>,
    pub(super) limit: usize,
    size: u64,
}

impl<'a> Sink<'a> {
    /// Keeps up to `limit` bytes into `kept`, when given.
    pub(super) fn new(kept: Option<&'a mut Vec<u8>>, limit: usize) -> Sink<'a> {
        Sink {
            kept,
            limit,
            size: 0,
        }
    }

    /// The body's bytes so far.
    pub(super) fn size(&self) -> u64 {
        self.size
    }

    pub(super) fn take(&mut self, bytes: &[u8]) {
        self.size += bytes.len() as u64;
        if let Some(kept) = self.kept.as_deref_mut() {
            let room = self.limit.saturating_sub(kept.len());
            kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }
}

/// How an answer's body ends.
enum Body {
    Length(u64),
    Chunked,
    ToClose,
}

impl Connection {
    /// A connection to `address` from `origin`, over TLS when `tls` says, and how long its
    /// TLS handshake took.
    pub(super) async fn open(
        address: SocketAddr,
        origin: Origin<'_>,
        tls: Option<&TlsTo>,
    ) -> io::Result<(Connection, Option<Duration>)> {
        let (stream, handshake) = Transport::open(address, origin, tls).await?;
        Ok((
            Connection {
                stream,
                buffer: BytesMut::with_capacity(8 * 1024),
            },
            handshake,
        ))
    }

    /// Sends `request` (a whole encoded request) and reads its answer. `head_only` for a
    /// HEAD request, whose answer has no body whatever its headers say.
    pub(super) async fn exchange(
        &mut self,
        request: &[u8],
        head_only: bool,
        sink: &mut Sink<'_>,
    ) -> Result<Answer, WireError> {
        self.buffer.clear();
        if self.stream.write_all(request).await.is_err() {
            return Err(WireError::ClosedBeforeAnswer);
        }
        if let Transport::Tls(_) = self.stream
            && self.stream.flush().await.is_err()
        {
            return Err(WireError::ClosedBeforeAnswer);
        }
        loop {
            let (status, keep_alive, body, consumed) = self.read_head().await?;
            self.buffer.advance(consumed);
            // An interim answer (100 Continue, 103 Early Hints): the real one follows.
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let body = if head_only || status == 204 || status == 304 || status == 101 {
                Body::Length(0)
            } else {
                body
            };
            let keep_alive = match body {
                Body::Length(length) => {
                    self.skip(length, Some(&mut *sink)).await?;
                    keep_alive
                }
                Body::Chunked => {
                    self.skip_chunks(sink).await?;
                    keep_alive
                }
                Body::ToClose => {
                    self.skip_to_close(sink).await?;
                    false
                }
            };
            if keep_alive {
                self.expect_nothing();
            }
            return Ok(Answer {
                status,
                keep_alive,
                body_size: sink.size,
            });
        }
    }

    /// The answer is read whole and the server sends nothing more until the next request: the
    /// reactor's note that the socket was readable is stale, and forgetting it saves the read
    /// that would find nothing (EAGAIN) after the next request is written: a syscall of the
    /// four a request takes. Data that arrives later (the next answer, a close) is a new
    /// readiness event.
    /// Over TLS the session reads records of its own (tickets after the handshake): it is left
    /// alone.
    fn expect_nothing(&self) {
        let Transport::Plain(tcp) = &self.stream else {
            return;
        };
        let _ = tcp.try_io(tokio::io::Interest::READABLE, || {
            Err::<(), _>(io::ErrorKind::WouldBlock.into())
        });
    }

    /// Reads until the buffer holds a whole head: its status, whether the connection stays
    /// open, how the body ends, and the head's length.
    async fn read_head(&mut self) -> Result<(u16, bool, Body, usize), WireError> {
        let mut first = self.buffer.is_empty();
        loop {
            if let Some(head) = parse_head(&self.buffer)? {
                return Ok(head);
            }
            let read = self.fill().await;
            match read {
                Ok(0) | Err(_) if first => return Err(WireError::ClosedBeforeAnswer),
                Ok(0) | Err(_) => return Err(WireError::Protocol),
                Ok(_) => first = false,
            }
        }
    }

    /// Reads more into the buffer; 0 at the end of the connection.
    async fn fill(&mut self) -> io::Result<usize> {
        self.buffer.reserve(8 * 1024);
        self.stream.read_buf(&mut self.buffer).await
    }

    /// Skips `length` bytes of body, into `sink` when given.
    async fn skip(
        &mut self,
        mut length: u64,
        mut sink: Option<&mut Sink<'_>>,
    ) -> Result<(), WireError> {
        loop {
            let here = (self.buffer.len() as u64).min(length);
            if let Some(sink) = sink.as_deref_mut() {
                sink.take(&self.buffer[..here as usize]);
            }
            self.buffer.advance(here as usize);
            length -= here;
            if length == 0 {
                return Ok(());
            }
            if matches!(self.fill().await, Ok(0) | Err(_)) {
                return Err(WireError::Protocol);
            }
        }
    }

    /// Skips a chunked body, its chunks into `sink`: chunks up to the last (size 0), then its
    /// trailer lines.
    async fn skip_chunks(&mut self, sink: &mut Sink<'_>) -> Result<(), WireError> {
        loop {
            let size = loop {
                match httparse::parse_chunk_size(&self.buffer) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        self.buffer.advance(used);
                        break size;
                    }
                    Ok(httparse::Status::Partial) if self.buffer.len() < MAX_HEAD => {
                        if matches!(self.fill().await, Ok(0) | Err(_)) {
                            return Err(WireError::Protocol);
                        }
                    }
                    _ => return Err(WireError::Protocol),
                }
            };
            if size == 0 {
                return self.skip_trailers().await;
            }
            // The chunk, then the line end after it.
            self.skip(size, Some(&mut *sink)).await?;
            self.skip(2, None).await?;
        }
    }

    /// Skips trailer lines up to the empty line that ends a chunked body.
    async fn skip_trailers(&mut self) -> Result<(), WireError> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|pair| pair == b"\r\n") {
                self.buffer.advance(end + 2);
                if end == 0 {
                    return Ok(());
                }
                continue;
            }
            if self.buffer.len() >= MAX_HEAD || matches!(self.fill().await, Ok(0) | Err(_)) {
                return Err(WireError::Protocol);
            }
        }
    }

    /// Skips a body that ends with the connection, into `sink`.
    async fn skip_to_close(&mut self, sink: &mut Sink<'_>) -> Result<(), WireError> {
        loop {
            sink.take(&self.buffer);
            self.buffer.clear();
            match self.fill().await {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(_) => return Err(WireError::Protocol),
            }
        }
    }
}

/// The head at the start of `buffer`: its status, whether the connection stays open, how the
/// body ends, and its length; `None` while it is not whole. Not in the reading future: the
/// headers' room (3.2 KB) would be held across its waits, and the future moved with it for
/// each request.
fn parse_head(buffer: &[u8]) -> Result<Option<(u16, bool, Body, usize)>, WireError> {
    // Left uninitialized (httparse writes the ones it parses): filling 100 empty headers for
    // each answer was a 3.2 KB copy.
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buffer,
        &mut headers,
    );
    match parsed {
        Ok(httparse::Status::Complete(length)) => {
            let status = response.code.ok_or(WireError::Protocol)?;
            let http_11 = response.version == Some(1);
            let (body, keep_alive) = framing(response.headers, http_11)?;
            Ok(Some((status, keep_alive, body, length)))
        }
        Ok(httparse::Status::Partial) if buffer.len() < MAX_HEAD => Ok(None),
        _ => Err(WireError::Protocol),
    }
}

/// How the body of an answer with these headers ends, and whether the connection stays open
/// after it (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `keep-alive`).
fn framing(headers: &[httparse::Header<'_>], http_11: bool) -> Result<(Body, bool), WireError> {
    let mut body = Body::ToClose;
    let mut keep_alive = http_11;
    for header in headers {
        let value = header.value;
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked is the last coding when present (RFC 9112, 6.1).
            let last = value.rsplit(|b| *b == b',').next().unwrap_or(value);
            if last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                body = Body::Chunked;
            }
        } else if header.name.eq_ignore_ascii_case("content-length") {
            if matches!(body, Body::Chunked) {
                continue;
            }
            let length = std::str::from_utf8(value.trim_ascii())
                .ok()
                .and_then(|text| text.parse::<u64>().ok())
                .ok_or(WireError::Protocol)?;
            body = Body::Length(length);
        } else if header.name.eq_ignore_ascii_case("connection") {
            for option in value.split(|b| *b == b',') {
                let option = option.trim_ascii();
                if option.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if option.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    Ok((body, keep_alive))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback that answers each request with the next of `answers`, whole or
    /// in the pieces given, and records what it was sent.
    async fn serve(
        answers: Vec<Vec<&'static [u8]>>,
    ) -> (SocketAddr, tokio::task::JoinHandle<Vec<u8>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a listener");
        let address = listener.local_addr().expect("its address");
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("a connection");
            let mut received = Vec::new();
            for answer in answers {
                // One request: up to its empty line (these requests have no body).
                let mut request = Vec::new();
                while !request.ends_with(b"\r\n\r\n") {
                    let mut byte = [0u8; 1];
                    if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                        return received;
                    }
                    request.push(byte[0]);
                }
                received.extend_from_slice(&request);
                for piece in answer {
                    stream.write_all(piece).await.expect("written");
                    stream.flush().await.expect("flushed");
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                }
            }
            received
        });
        (address, server)
    }

    const GET: &[u8] = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n";

    /// Each framing, on one connection one after another, answers split across reads where
    /// a parser would trip: in the head, in a chunk size, in a trailer.
    #[tokio::test]
    async fn every_framing_reads_to_its_end_and_the_next_answer_follows() {
        let (address, server) = serve(vec![
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"],
            vec![
                b"HTTP/1.1 201 Cre",
                b"ated\r\nContent-Length: 5\r\n\r\nhel",
                b"lo",
            ],
            vec![
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nwiki\r\n",
                b"5;ext=1\r\npedia\r\n0\r\nx-trailer: 1",
                b"\r\n\r\n",
            ],
            vec![
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            ],
            vec![b"HTTP/1.1 204 No Content\r\n\r\n"],
            vec![b"HTTP/1.1 503 Busy\r\nconnection: close\r\ncontent-length: 1\r\n\r\nx"],
        ])
        .await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        let mut answers = Vec::new();
        let mut bodies = Vec::new();
        for _ in 0..6 {
            // Each body kept whole (a limit of 64 bytes), chunks decoded.
            let mut kept = Vec::new();
            let mut sink = Sink::new(Some(&mut kept), 64);
            answers.push(
                connection
                    .exchange(GET, false, &mut sink)
                    .await
                    .expect("an answer"),
            );
            bodies.push(String::from_utf8(kept).expect("text"));
        }
        assert_eq!(bodies, ["ok", "hello", "wikipedia", "", "", "x"]);
        let sizes: Vec<u64> = answers.iter().map(|a| a.body_size).collect();
        assert_eq!(sizes, [2, 5, 9, 0, 0, 1]);
        let statuses: Vec<(u16, bool)> = answers.iter().map(|a| (a.status, a.keep_alive)).collect();
        assert_eq!(
            statuses,
            [
                (200, true),
                (201, true),
                (200, true),
                (404, true),
                (204, true),
                (503, false)
            ]
        );
        let received = server.await.expect("the server");
        assert_eq!(received, GET.repeat(6));
    }

    /// A body that ends with the connection, and an HTTP/1.0 answer: the connection is done.
    #[tokio::test]
    async fn a_body_to_the_close_ends_the_connection() {
        let (address, server) = serve(vec![vec![b"HTTP/1.0 200 OK\r\n\r\nall of it"]]).await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        // Kept up to its limit, counted whole.
        let mut kept = Vec::new();
        let mut sink = Sink::new(Some(&mut kept), 3);
        let exchange = connection.exchange(GET, false, &mut sink);
        // The server task ends after its one answer, closing the connection.
        let answer = exchange.await.expect("an answer");
        assert_eq!(
            answer,
            Answer {
                status: 200,
                keep_alive: false,
                body_size: 9
            }
        );
        assert_eq!(kept, b"all");
        server.await.expect("the server");
    }

    /// A server that closes without answering (an idle keep-alive connection it dropped), and
    /// one that answers garbage or cuts a body short.
    #[tokio::test]
    async fn closed_garbage_and_cut_answers_are_told_apart() {
        let (address, server) = serve(vec![]).await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        server.await.expect("the server");
        assert_eq!(
            connection
                .exchange(GET, false, &mut Sink::new(None, 0))
                .await,
            Err(WireError::ClosedBeforeAnswer)
        );

        let (address, _server) = serve(vec![vec![b"SSH-2.0-OpenSSH\r\n\r\n"]]).await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        assert_eq!(
            connection
                .exchange(GET, false, &mut Sink::new(None, 0))
                .await,
            Err(WireError::Protocol)
        );

        let (address, _server) = serve(vec![vec![
            b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
        ]])
        .await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        assert_eq!(
            connection
                .exchange(GET, false, &mut Sink::new(None, 0))
                .await,
            Err(WireError::Protocol)
        );
    }

    /// A HEAD answer's Content-Length is the GET's body, not sent: nothing is read for it.
    #[tokio::test]
    async fn a_head_answer_has_no_body() {
        let (address, server) = serve(vec![
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n"],
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"],
        ])
        .await;
        let (mut connection, _) = Connection::open(address, Origin::default(), None)
            .await
            .expect("connected");
        let head = b"HEAD / HTTP/1.1\r\nhost: x\r\n\r\n";
        let answer = connection
            .exchange(head, true, &mut Sink::new(None, 0))
            .await
            .expect("an answer");
        assert_eq!(answer.status, 200);
        let answer = connection
            .exchange(GET, false, &mut Sink::new(None, 0))
            .await
            .expect("an answer");
        assert_eq!(answer.status, 200);
        drop(connection);
        server.await.expect("the server");
    }
}
