//! What one scenario measured in one run: HTTP figures, and a rooms run's sockets and messages.

use crate::histogram::{
    HistogramKey, Summary, deserialize_histogram, histogram_summary, serialize_histogram,
};
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error_counts::ErrorCounts;
use crate::protocols::{SocketIoFigures, SseFigures};

/// One window of the per-second series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    /// Seconds from the scenario's start.
    pub t_s: u64,
    /// Requests completed in the second; a rooms scenario's second: deliveries seen in it
    /// (its latencies are theirs), not messages sent as the scenario's `requests` counts.
    pub requests: u64,
    /// Of those, the ones that failed.
    pub errors: u64,
    /// `errors` by why (absent with none, and in files written before windows had it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors_by_kind: Option<ErrorCounts>,
    /// The second's median latency over its expected answers, in milliseconds (0 with none).
    pub p50_ms: f64,
    /// The second's 95th percentile over its expected answers, in milliseconds (0 with none).
    pub p95_ms: f64,
    /// The second's 99th percentile over its expected answers, in milliseconds (0 with none).
    pub p99_ms: f64,
    /// The second's latencies of expected answers, HdrHistogram V2 compressed in base64
    /// (absent with none, and in files written before windows had it): the shares of a
    /// segmented run merge their seconds exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

impl Window {
    /// The window at `index` seconds: `requests` ended in it, `errors` of them failed (by
    /// why), and `h` holds the latencies of the answers that met `expect`.
    pub fn of(index: u64, h: &Histogram<u64>, requests: u64, errors: &ErrorCounts) -> Window {
        let summary = histogram_summary(h);
        let total = errors.total();
        Window {
            t_s: index,
            requests,
            errors: total,
            errors_by_kind: (total > 0).then(|| errors.clone()),
            p50_ms: summary.p50_ms,
            p95_ms: summary.p95_ms,
            p99_ms: summary.p99_ms,
            histogram: (!h.is_empty()).then(|| serialize_histogram(h)),
        }
    }
}

/// What one scenario measured in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioResult {
    /// `http` or `rooms`.
    pub kind: String,
    /// Why the scenario did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Requests that completed (answered or failed) whose intended start fell in the run's
    /// hold (`held`), whenever they ended. HTTP only; the rest is in `outside_hold`.
    pub requests: u64,
    /// Of `requests`, the ones answered as expected (rooms: messages sent).
    pub ok: u64,
    /// Starts skipped because `max_in_flight` requests were outstanding.
    pub dropped: u64,
    /// Failed requests by why (rooms: sockets that failed to open).
    pub errors: ErrorCounts,
    /// Seconds from the scenario's start to its end, ramps included.
    pub duration_s: f64,
    /// Completed requests per second over the measurement window.
    pub rate: f64,
    /// From the intended start (open model) or the send (closed model) to the last byte, over
    /// the answers that met `expect` only: a request that failed (no connection, a timeout,
    /// a status or a check not expected) has no latency here; count 0 is "not measured".
    pub latency: Summary,
    /// The same over answers that came back and did not meet `expect` (a status not expected,
    /// a failed check): kept apart, never the server's speed. Absent when there were none
    /// (and in files written before it was kept apart, whose `latency` counted every request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexpected_latency: Option<Summary>,
    /// When the generator handed the request over minus its intended start: the generator's
    /// own delay, never the server's (waiting for a connection is `connection_wait`).
    pub schedule_lag: Summary,
    /// HTTP: from the request handed over to a connection ready to send it on (a pooled one at
    /// once, a new one after its connect): time the server's accept queue or a slow connect
    /// took, counted apart from the generator's lag. Empty before format 1's files had it.
    #[serde(default)]
    pub connection_wait: Summary,
    /// The full distributions, by which one (`latency`, `unexpected_latency`, `schedule_lag`,
    /// `connection_wait`, `tls_handshake`; rooms: `seen`, `seen_by_all`, `connect`,
    /// `reload`; Socket.IO rooms: `ack`, `engine_open`, `namespace_connect`, `joined`; SSE
    /// rooms: `publish`), HdrHistogram V2 compressed in base64: any percentile can be
    /// recomputed and repeats merged.
    #[schemars(extend("propertyNames" = {"enum": [
        "latency", "unexpected_latency", "schedule_lag", "connection_wait", "tls_handshake",
        "seen", "seen_by_all", "connect", "reload", "outside_hold_latency", "ack",
        "engine_open", "namespace_connect", "joined", "publish"
    ]}))]
    pub histograms: BTreeMap<HistogramKey, String>,
    /// Every second of the run, ramps included: the timeline, not the measurement.
    pub windows: Vec<Window>,
    /// HTTP: the requests intended outside the run's hold (its ramps, and its load held while
    /// the other scenarios were still arriving at theirs), counted apart from the hold's
    /// figures (`ramps` in files written before the run's hold was one for all scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "ramps")]
    pub outside_hold: Option<RequestCounts>,
    /// The part of the run's hold this scenario held its load, on the run's clock (seconds
    /// since its load started): the run's `hold` itself when every scenario was there
    /// together. Absent in files written before the run's hold was one for all scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Interval>,
    /// HTTP: the connections the generator opened. Absent before format 1's files had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// HTTP, a scenario of several requests: each named request measured apart over the
    /// hold, by name (`browse.list.latency.p95`); the scenario's own figures are their union
    /// (with the unnamed requests').
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_request: BTreeMap<String, RequestResult>,
    /// HTTP, closed model: its virtual users and their think time. Absent for the open model
    /// and in files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<Users>,
    /// What a rooms scenario measured beyond the common figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rooms: Option<RoomsResult>,
    /// `https://` and `wss://`: the TLS handshakes of the connections opened, ramps included
    /// (the histogram is `tls_handshake`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsFigures>,
    /// How many local addresses the generator's connections came from, when `[generator]
    /// source_addresses` spread them; absent, the kernel picked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_addresses: Option<u64>,
}

