//! The segments' meeting points (`run --segment i/n --barrier HOST:PORT`): segment 0 serves a
//! tiny HTTP barrier on a port of its own; at each meeting of each run every segment waits
//! until all have arrived. Before the load segment 0 announces one start instant
//! (`now + 500 ms`, Unix nanoseconds) that every segment starts at; after the load they meet
//! again, so segment 0 alone measures the target at rest. A segment that does not arrive
//! within the timeout fails the run on every other segment, by its index.

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::stripe::Segment;

/// How far ahead of the last arrival the start is announced: time for every segment to hear
/// it and be ready.
const LEAD: Duration = Duration::from_millis(500);

/// Where the segments meet in a run: before the load, once a rooms scenario's sockets are
/// open (its hold starts at the announced instant), and after the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// Before the load: every segment's load starts at the instant announced.
    Start,
    /// The rooms scenario of this name has its sockets open.
    Open(String),
    /// After the load: segment 0 alone measures the target.
    Done,
}

impl Stage {
    fn name(&self) -> String {
        match self {
            Stage::Start => "start".to_owned(),
            Stage::Open(scenario) => format!("open/{scenario}"),
            Stage::Done => "done".to_owned(),
        }
    }
}

/// A run's meetings, for a scenario to meet at: the barrier and the run's name.
#[derive(Clone)]
pub struct Meetings {
    /// Where the segments meet.
    pub barrier: std::sync::Arc<Barrier>,
    /// The run's name, which every segment meets under.
    pub run: String,
}

/// The start every segment of a run loads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// On this machine's clock.
    pub at: Instant,
    /// Unix time in milliseconds, as announced: the same in every segment's results.
    pub unix_ms: u64,
}

/// Why a meeting did not happen: the segments that never came (empty: this segment could not
/// reach segment 0), and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    /// The segments that never came.
    pub segments: Vec<u64>,
    /// What happened, in words.
    pub message: String,
}

/// The meetings the barrier has seen, by run and stage.
#[derive(Default)]
struct Ledger {
    by_key: HashMap<String, Meeting>,
}

#[derive(Default)]
struct Meeting {
    arrived: BTreeSet<u64>,
    /// The start announced once everyone came (Unix nanoseconds).
    start_ns: Option<u128>,
    /// Why it will not happen.
    missed: Option<Missed>,
}

/// Segment 0's side: the meetings, and the server other segments ask.
pub struct Host {
    meetings: Mutex<Ledger>,
    changed: Notify,
    count: u64,
    timeout: Duration,
}

/// This process's way to the meetings.
pub enum Barrier {
    /// Segment 0: it keeps the meetings.
    Host(Arc<Host>),
    /// Another segment: it asks segment 0 at `address`.
    Guest {
        /// Segment 0's barrier.
        address: SocketAddr,
        /// Its `host:port`, as the requests name it.
        authority: String,
        /// This segment.
        segment: Segment,
        /// How long a meeting may wait for every segment.
        timeout: Duration,
    },
}

impl Barrier {
    /// Segment 0 serves at `address` (an address of this machine); the others ask it there.
    /// `timeout` is how long a meeting waits for every segment.
    pub async fn new(
        authority: &str,
        segment: Segment,
        timeout: Duration,
    ) -> Result<Barrier, String> {
        let address = resolve(authority, timeout).await?;
        if segment.index > 0 {
            return Ok(Barrier::Guest {
                address,
                authority: authority.to_owned(),
                segment,
                timeout,
            });
        }
        let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
            format!("segment 0 cannot serve the barrier on {authority} ({address}): {e}; give an address of this machine")
        })?;
        let host = Arc::new(Host {
            meetings: Mutex::new(Ledger::default()),
            changed: Notify::new(),
            count: segment.count,
            timeout,
        });
        tokio::spawn(serve(listener, Arc::clone(&host)));
        Ok(Barrier::Host(host))
    }

    /// Waits at `stage` of run `run` for every segment; at `Start` and `Open`, the instant
    /// announced to go on at.
    pub async fn meet(&self, run: &str, stage: Stage) -> Result<Option<Start>, Missed> {
        let key = format!("{run}/{}", stage.name());
        let start_ns = match self {
            Barrier::Host(host) => host.arrive(&key, 0).await?,
            Barrier::Guest {
                address,
                authority,
                segment,
                timeout,
            } => ask(*address, authority, *segment, &key, *timeout).await?,
        };
        Ok((stage != Stage::Done).then(|| Start {
            at: instant_of(start_ns),
            unix_ms: u64::try_from(start_ns / 1_000_000).unwrap_or(u64::MAX),
        }))
    }
}

