//! Where a run's load goes: the target's port, the load threads, the hosts it may reach and
//! the segments' meeting.

use super::RunOptions;
use crate::limits::RunShape;
use headroom_load::barrier::{Barrier, Meetings, Start};
use headroom_load::reach::Reach;
use headroom_load::web;
use headroom_matrix::Point;
use headroom_matrix::RunMatrix;
use std::sync::Arc;

/// Where a run's load is sent: the target's port, on how many load threads.
pub(super) struct Sending {
    pub(super) port: u16,
    pub(super) threads: usize,
}

/// Which run this is (`phase/point/repeat`, from which its seed is derived) and where the
/// segments meet for it: the barrier and the instant every segment starts.
pub(super) struct Meeting<'a> {
    pub(super) run: &'a str,
    pub(super) barrier: Option<&'a Arc<Barrier>>,
    pub(super) start: Option<Start>,
}

/// Where a point's load goes, from what, on how many threads.
pub(super) fn reach_of(
    matrix: &RunMatrix,
    point: &Point,
    options: &RunOptions,
    sending: Sending,
    meeting: Meeting<'_>,
) -> Reach {
    let target = &point.target;
    let mut reach = Reach::new(
        sending.port,
        &options.headroom_bin,
        &web::Allowed::new(&target.allow_hosts),
        sending.threads,
        &headroom_load::tls::Trust::of(target, &options.spec_dir),
        matrix.generator.source_addresses.as_ref(),
        options.segment,
    );
    // Every segment derives the same seed for the same run, and starts at the same instant.
    reach.seed = headroom_load::stripe::derive_seed(options.seed, meeting.run);
    reach.start_at = meeting.start.map(|start| start.at);
    reach.meetings = meeting.barrier.map(|barrier| Meetings {
        barrier: Arc::clone(barrier),
        run: meeting.run.to_owned(),
    });
    reach
}

/// The HTTP scenarios' load threads: `[generator] threads`, else the cores left to the
/// generator (beside a pinned target, or the cores less its CPU limit), else every core this
/// process may use.
pub(super) fn load_threads(matrix: &RunMatrix, run: Option<&RunShape>) -> usize {
    if let Some(threads) = matrix.generator.threads {
        return usize::try_from(threads).unwrap_or(1).max(1);
    }
    match run {
        Some(RunShape {
            generator_cores: Some(cores),
            ..
        }) => cores.len().max(1),
        Some(run) => (run.cores_left.floor() as usize).max(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// The load threads recorded: the HTTP scenarios' (none without one).
pub(super) fn http_threads(point: &Point, threads: usize) -> Option<u32> {
    let http = point
        .scenarios
        .iter()
        .any(|s| matches!(s, headroom_matrix::resolved::Scenario::Http(_)));
    http.then(|| u32::try_from(threads).unwrap_or(u32::MAX))
}