/// The TLS handshakes of a scenario's connections.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TlsFigures {
    /// Handshakes completed.
    pub handshakes: u64,
    /// How long each took, from the TCP connection open to the session established (apart
    /// from the TCP connect, which `connection_wait` or `connect` include with it).
    pub handshake: Summary,
}

/// One named request of an HTTP scenario, measured apart over the hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestResult {
    /// Requests of this kind that completed (answered or failed) in the hold.
    pub requests: u64,
    /// Of `requests`, the ones answered as expected.
    pub ok: u64,
    /// The failed ones by why.
    pub errors: ErrorCounts,
    /// From the intended start (open model) or the send (closed model) to the last byte, over
    /// the answers that met `expect` only (count 0: not measured).
    pub latency: Summary,
    /// The full latency distribution of `latency`, HdrHistogram V2 compressed in base64.
    pub histogram: String,
    /// Requests of this kind intended outside the run's hold, counted apart (its `latency`
    /// is not kept). Absent in files written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_hold: Option<RequestCounts>,
}

/// Seconds on the run's clock: from the start of its load (the clock of the server's
/// samples, `process.samples[].t_s`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Interval {
    /// Where it begins.
    pub from_s: f64,
    /// Where it ends.
    pub to_s: f64,
}

impl Interval {
    /// Its length, in seconds.
    pub fn length_s(&self) -> f64 {
        (self.to_s - self.from_s).max(0.0)
    }
}

/// The connections an HTTP scenario opened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Connections {
    /// Connections opened over the whole scenario, ramps included; a connection the server
    /// closed and the generator opened again counts again. Keep-alive reuse makes this far
    /// fewer than the requests.
    pub opened: u64,
    /// Requests (ramps included) that waited in the generator because every one of
    /// `max_connections` was busy (their latency still counts from the intended start): many of them, and the
    /// latency is the connection limit's as much as the server's.
    #[serde(default)]
    pub queued_at_limit: u64,
}

