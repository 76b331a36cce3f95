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
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{FutureExt, SinkExt, Stream, StreamExt};
use hdrhistogram::Histogram;
use headroom_spec::placeholder::{self, PlaceholderName, builtin};
use headroom_spec::scenario::{Arrivals, RatePer, RoomsScenario, Senders};
use headroom_spec::{Param, scenario::Stamp as StampForm};
use rand::Rng;
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Error as WsError, Message};

use crate::fanout::{Batch, Receipt, Stamp, StampFinder, Tracker};
use crate::gates::Gate;
use crate::load::{Live, histogram};
use crate::results::{
    ConnectFailures, ErrorCounts, MessageCounts, ReloadResult, RoomsResult, ScenarioResult,
    SocketCounts, Window, histogram_summary, serialize_histogram,
};
use headroom_results::histogram::micros;

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

impl Template {
    /// `text` with `{port}`, `{headroom}` and `{env:…}` already filled.
    fn parse(text: &str, size: usize, binary: bool) -> Template {
        let mut pieces = Vec::new();
        let mut last = 0;
        for found in placeholder::scan(text).into_iter().flatten() {
            let piece = match found.name {
                PlaceholderName::Name(builtin::ROOM) => Piece::Room,
                PlaceholderName::Name(builtin::PEER) => Piece::Peer,
                PlaceholderName::Name(builtin::SEQ) => Piece::Seq,
                PlaceholderName::Name(builtin::STAMP) => Piece::Stamp,
                PlaceholderName::Name(builtin::PAYLOAD) => Piece::Payload,
                _ => continue,
            };
            if found.range.start > last {
                pieces.push(Piece::Text(text[last..found.range.start].to_owned()));
            }
            pieces.push(piece);
            last = found.range.end;
        }
        if last < text.len() {
            pieces.push(Piece::Text(text[last..].to_owned()));
        }
        Template {
            pieces,
            size,
            binary,
        }
    }

    /// The message for one send: `{payload}` fills it to `size` (the binary stamp included).
    pub fn render(&self, room: u32, peer: u32, seq: u64, stamp: Stamp) -> Message {
        use std::fmt::Write;
        let stamp_len = if self.binary {
            crate::fanout::BINARY_STAMP_LEN
        } else {
            0
        };
        let mut text = String::with_capacity(self.size.max(64));
        let mut payload_at = None;
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => text.push_str(t),
                Piece::Room => {
                    let _ = write!(text, "{room}");
                }
                Piece::Peer => {
                    let _ = write!(text, "{peer}");
                }
                Piece::Seq => {
                    let _ = write!(text, "{seq}");
                }
                Piece::Stamp if !self.binary => stamp.write_text(&mut text),
                Piece::Stamp => {}
                Piece::Payload => {
                    if payload_at.is_none() {
                        payload_at = Some(text.len());
                    }
                }
            }
        }
        if let Some(at) = payload_at {
            let fill = self.size.saturating_sub(text.len() + stamp_len);
            text.insert_str(at, &"x".repeat(fill));
        }
        if self.binary {
            let mut bytes = Vec::with_capacity(stamp_len + text.len());
            bytes.extend_from_slice(&stamp.binary());
            bytes.extend_from_slice(text.as_bytes());
            Message::Binary(bytes.into())
        } else {
            Message::Text(text.into())
        }
    }
}

/// When one sender sends: evenly spaced (with an offset that spreads the senders over one
/// gap) or Poisson.
#[derive(Debug, Clone, Copy)]
struct SendPlan {
    /// Messages per second from this sender.
    rate: f64,
    /// The first send, as a share of one gap after the hold starts (fixed arrivals).
    offset: f64,
    poisson: bool,
}

impl SendPlan {
    fn first(&self, hold: Instant) -> Instant {
        let gap = if self.poisson {
            exponential(self.rate)
        } else {
            self.offset / self.rate
        };
        hold + Duration::from_secs_f64(gap)
    }

    fn next(&self, previous: Instant) -> Instant {
        let gap = if self.poisson {
            exponential(self.rate)
        } else {
            1.0 / self.rate
        };
        previous + Duration::from_secs_f64(gap)
    }
}

/// An exponential gap with mean `1/rate`: -ln(U)/rate, U in (0, 1].
fn exponential(rate: f64) -> f64 {
    -(1.0 - rand::rng().random::<f64>()).ln() / rate
}

/// One socket of the plan.
#[derive(Debug, Clone, Copy)]
struct Socket {
    index: u32,
    room: u32,
    peer: u32,
    sends: Option<SendPlan>,
}

