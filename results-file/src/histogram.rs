//! Latency distributions: HdrHistogram from 1 µs to an hour at 3 significant digits, their
//! summary in milliseconds, and their compressed form in the results file.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

use crate::Summary;

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
