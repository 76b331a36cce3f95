//! The requests of a scenario, encoded once, and sending one of them on a worker's own
//! keep-alive connection ([`wire`](super::wire)), all of it within the request's time.

use std::net::SocketAddr;
use std::time::Duration;

use std::sync::Arc;

use headroom_spec::scenario::HttpVersion;

use tokio::time::Instant;

mod prepare;

use super::checks::Checks;
use super::deadline::Deadline;
use super::flow::{Captor, Rows, Template, UserData};
use super::h2::{H2Request, Streams};
use super::recorder::Failed;
use super::wire::{Connection, Sink, WireError};
use crate::source::Sources;
use crate::tls::{Origin, TlsTo, Transport};
use crate::web::ErrorKind;

/// A request ready to send: where, and its bytes.
struct Prepared {
    address: usize,
    /// Its bytes for HTTP/1.1.
    encoded: Vec<u8>,
    /// Its parts for HTTP/2.
    h2: Option<H2Request>,
    /// A HEAD request: its answer has no body.
    head_only: bool,
    expect: Vec<u16>,
    /// The checks of `expect` beyond the status, ready to apply.
    checks: Option<Checks>,
    weight: u32,
    /// Its path, headers or body fill `{row.…}` or `{capture.…}` per send.
    template: Option<Template>,
    /// The values it captures, by their index in `Client::captures`.
    captors: Vec<(usize, Captor)>,
    /// Sent once per virtual user, before the others.
    once: bool,
}

/// Where a scenario's requests go: an address, and TLS to it for `https://`.
struct Address {
    socket: SocketAddr,
    tls: Option<TlsTo>,
}

/// A scenario's requests and limits, shared read-only by its load threads.
pub(super) struct Client {
    requests: Vec<Prepared>,
    addresses: Vec<Address>,
    version: HttpVersion,
    /// The scenario's data file.
    pub(super) rows: Option<Rows>,
    /// The names of the values its requests capture.
    pub(super) captures: Vec<String>,
    /// Its `once` requests, in order.
    pub(super) once: Vec<usize>,
    total_weight: u32,
    /// The most a request takes from its intended start.
    pub(super) timeout: Duration,
    /// The most one connection attempt takes.
    connect_timeout: Duration,
    /// The source addresses clients bind, when `[generator] source_addresses` says.
    pub(super) sources: Option<Sources>,
}

/// A worker's connections: one per address its requests go to, opened when first needed and
/// kept alive; and the timer that bounds its requests.
pub(super) struct Connections {
    /// The worker's or virtual user's number, which picks its source address.
    client: u64,
    open: Vec<Option<Connection>>,
    /// The thread's HTTP/2 connections, shared by its workers.
    streams: Arc<Streams>,
    deadline: Deadline,
}

/// How one send went.
pub(super) struct Sent {
    /// When a connection was ready to send on (or when the request gave up waiting for one).
    pub(super) at: Instant,
    pub(super) outcome: Result<(), Failed>,
    /// Connections opened for it (0 on a reused one).
    pub(super) opened: u64,
    /// The TLS handshake of the connection it opened, if it opened one over TLS.
    pub(super) handshake: Option<Duration>,
    /// Values captured from the answer, by their index in `Client::captures`.
    pub(super) captured: Vec<(usize, String)>,
}

impl Client {
    /// Client `client`'s connections (its number picks its source address): none open yet,
    /// to any address; `streams` the thread's HTTP/2 connections.
    pub(super) fn connections(&self, streams: &Arc<Streams>, client: u64) -> Connections {
        Connections {
            client,
            open: self.addresses.iter().map(|_| None).collect(),
            streams: Arc::clone(streams),
            deadline: Deadline { timer: None },
        }
    }

    /// A load thread's HTTP/2 connections: none open yet.
    pub(super) fn streams(&self) -> Arc<Streams> {
        Arc::new(Streams::new(self.addresses.len()))
    }