/// Meets the other segments at `stage` of `run` (nothing to meet without a barrier): the
/// announced start at `Start`; `None` when the meeting failed, the failure in `result`.
pub async fn meet(
    barrier: Option<&Arc<Barrier>>,
    run: &str,
    stage: Stage,
    result: &mut crate::results::RunResult,
) -> Option<Option<Start>> {
    let Some(barrier) = barrier else {
        return Some(None);
    };
    match barrier.meet(run, stage).await {
        Ok(at) => {
            // Every segment records the one start it loaded from.
            if let Some(start) = at {
                result.load_start_ms = Some(start.unix_ms);
            }
            Some(at)
        }
        Err(missed) => {
            result.failure = Some(crate::results::Failure::Barrier {
                segments: missed.segments,
                message: missed.message,
            });
            None
        }
    }
}

/// [`meet`], ended at once by `cancel` (a signal): the run is then interrupted, and no
/// meeting keeps a Ctrl-C waiting for `--barrier-timeout`.
pub async fn meet_or_cancel(
    barrier: Option<&Arc<Barrier>>,
    run: &str,
    stage: Stage,
    result: &mut crate::results::RunResult,
    cancel: &tokio::sync::watch::Receiver<bool>,
) -> Option<Option<Start>> {
    let mut cancelled = cancel.clone();
    let met = tokio::select! {
        met = meet(barrier, run, stage, result) => Some(met),
        // A sender gone is no signal: the meeting goes on.
        Ok(_) = cancelled.wait_for(|stop| *stop) => None,
    };
    met.unwrap_or_else(|| {
        result.failure = Some(crate::results::Failure::Interrupted);
        None
    })
}

/// The `Instant` of a Unix time in nanoseconds, on this machine's clock.
fn instant_of(unix_ns: u128) -> Instant {
    let now_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let now = Instant::now();
    if unix_ns >= now_ns {
        now + Duration::from_nanos(u64::try_from(unix_ns - now_ns).unwrap_or(u64::MAX))
    } else {
        // Announced for a moment already past here (a clock behind): start now.
        now
    }
}

