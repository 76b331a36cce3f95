//! A target kept for a whole phase (`process = "per-phase"`), or the external target of a phase
//! with steps run once a phase: brought up before the phase's first run, lent to each run, its
//! once-a-phase steps run around them, stopped after the last.

use super::attempt::{Attempt, Held};
use super::once::{close_cgroup, limited_run, out_of_memory};
use super::start::{TargetStart, phase_log_stem, results_dir, start_target};
use super::{RunOptions, unix_ms};
use crate::cgroup::{Cgroup, Counters};
use crate::limits::RunShape;
use crate::results::{Failure, PhaseTarget, RunLimits, RunResult};
use crate::steps::{StepPlace, When, run_steps};
use crate::target::Fills;
use headroom_load::web;
use headroom_matrix::{MatrixPhase, Point};
use headroom_spec::target::{ProcessMode, StepScope};
use tokio::time::Instant;

/// Said in every run on a target kept for the phase.
const KEPT_FOR_THE_PHASE: &str = "the target was kept for the whole phase (`process = \"per-phase\"`): this run inherited what the phase's earlier runs left; its start and stop are the phase's";

/// Whether `phase` keeps one target for all its runs: `process = "per-phase"` with a target
/// headroom starts, or steps run once a phase (on an external target).
pub(super) fn keeps_target(phase: &MatrixPhase) -> bool {
    let Some(point) = phase.points.first() else {
        return false;
    };
    let target = &point.target;
    (phase.process == ProcessMode::PerPhase && target.is_started())
        || target
            .setup
            .iter()
            .chain(&target.teardown)
            .any(|step| step.per == StepScope::Phase)
}

impl Held {
    /// Brings the phase's target up (its cgroup, its start, its readiness) and runs its
    /// once-a-phase setup steps; the phase's record, with the failure, when it could not.
    pub(super) async fn start(
        phase: &MatrixPhase,
        attempt: &Attempt<'_>,
        options: &RunOptions,
    ) -> Result<Held, PhaseTarget> {
        let started = Instant::now();
        let mut record = RunResult::started(0, unix_ms());
        let Some(point) = phase.points.first() else {
            record.failure = Some(Failure::Load {
                message: format!("phase `{}` has no point", phase.name),
            });
            return Err(phase_target(record, started, 0));
        };
        let target = &point.target;
        let limited = match limited_run(attempt, point, &mut record) {
            Ok(limited) => limited,
            Err(failure) => {
                record.failure = Some(failure);
                return Err(phase_target(record, started, 0));
            }
        };
        let allowed = web::Allowed::new(&target.allow_hosts);
        let stem = phase_log_stem(phase, options);
        let cgroup = limited.as_ref().map(|(cgroup, _)| cgroup);
        let at = TargetStart {
            point,
            stem: &stem,
            run_number: attempt.number,
            emulation: attempt.emulation,
            cancel: attempt.cancel,
            options,
            cgroup,
            allowed: &allowed,
        };
        let Some(up) = start_target(&at, &mut record).await else {
            close_cgroup(&mut record, limited, None);
            return Err(phase_target(record, started, 0));
        };
        let mut held = Held {
            up,
            limited,
            record,
            started,
            stem,
            set_up: false,
            runs_not_run: 0,
            cancel: attempt.cancel.clone(),
        };
        match held.steps(When::Setup, point, options).await {
            Ok(()) => {
                held.set_up = true;
                Ok(held)
            }
            Err(failure) => {
                held.record.failure = Some(failure);
                Err(held.end().await)
            }
        }
    }

    /// Seconds from the target's start until it was ready.
    pub(super) fn ready_after_s(&self) -> Option<f64> {
        self.record.ready_after_s.or_else(|| {
            self.record
                .services
                .values()
                .filter_map(|service| service.ready_after_s)
                .reduce(f64::max)
        })
    }

    /// The port load goes to.
    pub(super) fn port(&self) -> u16 {
        self.up.port
    }

    /// The once-a-phase steps of `when`, into the phase's record.
    async fn steps(
        &mut self,
        when: When,
        point: &Point,
        options: &RunOptions,
    ) -> Result<(), Failure> {
        // Of a segmented run, segment 0 alone runs them (see `Drive::point`).
        if options.segment.index != 0 {
            return Ok(());
        }
        let target = &point.target;
        let steps = match when {
            When::Setup => &target.setup,
            When::Teardown => &target.teardown,
        };
        let ports = self.up.ports.clone();
        let place = StepPlace {
            fills: Fills {
                services: &ports,
                ..Fills::new(self.up.port, &options.headroom_bin)
            },
            spec_dir: &options.spec_dir,
            log_dir: results_dir(options),
            log_stem: &self.stem,
            cancel: &self.cancel,
        };
        run_steps(steps, StepScope::Phase, when, &place, &mut self.record).await
    }

