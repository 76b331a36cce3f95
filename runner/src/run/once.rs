//! One run of one point: a fresh target (or the external one), the load, the steady state,
//! the target stopped, the verdicts.

use super::attempt::Attempt;
use super::gathered::{Steady, take_outcomes, take_samples};
use super::reach::{Meeting, Sending, http_threads, load_threads, reach_of};
use super::start::{Started, TargetStart, log_stem, results_dir, start_target};
use super::{RunOptions, unix_ms};
use crate::cgroup::Cgroup;
use crate::event::Event;
use crate::generator::{Watching, generator};
use crate::limits::{Emulation, LIMITS_IGNORED, RunShape};
use crate::results::{Failure, RunLimits, RunResult};
use crate::sample::sampler;
use crate::scenarios::{ScenarioOutcomes, Watch, run_scenarios};
use crate::steps::{StepPlace, When, run_steps};
use crate::target::Fills;
use headroom_figures::verdict;
use headroom_load::{
    barrier::{Stage, Start, meet_or_cancel},
    handover::Handover,
    hold::RunHold,
    reach::Reach,
    web,
};
use headroom_matrix::RunMatrix;
use headroom_matrix::{MatrixPhase, Point};
use headroom_spec::target::StepScope;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

pub(super) async fn run_once(
    matrix: &RunMatrix,
    phase: &MatrixPhase,
    point: &Point,
    mut attempt: Attempt<'_>,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> RunResult {
    let (started, repeat) = (Instant::now(), attempt.repeat);
    let mut result = RunResult::started(repeat, unix_ms());
    result.run_id = Some(options.run_id.clone());
    let run = format!("{}/{}/{}", phase.name, point.index, attempt.repeat);
    let held = attempt.held.take();
    let drive = |limited| Drive {
        matrix,
        phase,
        point,
        attempt: &attempt,
        options,
        run: &run,
        limited,
    };
    // A target kept for the phase: this run lends it, and counts its cgroups' share.
    if let Some(held) = held {
        let before = held.counters();
        held.lend(&mut result);
        drive(held.limited.as_ref())
            .point(&mut held.up, cancel, &mut result, on_event)
            .await;
        held.count_since(&before, &mut result, point);
        return finish(result, started, matrix);
    }
    let target = &point.target;
    let limited = limited_run(&attempt, point, &mut result);
    let Ok(mut limited) = limited.map_err(|failure| result.failure = Some(failure)) else {
        return finish(result, started, matrix);
    };
    let allowed = web::Allowed::new(&target.allow_hosts);
    let cgroup = limited.as_ref().map(|(cgroup, _)| cgroup);
    let stem = log_stem(phase, point, repeat, options);
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
    let Some(mut up) = start_target(&at, &mut result).await else {
        close_cgroup(&mut result, limited.take(), crate::limits::at_words(point));
        return finish(result, started, matrix);
    };
    drive(limited.as_ref())
        .point(&mut up, cancel, &mut result, on_event)
        .await;
    up.stack
        .stop(&mut result, crate::limits::at_words(point))
        .await;
    close_cgroup(&mut result, limited, crate::limits::at_words(point));
    finish(result, started, matrix)
}

/// Said in a run of a segment other than 0 whose spec has steps.
const STEPS_ON_SEGMENT_0: &str =
    "setup and teardown steps run on segment 0 only: every segment loads one target";

/// One run's load and what is measured during and after it, on a target that is up.
struct Drive<'a> {
    matrix: &'a RunMatrix,
    phase: &'a MatrixPhase,
    point: &'a Point,
    attempt: &'a Attempt<'a>,
    options: &'a RunOptions,
    /// `phase/point/repeat`.
    run: &'a str,
    limited: Option<&'a (Cgroup, RunShape)>,
}