/// `authority`'s address, asked again until `timeout`: a pod's name resolves only once the
/// cluster's DNS has it.
async fn resolve(authority: &str, timeout: Duration) -> Result<SocketAddr, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let why = match tokio::net::lookup_host(authority).await {
            Ok(mut found) => match found.next() {
                Some(address) => return Ok(address),
                None => format!("the barrier `{authority}` names no address"),
            },
            Err(e) => {
                format!("the barrier `{authority}` cannot be resolved: {e}; give it as HOST:PORT")
            }
        };
        if Instant::now() >= deadline {
            return Err(format!("{why} (tried for {timeout:?})"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

impl Host {
    /// Segment `index` arrives at meeting `key`; waits until all have, or the timeout from
    /// the first arrival.
    async fn arrive(&self, key: &str, index: u64) -> Result<u128, Missed> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if let Some(outcome) = self.check(key, index, Instant::now() >= deadline) {
                return outcome;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                // Once more, now past the deadline: the verdict is taken under the lock.
                if let Some(outcome) = self.check(key, index, true) {
                    return outcome;
                }
            }
        }
    }

    /// Records `index` at `key`; the meeting's outcome once everyone came, it was missed, or
    /// `late` (the timeout passed) makes it missed now.
    fn check(&self, key: &str, index: u64, late: bool) -> Option<Result<u128, Missed>> {
        let mut meetings = self.meetings.lock().ok()?;
        let meeting = meetings.by_key.entry(key.to_owned()).or_default();
        meeting.arrived.insert(index);
        if let Some(missed) = &meeting.missed {
            return Some(Err(missed.clone()));
        }
        if meeting.start_ns.is_none() && meeting.arrived.len() as u64 >= self.count {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            meeting.start_ns = Some(now + LEAD.as_nanos());
            self.changed.notify_waiters();
        }
        if let Some(start) = meeting.start_ns {
            return Some(Ok(start));
        }
        if !late {
            return None;
        }
        let segments: Vec<u64> = (0..self.count)
            .filter(|i| !meeting.arrived.contains(i))
            .collect();
        let names: Vec<String> = segments
            .iter()
            .map(|i| format!("{i}/{}", self.count))
            .collect();
        let missed = Missed {
            message: format!(
                "segment {} never reached the barrier at `{key}` within {:?}: it died, was never started, or cannot reach segment 0",
                names.join(", "),
                self.timeout
            ),
            segments,
        };
        meeting.missed = Some(missed.clone());
        self.changed.notify_waiters();
        Some(Err(missed))
    }
}

/// Answers `GET /meet?key=K&segment=I&count=N` when the meeting is whole (200, the start in
/// Unix nanoseconds) or missed (409, why).
async fn serve(listener: tokio::net::TcpListener, host: Arc<Host>) {
    while let Ok((stream, _)) = listener.accept().await {
        let host = Arc::clone(&host);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let host = Arc::clone(&host);
                    async move { Ok::<_, Infallible>(answer(&host, &request).await) }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

async fn answer(host: &Host, request: &Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let reply = |status: u16, text: String| {
        let mut response = Response::new(Full::new(Bytes::from(text)));
        *response.status_mut() =
            hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
        response
    };
    let query = request.uri().query().unwrap_or_default();
    let field = |name: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    };
    let (Some(key), Some(index), Some(count)) = (
        field("key"),
        field("segment").and_then(|s| s.parse::<u64>().ok()),
        field("count").and_then(|s| s.parse::<u64>().ok()),
    ) else {
        return reply(400, "ask /meet?key=RUN&segment=I&count=N".to_owned());
    };
    if count != host.count || index >= count {
        return reply(
            409,
            format!(
                "segment {index}/{count} came to the barrier of a run of {} segments: start every segment with the same --segment count",
                host.count
            ),
        );
    }
    match host.arrive(key, index).await {
        Ok(start) => reply(200, start.to_string()),
        Err(missed) => reply(409, missed.message),
    }
}

/// Another segment asks segment 0 at `address`, trying again until it answers or `timeout`
/// (with time for segment 0's own wait) passes.
async fn ask(
    address: SocketAddr,
    authority: &str,
    segment: Segment,
    key: &str,
    timeout: Duration,
) -> Result<u128, Missed> {
    let path = format!(
        "/meet?key={key}&segment={}&count={}",
        segment.index, segment.count
    );
    let deadline = Instant::now() + timeout;
    let unreachable = || Missed {
        segments: Vec::new(),
        message: format!(
            "segment 0's barrier at {authority} did not answer within {timeout:?}: it died, was never started, or cannot be reached from here"
        ),
    };
    loop {
        // Segment 0 answers within its own timeout once it has the meeting; a little more.
        let wait = timeout + Duration::from_secs(5);
        match crate::web::get(address, authority, None, &path, None, wait).await {
            Ok((200, body)) => {
                return String::from_utf8_lossy(&body)
                    .trim()
                    .parse::<u128>()
                    .map_err(|_| Missed {
                        segments: Vec::new(),
                        message: format!(
                            "segment 0's barrier answered `{}`, not a start time",
                            String::from_utf8_lossy(&body)
                        ),
                    });
            }
            Ok((_, body)) => {
                return Err(Missed {
                    segments: Vec::new(),
                    message: String::from_utf8_lossy(&body).into_owned(),
                });
            }
            // Not listening yet: segment 0 may start after this one.
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(_) => return Err(unreachable()),
        }
    }
}

#[cfg(test)]
mod tests;
