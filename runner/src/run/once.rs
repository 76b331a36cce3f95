//! One run of one point: a fresh target (or the external one), the load, the steady state,
//! the target stopped, the verdicts.

use super::*;
use crate::barrier::{Stage, Start, meet};
use crate::cgroup::Cgroup;
use crate::limits::RunShape;
use crate::results::RunLimits;

/// A free loopback port: bound by us, then released for the target to take.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What a started target gives the run: its port, the process when headroom started it, the
/// group to sample, and the endpoints of readiness and metrics.
struct Started {
    port: u16,
    running: Option<Running>,
    group: Option<i32>,
    ready: Option<http::Endpoint>,
    metrics: Option<http::Endpoint>,
}

/// Where a point's load goes, from what, on how many threads; `run` names the run
/// (`phase/point/repeat`) its seed is derived for.
fn reach_of(
    plan: &RunMatrix,
    point: &Point,
    options: &RunOptions,
    (port, threads): (u16, usize),
    (run, barrier, start): (&str, Option<&Arc<crate::barrier::Barrier>>, Option<Start>),
) -> Reach {
    let target = &point.target;
    let mut reach = Reach::new(
        port,
        &options.headroom_bin,
        &http::Allowed::new(&target.allow_hosts),
        threads,
        &crate::tls::Trust::of(target, &options.spec_dir),
        plan.generator.source_addresses.as_ref(),
        options.segment,
    );
    // Every segment derives the same seed for the same run, and starts at the same instant.
    reach.seed = crate::stripe::derive_seed(options.seed, run);
    reach.start_at = start.map(|start| start.at);
    reach.meetings = barrier.map(|barrier| crate::barrier::Meetings {
        barrier: Arc::clone(barrier),
        run: run.to_owned(),
    });
    reach
}

pub(super) async fn run_once(
    plan: &RunMatrix,
    phase: &MatrixPhase,
    point: &Point,
    attempt: Attempt<'_>,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> RunResult {
    let (started, repeat) = (Instant::now(), attempt.repeat);
    let mut result = RunResult::started(repeat, unix_ms());
    let target = &point.target;
    let limited = limited_run(&attempt, point, &mut result);
    let Ok(mut limited) = limited.map_err(|failure| result.failure = Some(failure)) else {
        return finish(result, started, plan);
    };
    let allowed = http::Allowed::new(&target.allow_hosts);
    let cgroup = limited.as_ref().map(|(cgroup, _)| cgroup);
    let Some(Started {
        port,
        mut running,
        group,
        ready: _,
        metrics: metrics_endpoint,
    }) = start_target(phase, point, repeat, options, cgroup, &allowed, &mut result).await
    else {
        close_cgroup(&mut result, limited.take(), point);
        return finish(result, started, plan);
    };
    let run = format!("{}/{}/{}", phase.name, point.index, attempt.repeat);
    let Some(start_at) = meet(attempt.barrier, &run, Stage::Start, &mut result).await else {
        stop_target(running.as_mut(), target, &mut result).await;
        close_cgroup(&mut result, limited.take(), point);
        return finish(result, started, plan);
    };
    keep_generator(&attempt, limited.as_ref(), true);
    let threads = load_threads(plan, limited.as_ref().map(|(_, run)| run));
    let load_started = Instant::now();
    let cpu_before = sample::own_cpu_s();
    let (stop_sampling, sampler) = spawn_sampler(group, phase, load_started);

    // The load, watched for the target's death and for Ctrl-C, up to the point where every
    // scenario is held (HTTP: finished; rooms: drained, sockets still open).
    let (abort, aborted) = watch::channel(false);
    let (release, released) = watch::channel(false);
    let (arrivals, mut arrived) = watch::channel(0usize);
    let arrivals = Arc::new(arrivals);
    let live = Arc::new(load::Live::default());
    let meeting = (run.as_str(), attempt.barrier, start_at);
    let reach = reach_of(plan, point, options, (port, threads), meeting);
    let mut scenarios = tokio::spawn(run_scenarios(
        point.scenarios.clone(),
        reach,
        aborted,
        Arc::clone(&live),
        Gates::new(Arc::clone(&arrivals), released),
    ));
    let total = point.scenarios.len();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    let mut cancel_watch = cancel.clone();
    let mut watch = Watch {
        running: &mut running,
        live: &live,
        abort: &abort,
        load_started,
    };
    loop {
        tokio::select! {
            _ = arrived.wait_for(|n| *n >= total) => break,
            _ = ticker.tick() => watch.tick(&mut result, on_event),
            _ = cancel_watch.changed() => watch.cancelled(&mut result, &cancel_watch),
        }
    }
    let load_seconds = load_started.elapsed().as_secs_f64();
    let cpu_used = sample::own_cpu_s() - cpu_before;

    // The steady state; of a segmented run, by segment 0 alone once every load is over.
    let met = meet(attempt.barrier, &run, Stage::Done, &mut result).await;
    let steady = Steady {
        plan,
        phase,
        point,
        metrics: metrics_endpoint.as_ref(),
        group,
        load_started,
    };
    if met.is_some() && options.segment.index == 0 {
        steady.measure(&mut result).await;
    }
    // Then the rooms ramp down.
    let _ = release.send(true);
    let outcomes = loop {
        tokio::select! {
            outcomes = &mut scenarios => {
                break outcomes.unwrap_or_else(|e| vec![("(all)".to_owned(), Err(format!("the scenarios' task failed: {e}")))]);
            }
            _ = ticker.tick() => watch.tick(&mut result, on_event),
            _ = cancel_watch.changed() => watch.cancelled(&mut result, &cancel_watch),
        }
    };
    take_outcomes(&mut result, outcomes, point, running.as_mut());
    let _ = stop_sampling.send(true);
    if let Ok((readings, load_average)) = sampler.await {
        take_samples(&mut result, readings, point);
        result.load_average = load_average;
    }
    stop_target(running.as_mut(), target, &mut result).await;
    keep_generator(&attempt, limited.as_ref(), false);
    let cores_left = limited.as_ref().map(|(_, run)| run.cores_left);
    result.generator = generator(&result.scenarios, cpu_used, load_seconds, cores_left);
    result.generator.threads = http_threads(point, threads);
    close_cgroup(&mut result, limited, point);
    finish(result, started, plan)
}

