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
//! place, updates the message's atomics and batches latencies (see [`crate::fanout`]). With
//! Server-Sent Events a socket is a stream and a sender's messages go by HTTP from a task of
//! their own (`stream.rs`).

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use headroom_spec::scenario::StampForm;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::fanout::{Batch, Member, Seen, StampFinder, Tracker};
use crate::handover::ScenarioHandover;
use crate::live::Live;
use crate::results::{ErrorCounts, Window};

mod deadlines;
mod peer;
mod reload;
mod result;
mod scenario;
mod stream;
mod template;
mod timeline;
mod topology;

pub use scenario::run;

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
    /// The message's id, as a Socket.IO ack id.
    Id,
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

impl Socket {
    /// Who it is in its room, as messages are tracked.
    fn member(self) -> Member {
        Member {
            socket: self.index,
            room: self.room,
            peer: self.peer,
        }
    }
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
    /// Socket.IO's session plan and figures, when the sockets speak it.
    socket_io: Option<crate::socket_io::Plan>,
    /// SSE's endpoints and figures, when the peers are event streams.
    sse: Option<crate::sse::Plan>,
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
    dropped_closed: AtomicU64,
    dropped_reset: AtomicU64,
    dropped_ping_timeout: AtomicU64,
    dropped_disconnected: AtomicU64,
    closed_by_us: AtomicU64,
    pings_sent: AtomicU64,
    pings_received: AtomicU64,
    /// Socket.IO: pongs sent in answer to the server's pings.
    pongs_sent: AtomicU64,
    /// Socket.IO: sockets the namespace refused.
    rejected: AtomicU64,
    /// A `101` answer that was not a WebSocket server's.
    handshake: AtomicU64,
    /// Socket.IO: an opening that was not the protocol's.
    protocol: AtomicU64,
    /// A frame over the bound while opening.
    too_large: AtomicU64,
    /// Sockets headroom cut at a frame or event over its bound, once open.
    cut_too_large: AtomicU64,
    own_echoes: AtomicU64,
    unstamped: AtomicU64,
    misrouted: AtomicU64,
    duplicates: AtomicU64,
    unexpected: AtomicU64,
    skipped: AtomicU64,
}

struct Reloads {
    latency: Histogram<u64>,
    ok: u64,
    errors: ErrorCounts,
}

impl Reloads {
    /// No reload yet.
    fn none() -> Reloads {
        Reloads {
            latency: crate::http::histogram(),
            ok: 0,
            errors: ErrorCounts::default(),
        }
    }
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
    /// The server dropped it, as the drop says.
    ByServer(Drop),
    /// We closed it.
    ByUs,
    /// We cut it: a frame (a WebSocket message, an SSE event) over headroom's bound.
    TooLarge,
}

/// How the server dropped a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    /// A close frame, or Engine.IO's close packet.
    Closed,
    /// A reset, a protocol error or the end of the stream without a close.
    Reset,
    /// Socket.IO: no ping from the server within its interval and timeout.
    PingTimeout,
    /// Socket.IO: the server disconnected the namespace (`41`).
    Disconnected,
}

/// The receive side of one socket: stamps read in place, latencies batched.
pub struct Inbox<'a> {
    tracker: &'a Tracker,
    member: Member,
    /// The messages of its room this socket got.
    seen: Seen,
    binary_stamps: bool,
    finder: StampFinder,
    batch: Batch,
    /// Messages a socket got back that it sent itself.
    pub own_echoes: u64,
    /// Messages without a stamp, or with one no message was sent with.
    pub unstamped: u64,
    /// Copies of messages sent to another room.
    pub misrouted: u64,
    /// Second and later copies of one message.
    pub duplicates: u64,
    /// First copies of messages sent before this socket was open.
    pub unexpected: u64,
    /// Pings from the server.
    pub pings: u64,
    /// The Socket.IO session's receive side, when the socket speaks it.
    socket_io: Option<crate::socket_io::Session>,
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
    /// Socket.IO: the namespace refused the socket (`connect_error`), with its message.
    Rejected(String),
    /// No local port free for the source address.
    Ports,
    Status,
    /// A `101` answer that was not a WebSocket server's (a wrong `Sec-WebSocket-Accept`).
    Handshake,
    /// Socket.IO: an opening that was not the protocol's (a malformed open packet).
    Protocol,
    /// A frame over headroom's bound while opening.
    TooLarge,
    Other,
}

#[cfg(test)]
mod tests;
