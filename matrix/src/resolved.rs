//! What runs at one point, every value resolved: the spec's `[target]` and `[[scenario]]`
//! shapes with each `"{variable}"` replaced by its value at the point, so the runner never
//! meets a `Param` (and never needs a fallback for one). Serialized, each is the spec's shape
//! with literals only (a units count may be 0 at a baseline point).

use std::collections::BTreeMap;

use headroom_spec::scenario::{
    Arrivals, Executor, HttpVersion, Ping, RatePer, Request, Senders, StampForm,
};
use headroom_spec::target::{ProcessMode, Ready, Step, Stop};
use headroom_spec::think::UserStart;
use headroom_spec::{Duration, Rate, Size};
use serde::{Deserialize, Serialize};

/// `[bench]` with `people_per_unit` resolved to a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "ResolvedBench")]
pub struct Bench {
    /// A short identifier; results go to `results/<name>/`.
    pub name: String,
    /// One sentence on what the bench answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The capacity unit, singular: `room`, `user`.
    pub unit: String,
    /// How many people one unit holds.
    pub people_per_unit: u64,
}

/// The server under test at one point: `[target]` with its variables filled; `{port}` and
/// `{env:…}` are left for the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PointTarget")]
pub struct Target {
    /// The command that starts the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Its working directory, relative to the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The URL of a server that runs elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Where an external server's process id is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_file: Option<String>,
    /// When the server is ready.
    pub ready: Ready,
    /// Where its Prometheus metrics are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<String>,
    /// How it is stopped.
    pub stop: Stop,
    /// A fresh server per run, or one per phase.
    pub process: ProcessMode,
    /// CPU and memory limits, as an instance size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Hosts other than loopback that load may go to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
    /// A PEM file of the certificate authorities TLS trusts, relative to the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
    /// Whether TLS accepts any certificate (loopback only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_verify: bool,
    /// A stack's services, in the order they start (each after those it names in `after`);
    /// they stop in reverse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<Service>,
    /// The service the load goes to (its `{port}` is the scenarios').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front: Option<String>,
    /// Commands run once the target is ready, before the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<Step>,
    /// Commands run after the load, before the target stops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teardown: Vec<Step>,
}

impl Target {
    /// Whether headroom starts the target at every point (a `command` or a stack).
    pub fn is_started(&self) -> bool {
        self.command.is_some() || !self.services.is_empty()
    }
}

/// One service of a stack at one point, its variables filled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PointService")]
pub struct Service {
    /// Its name: `[target.services.NAME]`.
    pub name: String,
    /// The command that starts it.
    pub command: Vec<String>,
    /// Its working directory, relative to the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// When it is ready.
    pub ready: Ready,
    /// How it is stopped.
    pub stop: Stop,
    /// Its CPU and memory limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The services started (and ready) before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// `[target.limits]` at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PointLimits")]
pub struct Limits {
    /// CPUs the server may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Memory the server may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Size>,
    /// Whether the server is pinned to whole cores and the generator to the others.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pin: bool,
}

/// One workload at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Scenario {
    /// HTTP requests, open or closed model.
    Http(HttpScenario),
    /// WebSocket rooms.
    Rooms(RoomsScenario),
}

impl Scenario {
    /// Its name in results and SLOs.
    pub fn name(&self) -> &str {
        match self {
            Scenario::Http(s) => &s.name,
            Scenario::Rooms(s) => &s.name,
        }
    }

    /// Its ramp-up, hold and ramp-down.
    pub fn stages(&self) -> &Stages {
        match self {
            Scenario::Http(s) => &s.stages,
            Scenario::Rooms(s) => &s.stages,
        }
    }

    /// Its ramp-up, hold and ramp-down, to scale (`--quick`).
    pub fn stages_mut(&mut self) -> &mut Stages {
        match self {
            Scenario::Http(s) => &mut s.stages,
            Scenario::Rooms(s) => &mut s.stages,
        }
    }

    /// `http` or `rooms`, as the spec writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Scenario::Http(_) => "http",
            Scenario::Rooms(_) => "rooms",
        }
    }
}

