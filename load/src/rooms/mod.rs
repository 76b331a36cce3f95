//! WebSocket rooms: `rooms × peers` sockets, messages fanned out to each room, and what every
//! peer saw.
//!
//! The timeline of one run:
//! 1. **Ramp-up.** Sockets open evenly over `connect_over` (the ramp-up by default), rooms
//!    filling side by side. Each socket's connect time is measured from its scheduled time.
//! 2. **Hold.** Once the ramp-up is over *and* every socket has opened or failed (plus 100 ms
//!    for the server to register the last ones), the senders send for `hold`, open model: each
//!    message is stamped with its *intended* send time, so a blocked socket shows up as latency.
//!    A message is expected at the peers of its room that are open when it is sent.
//! 3. **Drain.** Sending stops; the run waits until every message reached everyone, or
//!    `deadline` has passed since the end of the hold. A frame that arrives after its deadline
//!    counts as late, not lost.
//! 4. **Steady state.** The sockets stay open, quiet, while the runner settles and scrapes the
//!    target's metrics and memory: what it holds for this many open sockets.
//! 5. **Ramp-down.** Sockets close evenly over `ramp_down`, each with a close handshake.
//!
//! One task per socket reads, sends, pings and reloads; the receive path parses the stamp in
//! place, updates the message's atomics and batches latencies (see [`crate::fanout`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use headroom_compiler::matrix::resolved::RoomsScenario;
use headroom_spec::scenario::{Arrivals, StampForm};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::fanout::{Batch, StampFinder, Tracker};
use crate::handover::ScenarioHandover;
use crate::http::histogram;
use crate::live::Live;
use crate::results::{ErrorCounts, ScenarioResult, Window};

mod peer;
mod reload;
mod result;
mod template;
mod timeline;
mod topology;

use peer::peer;
use result::result;
use topology::{per_socket, resolve, topology};

/// The server registers a socket a moment after its handshake; the hold waits this long after
/// the last socket opened, so messages are not expected at peers the server cannot know yet.
const REGISTRATION_GRACE: Duration = Duration::from_millis(100);

/// A close handshake that takes longer is cut short.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// The WebSocket settings of a generator socket. tungstenite reserves 128 KiB per connection for
/// reading by default; a socket that receives messages of `message_size` bytes reads a few of
/// them per system call with 4 KiB (more for large messages), and an idle socket, which only
/// sees pings, needs 1 KiB. A frame larger than the buffer grows it as needed.
pub fn socket_config(message_size: Option<usize>) -> WebSocketConfig {
    let read_buffer = match message_size {
        None => 1024,
        Some(size) => (size * 4).next_power_of_two().clamp(4 * 1024, 64 * 1024),
    };
    WebSocketConfig::default()
        .read_buffer_size(read_buffer)
        .write_buffer_size(0)
}

/// Where the run is; peers follow it through a watch channel.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Connecting,
    Hold { start: Instant, end: Instant },
    Drain,
    Close { start: Instant, over: Duration },
    Abort,
}

/// A piece of a message template.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Room,
    Peer,
    Seq,
    Stamp,
    Payload,
}

/// A message template, split once so each send only writes numbers into it.
#[derive(Debug, Clone)]
pub struct Template {
    pieces: Vec<Piece>,
    size: usize,
    binary: bool,
}

/// When one sender sends: evenly spaced (with an offset that spreads the senders over one
/// gap) or Poisson.
#[derive(Debug, Clone, Copy)]
struct SendSchedule {
    /// Messages per second from this sender.
    rate: f64,
    /// The first send, as a share of one gap after the hold starts (fixed arrivals).
    offset: f64,
    poisson: bool,
}

/// One socket of the plan.
#[derive(Debug, Clone, Copy)]
struct Socket {
    index: u32,
    room: u32,
    peer: u32,
    sends: Option<SendSchedule>,
}

/// Shared by every socket of a run.
struct Shared {
    /// The seed of the sockets' random gaps: every socket draws its own from it.
    seed: u64,
    url: String,
    /// TLS to the server, for `wss://`.
    tls: Option<crate::tls::TlsTo>,
    /// The TLS handshakes of the sockets opened.
    handshakes: Mutex<Histogram<u64>>,
    /// The source addresses sockets bind (socket `k` client `k`), when spread.
    sources: Option<crate::source::Sources>,
    join: Option<String>,
    template: Option<Template>,
    socket_config: WebSocketConfig,
    stamp_form: StampForm,
    connect_timeout: Duration,
    connect_over: Duration,
    ping_every: Option<Duration>,
    reload: Option<ReloadPlan>,
    /// Sockets this process opens.
    sockets: u32,
    /// Sockets of every segment: socket `i` opens `i / scheduled_over` into `connect_over`.
    scheduled_over: u32,
    /// The share of the rooms this process opens.
    segment: crate::stripe::Segment,
    epoch: Instant,
    tracker: Tracker,
    rooms_open: Box<[AtomicU32]>,
    counts: Counters,
    settled: Notify,
    connect: Mutex<Histogram<u64>>,
    lag: Mutex<Histogram<u64>>,
    reloads: Mutex<Reloads>,
    reloads_in_flight: AtomicU64,
    live: Arc<Live>,
}