    /// What a run on the kept target records of it: its port and logs, limits ignored, and
    /// that it was kept.
    pub(super) fn lend(&self, result: &mut RunResult) {
        result.port = self.up.port;
        result.log.clone_from(&self.record.log);
        for (name, service) in &self.record.services {
            let entry = result.services.entry(name.clone()).or_default();
            entry.port = service.port;
            entry.log.clone_from(&service.log);
            if matches!(service.limits, Some(RunLimits::Ignored)) {
                entry.limits = Some(RunLimits::Ignored);
            }
        }
        if matches!(self.record.limits, Some(RunLimits::Ignored)) {
            result.limits = Some(RunLimits::Ignored);
        }
        result.notes.extend(self.record.notes.iter().cloned());
        if self.up.stack.groups().is_empty() && self.record.log.is_none() {
            return;
        }
        result.notes.push(KEPT_FOR_THE_PHASE.to_owned());
    }

    /// Every cgroup of the kept target: `[target] command`'s (`None`), then each service's.
    fn cgroups(&self) -> Vec<(Option<&str>, &Cgroup, &RunShape)> {
        let own = self.limited.iter().map(|(cgroup, run)| (None, cgroup, run));
        let services = self
            .up
            .stack
            .cgroups()
            .map(|(name, cgroup, run)| (Some(name), cgroup, run));
        own.chain(services).collect()
    }

    /// The kernel's counters of every cgroup now, to count a run's share from.
    pub(super) fn counters(&self) -> Vec<Counters> {
        self.cgroups()
            .into_iter()
            .map(|(_, cgroup, _)| cgroup.counters())
            .collect()
    }

    /// A run's share of the cgroups' counters (what they counted since `before`) into
    /// `result`, and a kill for memory during it as its failure. The memory peak is the
    /// phase's, not the run's: it is left out of the run.
    pub(super) fn count_since(&self, before: &[Counters], result: &mut RunResult, point: &Point) {
        for ((name, cgroup, run), was) in self.cgroups().into_iter().zip(before) {
            let now = cgroup.counters();
            let share = Counters {
                cpu_periods: now.cpu_periods.saturating_sub(was.cpu_periods),
                throttled_periods: now.throttled_periods.saturating_sub(was.throttled_periods),
                throttled_s: (now.throttled_s - was.throttled_s).max(0.0),
                memory_peak_bytes: None,
                oom_kills: now.oom_kills.saturating_sub(was.oom_kills),
            };
            let applied = crate::limits::applied(cgroup, &run.shape, &share);
            match name {
                Some(service) => {
                    result
                        .services
                        .entry(service.to_owned())
                        .or_default()
                        .limits = Some(applied);
                }
                None => result.limits = Some(applied),
            }
            if share.oom_kills > 0
                && let Some(limit_bytes) = run.shape.memory_bytes
            {
                out_of_memory(result, name, limit_bytes, crate::limits::at_words(point));
            }
        }
    }

    /// The target's death, once it has died (or was killed): the rest of the phase cannot run.
    pub(super) fn gone(&mut self) -> Option<Failure> {
        self.up.stack.died()
    }

    /// Ends the phase's target: its once-a-phase teardown steps (after a setup that passed),
    /// then every process stopped and its cgroups read and removed; the phase's record.
    /// `failure`, when the phase ended for it, is the record's first; `interrupted` when
    /// everything stopped before the phase's last run.
    pub(super) async fn finish(
        mut self,
        failure: Option<Failure>,
        interrupted: bool,
        point: &Point,
        options: &RunOptions,
    ) -> PhaseTarget {
        if let Some(failure) = failure {
            self.record.failure.get_or_insert(failure);
        }
        if self.set_up
            && let Err(failure) = self.steps(When::Teardown, point, options).await
        {
            self.record.failure.get_or_insert(failure);
        }
        let mut target = self.end().await;
        target.interrupted = interrupted;
        target
    }

    /// Every process stopped, the cgroups read and removed; the phase's record.
    async fn end(mut self) -> PhaseTarget {
        self.up.stack.stop(&mut self.record, None).await;
        close_cgroup(&mut self.record, self.limited.take(), None);
        phase_target(self.record, self.started, self.runs_not_run)
    }
}

/// The phase's record from what was gathered in a run's shape.
fn phase_target(record: RunResult, started: Instant, runs_not_run: u32) -> PhaseTarget {
    PhaseTarget {
        started_ms: record.started_ms,
        duration_s: started.elapsed().as_secs_f64(),
        port: record.port,
        log: record.log,
        ready_after_s: record.ready_after_s,
        stopped: record.stopped,
        limits: record.limits,
        services: record.services,
        steps: record.steps,
        failure: record.failure,
        runs_not_run,
        interrupted: false,
        notes: record.notes,
    }
}