/// The sockets of a run, rooms filling side by side; and how many there are per room.
fn topology(scenario: &RoomsScenario) -> Result<(Vec<u32>, Vec<Socket>), String> {
    // The compiler resolved every variable; a `{var}` left here is a bug, said as one.
    let unresolved = |what: &str| format!("`{what}` was not resolved to a number (a headroom bug)");
    let rooms = *scenario.rooms.value().ok_or_else(|| unresolved("rooms"))?;
    let sizes: Vec<u32> = match (&scenario.peers_per_room, &scenario.peers) {
        (Some(per_room), _) => {
            let per_room = *per_room
                .value()
                .ok_or_else(|| unresolved("peers_per_room"))?;
            (0..rooms).map(|_| per_room as u32).collect()
        }
        (None, Some(peers)) => {
            let peers = *peers.value().ok_or_else(|| unresolved("peers"))?;
            let (base, extra) = (peers / rooms.max(1), peers % rooms.max(1));
            (0..rooms)
                .map(|r| (base + u64::from(r < extra)) as u32)
                .collect()
        }
        (None, None) => {
            return Err("the scenario gives neither `peers_per_room` nor `peers`".into());
        }
    };
    if let Some(&largest) = sizes.iter().max()
        && largest > crate::fanout::MAX_RECIPIENTS
    {
        return Err(format!(
            "{largest} peers in one room are more than the {} recipients a message can be tracked at: spread them over more rooms",
            crate::fanout::MAX_RECIPIENTS
        ));
    }
    let total: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
    if total > u64::from(u32::MAX) {
        return Err(format!("{total} sockets are more than one generator holds"));
    }
    // Peer by peer across the rooms (no rooms: no peers).
    let peers = sizes
        .iter()
        .copied()
        .max()
        .map_or(0..0, |largest| 0..largest);
    let mut sockets = Vec::with_capacity(total as usize);
    for peer in peers {
        for (room, &size) in sizes.iter().enumerate() {
            if peer < size {
                sockets.push(Socket {
                    index: sockets.len() as u32,
                    room: room as u32,
                    peer,
                    sends: None,
                });
            }
        }
    }
    if let Some(send) = scenario.send.as_ref().filter(|_| !scenario.idle) {
        let rate = send.rate.value().map_or(0.0, |r| r.as_per_second());
        let is_sender = |s: &Socket| match send.senders {
            Senders::All => true,
            Senders::OnePerRoom => s.peer == 0,
        };
        let senders_in = |room: u32| match send.senders {
            Senders::All => sizes[room as usize],
            Senders::OnePerRoom => u32::from(sizes[room as usize] > 0),
        };
        let total_senders = sockets.iter().filter(|s| is_sender(s)).count().max(1) as f64;
        let poisson = send.arrivals == Arrivals::Poisson;
        let mut rank = 0f64;
        for socket in sockets.iter_mut().filter(|s| is_sender(s)) {
            let in_room = f64::from(senders_in(socket.room).max(1));
            let (sender_rate, offset) = match send.per {
                RatePer::Sender => (rate, rank / total_senders),
                RatePer::Room => (
                    rate / in_room,
                    (f64::from(socket.room) / rooms.max(1) as f64 + f64::from(socket.peer))
                        / in_room,
                ),
                RatePer::Scenario => (rate / total_senders, rank / total_senders),
            };
            rank += 1.0;
            if sender_rate > 0.0 {
                socket.sends = Some(SendPlan {
                    rate: sender_rate,
                    offset: offset.fract(),
                    poisson,
                });
            }
        }
    }
    Ok((sizes, sockets))
}

/// The address to connect to for `ws://host:port/path` (`written` as the spec wrote it), if
/// load may go there; other schemes are refused with why.
async fn resolve(
    url: &str,
    written: &str,
    allowed: &crate::http::Allowed,
) -> Result<SocketAddr, String> {
    let rest = match url.strip_prefix("ws://") {
        Some(rest) => rest,
        None if url.starts_with("wss://") => {
            return Err(format!(
                "`{url}`: wss:// needs TLS, which the runner does not speak; load goes to a loopback ws:// URL"
            ));
        }
        None => {
            return Err(format!(
                "`{url}` is not a ws:// URL the runner can open: write it as ws://127.0.0.1:{{port}}/…"
            ));
        }
    };
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    crate::http::resolve(authority, url, written, allowed).await
}

