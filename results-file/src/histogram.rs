//! Latency distributions: HdrHistogram from 1 µs to an hour at 3 significant digits, their
//! summary in milliseconds, and their compressed form in the results file.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest latency recorded, in microseconds (an hour); larger values are clamped to it.
pub const HIGHEST_MICROS: u64 = 3_600_000_000;

/// An empty histogram of microseconds, 1 µs to [`HIGHEST_MICROS`], 3 significant digits: the
/// one shape every histogram of a results file has, so repeats merge.
pub fn new() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_MICROS, 3).expect("valid constant histogram bounds")
}

/// A duration in microseconds as recorded: at least 1, at most [`HIGHEST_MICROS`].
pub fn micros(duration: std::time::Duration) -> u64 {
    (duration.as_micros() as u64).clamp(1, HIGHEST_MICROS)
}

/// The summary of a distribution in milliseconds; all zero (count 0) when it is empty.
pub fn histogram_summary(h: &Histogram<u64>) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    let ms = |micros: u64| micros as f64 / 1000.0;
    Summary {
        count: h.len(),
        mean_ms: h.mean() / 1000.0,
        min_ms: ms(h.min()),
        p50_ms: ms(h.value_at_quantile(0.50)),
        p90_ms: ms(h.value_at_quantile(0.90)),
        p95_ms: ms(h.value_at_quantile(0.95)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        max_ms: ms(h.max()),
    }
}

/// HdrHistogram's compressed V2 encoding in base64, as its interval logs write it: any
/// percentile can be recomputed, and repeats merged, from the file.
pub fn serialize_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}

/// Reads a histogram written by [`serialize_histogram`].
pub fn deserialize_histogram(text: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

/// Which distribution a scenario's histogram holds: the keys of `histograms` in the results
/// file, written with their stable wire names (`seen_by_all`), the same in every format.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HistogramKey {
    /// HTTP: the answers that met `expect`, from the intended send time.
    Latency,
    /// HTTP: the answers that did not meet `expect`.
    UnexpectedLatency,
    /// The generator's delay: handed over minus intended.
    ScheduleLag,
    /// HTTP: waiting for a connection to send on.
    ConnectionWait,
    /// TLS handshakes.
    TlsHandshake,
    /// Rooms: each message at each recipient.
    Seen,
    /// Rooms: each message that reached every expected recipient, at its last one.
    SeenByAll,
    /// Rooms: the time to open a socket.
    Connect,
    /// Rooms: page reloads.
    Reload,
    /// Socket.IO rooms: from a message's intended send time to its acknowledgement.
    Ack,
    /// Socket.IO rooms: from a socket's scheduled connect to the Engine.IO open packet.
    EngineOpen,
    /// Socket.IO rooms: from the open packet to the namespace connected.
    NamespaceConnect,
    /// Socket.IO rooms: from the namespace connected to the room joined.
    Joined,
    /// SSE rooms: from a message's intended send time to its publish request's answer.
    Publish,
    /// HTTP: the answers that met `expect` among the requests intended outside the run's
    /// hold (`outside_hold`): never in the figures, kept to say how long they took.
    OutsideHoldLatency,
}

impl HistogramKey {
    /// Every key, in the order the file writes them.
    pub const ALL: [HistogramKey; 15] = [
        HistogramKey::Latency,
        HistogramKey::UnexpectedLatency,
        HistogramKey::ScheduleLag,
        HistogramKey::ConnectionWait,
        HistogramKey::TlsHandshake,
        HistogramKey::Seen,
        HistogramKey::SeenByAll,
        HistogramKey::Connect,
        HistogramKey::Reload,
        HistogramKey::OutsideHoldLatency,
        HistogramKey::Ack,
        HistogramKey::EngineOpen,
        HistogramKey::NamespaceConnect,
        HistogramKey::Joined,
        HistogramKey::Publish,
    ];

    /// Its wire name: `seen_by_all`.
    pub fn as_str(self) -> &'static str {
        match self {
            HistogramKey::Latency => "latency",
            HistogramKey::UnexpectedLatency => "unexpected_latency",
            HistogramKey::ScheduleLag => "schedule_lag",
            HistogramKey::ConnectionWait => "connection_wait",
            HistogramKey::TlsHandshake => "tls_handshake",
            HistogramKey::Seen => "seen",
            HistogramKey::SeenByAll => "seen_by_all",
            HistogramKey::Connect => "connect",
            HistogramKey::Reload => "reload",
            HistogramKey::OutsideHoldLatency => "outside_hold_latency",
            HistogramKey::Ack => "ack",
            HistogramKey::EngineOpen => "engine_open",
            HistogramKey::NamespaceConnect => "namespace_connect",
            HistogramKey::Joined => "joined",
            HistogramKey::Publish => "publish",
        }
    }
}

impl std::fmt::Display for HistogramKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A latency distribution in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Observations; 0 when nothing was measured (every other field is then 0 and means nothing).
    pub count: u64,
    /// The mean, in milliseconds.
    pub mean_ms: f64,
    /// The smallest, in milliseconds.
    pub min_ms: f64,
    /// The median, in milliseconds.
    pub p50_ms: f64,
    /// The 90th percentile, in milliseconds.
    pub p90_ms: f64,
    /// The 95th percentile, in milliseconds.
    pub p95_ms: f64,
    /// The 99th percentile, in milliseconds.
    pub p99_ms: f64,
    /// The 99.9th percentile, in milliseconds.
    pub p999_ms: f64,
    /// The largest, in milliseconds.
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire names are the file's contract: serde writes what `as_str` says, for every key.
    #[test]
    fn every_key_is_written_by_its_wire_name() {
        for key in HistogramKey::ALL {
            let written = serde_json::to_string(&key).expect("a key serializes");
            assert_eq!(written, format!("\"{}\"", key.as_str()));
            let read: HistogramKey = serde_json::from_str(&written).expect("and reads back");
            assert_eq!(read, key);
        }
        assert!(serde_json::from_str::<HistogramKey>("\"latency_all\"").is_err());
    }

    /// The results schema lists the same names as the keys a scenario's `histograms` may have.
    #[test]
    fn the_schema_names_every_key() {
        let schema = schemars::schema_for!(crate::ScenarioResult);
        let names = schema
            .as_value()
            .pointer("/properties/histograms/propertyNames/enum")
            .and_then(|names| names.as_array())
            .map(|names| names.iter().filter_map(|n| n.as_str()).collect::<Vec<_>>());
        assert_eq!(
            names,
            Some(HistogramKey::ALL.map(HistogramKey::as_str).to_vec())
        );
    }
}
