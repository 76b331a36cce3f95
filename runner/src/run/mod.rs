//! The matrix, run by run: a fresh target, the load, the steady state, the verdicts, and the
//! results file rewritten after every run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use headroom_compiler::RunMatrix;
use headroom_compiler::matrix::{MatrixPhase, Point};
use headroom_spec::OnFailure;
use tokio::sync::watch;

use crate::environment::Environment;
use crate::event::Event;
use crate::limits::Emulation;
use crate::results::{
    Failure, PhaseResults, PointResults, RESULTS_FORMAT, Results, ResultsError, RunResult,
    SegmentRef, SpecRef,
};

mod carried;
mod once;
mod phase;
mod probe;
mod reach;
mod recorded;
mod search;
mod selection;
mod start;

use phase::{Held, keeps_target};
use recorded::run_recorded;
use selection::{planned, refuse_segmented_search, select_phases};

/// Which run of the matrix this is, and how its limits are carried out.
struct Attempt<'a> {
    /// The repeat of its point, from 1.
    repeat: u32,
    /// Its number among all runs, from 1 (its cgroup's name).
    number: usize,
    emulation: &'a Emulation,
    /// Where the segments meet, in a segmented run with a barrier.
    barrier: Option<&'a Arc<headroom_load::barrier::Barrier>>,
    /// The target the phase keeps for all its runs, when it keeps one.
    held: Option<&'a mut Held>,
    /// Set by a signal: every wait of the run (readiness, a step) ends at once.
    cancel: &'a watch::Receiver<bool>,
}

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
}

/// How the whole run went.
pub struct Outcome {
    /// Everything measured, as written to the results file.
    pub results: Results,
    /// Runs that failed.
    pub failed_runs: usize,
    /// Phases whose kept target (`process = "per-phase"`) failed: never up, a step run once a
    /// phase failed, or it died and the rest of the phase did not run.
    pub failed_phases: usize,
    /// SLO verdicts that failed.
    pub slo_failures: usize,
    /// SLO verdicts whose figure was not measured, baseline points left out.
    pub slo_unmeasured: usize,
    /// The run was cut short by a signal.
    pub interrupted: bool,
}