/// Shared by every socket of a run.
struct Shared {
    url: String,
    join: Option<String>,
    template: Option<Template>,
    socket_config: WebSocketConfig,
    stamp_form: StampForm,
    connect_timeout: Duration,
    connect_over: Duration,
    ping_every: Option<Duration>,
    reload: Option<ReloadPlan>,
    sockets: u32,
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

/// Fills `{room}` and `{peer}` (the rest was filled before).
fn per_socket(text: &str, room: u32, peer: u32) -> String {
    placeholder::fill(text, |name| match name {
        PlaceholderName::Name(builtin::ROOM) => Some(room.to_string()),
        PlaceholderName::Name(builtin::PEER) => Some(peer.to_string()),
        _ => None,
    })
}

/// Runs one rooms scenario through its timeline (or until `cancel` turns true).
pub(crate) async fn run(
    scenario: &RoomsScenario,
    port: u16,
    headroom: &Path,
    allowed: &crate::http::Allowed,
    cancel: watch::Receiver<bool>,
    live: Arc<Live>,
    gate: Gate,
) -> Result<ScenarioResult, String> {
    let fill = |text: &str| crate::target::fill(text, port, headroom);
    let (sizes, sockets) = topology(scenario)?;
    let url = fill(&scenario.url)?;
    let address = resolve(&per_socket(&url, 0, 0), &scenario.url, allowed).await?;
    let seconds = |p: &Param<headroom_spec::Duration>| p.value().map_or(0.0, |d| d.as_secs_f64());
    let ramp_up = Duration::from_secs_f64(seconds(&scenario.stages.ramp_up));
    let hold = Duration::from_secs_f64(scenario.stages.hold.as_ref().map_or(0.0, seconds));
    let ramp_down = Duration::from_secs_f64(seconds(&scenario.stages.ramp_down));
    let connect_over = scenario
        .connect_over
        .as_ref()
        .map_or(ramp_up, |over| Duration::from_secs_f64(seconds(over)));
    let sending = scenario.send.as_ref().filter(|_| !scenario.idle);
    let template = match sending {
        Some(send) => Some(Template::parse(
            &fill(&send.template)?,
            send.size.value().map_or(0, |s| s.bytes()) as usize,
            send.stamp == StampForm::BinaryPrefix,
        )),
        None => None,
    };
    // Every message needs a slot; the budget is the expected count with room for Poisson.
    let expected_sends: f64 = sockets
        .iter()
        .filter_map(|s| s.sends)
        .map(|plan| plan.rate * hold.as_secs_f64())
        .sum();
    let capacity = (expected_sends * 1.5 + 10.0 * expected_sends.sqrt()) as u64
        + sockets.iter().filter(|s| s.sends.is_some()).count() as u64
        + 1024;
    let reload = match &scenario.reload {
        Some(reload) => {
            let url = fill(&reload.url)?;
            let (authority, _) = crate::http::parse_url(&per_socket(&url, 0, 0))
                .ok_or_else(|| {
                    format!("reload `{url}` is not an http:// URL the runner can load: write it as http://127.0.0.1:{{port}}/…")
                })?;
            // Resolved and checked once here: a wrong host fails the run now, not every
            // reload, and every reload goes to this address.
            let address = crate::http::resolve(&authority, &url, &reload.url, allowed).await?;
            Some(ReloadPlan {
                url,
                authority,
                address,
                mean: seconds(&reload.every).max(1e-3),
                poisson: reload.arrivals == Arrivals::Poisson,
                timeout: scenario.deadline.as_std(),
            })
        }
        None => None,
    };
    let epoch = Instant::now();
    let shared = Arc::new(Shared {
        url,
        join: scenario.join.as_deref().map(fill).transpose()?,
        socket_config: socket_config(template.as_ref().map(|t| t.size)),
        template,
        stamp_form: sending.map_or(StampForm::Json, |s| s.stamp),
        connect_timeout: scenario.connect_timeout.as_std(),
        connect_over,
        ping_every: scenario.ping.every.map(|d| d.as_std()),
        reload,
        sockets: sockets.len() as u32,
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
        gate,
    };
    let (hold_started, hold_s) = timeline.drive(ramp_up, hold, ramp_down, scenario).await;
    // Every peer ends by its close time plus the close timeout; stragglers are cut.
    let cutoff = Instant::now() + ramp_down + CLOSE_TIMEOUT * 2;
    while let Ok(Some(_)) = tokio::time::timeout_at(cutoff, peers.join_next()).await {}
    peers.abort_all();
    let deadline = Instant::now() + scenario.deadline.as_std();
    while shared.reloads_in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(result(&shared, &sizes, hold_started, hold_s, windows))
}

/// The coordinator's side of the timeline.
struct Timeline<'a> {
    shared: &'a Shared,
    stage: &'a watch::Sender<Stage>,
    cancel: watch::Receiver<bool>,
    windows: &'a mut Vec<Window>,
    gate: Gate,
}

impl Timeline<'_> {
    /// Ramp-up, hold, drain and ramp-down; returns when the hold started (seconds from the
    /// epoch) and how long it lasted.
    async fn drive(
        mut self,
        ramp_up: Duration,
        hold: Duration,
        ramp_down: Duration,
        scenario: &RoomsScenario,
    ) -> (f64, f64) {
        let shared = self.shared;
        let epoch = shared.epoch;
        // The ramp-up, then every socket settled (bounded by the last connect's timeout).
        let settle_by =
            epoch + shared.connect_over + shared.connect_timeout + Duration::from_secs(1);
        if !self.wait_until(epoch + ramp_up).await {
            return self.abort(0.0);
        }
        while shared.counts.settled.load(Ordering::Acquire) < u64::from(shared.sockets)
            && Instant::now() < settle_by
        {
            let notified = shared.settled.notified();
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = self.cancel.changed() => if *self.cancel.borrow() { return self.abort(0.0) },
            }
        }
        let start = Instant::now() + REGISTRATION_GRACE;
        let end = start + hold;
        let hold_started = (start - epoch).as_secs_f64();
        let _ = self.stage.send(Stage::Hold { start, end });
        if !self.wait_until(end).await {
            return self.abort(hold_started);
        }
        let _ = self.stage.send(Stage::Drain);
        let hold_s = (Instant::now() - start).as_secs_f64();
        let drain_until = Instant::now() + scenario.deadline.as_std();
        while shared.tracker.outstanding() > 0 && Instant::now() < drain_until {
            if !self
                .wait_until(Instant::now() + Duration::from_millis(20))
                .await
            {
                return self.abort(hold_started);
            }
        }
        // Held: the runner measures the steady state with every socket open, then releases.
        self.gate.arrive();
        let mut release = self.gate.release_watch();
        let mut cancel = self.cancel.clone();
        tokio::select! {
            _ = release.wait_for(|released| *released) => {}
            _ = cancel.wait_for(|cancelled| *cancelled) => return self.abort(hold_started),
        }
        let _ = self.stage.send(Stage::Close {
            start: Instant::now(),
            over: ramp_down,
        });
        self.wait_until(Instant::now() + ramp_down).await;
        self.take_window();
        (hold_started, hold_s)
    }

    fn abort(&mut self, hold_started: f64) -> (f64, f64) {
        let _ = self.stage.send(Stage::Abort);
        self.take_window();
        (hold_started, 0.0)
    }

    /// Sleeps until `at`, taking a window every second; false when cancelled.
    async fn wait_until(&mut self, at: Instant) -> bool {
        loop {
            let now = Instant::now();
            if now >= at {
                return true;
            }
            let elapsed = (now - self.shared.epoch).as_secs();
            let next_window = self.shared.epoch + Duration::from_secs(elapsed + 1);
            tokio::select! {
                _ = tokio::time::sleep_until(at.min(next_window)) => {
                    if Instant::now() >= next_window {
                        self.take_window();
                    }
                }
                _ = self.cancel.changed() => {
                    if *self.cancel.borrow() {
                        return false;
                    }
                }
            }
        }
    }

    fn take_window(&mut self) {
        let window = self.shared.tracker.take_window();
        let t_s = (Instant::now() - self.shared.epoch)
            .as_secs()
            .saturating_sub(1);
        if !window.is_empty() {
            self.shared
                .live
                .window_p95_us
                .store(window.value_at_quantile(0.95), Ordering::Relaxed);
        }
        self.windows.push(Window::of(t_s, &window, 0));
    }
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
    pub own_echoes: u64,
    pub unstamped: u64,
    pub pings: u64,
    received: u64,
    /// The time frames of one wake-up are seen at: read once per burst (refreshed every
    /// `BURST` frames), since they were all in the socket together.
    now_us: Option<u64>,
    in_burst: u32,
}

