//! `[[scenario]]`: the workloads that run together at every point.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::expect::{Checks, Expect, Statuses};
use crate::param::Param;
pub use crate::socket_io::{RoomsProtocol, SocketIo};
pub use crate::sse::Sse;
pub use crate::think::{DrawnThink, Think, UserStart};
use crate::units::{Duration, Rate, Size};

/// One workload. Every scenario of a phase runs at once, each on its own schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Scenario {
    /// HTTP requests, open model (arrival rate) or closed model (virtual users).
    Http(HttpScenario),
    /// WebSocket rooms: `rooms × peers_per_room` sockets, messages fanned out to each room.
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

    /// Its ramp-up, hold and ramp-down, to change.
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

/// Ramp-up, hold and ramp-down of a scenario's load at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stages {
    /// From no load to the target load (rate, virtual users or open sockets).
    #[serde(default = "zero")]
    pub ramp_up: Param<Duration>,
    /// The target load held; measurements are taken here: latencies, counts, rates and SLOs
    /// cover the run's hold only, one window for every scenario of the run, which starts
    /// once all of them are at their load (HTTP requests intended outside it are counted
    /// apart, in `outside_hold`; rooms send only in it). Every scenario of a run has the same
    /// hold; a phase's `hold` overrides theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Param<Duration>>,
    /// From the target load back to none.
    #[serde(default = "zero")]
    pub ramp_down: Param<Duration>,
}

fn zero() -> Param<Duration> {
    Param::Value(Duration::ZERO)
}

impl Default for Stages {
    fn default() -> Self {
        Stages {
            ramp_up: zero(),
            hold: None,
            ramp_down: zero(),
        }
    }
}

/// How an HTTP scenario starts requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Executor {
    /// Open model: requests start at `rate`, whether or not earlier ones finished.
    ConstantArrivalRate,
    /// Open model: the rate climbs from `start_rate` to `rate` over `ramp_up`.
    RampingArrivalRate,
    /// Closed model: `vus` users each send, wait for the answer, then `think`.
    ConstantVus,
    /// Closed model: users climb from `start_vus` to `vus` over `ramp_up`.
    RampingVus,
}

impl Executor {
    /// Whether it is an open model (arrival rate).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            Executor::ConstantArrivalRate | Executor::RampingArrivalRate
        )
    }

    /// Whether its load ramps from a start value.
    pub fn is_ramping(self) -> bool {
        matches!(self, Executor::RampingArrivalRate | Executor::RampingVus)
    }

    /// As the spec writes it: `constant-arrival-rate`.
    pub fn as_str(self) -> &'static str {
        match self {
            Executor::ConstantArrivalRate => "constant-arrival-rate",
            Executor::RampingArrivalRate => "ramping-arrival-rate",
            Executor::ConstantVus => "constant-vus",
            Executor::RampingVus => "ramping-vus",
        }
    }
}

/// How the gaps between sends are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Evenly spaced, `1/rate` apart.
    #[default]
    Fixed,
    /// Exponential gaps with mean `1/rate`: independent arrivals, as real users make them.
    Poisson,
}

/// HTTP requests, open model (arrival rate) or closed model (virtual users).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpScenario {
    /// Names the scenario in results, SLOs (`browse.latency.p95`) and pages.
    #[schemars(regex(pattern = SCENARIO_NAME_PATTERN), length(max = 64))]
    pub name: String,
    /// How requests are started: open model (arrival rate) or closed model (virtual users).
    pub executor: Executor,
    /// Requests started per unit of time (arrival-rate executors), e.g. `"50/s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Param<Rate>>,
    /// Where `ramping-arrival-rate` starts; `"0/s"` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<Param<Rate>>,
    /// Virtual users (virtual-user executors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vus: Option<Param<u64>>,
    /// Where `ramping-vus` starts; 0 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_vus: Option<u64>,
    /// A virtual user's pause between an answer and its next request: `"1s"`, or drawn
    /// afresh each time, `{ uniform = ["0.5s", "1.5s"] }` or `{ exponential = "1s" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// When virtual users send their first request: `spread` over their first think time
    /// (the default), or all `together`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<UserStart>,
    /// Fixed or Poisson gaps between request starts (arrival-rate executors).
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Requests in flight at most; a start beyond it is counted as dropped, not queued.
    #[serde(default = "default_max_in_flight")]
    #[schemars(range(min = 1))]
    pub max_in_flight: u64,
    /// Connections open at once at most (arrival-rate executors), each a keep-alive HTTP/1.1
    /// connection reused request after request. When every one is busy, a due request waits
    /// in the generator for the next free one, its latency still counted from its intended
    /// start (what wrk2 and oha `-q` do). `max_in_flight` by default: a connection for every
    /// request outstanding. With `http_version = "2"` it bounds the requests in flight at once
    /// (streams on one connection per load thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_connections: Option<u64>,
    /// The most a request takes from its intended start: connecting, sending and the whole
    /// answer. Past it the request is an error of its kind (`connect` while it still waited for
    /// a connection, `timeout` after), so a point ends within its stages and this.
    #[serde(default = "default_request_timeout")]
    pub timeout: Duration,
    /// The most one connection attempt may take; past it the request is a `connect` error
    /// (a server whose listen backlog is full would otherwise hold it for the kernel's SYN
    /// retries, two minutes).
    #[serde(default = "default_http_connect_timeout")]
    pub connect_timeout: Duration,
    /// Rows of a CSV file whose columns fill `{row.column}` in the requests' URLs, headers and
    /// bodies: a row per virtual user (closed model) or per request (open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataSource>,
    /// `"1.1"` (the default): one request at a time on each keep-alive connection. `"2"`:
    /// HTTP/2, its requests multiplexed as streams over one connection per load thread and
    /// address (ALPN `h2` over TLS; prior knowledge, h2c, on `http://`).
    #[serde(default)]
    pub http_version: HttpVersion,
    /// Ramp-up, hold and ramp-down.
    #[serde(default)]
    pub stages: Stages,
    /// The requests, picked by weight.
    #[schemars(length(min = 1))]
    pub requests: Vec<Request>,
}