/// Ramp-up, hold and ramp-down at one point.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stages {
    /// From no load to the target load.
    pub ramp_up: Duration,
    /// The target load held, where figures are measured; `None` measures the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Duration>,
    /// From the target load back to none.
    pub ramp_down: Duration,
}

/// An HTTP scenario at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpScenario {
    /// Its name.
    pub name: String,
    /// Open model (arrival rate) or closed model (virtual users).
    pub executor: Executor,
    /// Requests started per unit of time (arrival-rate executors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Where `ramping-arrival-rate` starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<Rate>,
    /// Virtual users (virtual-user executors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vus: Option<u64>,
    /// Where `ramping-vus` starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_vus: Option<u64>,
    /// A virtual user's pause between an answer and its next request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkTime>,
    /// When virtual users send their first request (results written before it was a key
    /// started them together).
    #[serde(default = "together")]
    pub start: UserStart,
    /// Fixed or Poisson gaps between request starts.
    pub arrivals: Arrivals,
    /// Requests in flight at most.
    pub max_in_flight: u64,
    /// Connections open at once at most (`max_in_flight` unless the spec says; 10,000 in
    /// results written before it was a key).
    #[serde(default = "ten_thousand")]
    pub max_connections: u64,
    /// The most a request takes from its intended start (connect, send, answer).
    pub timeout: Duration,
    /// The most one connection attempt may take (5 s in results written before it was a key).
    #[serde(default = "five_seconds")]
    pub connect_timeout: Duration,
    /// The CSV file whose rows fill `{row.column}`, and how rows are handed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<headroom_spec::scenario::DataSource>,
    /// HTTP/1.1 or HTTP/2 (1.1 in results written before it was a key).
    #[serde(default)]
    pub http_version: HttpVersion,
    /// Ramp-up, hold and ramp-down.
    pub stages: Stages,
    /// The requests, with the point's variables filled.
    pub requests: Vec<Request>,
}

fn ten_thousand() -> u64 {
    10_000
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

/// A rooms scenario at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomsScenario {
    /// Its name.
    pub name: String,
    /// The socket URL; `{room}` and `{peer}` are filled per socket.
    pub url: String,
    /// What the sockets speak (raw WebSocket when absent).
    #[serde(default, skip_serializing_if = "Protocol::is_websocket")]
    pub protocol: Protocol,
    /// How many rooms (0 at a baseline point).
    pub rooms: u64,
    /// Sockets per room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers_per_room: Option<u64>,
    /// Sockets in all, spread evenly over the rooms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers: Option<u64>,
    /// A text message each peer sends right after connecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<String>,
    /// Connect and hold the sockets, sending nothing.
    pub idle: bool,
    /// What the peers send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<Messages>,
    /// Our own pings.
    pub ping: Ping,
    /// A periodic HTTP GET per peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<Reload>,
    /// A message later than this after its send counts as late.
    pub deadline: Duration,
    /// A socket not open by then counts as failed.
    pub connect_timeout: Duration,
    /// The sockets are opened evenly over this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_over: Option<Duration>,
    /// Ramp-up (sockets opening), hold and ramp-down.
    pub stages: Stages,
}

/// What a rooms scenario's sockets speak, with what the protocol needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum Protocol {
    /// Raw WebSocket messages.
    #[default]
    #[serde(rename = "websocket")]
    WebSocket,
    /// Socket.IO v4 over WebSocket; its strings filled at the point (`{room}` and `{peer}`
    /// are filled per socket).
    #[serde(rename = "socket.io")]
    SocketIo(headroom_spec::scenario::SocketIo),
    /// Server-Sent Events streams, messages published by HTTP; its strings filled at the
    /// point (`{room}` and `{peer}` are filled per peer).
    #[serde(rename = "sse")]
    Sse(headroom_spec::scenario::Sse),
}

impl Protocol {
    /// Raw WebSocket, the default.
    pub fn is_websocket(&self) -> bool {
        *self == Protocol::WebSocket
    }
}

