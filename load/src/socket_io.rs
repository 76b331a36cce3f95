//! Socket.IO v4 client sessions, for rooms that speak it: Engine.IO v4 over WebSocket (the open packet read, every server ping
//! answered at once, a server that stops pinging taken for gone) and the Socket.IO v5 packets
//! inside it (a namespace connected with its auth, rooms joined by events, messages sent as
//! events with optional acknowledgements).
//!
//! Only the WebSocket transport is spoken: the socket opens at
//! `<path>?EIO=4&transport=websocket`, as clients configured with `transports: ["websocket"]`
//! do. A server that allows long-polling only answers that upgrade with 400, and every socket
//! fails as `status` (docs/realtime.md says why polling is not emulated).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use headroom_results::histogram::micros;
use headroom_spec::scenario::SocketIo;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::fill::per_socket;
use crate::tls::Transport;

/// Where a socket sits: its room and its index in it, which fill `{room}` and `{peer}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seat {
    /// The room, from 0.
    pub room: u32,
    /// The peer in the room, from 0.
    pub peer: u32,
}

/// Why a Socket.IO session did not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeFailure {
    /// The namespace refused the socket (`44{"message":…}`, a connect_error), with its message.
    Rejected(String),
    /// An open packet that is not Engine.IO's, or a binary frame where text was due.
    Malformed,
    /// A frame over headroom's bound.
    TooLarge,
    /// The socket closed, broke or was disconnected before the session opened.
    Broken,
}

/// What a Socket.IO scenario sends on every socket, its packets written once.
pub struct Plan {
    /// The namespace (`/`, `/chat`), to tell its packets from others'.
    namespace: String,
    /// `40`, `40/chat,` or either with the auth payload; `{room}` and `{peer}` to fill.
    connect: String,
    /// Each join's packet, before and after its ack id: `42/chat,` and `["join",…]`.
    joins: Vec<(String, String)>,
    join_ack: bool,
    /// Messages ask acks: each carries its id as the ack id.
    pub ack: bool,
    /// What the run measured of the protocol.
    pub figures: Figures,
}

/// The figures only Socket.IO gives, shared by every socket of a run.
pub struct Figures {
    /// From the scheduled connect to the Engine.IO open packet.
    pub open: Mutex<Histogram<u64>>,
    /// From the open packet to the namespace's `40{sid}`.
    pub namespace: Mutex<Histogram<u64>>,
    /// From the namespace connected to every join sent (and acknowledged, with `join_ack`).
    pub joined: Mutex<Histogram<u64>>,
    /// From a message's intended send time to its acknowledgement.
    pub ack: Mutex<Histogram<u64>>,
    /// Messages sent asking an ack, and acks received.
    pub acks_asked: AtomicU64,
    pub acks_received: AtomicU64,
    /// Sockets refused by the namespace (`44{"message":…}`), by the server's message.
    pub rejections: Mutex<BTreeMap<String, u64>>,
}

impl Figures {
    pub fn new() -> Figures {
        let histogram = || Mutex::new(crate::http::histogram());
        Figures {
            open: histogram(),
            namespace: histogram(),
            joined: histogram(),
            ack: histogram(),
            acks_asked: AtomicU64::new(0),
            acks_received: AtomicU64::new(0),
            rejections: Mutex::new(BTreeMap::new()),
        }
    }

    /// A socket the namespace refused with `message`. A server's messages are kept word for
    /// word up to `REJECTION_MESSAGES` of them, each cut to `REJECTION_LENGTH` characters;
    /// past that (a server that puts an id in each) they are counted together.
    pub fn rejected(&self, message: &str) {
        let Ok(mut rejections) = self.rejections.lock() else {
            return;
        };
        let message: String = message.chars().take(REJECTION_LENGTH).collect();
        let key = if rejections.contains_key(&message) || rejections.len() < REJECTION_MESSAGES {
            message
        } else {
            OTHER_REJECTIONS.to_owned()
        };
        *rejections.entry(key).or_default() += 1;
    }