/// The largest data file headroom reads: every run of the scenario holds its rows in memory.
pub const MAX_DATA_BYTES: u64 = 64 * 1024 * 1024;

/// The most rows a data file may have.
pub const MAX_DATA_ROWS: usize = 1_000_000;

/// `data = { file = "users.csv", mode = "unique" }`: a CSV file with a header line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataSource {
    /// The CSV file, relative to the spec; its first line names the columns.
    #[schemars(length(min = 1))]
    pub file: String,
    /// Which row a virtual user (or, in the open model, a request) takes.
    #[serde(default)]
    pub mode: DataMode,
}

/// How rows are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DataMode {
    /// In file order, from the first row again after the last.
    #[default]
    Sequential,
    /// A row drawn at random each time.
    Random,
    /// Each row at most once: one per virtual user (closed model only); fewer rows than
    /// users fails the run before any load.
    Unique,
}

/// The HTTP version a scenario speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum HttpVersion {
    /// HTTP/1.1 with keep-alive.
    #[default]
    #[serde(rename = "1.1")]
    Http1,
    /// HTTP/2.
    #[serde(rename = "2")]
    Http2,
}

impl HttpVersion {
    /// As the spec writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http1 => "1.1",
            HttpVersion::Http2 => "2",
        }
    }
}

fn default_max_in_flight() -> u64 {
    10_000
}

fn default_request_timeout() -> Duration {
    Duration::from_secs(30)
}

fn default_http_connect_timeout() -> Duration {
    Duration::from_secs(5)
}

/// An HTTP request method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `GET`
    #[default]
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
    /// `OPTIONS`
    Options,
}

impl Method {
    /// Its name on the wire and in a spec (`GET`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
        }
    }
}

/// The pattern a request's name matches (the schema's), for the compiler's diagnostic.
pub const REQUEST_NAME_PATTERN: &str = r"^[a-z0-9][a-z0-9_-]*$";

/// The pattern a scenario's name matches: a figure's first segment (`browse.latency.p95`), so
/// no dot; the request's pattern.
pub const SCENARIO_NAME_PATTERN: &str = REQUEST_NAME_PATTERN;

/// One request of an HTTP scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Names the request in results, and in a scenario of several its own figures
    /// (`browse.list.latency.p95`); the method and URL by default (then it is measured only
    /// in the scenario's figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = REQUEST_NAME_PATTERN), length(max = 64))]
    pub name: Option<String>,
    /// The HTTP method.
    #[serde(default)]
    pub method: Method,
    /// The URL, with placeholders: `"http://127.0.0.1:{port}/api/notes?page=1"`.
    pub url: String,
    /// Request headers, with placeholders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The request body, with placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// What counts as success: status codes (any 2xx by default), or a table of checks on
    /// the answer (`{ status, body_contains, body_regex, json, max_size }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// How often this request is picked relative to the others.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub weight: u32,
    /// Sent once by each virtual user, in list order, before it picks among the other
    /// requests (a login); again if one of them fails. Closed model only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// Values taken from the answer for the virtual user's later requests, which use them as
    /// `{capture.NAME}`: `capture = { token = { json = "/token" } }`. A value not found makes
    /// the request a `check` error. Closed model only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, Capture>,
}

/// Where a captured value is in an answer's body: exactly one of `json` and `regex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// A JSON pointer from the root (`/token`): a string is taken as is, any other value as
    /// JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    /// A regular expression: its first group, or the whole match when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
}

fn one() -> u32 {
    1
}