/// Requests counted together: those of the hold, or those outside it, kept out of the
/// measured figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestCounts {
    /// Requests that completed (answered or failed).
    pub requests: u64,
    /// Of `requests`, the ones answered as expected.
    pub ok: u64,
    /// Starts skipped because `max_in_flight` requests were outstanding.
    pub dropped: u64,
    /// Failed requests by why.
    pub errors: ErrorCounts,
    /// Outside the hold: the latency of the answers that met `expect` (its histogram is
    /// `outside_hold_latency`), never in the figures. Absent in the hold's own counts, when
    /// none came back, and in files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Summary>,
}

/// A closed-model scenario's virtual users, from which what they would send is worked out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Users {
    /// Virtual users over the hold (this segment's share of them).
    pub users: u64,
    /// Their mean think time between an answer and their next request, in seconds.
    pub think_mean_s: f64,
}

/// A rooms scenario's run. In the common fields of [`ScenarioResult`], `requests` counts the
/// messages sent, `latency` is the per-recipient latency ("seen"), `schedule_lag` the sends'
/// delay behind their intended time, and `errors` the sockets that failed to open.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoomsResult {
    /// Rooms opened.
    pub rooms: u64,
    /// Sockets planned in all.
    pub peers: u64,
    /// Sockets: planned, opened, failed and closed.
    pub sockets: SocketCounts,
    /// From a socket's scheduled connect time to its open WebSocket (join sent).
    pub connect: Summary,
    /// When the hold began, in seconds from the scenario's start: after the ramp-up and once
    /// every socket had opened or failed.
    pub hold_started_s: f64,
    /// How long the peers sent.
    pub hold_s: f64,
    /// Messages sent and frames delivered.
    pub messages: MessageCounts,
    /// Per recipient: from the intended send time to the receipt.
    pub seen: Summary,
    /// Per message that reached every expected recipient: the time until the last one had it.
    /// Messages that never reached everyone are not in it; see `messages.incomplete`.
    pub seen_by_all: Summary,
    /// Page reloads (`reload`), when the scenario has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadResult>,
    /// What only a Socket.IO scenario measures: its connect's steps and its acks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_io: Option<SocketIoFigures>,
    /// What only an SSE scenario measures: its publish requests, events and reconnects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse: Option<SseFigures>,
}

/// What became of a rooms scenario's sockets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SocketCounts {
    /// Sockets the scenario opens (rooms × peers).
    pub planned: u64,
    /// Sockets that opened (upgrade answered with 101).
    pub opened: u64,
    /// Sockets that did not open, by why.
    pub failed: ConnectFailures,
    /// Open sockets the server closed (a close frame, a reset or the end of the stream).
    pub closed_by_server: u64,
    /// Those, by how.
    #[serde(default)]
    pub dropped: Drops,
    /// Open sockets we closed at the end of the run.
    pub closed_by_us: u64,
    /// Pings we sent (`ping.every`).
    pub pings_sent: u64,
    /// Pings the server sent us (WebSocket pings, which tungstenite answers with a pong; with
    /// Socket.IO, Engine.IO's `2`, each answered `3`: `socket_io.pongs_sent`).
    pub pings_received: u64,
}

/// Open sockets the server dropped, by how: they add up to `closed_by_server`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Drops {
    /// A close frame, or Engine.IO's close packet (`1`).
    pub closed: u64,
    /// A reset, a protocol error, or the end of the stream without a close.
    pub reset: u64,
    /// Socket.IO: no ping from the server within its ping interval and timeout.
    pub ping_timeout: u64,
    /// Socket.IO: the server disconnected the namespace (`41`).
    pub disconnected: u64,
    /// Not the server's: headroom cut the socket at a frame over its bound (a WebSocket
    /// message over 64 MiB or a frame over 16 MiB, an SSE event over 8 MiB). Not in
    /// `closed_by_server`.
    #[serde(default)]
    pub too_large: u64,
}