struct ReloadPlan {
    url: String,
    /// The Host header, and the address it resolved to (checked: loopback or allowed).
    authority: String,
    address: SocketAddr,
    mean: f64,
    poisson: bool,
    timeout: Duration,
}

#[derive(Default)]
struct Counters {
    opened: AtomicU64,
    settled: AtomicU64,
    refused: AtomicU64,
    status: AtomicU64,
    timeout: AtomicU64,
    other: AtomicU64,
    ports: AtomicU64,
    closed_by_server: AtomicU64,
    closed_by_us: AtomicU64,
    pings_sent: AtomicU64,
    pings_received: AtomicU64,
    own_echoes: AtomicU64,
    unstamped: AtomicU64,
    skipped: AtomicU64,
}

struct Reloads {
    latency: Histogram<u64>,
    ok: u64,
    errors: ErrorCounts,
}

/// Runs one rooms scenario through its timeline (or until `cancel` turns true).
pub async fn run(
    scenario: &RoomsScenario,
    reach: &crate::reach::Reach,
    cancel: watch::Receiver<bool>,
    live: Arc<Live>,
    handover: ScenarioHandover,
    member: crate::hold::Member,
) -> Result<ScenarioResult, String> {
    let allowed = &reach.allowed;
    let fill = |text: &str| crate::fill::fill(text, reach.port, &reach.headroom_bin);
    let (sizes, mut sockets) = topology(scenario)?;
    // A segment opens the sockets of its rooms only, each at the instant one machine would:
    // a room never spans segments, so seen-by-everyone stays on one clock.
    let scheduled_over = sockets.len() as u32;
    sockets.retain(|s| reach.segment.owns(u64::from(s.room)));
    let url = fill(&scenario.url)?;
    let (address, secure) = resolve(&per_socket(&url, 0, 0), &scenario.url, allowed).await?;
    let tls = match secure {
        Some(authority) => Some(wss(reach, address, &authority, &url, scenario).await?),
        None => None,
    };
    let stages = &scenario.stages;
    let ramp_up = stages.ramp_up.as_std();
    let hold = stages.hold.map_or(Duration::ZERO, |hold| hold.as_std());
    let ramp_down = stages.ramp_down.as_std();
    let connect_over = scenario.connect_over.map_or(ramp_up, |over| over.as_std());
    let sending = scenario.send.as_ref().filter(|_| !scenario.idle);
    let template = match sending {
        Some(send) => Some(Template::parse(
            &fill(&send.template)?,
            send.size.bytes() as usize,
            send.stamp == StampForm::BinaryPrefix,
        )),
        None => None,
    };
    let capacity = tracker_capacity(&sockets, hold);
    let reload = reload_plan(scenario, reach).await?;
    let sources = crate::source::Sources::optional(
        reach.source_addresses.as_ref(),
        &[address],
        sockets.len() as u64,
    )?;
    // The segments' announced start: every share's sockets on one schedule.
    if let Some(at) = reach.start_at {
        tokio::time::sleep_until(at).await;
    }
    let epoch = Instant::now();
    let shared = Arc::new(Shared {
        seed: crate::stripe::derive_seed(reach.seed, &scenario.name),
        url,
        tls,
        sources,
        handshakes: Mutex::new(histogram()),
        join: scenario.join.as_deref().map(fill).transpose()?,
        socket_config: socket_config(template.as_ref().map(|t| t.size)),
        template,
        stamp_form: sending.map_or(StampForm::Json, |s| s.stamp),
        connect_timeout: scenario.connect_timeout.as_std(),
        connect_over,
        ping_every: scenario.ping.every.map(|d| d.as_std()),
        reload,
        sockets: sockets.len() as u32,
        scheduled_over,
        segment: reach.segment,
        epoch,
        tracker: Tracker::new(epoch, scenario.deadline.as_std(), capacity),
        rooms_open: sizes.iter().map(|_| AtomicU32::new(0)).collect(),
        counts: Counters::default(),
        settled: Notify::new(),
        connect: Mutex::new(histogram()),
        lag: Mutex::new(histogram()),
        reloads: Mutex::new(Reloads {
            latency: histogram(),
            ok: 0,
            errors: ErrorCounts::default(),
        }),
        reloads_in_flight: AtomicU64::new(0),
        live,
    });
    let (stage, stages) = watch::channel(Stage::Connecting);
    let mut peers = tokio::task::JoinSet::new();
    for socket in sockets.iter().copied() {
        let (shared, stages) = (Arc::clone(&shared), stages.clone());
        peers.spawn(peer(shared, socket, address, stages));
    }
    let mut windows = Vec::new();
    let timeline = Timeline {
        shared: &shared,
        stage: &stage,
        cancel,
        windows: &mut windows,
        scenario: &scenario.name,
        handover,
        member,
        meetings: reach.meetings.clone(),
    };
    let (hold_started, hold_s, held) = timeline.drive(ramp_up, hold, ramp_down, scenario).await;
    // Every peer ends by its close time plus the close timeout; stragglers are cut.
    let cutoff = Instant::now() + ramp_down + CLOSE_TIMEOUT * 2;
    while let Ok(Some(_)) = tokio::time::timeout_at(cutoff, peers.join_next()).await {}
    peers.abort_all();
    let deadline = Instant::now() + scenario.deadline.as_std();
    while shared.reloads_in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut result = result(&shared, &sizes, hold_started, hold_s, windows);
    result.held = held;
    Ok(result)
}