/// WebSocket rooms: `rooms × peers_per_room` sockets, messages fanned out to each room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomsScenario {
    /// Names the scenario in results, SLOs (`chat.seen_by_all.p95`) and pages.
    #[schemars(regex(pattern = SCENARIO_NAME_PATTERN), length(max = 64))]
    pub name: String,
    /// The socket URL; `{room}` and `{peer}` are filled per socket:
    /// `"ws://127.0.0.1:{port}/rooms/{room}?peer={peer}"`. With `protocol = "socket.io"`, the
    /// server (`"http://127.0.0.1:{port}"`): the Engine.IO path is `socket_io.path`. With
    /// `protocol = "sse"`, each peer's event stream (`"http://127.0.0.1:{port}/sub/{room}"`).
    pub url: String,
    /// What the sockets speak: raw WebSocket messages, Socket.IO v4 (Engine.IO v4 over
    /// WebSocket: the server's pings answered, a namespace connected, rooms joined by events),
    /// or Server-Sent Events (each peer a `GET` stream, each message published by HTTP).
    #[serde(default, skip_serializing_if = "RoomsProtocol::is_websocket")]
    pub protocol: RoomsProtocol,
    /// How a Socket.IO scenario connects, joins and sends (`protocol = "socket.io"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_io: Option<SocketIo>,
    /// Where an SSE scenario publishes, and how its streams are opened (`protocol = "sse"`
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse: Option<Box<Sse>>,
    /// How many rooms.
    pub rooms: Param<u64>,
    /// Sockets per room; every message sent in a room is expected at the other peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers_per_room: Option<Param<u64>>,
    /// Sockets in all, spread evenly over the rooms (instead of `peers_per_room`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers: Option<Param<u64>>,
    /// A text message each peer sends right after connecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<String>,
    /// Connect and hold the sockets, sending nothing (memory per connection).
    #[serde(default)]
    pub idle: bool,
    /// What the peers send; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<Messages>,
    /// Our own pings (the server's are always answered).
    #[serde(default)]
    pub ping: Ping,
    /// A periodic HTTP GET per peer, as a page reload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<Reload>,
    /// A message that arrives later than this after its send counts as late, not lost.
    #[serde(default = "default_deadline")]
    pub deadline: Duration,
    /// A socket not open by then counts as failed.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: Duration,
    /// The sockets are opened evenly over this time, not all at once; the ramp-up by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_over: Option<Param<Duration>>,
    /// Ramp-up (sockets opening), hold and ramp-down.
    #[serde(default)]
    pub stages: Stages,
}

fn default_deadline() -> Duration {
    Duration::from_secs(30)
}

fn default_connect_timeout() -> Duration {
    Duration::from_secs(10)
}

/// Who sends in a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Senders {
    /// Every peer sends.
    #[default]
    All,
    /// Peer 0 of each room sends; the others only receive.
    OnePerRoom,
}

impl Senders {
    /// Its name in a spec (`one-per-room`).
    pub fn as_str(self) -> &'static str {
        match self {
            Senders::All => "all",
            Senders::OnePerRoom => "one-per-room",
        }
    }
}

/// What a `rate` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RatePer {
    /// Each sender sends at `rate`.
    #[default]
    Sender,
    /// Each room receives `rate` messages, spread over its senders.
    Room,
    /// The whole scenario sends `rate` messages, spread over rooms and senders.
    Scenario,
}

impl RatePer {
    /// Its name in a spec (`room`).
    pub fn as_str(self) -> &'static str {
        match self {
            RatePer::Sender => "sender",
            RatePer::Room => "room",
            RatePer::Scenario => "scenario",
        }
    }
}

/// How the correlation id and the send time travel inside a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StampForm {
    /// A JSON string at `{stamp}` in the template (text frames).
    #[default]
    Json,
    /// 16 bytes in front of the payload (binary frames).
    BinaryPrefix,
}

/// What the peers of a room send: how often, who, how large, and how the stamp travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Messages {
    /// Messages per unit of time, counted as `per` says.
    pub rate: Param<Rate>,
    /// What `rate` counts: each sender, each room, or the whole scenario.
    #[serde(default)]
    pub per: RatePer,
    /// Who sends: every peer, or peer 0 of each room.
    #[serde(default)]
    pub senders: Senders,
    /// Fixed or Poisson gaps between sends.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// The message size; `{payload}` is filled to reach it.
    #[serde(default = "default_message_size")]
    pub size: Param<Size>,
    /// The message, with `{stamp}`, `{payload}`, `{room}`, `{peer}`, `{seq}`.
    #[serde(default = "default_template")]
    pub template: String,
    /// How the correlation id and send time travel in the message.
    #[serde(default)]
    pub stamp: StampForm,
}

fn default_message_size() -> Param<Size> {
    Param::Value(Size::from_bytes(200))
}

fn default_template() -> String {
    r#"{"stamp":"{stamp}","room":{room},"peer":{peer},"payload":"{payload}"}"#.to_owned()
}

/// Keep-alive pings. The server's pings are always answered with pongs, as browsers do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ping {
    /// Send our own ping this often; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Duration>,
}

/// A page reload: each peer GETs `url` at its own pace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reload {
    /// The page, with placeholders (`{room}`, `{peer}`).
    pub url: String,
    /// The mean time between two reloads of one peer.
    pub every: Param<Duration>,
    /// Poisson gaps by default: reloads are independent.
    #[serde(default = "poisson")]
    pub arrivals: Arrivals,
}

fn poisson() -> Arrivals {
    Arrivals::Poisson
}
