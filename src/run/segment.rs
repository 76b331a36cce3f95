//! `run --segment i/n` and `--seed`: what a share of a run needs before it starts, where its
//! partial results go, and the seed every share draws its Poisson arrivals from.

use std::path::PathBuf;

use anyhow::{Result, bail};
use headroom_runner::Segment;
use headroom_runner::split::{Split, unsplittable};

/// A segment loads a target that runs already, segment 0 alone runs the steps (the others
/// wait at the barrier), SLOs are judged once the shares are merged, and a search cannot be
/// split: the runner's one rule (`headroom_runner::split`), said before anything starts.
pub(super) fn refuse_unfit(
    segment: Option<Segment>,
    matrix: &headroom_matrix::RunMatrix,
    check: bool,
    barrier: bool,
) -> Result<()> {
    let Some(segment) = segment else {
        return Ok(());
    };
    let split = Split {
        segments: segment.count,
        barrier,
        check,
    };
    match unsplittable(matrix, &matrix.phases, split) {
        Some(why) => bail!("--segment {segment}: {why}"),
        None => Ok(()),
    }
}

/// `results/<bench>/segment-1-of-3.json`: shares of one run side by side, apart from a whole
/// run's `results.json`.
pub(super) fn default_out(bench: &str, segment: Segment) -> PathBuf {
    PathBuf::from("results").join(bench).join(format!(
        "segment-{}-of-{}.json",
        segment.index, segment.count
    ))
}

/// The seed of the runs' Poisson arrivals: `--seed`; for a segment, the spec's hash, so
/// that the shares of one spec draw the same arrivals with nothing agreed beforehand; a new
/// one for each whole run otherwise.
pub(super) fn seed(given: Option<u64>, segment: Option<Segment>, spec_hash: &str) -> u64 {
    match (given, segment) {
        (Some(seed), _) => seed,
        (None, Some(_)) => u64::from_str_radix(spec_hash, 16).unwrap_or(0),
        (None, None) => rand::random(),
    }
}