/// Sockets that did not open, by why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectFailures {
    /// Nothing listened (connection refused).
    pub refused: u64,
    /// The server answered the upgrade with another status than 101.
    pub status: u64,
    /// No open socket within `connect_timeout`.
    pub timeout: u64,
    /// A reset, a protocol error, or anything else.
    pub other: u64,
    /// No local port was free: one source address's ephemeral ports were all in use
    /// (`[generator] source_addresses` spreads sockets over more).
    #[serde(default)]
    pub ports: u64,
    /// Socket.IO: the namespace refused the connection (`connect_error`); the messages are in
    /// `socket_io.rejections`.
    #[serde(default)]
    pub rejected: u64,
    /// The upgrade was answered `101` but not as a WebSocket server answers it: a wrong
    /// `Sec-WebSocket-Accept`, no `Upgrade: websocket` or `Connection: Upgrade`.
    #[serde(default)]
    pub handshake: u64,
    /// Socket.IO: the session's opening was not the protocol's (an Engine.IO open packet that
    /// is not `0{"sid":…,"pingInterval":…,"pingTimeout":…}`, a binary frame where text was due).
    #[serde(default)]
    pub protocol: u64,
    /// A frame over headroom's bound during the opening (a message over 64 MiB, a frame over
    /// 16 MiB): headroom cut it.
    #[serde(default)]
    pub too_large: u64,
}

impl ConnectFailures {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.refused
            + self.status
            + self.timeout
            + self.other
            + self.ports
            + self.rejected
            + self.handshake
            + self.protocol
            + self.too_large
    }

    /// Each kind that happened, with its count: `2 answered the upgrade without a valid
    /// Sec-WebSocket-Accept, 1 other`; `None` when none failed.
    pub fn describe(&self) -> Option<String> {
        let kinds: Vec<String> = [
            (self.refused, "refused"),
            (self.status, "answered the upgrade with another status"),
            (
                self.handshake,
                "answered the upgrade as no WebSocket server does (a wrong Sec-WebSocket-Accept, or no Upgrade header)",
            ),
            (
                self.protocol,
                "opened a Socket.IO session that is not the protocol's (a malformed Engine.IO open packet)",
            ),
            (self.too_large, "sent a frame over headroom's bound"),
            (self.rejected, "refused by the namespace"),
            (self.ports, "found no free local port"),
            (self.timeout, "timed out"),
            (self.other, "other (a reset or a closed connection)"),
        ]
        .into_iter()
        .filter(|&(count, _)| count > 0)
        .map(|(count, why)| format!("{count} {why}"))
        .collect();
        (!kinds.is_empty()).then(|| kinds.join(", "))
    }
}

/// Messages and frames of a rooms scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageCounts {
    /// Messages sent.
    pub sent: u64,
    /// Sends the run could not track (its message budget was used up); not sent.
    pub skipped: u64,
    /// Frames expected: for every message, the peers of its room that were open when it was
    /// sent, the sender excluded.
    pub expected: u64,
    /// Frames that arrived, on time or late.
    pub delivered: u64,
    /// Frames that arrived within the deadline.
    pub on_time: u64,
    /// Frames that arrived after the deadline (late, not lost).
    pub late: u64,
    /// Messages every expected recipient got.
    pub reached_all: u64,
    /// Messages every expected recipient got within the deadline.
    pub reached_all_on_time: u64,
    /// Messages some expected recipient never got.
    pub incomplete: u64,
    /// A sender's own message coming back to it (not counted as delivered).
    pub own_echoes: u64,
    /// Frames without a stamp of this run (the server's own messages).
    pub unstamped: u64,
    /// Copies that arrived at a socket outside the sender's room: not delivered; a server
    /// that leaks messages across rooms. Any fails the run.
    #[serde(default)]
    pub misrouted: u64,
    /// Second and later copies of one message at one recipient: not delivered again; any
    /// fails the run.
    #[serde(default)]
    pub duplicates: u64,
    /// First copies at a peer of the room that was not open when the message was sent (a
    /// history sent on joining, a replay after a reconnect): not expected, not delivered, no
    /// fault.
    #[serde(default)]
    pub unexpected: u64,
}