impl Drive<'_> {
    /// The point on a target that is up: its setup steps, the load, its teardown steps (the
    /// steps run at every point; those run once a phase are the phase's).
    async fn point(
        &self,
        up: &mut Started,
        cancel: watch::Receiver<bool>,
        result: &mut RunResult,
        on_event: &mut (dyn FnMut(Event<'_>) + Send),
    ) {
        let (phase, point, options) = (self.phase, self.point, self.options);
        let target = &point.target;
        let stem = log_stem(phase, point, self.attempt.repeat, options);
        // The steps' `{port}` and `{port.NAME}`, apart from `up`, which the load borrows.
        let ports = up.ports.clone();
        let place = StepPlace {
            fills: Fills {
                services: &ports,
                ..Fills::new(up.port, &options.headroom_bin)
            },
            spec_dir: &options.spec_dir,
            log_dir: results_dir(options),
            log_stem: &stem,
            cancel: &cancel,
        };
        // Of a segmented run, segment 0 alone runs the steps (on the one target all load);
        // the others wait for it at the start's meeting.
        let every_point = StepScope::Point;
        let steps = if options.segment.index == 0 {
            (target.setup.as_slice(), target.teardown.as_slice())
        } else {
            if !target.setup.is_empty() || !target.teardown.is_empty() {
                result.notes.push(STEPS_ON_SEGMENT_0.to_owned());
            }
            (&[][..], &[][..])
        };
        let set_up = run_steps(steps.0, every_point, When::Setup, &place, result).await;
        let start_at = match set_up {
            Ok(()) => {
                let (barrier, run) = (self.attempt.barrier, self.run);
                meet_or_cancel(barrier, run, Stage::Start, result, &cancel).await
            }
            Err(failure) => {
                result.failure = Some(failure);
                None
            }
        };
        if let Some(start_at) = start_at {
            self.load(up, start_at, cancel.clone(), result, on_event)
                .await;
            // Teardown after the load, whatever it did: a failed load still cleans up.
            let torn_down = run_steps(steps.1, every_point, When::Teardown, &place, result).await;
            if let Err(failure) = torn_down {
                result.failure.get_or_insert(failure);
            }
        }
    }

    /// The `[measure]` series read by a command during the load, by segment 0 alone.
    fn series(
        &self,
        up: &Started,
        load_started: Instant,
        stop: &watch::Receiver<bool>,
    ) -> Vec<tokio::task::JoinHandle<crate::series::Readings>> {
        let options = self.options;
        if options.segment.index != 0 {
            return Vec::new();
        }
        let fills = Fills {
            vars: Some(&self.point.vars),
            ..up.fills(&options.headroom_bin)
        };
        let measure = &self.phase.measure;
        crate::series::spawn(measure, &fills, &options.spec_dir, load_started, stop)
    }

    /// Where this run's load goes, on `threads` load threads.
    fn reach(&self, port: u16, threads: usize, start: Option<Start>) -> Reach {
        let meeting = Meeting {
            run: self.run,
            barrier: self.attempt.barrier,
            start,
        };
        let (matrix, point, options) = (self.matrix, self.point, self.options);
        reach_of(matrix, point, options, Sending { port, threads }, meeting)
    }

    /// The load, watched for the target's death and for Ctrl-C; the steady state once every
    /// scenario holds; then the rooms' ramp-down; samples, series and outcomes into `result`.
    async fn load(
        &self,
        up: &mut Started,
        start_at: Option<Start>,
        cancel: watch::Receiver<bool>,
        result: &mut RunResult,
        on_event: &mut (dyn FnMut(Event<'_>) + Send),
    ) {
        let (matrix, phase, point) = (self.matrix, self.phase, self.point);
        keep_generator(self.attempt, self.limited, true);
        let threads = load_threads(matrix, self.limited.map(|(_, run)| run));
        let load_started = Instant::now();
        let watching = Watching::start();
        let groups = up.groups();
        let fresh = Arc::new(crate::sample::Fresh::default());
        let (stop_sampling, sampler) =
            spawn_sampler(groups.clone(), phase, load_started, Arc::clone(&fresh));
        let (stop_series, series_stop) = watch::channel(false);
        let series = self.series(up, load_started, &series_stop);

        // Up to the point where every scenario is held (HTTP: finished; rooms: drained,
        // sockets still open).
        let (abort, aborted) = watch::channel(false);
        let (release, released) = watch::channel(false);
        let (arrivals, mut arrived) = watch::channel(0usize);
        let arrivals = Arc::new(arrivals);
        let live = Arc::new(headroom_load::live::Live::default());
        let reach = self.reach(up.port, threads, start_at);
        let handover = Handover::new(Arc::clone(&arrivals), released);
        let (run_hold, mut scenarios) =
            self.spawn_scenarios(reach, load_started, aborted, &live, handover);
        let total = point.scenarios.len();
        let mut ticker = tokio::time::interval(Duration::from_secs(1));
        let mut cancel_watch = cancel.clone();
        let mut watch = Watch {
            stack: &mut up.stack,
            live: &live,
            fresh: &fresh,
            abort: &abort,
            load_started,
            load_started_ms: unix_ms().saturating_sub(load_started.elapsed().as_millis() as u64),
            generator_cpu: None,
            cgroup: self.limited.map(|(cgroup, _)| (cgroup, cgroup.counters())),
        };
        loop {
            tokio::select! {
                _ = arrived.wait_for(|n| *n >= total) => break,
                _ = ticker.tick() => watch.tick(result, on_event),
                _ = cancel_watch.changed() => watch.cancelled(result, &cancel_watch),
            }
        }
        let watched = watching.stop();
        // Series read by a command are read during the load only.
        let _ = stop_series.send(true);

        // The steady state; of a segmented run, by segment 0 alone once every load is over.
        let steady = Steady {
            matrix,
            phase,
            point,
            metrics: up.metrics.as_ref(),
            groups,
            load_started,
        };
        let settled = self.settle(steady, series, result, &cancel);
        watch.reporting(settled, &mut ticker, on_event).await;
        // Then the rooms ramp down.
        let _ = release.send(true);
        let outcomes = loop {
            tokio::select! {
                outcomes = &mut scenarios => {
                    break outcomes.unwrap_or_else(|e| vec![("(all)".to_owned(), Err(format!("the scenarios' task failed: {e}")))]);
                }
                _ = ticker.tick() => watch.tick(result, on_event),
                _ = cancel_watch.changed() => watch.cancelled(result, &cancel_watch),
            }
        };
        // The seconds that closed as the scenarios ended.
        watch.tell(on_event);
        take_outcomes(result, outcomes, &run_hold, point, &mut up.stack);
        let _ = stop_sampling.send(true);
        if let Ok((sampled, load_average)) = sampler.await {
            take_samples(result, sampled);
            result.load_average = load_average;
        }
        keep_generator(self.attempt, self.limited, false);
        self.judge_generator(up, &watched, threads, result);
    }

    /// The point's scenarios started together on one hold, on the sampler's clock (from
    /// `load_started`): the hold, and the task that ends with their outcomes.
    fn spawn_scenarios(
        &self,
        reach: Reach,
        load_started: Instant,
        aborted: watch::Receiver<bool>,
        live: &Arc<headroom_load::live::Live>,
        handover: Handover,
    ) -> (Arc<RunHold>, tokio::task::JoinHandle<ScenarioOutcomes>) {
        let point = self.point;
        let (run_hold, members) = RunHold::new(
            load_started,
            super::carried::point_hold(point),
            point.scenarios.len(),
        );
        let scenarios = tokio::spawn(run_scenarios(
            point.scenarios.clone(),
            reach,
            aborted,
            Arc::clone(live),
            handover,
            members,
        ));
        (run_hold, scenarios)
    }

    /// The steady state once every scenario holds: of a segmented run, measured by segment 0
    /// alone once every segment's load is over; the `[measure]` series read during the load
    /// collected.
    async fn settle(
        &self,
        steady: Steady<'_>,
        series: Vec<tokio::task::JoinHandle<crate::series::Readings>>,
        result: &mut RunResult,
        cancel: &watch::Receiver<bool>,
    ) {
        let met = meet_or_cancel(self.attempt.barrier, self.run, Stage::Done, result, cancel).await;
        if met.is_some() && self.options.segment.index == 0 {
            steady.measure(result).await;
        }
        let reduce = self.phase.measure.steady_state.reduce;
        crate::series::collect(series, reduce, result).await;
    }

    /// What the generator did (`watched` over the load, on `threads` load threads) and
    /// whether it kept up, with the cores the target left it.
    fn judge_generator(
        &self,
        up: &Started,
        watched: &crate::generator::Watched,
        threads: usize,
        result: &mut RunResult,
    ) {
        let cores_left = self
            .limited
            .map(|(_, run)| run.cores_left)
            .or_else(|| up.stack.cores_left());
        result.generator = generator(&result.scenarios, watched, cores_left);
        result.generator.threads = http_threads(self.point, threads);
    }
}

/// The sampler: the process groups every `sample_every` from `load_started`, and the load
/// average, until told to stop.
fn spawn_sampler(
    groups: Vec<(Option<String>, crate::sample::ServerProcesses)>,
    phase: &MatrixPhase,
    start: Instant,
    fresh: Arc<crate::sample::Fresh>,
) -> (
    watch::Sender<bool>,
    tokio::task::JoinHandle<(crate::sample::Sampled, crate::results::LoadAverage)>,
) {
    let (stop_sampling, stop) = watch::channel(false);
    let sampler = tokio::spawn(sampler(
        groups,
        phase.measure.sample_every.as_std(),
        start,
        fresh,
        stop,
    ));
    (stop_sampling, sampler)
}

/// With `pin`, the generator keeps to the cores the target is not pinned to while the target
/// runs (`during`), and gets every core back after.
fn keep_generator(attempt: &Attempt<'_>, limited: Option<&(Cgroup, RunShape)>, during: bool) {
    if let Some(cores) = limited.and_then(|(_, run)| run.generator_cores.as_deref()) {
        attempt.emulation.keep_generator_on(during.then_some(cores));
    }
}

/// The run's cgroup, made in the shape of the point's limits when they are applied; `None`
/// without limits, for an external target, or under `--ignore-limits` (said in the result).
pub(super) fn limited_run(
    attempt: &Attempt<'_>,
    point: &Point,
    result: &mut RunResult,
) -> Result<Option<(Cgroup, RunShape)>, Failure> {
    let target = &point.target;
    let Some(limits) = target.limits.as_ref().filter(|_| target.command.is_some()) else {
        return Ok(None);
    };
    if matches!(attempt.emulation, Emulation::Ignored) {
        result.limits = Some(RunLimits::Ignored);
        result.notes.push(LIMITS_IGNORED.to_owned());
        return Ok(None);
    }
    let Some(run) = attempt.emulation.shape(limits) else {
        return Ok(None);
    };
    let cgroup = attempt
        .emulation
        .create(&crate::cgroup::run_name(attempt.number), &run.shape)
        .map_err(|message| Failure::SpawnFailed { message })?;
    Ok(Some((cgroup, run)))
}

/// The kernel's counters of the run's cgroup into `result`, an OOM kill named as the run's
/// failure, and the cgroup removed.
pub(super) fn close_cgroup(
    result: &mut RunResult,
    limited: Option<(Cgroup, RunShape)>,
    at: Option<String>,
) {
    let Some((mut cgroup, run)) = limited else {
        return;
    };
    let counters = cgroup.counters();
    result.limits = Some(crate::limits::applied(&cgroup, &run.shape, &counters));
    if counters.oom_kills > 0
        && let Some(limit_bytes) = run.shape.memory_bytes
    {
        out_of_memory(result, None, limit_bytes, at);
    }
    if let Err(e) = cgroup.remove() {
        result
            .notes
            .push(format!("the run's cgroup could not be removed: {e}"));
    }
}

/// A process the kernel killed for its memory (`service`, or the target) as the run's
/// failure, in place of the death it caused, with the output that death carried; a run that
/// was interrupted stays interrupted.
pub(super) fn out_of_memory(
    result: &mut RunResult,
    service: Option<&str>,
    limit_bytes: u64,
    at: Option<String>,
) {
    if matches!(result.failure, Some(Failure::Interrupted)) {
        return;
    }
    let stderr_tail = match result.failure.take() {
        Some(Failure::Service { failure, .. }) if service.is_some() => match *failure {
            Failure::Died { stderr_tail, .. }
            | Failure::ExitedEarly { stderr_tail, .. }
            | Failure::NeverReady { stderr_tail, .. } => stderr_tail,
            _ => Vec::new(),
        },
        Some(
            Failure::Died { stderr_tail, .. }
            | Failure::ExitedEarly { stderr_tail, .. }
            | Failure::NeverReady { stderr_tail, .. },
        ) if service.is_none() => stderr_tail,
        _ => Vec::new(),
    };
    let killed = Failure::OutOfMemory {
        limit_bytes,
        at: at.unwrap_or_default(),
        stderr_tail,
    };
    result.failure = Some(match service {
        Some(service) => Failure::Service {
            service: service.to_owned(),
            failure: Box::new(killed),
        },
        None => killed,
    });
}

fn finish(mut result: RunResult, started: Instant, matrix: &RunMatrix) -> RunResult {
    result.duration_s = started.elapsed().as_secs_f64();
    // A run that measured nothing still has figures to judge (every socket failed: 100 %), and
    // one whose users were stuck its SLOs beside it.
    if matches!(
        result.failure,
        None | Some(Failure::NothingMeasured { .. } | Failure::UsersStuck { .. })
    ) {
        result.slo = verdict::evaluate(&matrix.slo, &result);
    }
    result
}
