//! The matrix, run by run: a fresh target, the load, the steady state, the verdicts, and the
//! results file rewritten after every run.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::tally::Tally;

use headroom_matrix::Point;
use headroom_matrix::RunMatrix;

use crate::results::{Failure, PhaseResults, PointResults, Results, ResultsError, RunResult};

mod attempt;
mod carried;
mod gathered;
mod once;
mod phase;
mod probe;
mod reach;
mod recorded;
mod search;
mod selection;
mod start;
mod walk;

pub use walk::run;

/// How a run is asked for, beyond the matrix.
pub struct RunOptions {
    /// The spec's path as the user gave it, and its text's hash.
    pub spec_path: String,
    /// The hash of the spec's text.
    pub spec_hash: String,
    /// Relative `cwd`s and the target's git revision are taken from here.
    pub spec_dir: PathBuf,
    /// The results file.
    pub out: PathBuf,
    /// Only these phases (all when empty); the file keeps the others.
    pub phases: Vec<String>,
    /// Repeats of every point, instead of the spec's.
    pub repeats: Option<u32>,
    /// `--quick`: durations, steps and repeats scaled down.
    pub quick: bool,
    /// The running `headroom` binary, for `{headroom}`.
    pub headroom_bin: PathBuf,
    /// headroom's version, for the results file.
    pub version: String,
    /// `--ignore-limits`: run every target with the whole machine, and say so.
    pub ignore_limits: bool,
    /// `--segment`: the share of every run this process sends (the whole by default).
    pub segment: headroom_load::stripe::Segment,
    /// The seed of the runs' Poisson arrivals.
    pub seed: u64,
    /// `--barrier HOST:PORT`: where the segments meet (segment 0 serves it), when they do.
    pub barrier: Option<String>,
    /// How long a meeting waits for every segment.
    pub barrier_timeout: Duration,
    /// What names this invocation in each run's record and in the live streams.
    pub run_id: String,
    /// How many times a run over whose hold other work competed for the machine is run
    /// again before it is kept as it is (`--competed-reruns`).
    pub competed_reruns: u32,
    /// The price tables the spec's plan prices from, for the results file.
    pub price_tables: Vec<headroom_results::TableSource>,
}

/// How the whole run went.
pub struct Outcome {
    /// Everything measured, as written to the results file.
    pub results: Results,
    /// What went wrong, counted as the runs ended (`headroom_runner::tally`).
    pub tally: Tally,
}

impl Outcome {
    /// The outcome of no run yet, over `results`.
    fn of(results: Results) -> Outcome {
        Outcome {
            results,
            tally: Tally::default(),
        }
    }
}

/// Why the matrix could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The results file could not be read or written.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// `--phase` names no phase: the name, and the phases there are.
    #[error("no phase is named {0}; the phases are: {1}")]
    UnknownPhase(String, String),
    /// A point this machine cannot hold (open files, memory), found before anything ran.
    #[error("{0}")]
    Machine(String),
    /// `[target] limits` that cannot be carried out here (no writable cgroup, more cores or
    /// memory than the machine has), found before anything ran.
    #[error("{0}")]
    Limits(String),
    /// The segments' barrier cannot be served or resolved.
    #[error("{0}")]
    Barrier(String),
    /// A phase's search cannot run (a probe's point cannot be made).
    #[error("{0}")]
    Search(String),
    /// The run cannot be split into segments as `--segment` asks.
    #[error("--segment {segment}: {why}")]
    Unsplittable {
        /// The segment asked for.
        segment: headroom_load::stripe::Segment,
        /// Why not.
        why: crate::split::Unsplittable,
    },
}

/// How a phase's runs ended: everything is to stop (Ctrl-C, a missed meeting), or the
/// phase's kept target is gone (the rest of the phase not run).
#[derive(Default)]
struct PhaseRan {
    stop_all: bool,
    target_gone: Option<Failure>,
}

/// The results of `point` in its phase's, added (in the points' order: a point runs first
/// after every earlier one) the first time it runs.
fn point_results<'a>(phase: &'a mut PhaseResults, point: &Point) -> &'a mut PointResults {
    let position = match phase.points.iter().position(|p| p.index == point.index) {
        Some(position) => position,
        None => {
            phase.points.push(PointResults {
                index: point.index,
                at: point.at.clone(),
                runs: Vec::new(),
            });
            phase.points.len() - 1
        }
    };
    &mut phase.points[position]
}

/// Where a phase's results are in the file (`phase_slot` put them there).
fn phase_slot_of(results: &Results, name: &str) -> usize {
    results
        .phases
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_default()
}

/// Where a phase's results go in the file: its earlier place, emptied, or a new one.
fn phase_slot(results: &mut Results, name: &str) -> usize {
    let slot = match results.phases.iter().position(|p| p.name == name) {
        Some(i) => i,
        None => {
            results.phases.push(PhaseResults {
                name: name.to_owned(),
                points: Vec::new(),
                target: None,
                search: None,
            });
            results.phases.len() - 1
        }
    };
    results.phases[slot].points.clear();
    results.phases[slot].target = None;
    results.phases[slot].search = None;
    slot
}

/// A segment's run judges no SLO: its figures are judged once merged (`headroom merge`), and
/// a verdict on one share of the load would say nothing of the whole.
fn judged_whole(mut result: RunResult, segment: headroom_load::stripe::Segment) -> RunResult {
    if segment.count > 1 {
        result.slo.clear();
    }
    result
}

/// Now, in Unix milliseconds.
pub(super) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A point where the units variable is 0: the server with no load, measured for its memory.
fn is_baseline(matrix: &RunMatrix, point: &Point) -> bool {
    crate::tally::is_baseline(matrix, &point.at)
}

/// Thousands of sockets need thousands of descriptors: the soft limit (often 1,024) goes up to
/// the hard one, for the generator and the targets it starts.
pub fn raise_open_files() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        let _ = setrlimit(Resource::Nofile, raised);
    }
}
