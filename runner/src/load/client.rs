//! The requests of a scenario, encoded once, and sending one of them on a worker's own
//! keep-alive connection ([`wire`](super::wire)), all of it within the request's time.

use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use headroom_compiler::matrix::resolved::HttpScenario;
use headroom_spec::scenario::Expect;

use hyper::header::{HeaderName, HeaderValue};
use rand::Rng;
use tokio::time::{Instant, Sleep};

use super::Failed;
use super::wire::{Connection, Sink, WireError};
use crate::http::{self, ErrorKind};

/// A request ready to send: where, and its bytes.
struct Prepared {
    address: usize,
    encoded: Vec<u8>,
    /// A HEAD request: its answer has no body.
    head_only: bool,
    expect: Vec<u16>,
    /// The checks of `expect` beyond the status, ready to apply.
    checks: Option<Checks>,
    weight: u32,
}

/// The body kept for checks when `max_size` does not say: answers to check are pages and
/// API documents, not downloads.
const CHECKED_BODY_LIMIT: u64 = 1024 * 1024;

/// An answer's checks beyond its status (`expect = { … }`), compiled once.
struct Checks {
    contains: Option<Vec<u8>>,
    regex: Option<regex::bytes::Regex>,
    json: Vec<(String, serde_json::Value)>,
    /// The largest body that passes, and the most kept to check.
    max_size: u64,
    /// Whether a check reads the body (then it is kept).
    reads_body: bool,
}

impl Checks {
    fn of(checks: &headroom_spec::scenario::Checks, url: &str) -> Result<Checks, String> {
        let regex = match &checks.body_regex {
            Some(pattern) => Some(
                regex::bytes::Regex::new(pattern)
                    .map_err(|e| format!("`body_regex` of `{url}`: {e}"))?,
            ),
            None => None,
        };
        let contains = checks.body_contains.as_ref().map(|t| t.as_bytes().to_vec());
        let reads_body = contains.is_some() || regex.is_some() || !checks.json.is_empty();
        Ok(Checks {
            contains,
            regex,
            json: checks.json.clone().into_iter().collect(),
            max_size: checks
                .max_size
                .map_or(CHECKED_BODY_LIMIT, |size| size.bytes()),
            reads_body,
        })
    }

    /// Whether an answer of `size` bytes, of which `kept` were kept, passes every check.
    fn pass(&self, size: u64, kept: &[u8]) -> bool {
        if size > self.max_size {
            return false;
        }
        if let Some(text) = &self.contains
            && !text.is_empty()
            && !kept.windows(text.len()).any(|w| w == text.as_slice())
        {
            return false;
        }
        if let Some(regex) = &self.regex
            && !regex.is_match(kept)
        {
            return false;
        }
        if !self.json.is_empty() {
            let Ok(document) = serde_json::from_slice::<serde_json::Value>(kept) else {
                return false;
            };
            return self
                .json
                .iter()
                .all(|(pointer, value)| document.pointer(pointer) == Some(value));
        }
        true
    }
}

/// A scenario's requests and limits, shared read-only by its load threads.
pub(super) struct Client {
    requests: Vec<Prepared>,
    addresses: Vec<SocketAddr>,
    total_weight: u32,
    /// The most a request takes from its intended start.
    pub(super) timeout: Duration,
    /// The most one connection attempt takes.
    connect_timeout: Duration,
}

/// A worker's connections: one per address its requests go to, opened when first needed and
/// kept alive; and the timer that bounds its requests.
pub(super) struct Connections {
    open: Vec<Option<Connection>>,
    deadline: Deadline,
}

/// A worker's one timer for the deadlines of its requests. A timer armed and dropped for each
/// request costs 1.5 % of the generator's CPU (tokio's timer wheel: an insert and a removal
/// under its lock); a worker's requests go one after the other, their deadlines later and
/// later, so its timer stays set to an earlier request's deadline and, when that passes, is set
/// to the current one's: a request that ends in time (most) touches no timer at all.
struct Deadline {
    timer: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    /// `work`'s output, or `None` when `deadline` passed first.
    async fn bound<F: Future>(&mut self, deadline: Instant, work: F) -> Option<F::Output> {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() > deadline {
            timer.as_mut().reset(deadline);
        }
        let mut work = std::pin::pin!(work);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            while timer.as_mut().poll(cx).is_ready() {
                if timer.deadline() >= deadline {
                    return Poll::Ready(None);
                }
                // An earlier request's deadline: this request's is still ahead.
                timer.as_mut().reset(deadline);
            }
            Poll::Pending
        })
        .await
    }
}

/// How one send went.
pub(super) struct Sent {
    /// When a connection was ready to send on (or when the request gave up waiting for one).
    pub(super) at: Instant,
    pub(super) outcome: Result<(), Failed>,
    /// Connections opened for it (0 on a reused one).
    pub(super) opened: u64,
}