impl Outcome {
    /// The outcome of no run yet, over `results`.
    fn of(results: Results) -> Outcome {
        Outcome {
            results,
            failed_runs: 0,
            failed_phases: 0,
            slo_failures: 0,
            slo_unmeasured: 0,
            interrupted: false,
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
    /// A phase's search cannot run (with `--segment`, or a probe's point cannot be made).
    #[error("{0}")]
    Search(String),
}

/// Runs the matrix; `cancel` turning true (Ctrl-C) ends the run in flight and stops.
pub async fn run(
    matrix: &RunMatrix,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Outcome, RunError> {
    raise_open_files();
    let matrix = if options.quick {
        crate::quick::scale(matrix)
    } else {
        matrix.clone()
    };
    let selected = select_phases(&matrix, options)?;
    refuse_segmented_search(&selected, options.segment)?;
    let emulation =
        crate::limits::prepare(&selected, options.ignore_limits).map_err(RunError::Limits)?;
    let results = results_to_write(&matrix, options)?;
    // A signal ends the wait for the other segments at once (exit 130), nothing written.
    let Some(barrier) = barrier_unless_cancelled(options, &cancel).await? else {
        let mut outcome = Outcome::of(results);
        outcome.interrupted = true;
        return Ok(outcome);
    };
    let (runs, estimated_s) = planned(&selected, options);
    on_event(Event::Started { runs, estimated_s });
    if let Some(how) = emulation.describe() {
        on_event(Event::Limits { how });
    }
    let mut outcome = Outcome::of(results);
    let mut number = 0;
    for phase in selected {
        if *cancel.borrow() {
            outcome.interrupted = true;
            break;
        }
        let slot = phase_slot(&mut outcome.results, &phase.name);
        let order = phase.run_order(options.repeats.unwrap_or(phase.repeats));
        // A target kept for the phase comes up before its first run.
        let mut held = None;
        if keeps_target(phase) {
            let attempt = Attempt {
                repeat: 0,
                number: number + 1,
                emulation: &emulation,
                barrier: barrier.as_ref(),
                held: None,
                cancel: &cancel,
            };
            match Held::start(phase, &attempt, options).await {
                Ok(up) => {
                    on_event(Event::PhaseTargetUp {
                        phase: &phase.name,
                        port: up.port(),
                        ready_after_s: up.ready_after_s(),
                        runs: order.len(),
                    });
                    held = Some(up);
                }
                Err(mut target) => {
                    target.runs_not_run = u32::try_from(order.len()).unwrap_or(u32::MAX);
                    number += order.len();
                    outcome.phase_target_ended((slot, &phase.name), target, options, on_event)?;
                    continue;
                }
            }
        }
        let means = (&emulation, barrier.as_ref(), held.as_mut());
        let ran = if phase.search.is_some() {
            search::search_phase(
                (&matrix, phase),
                means,
                (&mut number, runs),
                options,
                &cancel,
                &mut outcome,
                on_event,
            )
            .await?
        } else {
            run_phase(
                (&matrix, phase, &order),
                means,
                (&mut number, runs),
                options,
                &cancel,
                &mut outcome,
                on_event,
            )
            .await?
        };
        if let Some(held) = held {
            let point = &phase.points[0];
            let ended = (ran.target_gone, ran.stop_all);
            let target = held.finish(ended, point, options).await;
            outcome.phase_target_ended((slot, &phase.name), target, options, on_event)?;
        }
        if ran.stop_all {
            break;
        }
    }
    outcome.results.write(&options.out)?;
    Ok(outcome)
}

/// How a phase's runs ended: everything is to stop (Ctrl-C, a missed meeting), or the
/// phase's kept target is gone (the rest of the phase not run).
#[derive(Default)]
struct PhaseRan {
    stop_all: bool,
    target_gone: Option<Failure>,
}

/// The runs of one phase in their order, each written to the results file when it ends, on
/// the phase's kept target when it keeps one. `number` counts runs over the whole matrix, of
/// `runs`.
async fn run_phase(
    (matrix, phase, order): (&RunMatrix, &MatrixPhase, &[(usize, u32)]),
    (emulation, barrier, mut held): recorded::Means<'_, '_>,
    (number, runs): (&mut usize, usize),
    options: &RunOptions,
    cancel: &watch::Receiver<bool>,
    outcome: &mut Outcome,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<PhaseRan, RunError> {
    let mut ran = PhaseRan::default();
    // `on_failure = "stop"`: the first point whose run failed cuts the phase there, in this
    // round and the later ones (its own repeats still run).
    let mut cut: Option<usize> = None;
    for (i, &(position, repeat)) in order.iter().enumerate() {
        if cut.is_some_and(|cut| position > cut) {
            continue;
        }
        if *cancel.borrow() {
            outcome.interrupted = true;
            ran.stop_all = true;
            break;
        }
        let point = &phase.points[position];
        let recorded = run_recorded(
            (matrix, phase, point),
            (emulation, barrier, held.as_deref_mut()),
            (repeat, number, runs),
            options,
            cancel,
            outcome,
            on_event,
        )
        .await?;
        if recorded.stop_all {
            ran.stop_all = true;
            break;
        }
        let failed = recorded.failed;
        if failed && phase.on_failure == OnFailure::Stop {
            cut = Some(cut.map_or(position, |cut| cut.min(position)));
        }
        // A kept target that died takes the rest of the phase with it.
        if let Some(held) = held.as_deref_mut()
            && let Some(gone) = held.gone()
        {
            let left = order[i + 1..]
                .iter()
                .filter(|(position, _)| cut.is_none_or(|cut| *position <= cut))
                .count();
            held.runs_not_run = u32::try_from(left).unwrap_or(u32::MAX);
            ran.target_gone = Some(gone);
            break;
        }
        if !phase.cooldown.as_std().is_zero() {
            tokio::time::sleep(phase.cooldown.as_std()).await;
        }
    }
    Ok(ran)
}

impl Outcome {
    /// A phase's kept target ended (or never came up): counted when it failed, said, and
    /// written into the phase's results.
    fn phase_target_ended(
        &mut self,
        (slot, phase): (usize, &str),
        target: crate::results::PhaseTarget,
        options: &RunOptions,
        on_event: &mut (dyn FnMut(Event<'_>) + Send),
    ) -> Result<(), RunError> {
        self.failed_phases += usize::from(target.failure.is_some());
        on_event(Event::PhaseTargetEnded {
            phase,
            target: &target,
        });
        self.results.phases[slot].target = Some(target);
        self.results.write(&options.out)?;
        Ok(())
    }

    /// Counts one run's failure and verdicts; whether it failed. At the baseline (0 units)
    /// nothing is sent by design: its SLOs are not owed. A search's probes fail their SLOs by
    /// design: the search judges them, and its ending is counted instead.
    fn count(&mut self, result: &RunResult, baseline: bool, searched: bool) -> bool {
        if matches!(result.failure, Some(Failure::Interrupted)) {
            self.interrupted = true;
        }
        if !searched {
            self.slo_failures += result.slo.iter().filter(|v| v.pass == Some(false)).count();
        }
        if !baseline && !searched {
            self.slo_unmeasured += result.slo.iter().filter(|v| v.pass.is_none()).count();
        }
        // Users stuck in the server are a verdict on the load, as a failed SLO is, not a run
        // that broke: counted with the SLO failures (`--check`), a search's probe failing.
        if matches!(result.failure, Some(Failure::UsersStuck { .. })) {
            self.slo_failures += usize::from(!searched);
            return false;
        }
        let failed = result.failure.is_some();
        self.failed_runs += usize::from(failed);
        failed
    }
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

/// [`barrier_of`], or `None` once a signal came first.
async fn barrier_unless_cancelled(
    options: &RunOptions,
    cancel: &watch::Receiver<bool>,
) -> Result<Option<Option<Arc<headroom_load::barrier::Barrier>>>, RunError> {
    let mut cancelled = cancel.clone();
    tokio::select! {
        barrier = barrier_of(options) => barrier.map(Some),
        // A sender gone is no signal: the barrier is still made.
        Ok(_) = cancelled.wait_for(|stop| *stop) => Ok(None),
    }
}

/// Where a segmented run's segments meet, when `--barrier` says (segment 0 serves it).
async fn barrier_of(
    options: &RunOptions,
) -> Result<Option<Arc<headroom_load::barrier::Barrier>>, RunError> {
    match &options.barrier {
        Some(at) if options.segment.count > 1 => {
            headroom_load::barrier::Barrier::new(at, options.segment, options.barrier_timeout)
                .await
                .map(|barrier| Some(Arc::new(barrier)))
                .map_err(RunError::Barrier)
        }
        _ => Ok(None),
    }
}

/// This machine's host name (a pod's name under Kubernetes); empty when it cannot be read.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default()
}

/// The results this run writes: the file's other phases kept when re-running some, a new file
/// otherwise; the environment, matrix and spec always this run's.
fn results_to_write(matrix: &RunMatrix, options: &RunOptions) -> Result<Results, RunError> {
    // Re-running some phases keeps the others' results.
    let mut results = match (options.phases.is_empty(), options.out.exists()) {
        (false, true) => Results::read(&options.out)?,
        _ => Results {
            format: RESULTS_FORMAT,
            headroom_version: options.version.clone(),
            spec: SpecRef {
                path: options.spec_path.clone(),
                hash: options.spec_hash.clone(),
            },
            quick: options.quick,
            environment: Environment::default(),
            matrix: matrix.clone(),
            phases: Vec::new(),
            seed: None,
            segment: None,
            env: std::collections::BTreeMap::new(),
        },
    };
    // The target's working directory tells which revision of it ran, when it is a checkout.
    let target_dir = match matrix
        .target
        .cwd
        .as_deref()
        .filter(|cwd| !cwd.contains('{'))
    {
        Some(cwd) => options.spec_dir.join(cwd),
        None => options.spec_dir.clone(),
    };
    results.environment = crate::environment::read(&options.version, &target_dir);
    results.matrix = matrix.clone();
    results.quick = options.quick;
    results.spec = SpecRef {
        path: options.spec_path.clone(),
        hash: options.spec_hash.clone(),
    };
    results.seed = Some(options.seed);
    results.env = crate::names::env_fills(matrix);
    results.segment = (options.segment.count > 1).then(|| SegmentRef {
        index: options.segment.index,
        count: options.segment.count,
        host: hostname(),
    });
    Ok(results)
}

/// A point where the units variable is 0: the server with no load, measured for its memory.
fn is_baseline(matrix: &RunMatrix, point: &Point) -> bool {
    matrix
        .capacity
        .units
        .as_ref()
        .is_some_and(|units| point.at.get(units) == Some(&headroom_spec::VarValue::Integer(0)))
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