    /// The acks a socket timed since the last call.
    pub fn record_acks(&self, session: &mut Session) {
        if let Ok(mut ack) = self.ack.lock() {
            for &took in &session.acked {
                let _ = ack.record(took);
            }
        }
        self.acks_received
            .fetch_add(session.acked.len() as u64, Ordering::Relaxed);
        session.acked.clear();
    }

    fn record(histogram: &Mutex<Histogram<u64>>, took: Duration) {
        if let Ok(mut histogram) = histogram.lock() {
            let _ = histogram.record(micros(took).max(1));
        }
    }
}

/// Distinct refusal messages kept; the rest are counted as [`OTHER_REJECTIONS`].
const REJECTION_MESSAGES: usize = 16;
/// A refusal message is kept to this many characters.
const REJECTION_LENGTH: usize = 200;
/// What refusals past the first [`REJECTION_MESSAGES`] messages are counted under.
const OTHER_REJECTIONS: &str = "(other messages)";

/// The server's heartbeat, from its open packet: it pings every `interval` and drops a
/// client whose pong is `timeout` late; a client that sees no ping for both takes the server
/// for gone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heartbeat {
    pub interval: Duration,
    pub timeout: Duration,
}

impl Heartbeat {
    /// How long a socket waits for the next ping.
    pub fn patience(self) -> Duration {
        self.interval + self.timeout
    }
}

impl Plan {
    /// The plan of a scenario's Socket.IO session, its strings filled by `fill` (`{port}`,
    /// `{env:NAME}`: an auth token from the environment) but for `{room}` and `{peer}`.
    pub fn new(
        session: &SocketIo,
        fill: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<Plan, String> {
        let namespace = session.namespace.clone();
        let nsp = namespace_part(&namespace);
        let auth = session.auth.as_deref().map(fill).transpose()?;
        let connect = format!("40{nsp}{}", auth.unwrap_or_default());
        Ok(Plan {
            joins: session
                .joins
                .iter()
                .map(|join| Ok((format!("42{nsp}"), fill(join)?)))
                .collect::<Result<_, String>>()?,
            namespace,
            connect,
            join_ack: session.join_ack,
            ack: session.ack,
            figures: Figures::new(),
        })
    }

    /// The namespace a socket connects (`/room-{room}` is one per room).
    pub fn namespace_of(&self, seat: Seat) -> String {
        per_socket(&self.namespace, seat.room, seat.peer)
    }

    /// The message packet around a scenario's template: `42/ns,` then the ack id (when acks
    /// are asked), then `["event",` the template `]`.
    pub fn message(&self, event: &str, template: &str) -> (String, String) {
        let name = serde_json::Value::String(event.to_owned()).to_string();
        (
            format!("42{}", namespace_part(&self.namespace)),
            format!("[{name},{template}]"),
        )
    }

    /// A join packet for one socket, with its ack id when joins are acknowledged.
    fn join(&self, index: usize, seat: Seat) -> String {
        let (prefix, event) = &self.joins[index];
        let id = if self.join_ack {
            index.to_string()
        } else {
            String::new()
        };
        per_socket(&format!("{prefix}{id}{event}"), seat.room, seat.peer)
    }
}

/// `/chat,` for a namespace other than the main one, which packets leave out.
fn namespace_part(namespace: &str) -> String {
    if namespace == "/" {
        String::new()
    } else {
        format!("{namespace},")
    }
}

/// The WebSocket URL of an Engine.IO server: `http://127.0.0.1:8080` and `/socket.io/` make
/// `ws://127.0.0.1:8080/socket.io/?EIO=4&transport=websocket`, the server's own query kept.
pub fn engine_url(server: &str, path: &str) -> Result<String, String> {
    let (scheme, rest) = server
        .split_once("://")
        .ok_or_else(|| format!("`{server}` is not a URL: write it as http://127.0.0.1:{{port}}"))?;
    let scheme = match scheme {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        _ => {
            return Err(format!(
                "`{server}` is not an http://, https://, ws:// or wss:// server a Socket.IO client can reach"
            ));
        }
    };
    let (authority, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let authority = authority.trim_end_matches('/');
    if authority.contains('/') {
        return Err(format!(
            "`{server}` has a path: a Socket.IO scenario's `url` is the server, its Engine.IO path `socket_io.path`"
        ));
    }
    let mut url = format!("{scheme}://{authority}{path}?EIO=4&transport=websocket");
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        url.push('&');
        url.push_str(query);
    }
    Ok(url)
}

/// A Socket.IO packet as the receive path needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// Engine.IO `2`: answer `3` now.
    Ping,
    /// Engine.IO `1`: the server closes the session.
    Close,
    /// The namespace connected (`40{"sid":…}`).
    Connected,
    /// The namespace refused the socket (`44{"message":…}`), with the server's message.
    ConnectError(String),
    /// The server disconnected the namespace (`41`).
    Disconnect,
    /// An event of the namespace (`42…`): a message, if it carries a stamp.
    Event,
    /// An acknowledgement (`43<id>[…]`).
    Ack(u64),
    /// Anything else: another namespace's packet, a noop, binary placeholders.
    Other,
}