    /// Where client `client`'s connections come from.
    fn origin(&self, client: u64) -> Origin<'_> {
        Origin {
            sources: self.sources.as_ref(),
            client,
        }
    }

    /// The addresses its requests go to, as resolved.
    pub(super) fn targets(&self) -> Vec<std::net::SocketAddr> {
        self.addresses.iter().map(|a| a.socket).collect()
    }

    /// A request by weight, among those not sent `once`, named by `draw` (a uniform 64-bit
    /// number: the same draw picks the same request).
    pub(super) fn pick(&self, draw: u64) -> usize {
        if self.requests.len() < 2 {
            return 0;
        }
        // Multiply-shift: `draw` scaled onto 0..total, uniform up to 2^-64.
        let total = self.total_weight.max(1);
        let mut roll = ((u128::from(draw) * u128::from(total)) >> 64) as u32;
        for (i, request) in self.requests.iter().enumerate() {
            if request.once {
                continue;
            }
            if roll < request.weight {
                return i;
            }
            roll -= request.weight;
        }
        0
    }

    /// What a request of the open model fills: the next row, nothing captured.
    pub(super) fn request_data(&self) -> UserData {
        UserData {
            row: self.rows.as_ref().and_then(Rows::take),
            captured: Vec::new(),
        }
    }

    /// The body to keep for `request`'s checks and captures, at most.
    fn keep_limit(request: &Prepared) -> Option<usize> {
        let checks = request.checks.as_ref();
        let reads = checks.is_some_and(|c| c.reads_body) || !request.captors.is_empty();
        reads.then(|| {
            let limit = checks.map_or(super::checks::CHECKED_BODY_LIMIT, |c| c.max_size);
            usize::try_from(limit).unwrap_or(usize::MAX)
        })
    }

    /// The verdict on an answer, and the values it gave to capture: a value not found is a
    /// `check` error.
    fn verdict(
        request: &Prepared,
        status: u16,
        size: u64,
        kept: &[u8],
    ) -> (Result<(), Failed>, Vec<(usize, String)>) {
        let judged = judge(request, status, size, kept);
        if judged.is_err() || request.captors.is_empty() {
            return (judged, Vec::new());
        }
        let mut captured = Vec::with_capacity(request.captors.len());
        for (index, captor) in &request.captors {
            match captor.find(kept) {
                Some(value) => captured.push((*index, value)),
                None => return (Err(Failed::Check), captured),
            }
        }
        (Ok(()), captured)
    }

    /// A new connection to `address`, within the connect timeout and the request's `deadline`:
    /// a `connect` error when either passes first.
    /// With TLS, the handshake is within the connect timeout too, and its time is returned.
    async fn connect(
        &self,
        address: usize,
        client: u64,
        deadline: Instant,
    ) -> Result<(Connection, Option<Duration>), Failed> {
        let limit = deadline.min(Instant::now() + self.connect_timeout);
        let to = &self.addresses[address];
        // Boxed: a TLS handshake's state is large, and a request's future is built for every
        // request while connections are opened rarely.
        let open = Box::pin(Connection::open(
            to.socket,
            self.origin(client),
            to.tls.as_ref(),
        ));
        match tokio::time::timeout_at(limit, open).await {
            Ok(Ok(opened)) => Ok(opened),
            Ok(Err(_)) | Err(_) => Err(Failed::Kind(ErrorKind::Connect)),
        }
    }

    /// A new stream to `address` for HTTP/2, bounded like `connect`.
    async fn connect_stream(
        &self,
        address: usize,
        client: u64,
        deadline: Instant,
    ) -> Result<(Transport, Option<Duration>), Failed> {
        let limit = deadline.min(Instant::now() + self.connect_timeout);
        let to = &self.addresses[address];
        let open = Transport::open(to.socket, self.origin(client), to.tls.as_ref());
        match tokio::time::timeout_at(limit, open).await {
            Ok(Ok(opened)) => Ok(opened),
            Ok(Err(_)) | Err(_) => Err(Failed::Kind(ErrorKind::Connect)),
        }
    }

    /// Sends request `which` on the worker's connection to its address (opened when there is
    /// none, or when the server closed it), all of it within the timeout from `intended`.
    /// `on_ready` runs once a connection is ready to send on, or the request gave up on one.
    pub(super) async fn send(
        &self,
        connections: &mut Connections,
        which: usize,
        intended: Instant,
        user: &UserData,
        on_ready: impl FnOnce(),
    ) -> Sent {
        match self.version {
            HttpVersion::Http1 => {
                self.send_h1(connections, which, intended, user, on_ready)
                    .await
            }
            // Boxed: HTTP/1.1's future, built for every request, stays small.
            HttpVersion::Http2 => {
                Box::pin(self.send_h2(connections, which, intended, user, on_ready)).await
            }
        }
    }

    /// `send` as a stream on the thread's HTTP/2 connection to the request's address.
    async fn send_h2(
        &self,
        connections: &mut Connections,
        which: usize,
        intended: Instant,
        user: &UserData,
        on_ready: impl FnOnce(),
    ) -> Sent {
        let request = &self.requests[which];
        let deadline = intended + self.timeout;
        let streams = Arc::clone(&connections.streams);
        // Waiting for another worker to open the connection counts against this request's
        // time too: past its deadline it is a `connect` error, like a connection never opened.
        let opening = streams.ready(
            request.address,
            self.connect_stream(request.address, connections.client, deadline),
        );
        let ready = tokio::time::timeout_at(deadline, opening)
            .await
            .unwrap_or(Err(Failed::Kind(ErrorKind::Connect)));
        on_ready();
        let at = Instant::now();
        let ready = match ready {
            Ok(ready) => ready,
            Err(failed) => {
                return Sent {
                    at,
                    outcome: Err(failed),
                    opened: 0,
                    handshake: None,
                    captured: Vec::new(),
                };
            }
        };
        let (opened, handshake) = match ready.opened {
            Some(handshake) => (1, handshake),
            None => (0, None),
        };
        let filled;
        let parts = match (&request.template, request.h2.as_ref()) {
            (Some(template), _) => {
                let (path, headers, body) = template.fill(self.rows.as_ref(), &self.captures, user);
                filled = H2Request::new(
                    &template.method,
                    template.secure,
                    &template.authority,
                    &path,
                    &headers,
                    body.as_bytes(),
                );
                filled.as_ref().ok()
            }
            (None, parts) => parts,
        };
        let Some(parts) = parts else {
            return Sent {
                at,
                outcome: Err(Failed::Kind(ErrorKind::Protocol)),
                opened,
                handshake,
                captured: Vec::new(),
            };
        };
        let mut kept = Vec::new();
        let limit = Client::keep_limit(request);
        let mut sink = Sink::new(limit.map(|_| &mut kept), limit.unwrap_or(0));
        let exchange = super::h2::exchange(parts, ready.sender, &mut sink);
        let (outcome, captured) = match connections.deadline.bound(deadline, exchange).await {
            None => (Err(Failed::Kind(ErrorKind::Timeout)), Vec::new()),
            Some(Err(failed)) => (Err(failed), Vec::new()),
            Some(Ok((status, size))) => Client::verdict(request, status, size, &kept),
        };
        Sent {
            at,
            outcome,
            opened,
            handshake,
            captured,
        }
    }

    /// A request that varies (a data row, a capture) encoded for this send as HTTP/1.1; `None`
    /// for one encoded once.
    fn encode_varying(&self, request: &Prepared, user: &UserData) -> Option<Vec<u8>> {
        let template = request.template.as_ref()?;
        let (path, headers, body) = template.fill(self.rows.as_ref(), &self.captures, user);
        Some(encode(
            &template.method,
            &path,
            &template.authority,
            &headers,
            body.as_bytes(),
        ))
    }

    /// `send` on the worker's own HTTP/1.1 keep-alive connection.
    async fn send_h1(
        &self,
        connections: &mut Connections,
        which: usize,
        intended: Instant,
        user: &UserData,
        on_ready: impl FnOnce(),
    ) -> Sent {
        let request = &self.requests[which];
        let deadline = intended + self.timeout;
        let mut opened = 0;
        let mut handshake = None;
        let client = connections.client;
        let slot = &mut connections.open[request.address];
        let (mut connection, fresh) = match slot.take() {
            Some(connection) => (connection, false),
            None => match self.connect(request.address, client, deadline).await {
                Ok((connection, took)) => {
                    opened += 1;
                    handshake = took;
                    (connection, true)
                }
                Err(failed) => {
                    on_ready();
                    return Sent {
                        at: Instant::now(),
                        outcome: Err(failed),
                        opened,
                        handshake,
                        captured: Vec::new(),
                    };
                }
            },
        };
        on_ready();
        let at = Instant::now();
        // The body is kept only for checks and captures that read it.
        let mut kept = Vec::new();
        let limit = Client::keep_limit(request);
        let mut sink = Sink::new(limit.map(|_| &mut kept), limit.unwrap_or(0));
        let filled = self.encode_varying(request, user);
        let encoded = filled.as_deref().unwrap_or(&request.encoded);
        let exchange = async {
            let mut fresh = fresh;
            loop {
                match connection
                    .exchange(encoded, request.head_only, &mut sink)
                    .await
                {
                    Ok(answer) => return Ok(answer),
                    // The server had closed this idle keep-alive connection: the request
                    // never reached it, so it goes once more on a new connection.
                    Err(WireError::ClosedBeforeAnswer) if !fresh => {
                        let (again, took) = self.connect(request.address, client, deadline).await?;
                        connection = again;
                        opened += 1;
                        handshake = took;
                        fresh = true;
                    }
                    // Accepted, then closed or reset before any answer.
                    Err(WireError::ClosedBeforeAnswer) => {
                        return Err(Failed::Kind(ErrorKind::Connect));
                    }
                    Err(WireError::Protocol) => return Err(Failed::Kind(ErrorKind::Protocol)),
                }
            }
        };
        let (outcome, captured) = match connections.deadline.bound(deadline, exchange).await {
            // The connection is dropped with the request: its answer may still come.
            None => (Err(Failed::Kind(ErrorKind::Timeout)), Vec::new()),
            Some(Err(failed)) => (Err(failed), Vec::new()),
            Some(Ok(answer)) => {
                if answer.keep_alive {
                    *slot = Some(connection);
                }
                Client::verdict(request, answer.status, answer.body_size, &kept)
            }
        };
        Sent {
            at,
            outcome,
            opened,
            handshake,
            captured,
        }
    }
}