/// Frames of one burst that share a timestamp at most.
const BURST: u32 = 32;

impl<'a> Inbox<'a> {
    pub fn new(tracker: &'a Tracker, socket: u32, binary_stamps: bool) -> Inbox<'a> {
        Inbox {
            tracker,
            socket,
            binary_stamps,
            finder: StampFinder::default(),
            batch: Batch::default(),
            own_echoes: 0,
            unstamped: 0,
            pings: 0,
            received: 0,
            now_us: None,
            in_burst: 0,
        }
    }

    /// Messages taken off the socket so far, of every kind.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// One message off the socket; `Some` when it ended the socket.
    pub fn on_message(&mut self, message: Result<Message, WsError>) -> Option<Ended> {
        let Ok(message) = message else {
            return Some(Ended::ByServer);
        };
        self.received += 1;
        let stamp = match &message {
            Message::Text(text) => self.finder.find(text.as_bytes()),
            Message::Binary(bytes) if self.binary_stamps => Stamp::from_binary(bytes),
            Message::Binary(bytes) => self.finder.find(bytes),
            Message::Ping(_) => {
                // tungstenite queues the pong and sends it with the next read or write.
                self.pings += 1;
                return None;
            }
            Message::Pong(_) | Message::Frame(_) => return None,
            Message::Close(_) => return Some(Ended::ByServer),
        };
        let Some(stamp) = stamp else {
            self.unstamped += 1;
            return None;
        };
        self.in_burst += 1;
        if self.in_burst > BURST {
            self.in_burst = 1;
            self.now_us = None;
        }
        let tracker = self.tracker;
        let now = *self
            .now_us
            .get_or_insert_with(|| tracker.micros_since_epoch(Instant::now()));
        match self.tracker.receipt(self.socket, stamp, now) {
            Receipt::Unknown => self.unstamped += 1,
            Receipt::OwnEcho => self.own_echoes += 1,
            delivered => self.batch.push(self.tracker, self.socket, delivered),
        }
        None
    }

    /// A message, then every message already buffered, then the batch flushed: what the socket
    /// does each time it wakes up to read.
    pub fn on_ready<S>(
        &mut self,
        first: Option<Result<Message, WsError>>,
        stream: &mut S,
    ) -> Option<Ended>
    where
        S: Stream<Item = Result<Message, WsError>> + Unpin,
    {
        self.now_us = None;
        self.in_burst = 0;
        let mut next = first;
        let ended = loop {
            match next {
                None => break Some(Ended::ByServer),
                Some(message) => {
                    if let Some(ended) = self.on_message(message) {
                        break Some(ended);
                    }
                }
            }
            match stream.next().now_or_never() {
                Some(message) => next = message,
                None => break None,
            }
        };
        self.batch.flush(self.tracker, self.socket);
        ended
    }
}

async fn peer(
    shared: Arc<Shared>,
    socket: Socket,
    address: SocketAddr,
    mut stages: watch::Receiver<Stage>,
) {
    let counts = &shared.counts;
    // The scheduled connect time: sockets spread evenly over `connect_over`.
    let share = f64::from(socket.index) / f64::from(shared.sockets.max(1));
    let scheduled = shared.epoch + shared.connect_over.mul_f64(share);
    tokio::select! {
        _ = tokio::time::sleep_until(scheduled) => {}
        _ = wait_for_abort(&mut stages) => {
            counts.settled.fetch_add(1, Ordering::Release);
            shared.settled.notify_one();
            return;
        }
    }
    // Boxed: the handshake's state is large and only needed while connecting.
    let opened = tokio::time::timeout(
        shared.connect_timeout,
        Box::pin(open(&shared, socket, address)),
    )
    .await;
    let mut ws = match opened {
        Ok(Ok(ws)) => ws,
        Ok(Err(failure)) => {
            let counter = match failure {
                Failure::Refused => &counts.refused,
                Failure::Status => &counts.status,
                Failure::Other => &counts.other,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            shared.live.errors.fetch_add(1, Ordering::Relaxed);
            counts.settled.fetch_add(1, Ordering::Release);
            shared.settled.notify_one();
            return;
        }
        Err(_) => {
            counts.timeout.fetch_add(1, Ordering::Relaxed);
            shared.live.errors.fetch_add(1, Ordering::Relaxed);
            counts.settled.fetch_add(1, Ordering::Release);
            shared.settled.notify_one();
            return;
        }
    };
    if let Ok(mut connect) = shared.connect.lock() {
        let _ = connect.record(micros(scheduled.elapsed()));
    }
    shared.rooms_open[socket.room as usize].fetch_add(1, Ordering::AcqRel);
    counts.opened.fetch_add(1, Ordering::Relaxed);
    counts.settled.fetch_add(1, Ordering::Release);
    shared.settled.notify_one();

    let mut inbox = Inbox::new(
        &shared.tracker,
        socket.index,
        shared.stamp_form == StampForm::BinaryPrefix,
    );
    let far = Instant::now() + Duration::from_secs(86_400 * 365);
    let mut hold_end = far;
    let mut next_send = far;
    let mut next_ping = shared
        .ping_every
        .map_or(far, |every| Instant::now() + every);
    let mut next_reload = far;
    let mut close_at = far;
    let mut seq = 0u64;
    let timer = tokio::time::sleep_until(far);
    tokio::pin!(timer);
    // The stage may have moved on while this socket was connecting.
    let mut stage = Some(*stages.borrow_and_update());
    let ended = loop {
        if let Some(current) = stage.take() {
            match current {
                Stage::Connecting => {}
                Stage::Hold { start, end } => {
                    hold_end = end;
                    if let Some(plan) = socket.sends {
                        next_send = plan.first(start);
                    }
                    if let Some(reload) = &shared.reload {
                        let first = if reload.poisson {
                            exponential(1.0 / reload.mean)
                        } else {
                            reload.mean * share
                        };
                        next_reload = start + Duration::from_secs_f64(first);
                    }
                }
                Stage::Drain => {
                    next_send = far;
                    next_reload = far;
                }
                Stage::Close { start, over } => {
                    next_send = far;
                    next_reload = far;
                    close_at = start + over.mul_f64(share);
                }
                Stage::Abort => break Ended::ByUs,
            }
        }
        let due = next_send.min(next_ping).min(next_reload).min(close_at);
        if timer.deadline() != due {
            timer.as_mut().reset(due);
        }
        tokio::select! {
            biased;
            changed = stages.changed() => {
                if changed.is_err() {
                    break Ended::ByUs;
                }
                stage = Some(*stages.borrow_and_update());
            }
            message = ws.next() => {
                if let Some(ended) = inbox.on_ready(message, &mut ws) {
                    break ended;
                }
            }
            () = &mut timer => {
                let now = Instant::now();
                if now >= close_at {
                    let _ = tokio::time::timeout(CLOSE_TIMEOUT, Box::pin(ws.close(None))).await;
                    break Ended::ByUs;
                }
                if now >= next_send
                    && let Some(plan) = socket.sends
                    && Box::pin(send_due(&shared, socket, plan, &mut ws, &mut next_send, hold_end, &mut seq)).await.is_err()
                {
                    break Ended::ByServer;
                }
                if now >= next_ping {
                    if Box::pin(ws.send(Message::Ping(Vec::new().into()))).await.is_err() {
                        break Ended::ByServer;
                    }
                    counts.pings_sent.fetch_add(1, Ordering::Relaxed);
                    next_ping = shared.ping_every.map_or(far, |every| now + every);
                }
                if now >= next_reload
                    && let Some(reload) = &shared.reload
                {
                    spawn_reload(&shared, socket, next_reload);
                    let gap = if reload.poisson { exponential(1.0 / reload.mean) } else { reload.mean };
                    next_reload += Duration::from_secs_f64(gap);
                    if next_reload >= hold_end {
                        next_reload = far;
                    }
                }
            }
        }
    };
    inbox.batch.flush(&shared.tracker, socket.index);
    shared.rooms_open[socket.room as usize].fetch_sub(1, Ordering::AcqRel);
    match ended {
        Ended::ByServer => counts.closed_by_server.fetch_add(1, Ordering::Relaxed),
        Ended::ByUs => counts.closed_by_us.fetch_add(1, Ordering::Relaxed),
    };
    counts
        .own_echoes
        .fetch_add(inbox.own_echoes, Ordering::Relaxed);
    counts
        .unstamped
        .fetch_add(inbox.unstamped, Ordering::Relaxed);
    counts
        .pings_received
        .fetch_add(inbox.pings, Ordering::Relaxed);
}

async fn wait_for_abort(stages: &mut watch::Receiver<Stage>) {
    loop {
        if *stages.borrow_and_update() == Stage::Abort || stages.changed().await.is_err() {
            return;
        }
    }
}

/// Why a socket did not open.
enum Failure {
    Refused,
    Status,
    Other,
}

async fn open(
    shared: &Shared,
    socket: Socket,
    address: SocketAddr,
) -> Result<WebSocketStream<TcpStream>, Failure> {
    let stream = TcpStream::connect(address).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            Failure::Refused
        } else {
            Failure::Other
        }
    })?;
    let _ = stream.set_nodelay(true);
    let url = per_socket(&shared.url, socket.room, socket.peer);
    let (mut ws, _) =
        tokio_tungstenite::client_async_with_config(url, stream, Some(shared.socket_config))
            .await
            .map_err(|e| match e {
                tungstenite::Error::Http(_) => Failure::Status,
                _ => Failure::Other,
            })?;
    if let Some(join) = &shared.join {
        let join = per_socket(join, socket.room, socket.peer);
        ws.send(Message::Text(join.into()))
            .await
            .map_err(|_| Failure::Other)?;
    }
    Ok(ws)
}