/// The page reloads of a rooms scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReloadResult {
    /// Reloads completed (answered or failed).
    pub requests: u64,
    /// Of those, the ones answered as expected.
    pub ok: u64,
    /// Failed reloads by why.
    pub errors: ErrorCounts,
    /// From the reload's intended time to the last byte of the page.
    pub latency: Summary,
}

impl ScenarioResult {
    /// The distribution recorded under `key`, decoded; `None` when the run recorded none (or
    /// its text does not decode).
    pub fn histogram(&self, key: HistogramKey) -> Option<Histogram<u64>> {
        self.histograms
            .get(&key)
            .and_then(|text| deserialize_histogram(text))
    }
}

impl RoomsResult {
    /// The sockets a Socket.IO namespace refused, with the server's messages:
    /// `5 refused by the namespace ("Not authorized" × 5)`; `None` when none was.
    pub fn rejections(&self) -> Option<String> {
        let rejected = self.sockets.failed.rejected;
        if rejected == 0 {
            return None;
        }
        let messages: Vec<String> = self
            .socket_io
            .iter()
            .flat_map(|s| &s.rejections)
            .map(|(message, sockets)| format!("{message:?} × {sockets}"))
            .collect();
        Some(format!(
            "{rejected} refused by the namespace ({})",
            messages.join(", ")
        ))
    }

    /// How the server dropped open sockets, the kinds it did: `3 by a close, 2 by ping
    /// timeout`; `None` when it dropped none.
    pub fn drops(&self) -> Option<String> {
        let dropped = &self.sockets.dropped;
        let kinds: Vec<String> = [
            (dropped.closed, "by a close"),
            (dropped.reset, "by a reset"),
            (dropped.ping_timeout, "by ping timeout"),
            (dropped.disconnected, "by a namespace disconnect"),
        ]
        .into_iter()
        .filter(|&(count, _)| count > 0)
        .map(|(count, how)| format!("{count} {how}"))
        .collect();
        (!kinds.is_empty()).then(|| kinds.join(", "))
    }

    /// The time until everyone had a message, at quantile `q` of *all* messages that expected
    /// someone: a message that never reached everyone counts as never. `None` when the quantile
    /// falls among those (the figure is "never"), or no message was expected anywhere.
    pub fn seen_by_all_quantile(&self, histogram: &Histogram<u64>, q: f64) -> Option<f64> {
        let complete = self.messages.reached_all;
        let total = complete + self.messages.incomplete;
        if total == 0 || complete == 0 {
            return None;
        }
        let share = q * total as f64 / complete as f64;
        if share > 1.0 {
            return None;
        }
        Some(histogram.value_at_quantile(share) as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema's list of histogram names is every key's, in the file's order.
    #[test]
    fn the_schema_names_every_histogram() {
        let schema = serde_json::to_value(schemars::schema_for!(ScenarioResult)).expect("schema");
        let names = &schema["properties"]["histograms"]["propertyNames"]["enum"];
        let keys: Vec<&str> = HistogramKey::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, &serde_json::json!(keys));
    }

    #[test]
    fn refused_and_dropped_sockets_are_said_with_the_servers_words() {
        let mut rooms = RoomsResult::default();
        assert_eq!(rooms.rejections(), None);
        assert_eq!(rooms.drops(), None);
        rooms.sockets.failed.rejected = 7;
        rooms.socket_io = Some(SocketIoFigures {
            rejections: BTreeMap::from([
                ("Not authorized".to_owned(), 5),
                ("room full".to_owned(), 2),
            ]),
            ..SocketIoFigures::default()
        });
        rooms.sockets.dropped = Drops {
            closed: 3,
            ping_timeout: 2,
            ..Drops::default()
        };
        assert_eq!(
            rooms.rejections().as_deref(),
            Some(r#"7 refused by the namespace ("Not authorized" × 5, "room full" × 2)"#)
        );
        assert_eq!(
            rooms.drops().as_deref(),
            Some("3 by a close, 2 by ping timeout")
        );
    }
}