impl RoomsScenario {
    /// Sockets in all: `rooms × peers_per_room`, or `peers` spread over the rooms (none
    /// without a room). The runner opens exactly these.
    pub fn sockets(&self) -> u64 {
        match (self.peers_per_room, self.peers) {
            (Some(per_room), _) => self.rooms.saturating_mul(per_room),
            (None, Some(_)) if self.rooms == 0 => 0,
            (None, Some(total)) => total,
            (None, None) => 0,
        }
    }

    /// Rooms with at least one peer.
    pub fn occupied_rooms(&self) -> u64 {
        match (self.peers_per_room, self.peers) {
            (Some(per_room), _) if per_room > 0 => self.rooms,
            (None, Some(total)) => self.rooms.min(total),
            _ => 0,
        }
    }

    /// The streams `send.rate` is counted over: every sender (`per = "sender"`: all peers,
    /// or one per occupied room), every occupied room, or the scenario as one. 0 when idle or
    /// nothing is sent.
    pub fn message_streams(&self) -> u64 {
        let Some(send) = self.send.as_ref().filter(|_| !self.idle) else {
            return 0;
        };
        let senders = match send.senders {
            Senders::All => self.sockets(),
            Senders::OnePerRoom => self.occupied_rooms(),
        };
        match send.per {
            RatePer::Sender => senders,
            RatePer::Room => self.occupied_rooms(),
            RatePer::Scenario => u64::from(senders > 0),
        }
    }
}

/// What the peers of a rooms scenario send, at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Messages {
    /// Messages per unit of time, counted as `per` says.
    pub rate: Rate,
    /// What `rate` counts.
    pub per: RatePer,
    /// Who sends.
    pub senders: Senders,
    /// Fixed or Poisson gaps between sends.
    pub arrivals: Arrivals,
    /// The message size.
    pub size: Size,
    /// The message, with the point's variables filled.
    pub template: String,
    /// How the correlation id and send time travel.
    pub stamp: StampForm,
}

/// A page reload at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reload {
    /// The page.
    pub url: String,
    /// The mean time between two reloads of one peer.
    pub every: Duration,
    /// Fixed or Poisson gaps.
    pub arrivals: Arrivals,
}

fn together() -> UserStart {
    UserStart::Together
}

/// A virtual user's think time at one point, written as the spec writes it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ThinkTime {
    /// The same pause every time.
    Fixed(Duration),
    /// Uniformly between the two.
    Uniform {
        /// The least and the most.
        uniform: [Duration; 2],
    },
    /// Exponentially distributed with this mean.
    Exponential {
        /// The mean.
        exponential: Duration,
    },
}

impl ThinkTime {
    /// The mean pause, in seconds.
    pub fn mean_s(self) -> f64 {
        match self {
            ThinkTime::Fixed(fixed) => fixed.as_secs_f64(),
            ThinkTime::Uniform { uniform: [a, b] } => (a.as_secs_f64() + b.as_secs_f64()) / 2.0,
            ThinkTime::Exponential { exponential } => exponential.as_secs_f64(),
        }
    }

    /// One pause, from `u`, a uniform draw in [0, 1).
    pub fn draw(self, u: f64) -> std::time::Duration {
        let seconds = match self {
            ThinkTime::Fixed(fixed) => return fixed.as_std(),
            ThinkTime::Uniform { uniform: [a, b] } => {
                let (a, b) = (a.as_secs_f64(), b.as_secs_f64());
                a + (b - a) * u
            }
            // Inverse transform; `1 - u` is in (0, 1], so the logarithm is finite.
            ThinkTime::Exponential { exponential } => -exponential.as_secs_f64() * (1.0 - u).ln(),
        };
        std::time::Duration::from_secs_f64(seconds.max(0.0))
    }

    /// In words: `1s`, `0.5s to 1.5s, uniformly`, `1s on average, exponentially`.
    pub fn describe(self) -> String {
        match self {
            ThinkTime::Fixed(fixed) => fixed.to_string(),
            ThinkTime::Uniform { uniform: [a, b] } => format!("{a} to {b}, uniformly"),
            ThinkTime::Exponential { exponential } => {
                format!("{exponential} on average, exponentially")
            }
        }
    }
}