/// Whether an answer of `status` with a body of `size` bytes (`kept` of them kept) is what
/// `request` expects.
fn judge(request: &Prepared, status: u16, size: u64, kept: &[u8]) -> Result<(), Failed> {
    let good = if request.expect.is_empty() {
        (200..300).contains(&status)
    } else {
        request.expect.contains(&status)
    };
    match request.checks.as_ref() {
        _ if !good => Err(Failed::Status(status)),
        Some(checks) if !checks.pass(size, kept) => Err(Failed::Check),
        _ => Ok(()),
    }
}

/// A request's bytes: the request line, Host (unless the spec sets one), the spec's headers,
/// Content-Length for a body (or a method that carries one), and the body.
fn encode(
    method: &str,
    path: &str,
    authority: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Vec<u8> {
    let has = |wanted: &str| {
        headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(wanted))
    };
    let mut encoded = Vec::with_capacity(64 + path.len() + body.len());
    encoded.extend_from_slice(format!("{method} {path} HTTP/1.1\r\n").as_bytes());
    if !has("host") {
        encoded.extend_from_slice(format!("host: {authority}\r\n").as_bytes());
    }
    for (name, value) in headers {
        encoded.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    let carries_body = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if carries_body && !has("content-length") {
        encoded.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    encoded.extend_from_slice(b"\r\n");
    encoded.extend_from_slice(body);
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's future is built and moved for each request: it stays small. It held the
    /// room for 100 parsed headers (7 KB in all), and copying it was 2.5 % of a closed loop's
    /// CPU.
    #[test]
    fn a_request_future_stays_small() {
        let client = Client {
            requests: vec![Prepared {
                address: 0,
                encoded: encode("GET", "/", "127.0.0.1:9", &[], b""),
                h2: None,
                head_only: false,
                expect: Vec::new(),
                checks: None,
                weight: 1,
                template: None,
                captors: Vec::new(),
                once: false,
            }],
            addresses: vec![Address {
                socket: SocketAddr::from(([127, 0, 0, 1], 9)),
                tls: None,
            }],
            sources: None,
            version: HttpVersion::Http1,
            rows: None,
            captures: Vec::new(),
            once: Vec::new(),
            total_weight: 1,
            timeout: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(1),
        };
        let mut connections = client.connections(&client.streams(), 0);
        let user = UserData::default();
        let send = client.send(&mut connections, 0, Instant::now(), &user, || ());
        let size = std::mem::size_of_val(&send);
        assert!(size <= 2048, "a request's future is {size} bytes");
    }

    #[test]
    fn a_request_is_encoded_once_as_http_1_1() {
        let get = encode("GET", "/api/notes?page=2", "127.0.0.1:8080", &[], b"");
        assert_eq!(
            String::from_utf8_lossy(&get),
            "GET /api/notes?page=2 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n\r\n"
        );
        let headers = [
            ("content-type".to_owned(), "application/json".to_owned()),
            ("Host".to_owned(), "api.local".to_owned()),
        ];
        let post = encode("POST", "/api/notes", "127.0.0.1:8080", &headers, b"{}");
        assert_eq!(
            String::from_utf8_lossy(&post),
            "POST /api/notes HTTP/1.1\r\ncontent-type: application/json\r\nHost: api.local\r\ncontent-length: 2\r\n\r\n{}"
        );
        let empty_put = encode("PUT", "/x", "h", &[], b"");
        assert!(String::from_utf8_lossy(&empty_put).contains("content-length: 0\r\n"));
    }
}