/// Where and how often a rooms scenario reloads its page, checked before any socket opens.
async fn reload_plan(
    scenario: &RoomsScenario,
    reach: &crate::reach::Reach,
) -> Result<Option<ReloadPlan>, String> {
    let allowed = &reach.allowed;
    let fill = |text: &str| crate::fill::fill(text, reach.port, &reach.headroom_bin);
    Ok(match &scenario.reload {
        Some(reload) => {
            let url = fill(&reload.url)?;
            let (authority, _) = crate::web::parse_url(&per_socket(&url, 0, 0))
                .ok_or_else(|| {
                    format!("reload `{url}` is not an http:// URL the runner can load: write it as http://127.0.0.1:{{port}}/…")
                })?;
            // Resolved and checked once here: a wrong host fails the run now, not every
            // reload, and every reload goes to this address.
            let address = crate::web::resolve(&authority, &url, &reload.url, allowed).await?;
            Some(ReloadPlan {
                url,
                authority,
                address,
                mean: reload.every.as_secs_f64().max(1e-3),
                poisson: reload.arrivals == Arrivals::Poisson,
                timeout: scenario.deadline.as_std(),
            })
        }
        None => None,
    })
}

/// Messages the tracker makes room for: every message needs a slot; the budget is the
/// expected count with room for Poisson.
fn tracker_capacity(sockets: &[Socket], hold: Duration) -> u64 {
    let expected_sends: f64 = sockets
        .iter()
        .filter_map(|s| s.sends)
        .map(|plan| plan.rate * hold.as_secs_f64())
        .sum();
    (expected_sends * 1.5 + 10.0 * expected_sends.sqrt()) as u64
        + sockets.iter().filter(|s| s.sends.is_some()).count() as u64
        + 1024
}

/// TLS for `wss://` sockets, checked before any opens (`Trust::session_to`).
async fn wss(
    reach: &crate::reach::Reach,
    address: SocketAddr,
    authority: &str,
    url: &str,
    scenario: &RoomsScenario,
) -> Result<crate::tls::TlsTo, String> {
    let timeout = scenario.connect_timeout.as_std();
    let alpn = crate::tls::ALPN_HTTP1;
    reach
        .trust
        .session_to(alpn, address, authority, url, timeout)
        .await
}

/// The coordinator's side of the timeline.
struct Timeline<'a> {
    shared: &'a Shared,
    stage: &'a watch::Sender<Stage>,
    cancel: watch::Receiver<bool>,
    windows: &'a mut Vec<Window>,
    /// The scenario's name, for the live view.
    scenario: &'a str,
    handover: ScenarioHandover,
    /// Its part in the run's hold: said once the sockets are open.
    member: crate::hold::Member,
    /// The other segments' meetings: the hold starts when every segment's sockets are open.
    meetings: Option<crate::barrier::Meetings>,
}

/// Why a socket's loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The server closed it (a close frame, an error, the end of the stream).
    ByServer,
    /// We closed it.
    ByUs,
}

/// The receive side of one socket: stamps read in place, latencies batched.
pub struct Inbox<'a> {
    tracker: &'a Tracker,
    socket: u32,
    binary_stamps: bool,
    finder: StampFinder,
    batch: Batch,
    /// Messages a socket got back that it sent itself.
    pub own_echoes: u64,
    /// Messages without a stamp, or with one no message was sent with.
    pub unstamped: u64,
    /// Pings from the server.
    pub pings: u64,
    received: u64,
    /// The time frames of one wake-up are seen at: read once per burst (refreshed every
    /// `BURST` frames), since they were all in the socket together.
    now_us: Option<u64>,
    in_burst: u32,
}

/// Frames of one burst that share a timestamp at most.
const BURST: u32 = 32;

/// Why a socket did not open.
enum OpenFailure {
    Refused,
    /// No local port free for the source address.
    Ports,
    Status,
    Other,
}

#[cfg(test)]
mod tests;