impl Client {
    /// The scenario's requests with their placeholders filled and their hosts resolved and
    /// checked (`allowed`) before any connection is made.
    pub(super) async fn prepare(
        scenario: &HttpScenario,
        port: u16,
        headroom_bin: &Path,
        allowed: &http::Allowed,
    ) -> Result<Client, String> {
        let mut requests = Vec::new();
        let mut authorities: Vec<String> = Vec::new();
        let mut addresses = Vec::new();
        for request in &scenario.requests {
            let url = crate::target::fill(&request.url, port, headroom_bin)?;
            let (authority, path) = http::parse_url(&url)
                .ok_or_else(|| format!("`{url}` is not an http:// URL the runner can load"))?;
            let address = match authorities.iter().position(|a| *a == authority) {
                Some(i) => i,
                None => {
                    let resolved = http::resolve(&authority, &url, &request.url, allowed).await?;
                    authorities.push(authority.clone());
                    addresses.push(resolved);
                    authorities.len() - 1
                }
            };
            let mut headers = Vec::new();
            for (name, value) in &request.headers {
                let value = crate::target::fill(value, port, headroom_bin)?;
                HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header `{name}` of `{url}`: {e}"))?;
                HeaderValue::from_str(&value)
                    .map_err(|e| format!("the value of header `{name}` of `{url}`: {e}"))?;
                headers.push((name.clone(), value));
            }
            let body = match &request.body {
                Some(body) => crate::target::fill(body, port, headroom_bin)?,
                None => String::new(),
            };
            let method = request.method.as_str();
            if path.contains(char::is_whitespace) {
                return Err(format!(
                    "the path of `{url}` has white space: encode it (%20)"
                ));
            }
            let expect = request
                .expect
                .as_ref()
                .map_or_else(Vec::new, Expect::statuses);
            let checks = match request.expect.as_ref().and_then(Expect::checks) {
                Some(checks) => Some(Checks::of(checks, &url)?),
                None => None,
            };
            requests.push(Prepared {
                address,
                encoded: encode(method, &path, &authority, &headers, body.as_bytes()),
                head_only: method == "HEAD",
                expect,
                checks,
                weight: request.weight,
            });
        }
        let total_weight = requests.iter().map(|r| r.weight).sum();
        Ok(Client {
            requests,
            addresses,
            total_weight,
            timeout: scenario.timeout.as_std(),
            connect_timeout: scenario.connect_timeout.as_std(),
        })
    }

    /// No connection open yet, to any address.
    pub(super) fn connections(&self) -> Connections {
        Connections {
            open: self.addresses.iter().map(|_| None).collect(),
            deadline: Deadline { timer: None },
        }
    }

    /// A request by weight.
    pub(super) fn pick(&self) -> usize {
        if self.requests.len() < 2 {
            return 0;
        }
        let mut roll = rand::rng().random_range(0..self.total_weight.max(1));
        for (i, request) in self.requests.iter().enumerate() {
            if roll < request.weight {
                return i;
            }
            roll -= request.weight;
        }
        0
    }