/// Which packet `text` is, for the socket's `namespace`.
pub fn classify(text: &str, namespace: &str) -> Incoming {
    let mut chars = text.bytes();
    match chars.next() {
        Some(b'2') => return Incoming::Ping,
        Some(b'1') => return Incoming::Close,
        Some(b'4') => {}
        _ => return Incoming::Other,
    }
    let Some(kind) = chars.next() else {
        return Incoming::Other;
    };
    let rest = &text[2..];
    let (packet_namespace, rest) = match rest.strip_prefix('/') {
        Some(_) => match rest.split_once(',') {
            Some((nsp, rest)) => (nsp, rest),
            None => (rest, ""),
        },
        None => ("/", rest),
    };
    if packet_namespace != namespace {
        return Incoming::Other;
    }
    match kind {
        b'0' => Incoming::Connected,
        b'1' => Incoming::Disconnect,
        b'2' => Incoming::Event,
        b'3' => {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            rest[..digits]
                .parse()
                .map_or(Incoming::Other, Incoming::Ack)
        }
        b'4' => Incoming::ConnectError(connect_error_message(rest)),
        _ => Incoming::Other,
    }
}

/// The message of a connect_error's payload (`{"message":"Not authorized"}`); the payload
/// itself when it has none.
fn connect_error_message(payload: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(payload) {
        Ok(value) => match value.get("message").and_then(|m| m.as_str()) {
            Some(message) => message.to_owned(),
            None => value.to_string(),
        },
        Err(_) => payload.to_owned(),
    }
}

/// The heartbeat in an Engine.IO open packet (`0{"sid":…,"pingInterval":25000,…}`).
pub fn open_packet(text: &str) -> Option<Heartbeat> {
    let payload: serde_json::Value = serde_json::from_str(text.strip_prefix('0')?).ok()?;
    let millis = |key: &str| payload.get(key)?.as_u64().map(Duration::from_millis);
    Some(Heartbeat {
        interval: millis("pingInterval")?,
        timeout: millis("pingTimeout")?,
    })
}

/// What the receive path of one Socket.IO socket keeps: pongs owed, the last ping, and the
/// messages waiting for their acks.
pub struct Session {
    namespace: String,
    /// Pings seen since the socket last wrote: each is answered with a `3`.
    pub pongs_due: u32,
    /// The last ping (or the open packet): the server is gone `patience` after it.
    pub last_ping: Instant,
    /// Acks asked and not yet received: the message id and its intended send time (µs from
    /// the tracker's epoch), oldest first.
    pending: VecDeque<(u64, u64)>,
    /// Ack latencies not yet recorded.
    pub acked: Vec<u64>,
    /// How the server ended the session, when it did by packet.
    pub ended: Option<Incoming>,
}

impl Session {
    pub fn new(namespace: &str) -> Session {
        Session {
            namespace: namespace.to_owned(),
            pongs_due: 0,
            last_ping: Instant::now(),
            pending: VecDeque::new(),
            acked: Vec::new(),
            ended: None,
        }
    }

