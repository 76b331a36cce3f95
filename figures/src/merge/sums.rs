//! What every part of a merge adds up with: a distribution from the merged histograms, the
//! errors by kind.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use headroom_results::histogram::histogram_summary;
use headroom_results::{ErrorCounts, HistogramKey, Summary};

/// The summary of the merged histogram under `key`; empty when no part recorded one.
pub(super) fn summary(
    histograms: &BTreeMap<HistogramKey, Histogram<u64>>,
    key: HistogramKey,
) -> Summary {
    histograms
        .get(&key)
        .map(histogram_summary)
        .unwrap_or_default()
}

/// Errors of every part, added kind by kind.
pub(super) fn add_errors<'a>(all: impl Iterator<Item = &'a ErrorCounts>) -> ErrorCounts {
    all.fold(ErrorCounts::default(), |mut sum, e| {
        sum.add(e);
        sum
    })
}