/// Sends every message due by now (a blocked socket catches up: the stamps keep the intended
/// times, so the delay is in the latencies), then schedules the next.
async fn send_due(
    shared: &Shared,
    socket: Socket,
    plan: SendPlan,
    ws: &mut WebSocketStream<TcpStream>,
    next_send: &mut Instant,
    hold_end: Instant,
    seq: &mut u64,
) -> Result<(), ()> {
    let far = Instant::now() + Duration::from_secs(86_400 * 365);
    let Some(template) = &shared.template else {
        *next_send = far;
        return Ok(());
    };
    while *next_send <= Instant::now() && *next_send < hold_end {
        let intended = *next_send;
        // Expected at the room's open peers other than the sender.
        let expected = shared.rooms_open[socket.room as usize]
            .load(Ordering::Acquire)
            .saturating_sub(1);
        match shared.tracker.open(socket.index, expected) {
            Some(id) => {
                let stamp = Stamp {
                    id,
                    sent_us: shared.tracker.micros_since_epoch(intended),
                };
                let message = template.render(socket.room, socket.peer, *seq, stamp);
                let sent = Instant::now();
                ws.feed(message).await.map_err(|_| ())?;
                if let Ok(mut lag) = shared.lag.lock() {
                    let _ = lag.record(micros(sent.saturating_duration_since(intended)));
                }
                shared.live.requests.fetch_add(1, Ordering::Relaxed);
                *seq += 1;
            }
            None => {
                shared.counts.skipped.fetch_add(1, Ordering::Relaxed);
            }
        }
        *next_send = plan.next(intended);
    }
    ws.flush().await.map_err(|_| ())?;
    if *next_send >= hold_end {
        *next_send = far;
    }
    Ok(())
}

