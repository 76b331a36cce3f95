//! The walk: the phases asked for, checked against this machine, each phase's runs, the
//! results written after every run.

use super::attempt::{Attempt, Held};
use super::phase::keeps_target;
use super::selection::{planned, refuse_unsplittable, select_phases};
use super::{Outcome, PhaseRan, RunError, RunOptions, phase_slot, raise_open_files};
use crate::environment::Environment;
use crate::event::Event;
use crate::limits::Emulation;
use crate::results::{PhaseTarget, RESULTS_FORMAT, Results, SegmentRef, SpecRef};
use headroom_matrix::MatrixPhase;
use headroom_matrix::RunMatrix;
use headroom_spec::OnFailure;
use std::sync::Arc;
use tokio::sync::watch;

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
    let barrier = options.barrier.is_some();
    refuse_unsplittable(&matrix, &selected, options.segment, barrier)?;
    let emulation =
        crate::limits::prepare(&selected, options.ignore_limits).map_err(RunError::Limits)?;
    let results = results_to_write(&matrix, options)?;
    // A signal ends the wait for the other segments at once (exit 130), nothing written.
    let Some(barrier) = barrier_unless_cancelled(options, &cancel).await? else {
        let mut outcome = Outcome::of(results);
        outcome.tally.interrupted = true;
        return Ok(outcome);
    };
    let (runs, estimated_s) = planned(&selected, options);
    on_event(Event::Started { runs, estimated_s });
    if let Some(how) = emulation.describe() {
        on_event(Event::Limits { how });
    }
    let mut walker = Walker {
        matrix: &matrix,
        options,
        cancel: &cancel,
        emulation: &emulation,
        barrier: barrier.as_ref(),
        runs,
        number: 0,
        outcome: Outcome::of(results),
        on_event,
    };
    for phase in selected {
        if *cancel.borrow() {
            walker.outcome.tally.interrupted = true;
            break;
        }
        if walker.walk_phase(phase).await? {
            break;
        }
    }
    walker.outcome.results.write(&options.out)?;
    Ok(walker.outcome)
}

/// The walk under way: what every run shares (the matrix, the options, the signal, the
/// limits, the segments' barrier) and what the runs so far gathered.
pub(super) struct Walker<'w> {
    pub(super) matrix: &'w RunMatrix,
    pub(super) options: &'w RunOptions,
    /// Set by a signal: the run in flight ends and nothing more starts.
    pub(super) cancel: &'w watch::Receiver<bool>,
    /// How each run's limits are carried out.
    pub(super) emulation: &'w Emulation,
    /// Where the segments meet, in a segmented run with a barrier.
    pub(super) barrier: Option<&'w Arc<headroom_load::barrier::Barrier>>,
    /// Runs planned in all.
    pub(super) runs: usize,
    /// The number of the last run started, from 1 (0 before the first).
    pub(super) number: usize,
    /// The results so far and what went wrong.
    pub(super) outcome: Outcome,
    pub(super) on_event: &'w mut (dyn FnMut(Event<'_>) + Send),
}

impl Walker<'_> {
    /// One phase: its kept target up first when it keeps one, its runs (or its search), the
    /// kept target's end; true when everything is to stop.
    async fn walk_phase(&mut self, phase: &MatrixPhase) -> Result<bool, RunError> {
        let slot = phase_slot(&mut self.outcome.results, &phase.name);
        let order = phase.run_order(self.options.repeats.unwrap_or(phase.repeats));
        let mut held = None;
        if keeps_target(phase) {
            held = self.start_held(phase, slot, order.len()).await?;
            if held.is_none() {
                return Ok(false);
            }
        }
        let ran = if phase.search.is_some() {
            self.search_phase(phase, held.as_mut()).await?
        } else {
            self.run_phase(phase, &order, held.as_mut()).await?
        };
        if let Some(held) = held {
            let point = &phase.points[0];
            let target = held
                .finish(ran.target_gone, ran.stop_all, point, self.options)
                .await;
            self.phase_target_ended(slot, &phase.name, target)?;
        }
        Ok(ran.stop_all)
    }

    /// The target `phase` keeps for all its `runs`, started before the first; `None` when it
    /// did not come up (its runs counted as not run, the phase's record saying why).
    async fn start_held(
        &mut self,
        phase: &MatrixPhase,
        slot: usize,
        runs: usize,
    ) -> Result<Option<Held>, RunError> {
        let attempt = Attempt {
            repeat: 0,
            number: self.number + 1,
            emulation: self.emulation,
            barrier: self.barrier,
            held: None,
            cancel: self.cancel,
        };
        match Held::start(phase, &attempt, self.options).await {
            Ok(up) => {
                (self.on_event)(Event::PhaseTargetUp {
                    phase: &phase.name,
                    port: up.port(),
                    ready_after_s: up.ready_after_s(),
                    runs,
                });
                Ok(Some(up))
            }
            Err(mut target) => {
                target.runs_not_run = u32::try_from(runs).unwrap_or(u32::MAX);
                self.number += runs;
                self.phase_target_ended(slot, &phase.name, target)?;
                Ok(None)
            }
        }
    }

    /// A phase's kept target ended (or never came up): counted when it failed, said, and
    /// written into the phase's results (at `slot`).
    fn phase_target_ended(
        &mut self,
        slot: usize,
        phase: &str,
        target: PhaseTarget,
    ) -> Result<(), RunError> {
        self.outcome.tally.count_target(&target);
        (self.on_event)(Event::PhaseTargetEnded {
            phase,
            target: &target,
        });
        self.outcome.results.phases[slot].target = Some(target);
        self.outcome.results.write(&self.options.out)?;
        Ok(())
    }

    /// The runs of one phase in their `order`, each written to the results file when it
    /// ends, on the phase's kept target when it keeps one.
    async fn run_phase(
        &mut self,
        phase: &MatrixPhase,
        order: &[(usize, u32)],
        mut held: Option<&mut Held>,
    ) -> Result<PhaseRan, RunError> {
        let mut ran = PhaseRan::default();
        // `on_failure = "stop"`: the first point whose run failed cuts the phase there, in
        // this round and the later ones (its own repeats still run).
        let mut cut: Option<usize> = None;
        for (i, &(position, repeat)) in order.iter().enumerate() {
            if cut.is_some_and(|cut| position > cut) {
                continue;
            }
            if *self.cancel.borrow() {
                self.outcome.tally.interrupted = true;
                ran.stop_all = true;
                break;
            }
            let point = &phase.points[position];
            let recorded = self
                .run_recorded(phase, point, repeat, held.as_deref_mut())
                .await?;
            if recorded.stop_all {
                ran.stop_all = true;
                break;
            }
            if recorded.failed && phase.on_failure == OnFailure::Stop {
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
}

/// [`barrier_of`], or `None` once a signal came first.
pub(super) async fn barrier_unless_cancelled(
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
pub(super) async fn barrier_of(
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
pub(super) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default()
}
/// The results this run writes: the file's other phases kept when re-running some, a new file
/// otherwise; the environment, matrix and spec always this run's.
pub(super) fn results_to_write(
    matrix: &RunMatrix,
    options: &RunOptions,
) -> Result<Results, RunError> {
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
            price_tables: Vec::new(),
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
    results.price_tables.clone_from(&options.price_tables);
    results.segment = (options.segment.count > 1).then(|| SegmentRef {
        index: options.segment.index,
        count: options.segment.count,
        host: hostname(),
    });
    Ok(results)
}