/// The sampler: the process group every `sample_every` from `load_started`, and the load
/// average, until told to stop.
fn spawn_sampler(
    group: Option<i32>,
    phase: &MatrixPhase,
    load_started: Instant,
) -> (
    watch::Sender<bool>,
    tokio::task::JoinHandle<(crate::sample::Readings, crate::results::LoadAverage)>,
) {
    let (stop_sampling, sampling) = watch::channel(false);
    let sampler = tokio::spawn(sampler(
        group,
        phase.measure.sample_every.as_std(),
        load_started,
        sampling,
    ));
    (stop_sampling, sampler)
}

/// Stops the target headroom started, how it ended into `result`.
async fn stop_target(
    running: Option<&mut Running>,
    target: &headroom_compiler::matrix::resolved::Target,
    result: &mut RunResult,
) {
    if let Some(running) = running {
        let stopped = running
            .stop(target.stop.signal, target.stop.grace.as_std())
            .await;
        result.stopped = Some(stopped);
    }
}

/// The HTTP scenarios' load threads: `[generator] threads`, else the cores left to the
/// generator (beside a pinned target, or the cores less its CPU limit), else every core this
/// process may use.
fn load_threads(plan: &RunMatrix, run: Option<&RunShape>) -> usize {
    if let Some(threads) = plan.generator.threads {
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
fn http_threads(point: &Point, threads: usize) -> Option<u32> {
    let http = point
        .scenarios
        .iter()
        .any(|s| matches!(s, headroom_compiler::matrix::resolved::Scenario::Http(_)));
    http.then(|| u32::try_from(threads).unwrap_or(u32::MAX))
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
fn limited_run(
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
fn close_cgroup(result: &mut RunResult, limited: Option<(Cgroup, RunShape)>, point: &Point) {
    let Some((mut cgroup, run)) = limited else {
        return;
    };
    let counters = cgroup.counters();
    result.limits = Some(crate::limits::applied(&cgroup, &run.shape, &counters));
    if counters.oom_kills > 0
        && let Some(limit_bytes) = run.shape.memory_bytes
        && !matches!(result.failure, Some(Failure::Interrupted))
    {
        let stderr_tail = match result.failure.take() {
            Some(
                Failure::Died { stderr_tail, .. }
                | Failure::ExitedEarly { stderr_tail, .. }
                | Failure::NeverReady { stderr_tail, .. },
            ) => stderr_tail,
            _ => Vec::new(),
        };
        result.failure = Some(Failure::OutOfMemory {
            limit_bytes,
            at: crate::limits::at_words(point).unwrap_or_default(),
            stderr_tail,
        });
    }
    if let Err(e) = cgroup.remove() {
        result
            .notes
            .push(format!("the run's cgroup could not be removed: {e}"));
    }
}

/// Starts the target (or checks the external one) and waits until it is ready; `None` with
/// the failure in `result` when it could not.
async fn start_target(
    phase: &MatrixPhase,
    point: &Point,
    repeat: u32,
    options: &RunOptions,
    cgroup: Option<&Cgroup>,
    allowed: &http::Allowed,
    result: &mut RunResult,
) -> Option<Started> {
    let target = &point.target;
    // Where readiness and metrics are read: resolved and checked once, before the target
    // starts (a host load may not go to fails the run before anything runs).
    let mut started = match &target.url {
        Some(url) => external(url, target, options, allowed, result).await?,
        None => {
            let port = match free_port() {
                Ok(port) => port,
                Err(e) => {
                    result.failure = Some(Failure::SpawnFailed {
                        message: format!("no free loopback port: {e}"),
                    });
                    return None;
                }
            };
            let (ready, metrics) = match endpoints(
                target,
                port,
                &options.headroom_bin,
                allowed,
                &options.spec_dir,
            )
            .await
            {
                Ok(endpoints) => endpoints,
                Err(message) => {
                    result.failure = Some(Failure::Load { message });
                    return None;
                }
            };
            let log_name = format!(
                "logs/{}-p{}-r{}.log",
                sanitize(&phase.name),
                point.index + 1,
                repeat
            );
            let log = options
                .out
                .parent()
                .unwrap_or(Path::new("."))
                .join(&log_name);
            result.log = Some(log_name);
            let launch = Launch {
                target,
                port,
                headroom_bin: &options.headroom_bin,
                spec_dir: &options.spec_dir,
                log,
                cgroup,
            };
            match Running::start(&launch).await {
                Ok(running) => Started {
                    port,
                    group: Some(running.pid as i32),
                    running: Some(running),
                    ready,
                    metrics,
                },
                Err(failure) => {
                    result.failure = Some(failure);
                    return None;
                }
            }
        }
    };
    result.port = started.port;
    if let Some(running) = started.running.as_mut() {
        match running
            .wait_ready(target, started.port, started.ready.as_ref())
            .await
        {
            Ok(after) => result.ready_after_s = Some(after.as_secs_f64()),
            Err(failure) => {
                result.failure = Some(failure);
                result.stopped = Some(
                    running
                        .stop(target.stop.signal, target.stop.grace.as_std())
                        .await,
                );
                return None;
            }
        }
    }
    Some(started)
}

/// An external target (`url`): its host checked, its endpoints resolved, its process found
/// through `pid_file` when given.
async fn external(
    url: &str,
    target: &headroom_compiler::matrix::resolved::Target,
    options: &RunOptions,
    allowed: &http::Allowed,
    result: &mut RunResult,
) -> Option<Started> {
    let url = crate::target::fill(url, 0, &options.headroom_bin).unwrap_or_else(|_| url.to_owned());
    let port = http::parse_web_url(&url)
        .and_then(|parsed| parsed.dial.rsplit(':').next()?.parse().ok())
        .unwrap_or(80);
    let checked = match external_url_allowed(&url, target, allowed).await {
        Ok(()) => {
            endpoints(
                target,
                port,
                &options.headroom_bin,
                allowed,
                &options.spec_dir,
            )
            .await
        }
        Err(message) => Err(message),
    };
    let (ready, metrics) = match checked {
        Ok(endpoints) => endpoints,
        Err(message) => {
            result.failure = Some(Failure::Load { message });
            return None;
        }
    };
    result
        .notes
        .push("an external target: the runner neither started nor stopped it".to_owned());
    let mut group = None;
    match &target.pid_file {
        Some(file) => match external_pid(file, &options.spec_dir, &options.headroom_bin) {
            Ok(found) => group = Some(found),
            Err(why) => result
                .notes
                .push(format!("its process was not sampled: {why}")),
        },
        None => result.notes.push(
            "its process was not sampled: give `pid_file` in [target] to sample an external target"
                .to_owned(),
        ),
    }
    Some(Started {
        port,
        running: None,
        group,
        ready,
        metrics,
    })
}

/// The steady state of one run: what it reads, and where.
struct Steady<'a> {
    plan: &'a RunMatrix,
    phase: &'a MatrixPhase,
    point: &'a Point,
    metrics: Option<&'a http::Endpoint>,
    group: Option<i32>,
    load_started: Instant,
}

impl Steady<'_> {
    /// Scrapes the metrics and reads the process at steady state into `result`; a process
    /// that could not be read, or a declared series no scrape held, fails the run.
    async fn measure(&self, result: &mut RunResult) {
        if result.failure.is_some() {
            return;
        }
        let measure = &self.phase.measure;
        let (metrics, readings) =
            steady_state(measure, self.metrics, self.group, self.load_started).await;
        result.metrics = metrics;
        result.process.steady = steady_process(&readings.samples, measure.steady_state.reduce);
        result.process.failed_samples += readings.failed;
        if readings.error.is_some() {
            result.process.sample_error = readings.error;
        }
        // Memory and CPU at steady state are what the page fits and prices: a group that was
        // there and could not be read is a failed run, not a run that used nothing.
        if result.process.steady.is_none()
            && self.group.is_some()
            && let Some(why) = &result.process.sample_error
        {
            result.failure = Some(Failure::ProcessUnread { why: why.clone() });
        }
        // A declared series that no scrape held: what the page fits was not measured. At the
        // baseline (no load), a counter that only appears with traffic may be absent.
        if !result.metrics.missing.is_empty() && !is_baseline(self.plan, self.point) {
            let metrics = &result.metrics;
            let why = match &metrics.scrape_error {
                Some(error) => format!(
                    "{} of {} scrapes failed ({error})",
                    metrics.failed_scrapes, measure.steady_state.scrapes
                ),
                None => "the metrics held no such series (check its name and labels in [measure])"
                    .to_owned(),
            };
            result.failure = Some(Failure::MetricsMissing {
                series: metrics.missing.clone(),
                why,
            });
        }
    }
}

/// The load's samples into `result`, with the CPU over the hold read from them.
fn take_samples(result: &mut RunResult, readings: sample::Readings, point: &Point) {
    result.process.hold_cpu_cores = sample::hold_window(&point.scenarios)
        .and_then(|window| sample::cpu_cores_over(&readings.samples, window));
    result.process.samples = readings.samples;
    result.process.failed_samples += readings.failed;
    if result.process.sample_error.is_none() {
        result.process.sample_error = readings.error;
    }
}

/// The scenarios' outcomes into `result`: the first that failed, a scenario that measured
/// nothing, or a target that died since the load fails the run.
fn take_outcomes(
    result: &mut RunResult,
    outcomes: Vec<(String, Result<crate::results::ScenarioResult, String>)>,
    point: &Point,
    running: Option<&mut Running>,
) {
    for (name, outcome) in outcomes {
        match outcome {
            Ok(scenario) => {
                result.scenarios.insert(name, scenario);
            }
            Err(message) => {
                if result.failure.is_none() {
                    result.failure = Some(Failure::Load {
                        message: format!("scenario `{name}`: {message}"),
                    });
                }
            }
        }
    }
    // A scenario with load to send that measured nothing fails the run, named.
    if result.failure.is_none()
        && let Some(failure) = nothing_measured(point, &result.scenarios)
    {
        result.failure = Some(failure);
    }
    // A target that died during the steady state or the ramp-down failed the run too.
    if result.failure.is_none()
        && let Some(running) = running
        && let Some(exit) = running.exited()
    {
        result.failure = Some(Failure::Died {
            exit,
            stderr_tail: running.stderr_tail(),
        });
    }
}

fn finish(mut result: RunResult, started: Instant, plan: &RunMatrix) -> RunResult {
    result.duration_s = started.elapsed().as_secs_f64();
    // A run that measured nothing still has figures to judge (every socket failed: 100 %).
    if matches!(result.failure, None | Some(Failure::NothingMeasured { .. })) {
        result.slo = verdict::evaluate(&plan.slo, &result);
    }
    result
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