    /// A new connection to `address`, within the connect timeout and the request's `deadline`:
    /// a `connect` error when either passes first.
    async fn connect(&self, address: usize, deadline: Instant) -> Result<Connection, Failed> {
        let limit = deadline.min(Instant::now() + self.connect_timeout);
        match tokio::time::timeout_at(limit, Connection::open(self.addresses[address])).await {
            Ok(Ok(connection)) => Ok(connection),
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
        on_ready: impl FnOnce(),
    ) -> Sent {
        let request = &self.requests[which];
        let deadline = intended + self.timeout;
        let mut opened = 0;
        let slot = &mut connections.open[request.address];
        let (mut connection, fresh) = match slot.take() {
            Some(connection) => (connection, false),
            None => match self.connect(request.address, deadline).await {
                Ok(connection) => {
                    opened += 1;
                    (connection, true)
                }
                Err(failed) => {
                    on_ready();
                    return Sent {
                        at: Instant::now(),
                        outcome: Err(failed),
                        opened,
                    };
                }
            },
        };
        on_ready();
        let at = Instant::now();
        // The body is kept only for checks that read it.
        let mut kept = Vec::new();
        let checks = request.checks.as_ref();
        let keep = checks.filter(|c| c.reads_body);
        let limit = keep.map_or(0, |c| usize::try_from(c.max_size).unwrap_or(usize::MAX));
        let mut sink = Sink::new(keep.map(|_| &mut kept), limit);
        let exchange = async {
            let mut fresh = fresh;
            loop {
                match connection
                    .exchange(&request.encoded, request.head_only, &mut sink)
                    .await
                {
                    Ok(answer) => return Ok(answer),
                    // The server had closed this idle keep-alive connection: the request
                    // never reached it, so it goes once more on a new connection.
                    Err(WireError::ClosedBeforeAnswer) if !fresh => {
                        connection = self.connect(request.address, deadline).await?;
                        opened += 1;
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
        let outcome = match connections.deadline.bound(deadline, exchange).await {
            // The connection is dropped with the request: its answer may still come.
            None => Err(Failed::Kind(ErrorKind::Timeout)),
            Some(Err(failed)) => Err(failed),
            Some(Ok(answer)) => {
                if answer.keep_alive {
                    *slot = Some(connection);
                }
                let good = if request.expect.is_empty() {
                    (200..300).contains(&answer.status)
                } else {
                    request.expect.contains(&answer.status)
                };
                match checks {
                    _ if !good => Err(Failed::Status),
                    Some(checks) if !checks.pass(answer.body_size, &kept) => Err(Failed::Check),
                    _ => Ok(()),
                }
            }
        };
        Sent {
            at,
            outcome,
            opened,
        }
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

    /// The worker's one timer bounds each request by its own deadline: an earlier request's
    /// deadline passing mid-request does not end it, and a request past its own does end.
    #[tokio::test]
    async fn one_timer_bounds_each_request_by_its_own_deadline() {
        let ms = Duration::from_millis;
        let mut deadline = Deadline { timer: None };
        let now = Instant::now();
        let quick = deadline
            .bound(now + ms(40), tokio::time::sleep(ms(5)))
            .await;
        assert!(quick.is_some(), "ended in time");
        // The timer is still set for the first request's deadline, which passes during this
        // one: it goes on to its own.
        let now = Instant::now();
        let slow = deadline
            .bound(now + ms(300), tokio::time::sleep(ms(80)))
            .await;
        assert!(slow.is_some(), "its own deadline had not passed");
        assert!(now.elapsed() >= ms(80));
        // Never answered: ends at its deadline, not before, and not much after.
        let now = Instant::now();
        let never = deadline
            .bound(now + ms(60), std::future::pending::<()>())
            .await;
        assert!(never.is_none(), "timed out");
        let took = now.elapsed();
        assert!(took >= ms(60) && took < ms(250), "took {took:?}");
        // A deadline earlier than the one the timer is set to (a shorter request's) holds too.
        let now = Instant::now();
        let _ = deadline
            .bound(now + ms(500), tokio::time::sleep(ms(1)))
            .await;
        let never = deadline
            .bound(now + ms(40), std::future::pending::<()>())
            .await;
        assert!(never.is_none());
        assert!(now.elapsed() < ms(300), "took {:?}", now.elapsed());
    }

    /// The checks of an answer, on bodies whose answers are known.
    #[test]
    fn checks_pass_what_holds_and_fail_what_does_not() {
        let spec = |toml: &str| -> headroom_spec::scenario::Checks {
            toml::from_str(toml).expect("checks")
        };
        let checks = |toml: &str| Checks::of(&spec(toml), "http://x/").expect("compiles");
        let body = br#"{"user":{"id":42,"name":"ada"},"items":[1,2]}"#;
        let size = body.len() as u64;
        assert!(checks(r#"body_contains = "ada""#).pass(size, body));
        assert!(!checks(r#"body_contains = "bob""#).pass(size, body));
        assert!(checks(r#"body_contains = """#).pass(0, b""));
        assert!(checks(r#"body_regex = '"id":\d+'"#).pass(size, body));
        assert!(!checks(r#"body_regex = '^\['"#).pass(size, body));
        assert!(checks(r#"json = { "/user/id" = 42, "/items/1" = 2 }"#).pass(size, body));
        assert!(!checks(r#"json = { "/user/id" = "42" }"#).pass(size, body));
        assert!(!checks(r#"json = { "/user/id" = 42 }"#).pass(3, b"not"));
        assert!(checks(r#"max_size = "1KiB""#).pass(size, body));
        assert!(!checks(r#"max_size = "10B""#).pass(size, body));
        // Only checks that read the body keep it.
        assert!(!checks(r#"max_size = "10B""#).reads_body);
        assert!(checks(r#"body_contains = "x""#).reads_body);
    }

    /// A request's future is built and moved for each request: it stays small. It held the
    /// room for 100 parsed headers (7 KB in all), and copying it was 2.5 % of a closed loop's
    /// CPU.
    #[test]
    fn a_request_future_stays_small() {
        let client = Client {
            requests: vec![Prepared {
                address: 0,
                encoded: encode("GET", "/", "127.0.0.1:9", &[], b""),
                head_only: false,
                expect: Vec::new(),
                checks: None,
                weight: 1,
            }],
            addresses: vec![SocketAddr::from(([127, 0, 0, 1], 9))],
            total_weight: 1,
            timeout: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(1),
        };
        let mut connections = client.connections();
        let send = client.send(&mut connections, 0, Instant::now(), || ());
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