    /// A message sent asking an ack.
    pub fn asked(&mut self, id: u64, intended_us: u64) {
        self.pending.push_back((id, intended_us));
    }

    /// One text frame; `true` when it may carry a message's stamp (an event).
    pub fn on_text(&mut self, text: &str, now_us: impl FnOnce() -> u64) -> bool {
        match classify(text, &self.namespace) {
            Incoming::Ping => {
                self.pongs_due += 1;
                self.last_ping = Instant::now();
            }
            Incoming::Event => return true,
            Incoming::Ack(id) => {
                if let Some(at) = self.pending.iter().position(|&(asked, _)| asked == id) {
                    let (_, intended_us) = self.pending.remove(at).unwrap_or_default();
                    self.acked.push(now_us().saturating_sub(intended_us).max(1));
                }
            }
            ended @ (Incoming::Close | Incoming::Disconnect) => self.ended = Some(ended),
            Incoming::Connected | Incoming::ConnectError(_) | Incoming::Other => {}
        }
        false
    }
}

/// Opens a Socket.IO session on an open WebSocket: the open packet read, the namespace
/// connected, the joins sent (and acknowledged, when asked). Pings that come meanwhile are
/// answered. Each step's time goes into `figures`.
pub async fn handshake(
    ws: &mut WebSocketStream<Transport>,
    plan: &Plan,
    seat: Seat,
    scheduled: Instant,
) -> Result<Heartbeat, HandshakeFailure> {
    let figures = &plan.figures;
    // The server speaks first: its open packet.
    let heartbeat = open_packet(&next_text(ws).await?).ok_or(HandshakeFailure::Malformed)?;
    let opened = Instant::now();
    Figures::record(&figures.open, opened.saturating_duration_since(scheduled));
    let namespace = plan.namespace_of(seat);
    let connect = per_socket(&plan.connect, seat.room, seat.peer);
    send(ws, connect).await?;
    loop {
        let text = next_text(ws).await?;
        match classify(&text, &namespace) {
            Incoming::Connected => break,
            Incoming::ConnectError(message) => return Err(HandshakeFailure::Rejected(message)),
            Incoming::Ping => send(ws, "3".to_owned()).await?,
            Incoming::Close | Incoming::Disconnect => return Err(HandshakeFailure::Broken),
            _ => {}
        }
    }
    let connected = Instant::now();
    Figures::record(&figures.namespace, connected - opened);
    for index in 0..plan.joins.len() {
        send(ws, plan.join(index, seat)).await?;
    }
    if plan.join_ack {
        let mut acked = vec![false; plan.joins.len()];
        while acked.contains(&false) {
            let text = next_text(ws).await?;
            match classify(&text, &namespace) {
                Incoming::Ack(id) => {
                    if let Some(done) = usize::try_from(id).ok().and_then(|i| acked.get_mut(i)) {
                        *done = true;
                    }
                }
                Incoming::Ping => send(ws, "3".to_owned()).await?,
                Incoming::Close | Incoming::Disconnect => return Err(HandshakeFailure::Broken),
                _ => {}
            }
        }
    }
    Figures::record(&figures.joined, connected.elapsed());
    Ok(heartbeat)
}

/// The next text frame; a closed socket or a protocol error fails the handshake.
async fn next_text(ws: &mut WebSocketStream<Transport>) -> Result<String, HandshakeFailure> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => return Ok(text.as_str().to_owned()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(Message::Binary(_))) => return Err(HandshakeFailure::Malformed),
            Some(Err(tokio_tungstenite::tungstenite::Error::Capacity(_))) => {
                return Err(HandshakeFailure::TooLarge);
            }
            _ => return Err(HandshakeFailure::Broken),
        }
    }
}

async fn send(ws: &mut WebSocketStream<Transport>, text: String) -> Result<(), HandshakeFailure> {
    ws.send(Message::Text(text.into()))
        .await
        .map_err(|_| HandshakeFailure::Broken)
}

#[cfg(test)]
mod tests;