/// A page reload on its own task, so the socket keeps reading.
fn spawn_reload(shared: &Arc<Shared>, socket: Socket, intended: Instant) {
    let Some(reload) = &shared.reload else { return };
    let path = match crate::http::parse_url(&per_socket(&reload.url, socket.room, socket.peer)) {
        Some((_, path)) => path,
        None => return,
    };
    let shared = Arc::clone(shared);
    shared.reloads_in_flight.fetch_add(1, Ordering::Relaxed);
    tokio::spawn(async move {
        let Some(reload) = &shared.reload else { return };
        let outcome =
            crate::http::get(reload.address, &reload.authority, &path, reload.timeout).await;
        let done = Instant::now();
        if let Ok(mut reloads) = shared.reloads.lock() {
            let _ = reloads.latency.record(micros(done - intended));
            match outcome {
                Ok((status, _)) if (200..300).contains(&status) => reloads.ok += 1,
                Ok(_) => reloads.errors.status += 1,
                Err(crate::http::ErrorKind::Connect) => reloads.errors.connect += 1,
                Err(crate::http::ErrorKind::Timeout) => reloads.errors.timeout += 1,
                Err(crate::http::ErrorKind::Protocol) => reloads.errors.protocol += 1,
            }
        }
        shared.reloads_in_flight.fetch_sub(1, Ordering::Relaxed);
    });
}

