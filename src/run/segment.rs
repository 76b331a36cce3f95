//! `run --segment i/n` and `--seed`: what a share of a run needs before it starts, where its
//! partial results go, and the seed every share draws its Poisson arrivals from.

use std::path::PathBuf;

use anyhow::{Result, bail};
use headroom_runner::Segment;

/// A segment loads a target that runs already: each process would start a server of its own
/// otherwise, and the shares would not add up to one server's load. Segment 0 alone runs the
/// steps, so the others need the barrier to wait for them. Its SLOs are judged once the shares
/// are merged, so `--check` belongs to `merge`.
pub(super) fn refuse_unfit(
    segment: Option<Segment>,
    matrix: &headroom_compiler::RunMatrix,
    check: bool,
    barrier: bool,
) -> Result<()> {
    let Some(segment) = segment.filter(|s| s.count > 1) else {
        return Ok(());
    };
    if matrix.target.command.is_some() || !matrix.target.services.is_empty() {
        bail!(
            "--segment {segment}: every segment would start a server of its own (`command` in [target]); load one that runs already (`url` in [target], with `pid_file` for segment 0 to sample it)"
        );
    }
    let target = &matrix.target;
    if (!target.setup.is_empty() || !target.teardown.is_empty()) && !barrier {
        bail!(
            "--segment {segment}: segment 0 alone runs the setup and teardown steps, and the other segments must wait for them: give every segment `--barrier HOST:PORT`"
        );
    }
    if check {
        bail!(
            "--segment {segment} --check: a share's SLOs are not judged alone; merge the shares, then `headroom merge … --check`"
        );
    }
    Ok(())
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
