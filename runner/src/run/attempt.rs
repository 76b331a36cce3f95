//! One run as the walk asks for it (its repeat, its number, its limits, the segments' barrier)
//! and the target a phase keeps for all its runs.

use super::start::Started;
use crate::cgroup::Cgroup;
use crate::limits::{Emulation, RunShape};
use crate::results::RunResult;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::time::Instant;

/// Which run of the matrix this is, and how its limits are carried out.
pub(super) struct Attempt<'a> {
    /// The repeat of its point, from 1.
    pub(super) repeat: u32,
    /// Its number among all runs, from 1 (its cgroup's name).
    pub(super) number: usize,
    pub(super) emulation: &'a Emulation,
    /// Where the segments meet, in a segmented run with a barrier.
    pub(super) barrier: Option<&'a Arc<headroom_load::barrier::Barrier>>,
    /// The target the phase keeps for all its runs, when it keeps one.
    pub(super) held: Option<&'a mut Held>,
    /// Set by a signal: every wait of the run (readiness, a step) ends at once.
    pub(super) cancel: &'a watch::Receiver<bool>,
}

/// The phase's target while its runs go on.
pub(super) struct Held {
    pub(super) up: Started,
    /// The cgroup of `[target] command` (a stack's services have their own).
    pub(super) limited: Option<(Cgroup, RunShape)>,
    /// The phase's record as it is gathered (start, steps, stop), in a run's shape.
    pub(super) record: RunResult,
    pub(super) started: Instant,
    /// Its logs' stem: `logs/{phase}`.
    pub(super) stem: String,
    /// Its once-a-phase setup steps passed: its teardown steps run at the end.
    pub(super) set_up: bool,
    /// Runs of the phase left out because the target was gone.
    pub(super) runs_not_run: u32,
    /// Set by a signal: its steps end at once.
    pub(super) cancel: watch::Receiver<bool>,
}