fn result(
    shared: &Shared,
    sizes: &[u32],
    hold_started_s: f64,
    hold_s: f64,
    windows: Vec<Window>,
) -> ScenarioResult {
    let c = &shared.counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let counts = shared.tracker.counts();
    let (seen, all) = shared.tracker.histograms();
    let connect = shared
        .connect
        .lock()
        .map(|h| h.clone())
        .unwrap_or_else(|_| histogram());
    let lag = shared
        .lag
        .lock()
        .map(|h| h.clone())
        .unwrap_or_else(|_| histogram());
    let failed = ConnectFailures {
        refused: load(&c.refused),
        status: load(&c.status),
        timeout: load(&c.timeout),
        other: load(&c.other),
    };
    let mut histograms = std::collections::BTreeMap::new();
    histograms.insert("seen".to_owned(), serialize_histogram(&seen));
    histograms.insert("seen_by_all".to_owned(), serialize_histogram(&all));
    histograms.insert("connect".to_owned(), serialize_histogram(&connect));
    histograms.insert("schedule_lag".to_owned(), serialize_histogram(&lag));
    let reload = shared.reload.as_ref().and_then(|_| {
        let reloads = shared.reloads.lock().ok()?;
        histograms.insert("reload".to_owned(), serialize_histogram(&reloads.latency));
        Some(ReloadResult {
            requests: reloads.latency.len(),
            ok: reloads.ok,
            errors: reloads.errors.clone(),
            latency: histogram_summary(&reloads.latency),
        })
    });
    let duration_s = shared.epoch.elapsed().as_secs_f64();
    ScenarioResult {
        kind: "rooms".to_owned(),
        skipped: None,
        requests: counts.sent,
        ok: counts.sent,
        dropped: load(&c.skipped),
        errors: ErrorCounts {
            connect: failed.refused + failed.other,
            timeout: failed.timeout,
            status: failed.status,
            protocol: 0,
        },
        duration_s,
        rate: if hold_s > 0.0 {
            counts.sent as f64 / hold_s
        } else {
            0.0
        },
        latency: histogram_summary(&seen),
        schedule_lag: histogram_summary(&lag),
        histograms,
        windows,
        // Rooms send only in the hold: nothing of a ramp is in the figures.
        ramps: None,
        rooms: Some(RoomsResult {
            rooms: sizes.len() as u64,
            peers: u64::from(shared.sockets),
            sockets: SocketCounts {
                planned: u64::from(shared.sockets),
                opened: load(&c.opened),
                failed,
                closed_by_server: load(&c.closed_by_server),
                closed_by_us: load(&c.closed_by_us),
                pings_sent: load(&c.pings_sent),
                pings_received: load(&c.pings_received),
            },
            connect: histogram_summary(&connect),
            hold_started_s,
            hold_s,
            messages: MessageCounts {
                skipped: load(&c.skipped),
                own_echoes: load(&c.own_echoes),
                unstamped: load(&c.unstamped),
                ..counts
            },
            seen: histogram_summary(&seen),
            seen_by_all: histogram_summary(&all),
            reload,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_spec::scenario::Send;
    use headroom_spec::{Rate, Size};

    fn scenario(rooms: u64, per_room: Option<u64>, peers: Option<u64>) -> RoomsScenario {
        RoomsScenario {
            name: "t".into(),
            url: "ws://127.0.0.1:{port}/rooms/{room}".into(),
            rooms: Param::Value(rooms),
            peers_per_room: per_room.map(Param::Value),
            peers: peers.map(Param::Value),
            join: None,
            idle: false,
            send: None,
            ping: Default::default(),
            reload: None,
            deadline: headroom_spec::Duration::from_secs(30),
            connect_timeout: headroom_spec::Duration::from_secs(10),
            connect_over: None,
            stages: Default::default(),
        }
    }

    fn send(rate: f64, per: RatePer, senders: Senders) -> Send {
        Send {
            rate: Param::Value(Rate::per_second(rate)),
            per,
            senders,
            arrivals: Arrivals::Fixed,
            size: Param::Value(Size::from_bytes(100)),
            template: "{stamp}".into(),
            stamp: StampForm::Json,
        }
    }

    #[test]
    fn peers_spread_evenly_and_rooms_fill_side_by_side() {
        let (sizes, sockets) = topology(&scenario(3, None, Some(10))).expect("topology");
        assert_eq!(sizes, [4, 3, 3]);
        let first: Vec<(u32, u32)> = sockets.iter().take(4).map(|s| (s.room, s.peer)).collect();
        assert_eq!(first, [(0, 0), (1, 0), (2, 0), (0, 1)]);
        assert_eq!(sockets.len(), 10);
        assert!(
            sockets
                .iter()
                .enumerate()
                .all(|(i, s)| s.index as usize == i)
        );
        let (sizes, _) = topology(&scenario(2, Some(5), None)).expect("topology");
        assert_eq!(sizes, [5, 5]);
    }

    #[test]
    fn rates_split_as_the_spec_says() {
        let total_rate = |s: &RoomsScenario| -> f64 {
            let (_, sockets) = topology(s).expect("topology");
            sockets.iter().filter_map(|s| s.sends).map(|p| p.rate).sum()
        };
        let mut s = scenario(4, Some(5), None);
        s.send = Some(send(2.0, RatePer::Sender, Senders::All));
        assert!((total_rate(&s) - 40.0).abs() < 1e-9);
        s.send = Some(send(2.0, RatePer::Room, Senders::All));
        assert!((total_rate(&s) - 8.0).abs() < 1e-9);
        s.send = Some(send(2.0, RatePer::Scenario, Senders::OnePerRoom));
        assert!((total_rate(&s) - 2.0).abs() < 1e-9);
        let (_, sockets) = topology(&s).expect("topology");
        assert_eq!(sockets.iter().filter(|s| s.sends.is_some()).count(), 4);
        // Fixed arrivals: the senders' first sends spread over one gap, none twice.
        let mut offsets: Vec<f64> = sockets
            .iter()
            .filter_map(|s| s.sends)
            .map(|p| p.offset)
            .collect();
        offsets.sort_by(f64::total_cmp);
        assert_eq!(offsets, [0.0, 0.25, 0.5, 0.75]);
        s.idle = true;
        assert_eq!(total_rate(&s), 0.0);
    }

    #[test]
    fn templates_fill_to_the_size_with_the_stamp_inside() {
        let template = Template::parse(
            r#"{"stamp":"{stamp}","room":{room},"peer":{peer},"seq":{seq},"payload":"{payload}"}"#,
            200,
            false,
        );
        let stamp = Stamp {
            id: 42,
            sent_us: 1_000_000,
        };
        let Message::Text(text) = template.render(3, 7, 9, stamp) else {
            panic!("a text message");
        };
        assert_eq!(text.len(), 200);
        assert!(
            text.starts_with(r#"{"stamp":"hr1.2a.f4240","room":3,"peer":7,"seq":9,"payload":"xx"#)
        );
        assert_eq!(StampFinder::default().find(text.as_bytes()), Some(stamp));
        let binary = Template::parse("{payload}", 64, true);
        let Message::Binary(bytes) = binary.render(0, 0, 0, stamp) else {
            panic!("a binary message");
        };
        assert_eq!(bytes.len(), 64);
        assert_eq!(Stamp::from_binary(&bytes), Some(stamp));
    }

    #[tokio::test]
    async fn urls_other_than_loopback_ws_are_refused_with_the_reason() {
        let allowed = crate::http::Allowed::default();
        let resolve = |url: &'static str| resolve(url, url, &allowed);
        assert!(
            resolve("wss://example.com/x")
                .await
                .expect_err("wss")
                .contains("TLS")
        );
        assert!(
            resolve("http://127.0.0.1:1/")
                .await
                .expect_err("http")
                .contains("ws://")
        );
        assert_eq!(
            resolve("ws://127.0.0.1:9/rooms/1?x=2").await,
            Ok(SocketAddr::from(([127, 0, 0, 1], 9)))
        );
    }

    /// Issue 12: a ws:// host that an environment variable filled in is checked before any
    /// connect: a literal private address is refused as data (no lookup, no socket).
    #[tokio::test]
    async fn a_host_from_the_environment_is_checked_before_any_connect() {
        let allowed = crate::http::Allowed::default();
        let error = resolve(
            "ws://10.0.0.9:8080/rooms/1",
            "ws://{env:CHAT_HOST}/rooms/{room}",
            &allowed,
        )
        .await
        .expect_err("not loopback");
        assert!(
            error.starts_with("load to `10.0.0.9`, from {env:CHAT_HOST} in `ws://{env:CHAT_HOST}/rooms/{room}` is not allowed"),
            "{error}"
        );
    }
}
