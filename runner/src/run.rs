//! The matrix, run by run: a fresh target, the load, the steady state, the verdicts, and the
//! results file rewritten after every run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use headroom_compiler::ResolvedPlan;
use headroom_compiler::matrix::{PhasePlan, Point};
use headroom_spec::OnFailure;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::environment::{Environment, LoadAverage};
use crate::gates::Gates;
use crate::generator::generator;
use crate::results::{
    Failure, GeneratorResult, MetricsResult, PhaseResults, PointResults, ProcessResult,
    RESULTS_FORMAT, Results, ResultsError, RunResult, SpecRef,
};
use crate::sample::sampler;
use crate::scenarios::{Watch, nothing_measured, run_scenarios};
use crate::steady::{steady_process, steady_state};
use crate::target::{Launch, Running, endpoints, external_pid, external_url_allowed};
use crate::{http, load, sample, verdict};

/// How a run is asked for, beyond the plan.
pub struct RunOptions {
    /// The spec's path as the user gave it, and its text's hash.
    pub spec_path: String,
    pub spec_hash: String,
    /// Relative `cwd`s and the target's git revision are taken from here.
    pub spec_dir: PathBuf,
    /// The results file.
    pub out: PathBuf,
    /// Only these phases (all when empty); the file keeps the others.
    pub phases: Vec<String>,
    /// Repeats of every point, instead of the spec's.
    pub repeats: Option<u32>,
    pub quick: bool,
    /// The running `headroom` binary, for `{headroom}`.
    pub headroom: PathBuf,
    pub version: String,
}

/// What the runner reports as it goes; the CLI shows it.
pub enum Event<'a> {
    Started {
        runs: usize,
        /// Load, settle, scrapes and cool-down of every run; start-up not included.
        estimated_s: f64,
    },
    RunStarted {
        phase: &'a str,
        point: &'a Point,
        repeat: u32,
        number: usize,
        runs: usize,
    },
    Progress {
        elapsed_s: f64,
        requests: u64,
        errors: u64,
        /// The p95 of the last whole second, in milliseconds.
        p95_ms: Option<f64>,
    },
    RunFinished {
        phase: &'a str,
        point: &'a Point,
        result: &'a RunResult,
    },
}

/// How the whole run went.
pub struct Outcome {
    pub results: Results,
    pub failed_runs: usize,
    pub slo_failures: usize,
    /// SLO verdicts whose figure was not measured, baseline points left out.
    pub slo_unmeasured: usize,
    pub interrupted: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("no phase is named {0}; the phases are: {1}")]
    UnknownPhase(String, String),
    /// A point this machine cannot hold (open files, memory), found before anything ran.
    #[error("{0}")]
    Machine(String),
}

/// Runs the plan; `cancel` turning true (Ctrl-C) ends the run in flight and stops.
pub async fn run(
    plan: &ResolvedPlan,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Outcome, RunError> {
    raise_open_files();
    let plan = if options.quick {
        crate::quick::scale(plan)
    } else {
        plan.clone()
    };
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    for wanted in &options.phases {
        if !names.contains(&wanted.as_str()) {
            return Err(RunError::UnknownPhase(wanted.clone(), names.join(", ")));
        }
    }
    let selected: Vec<&PhasePlan> = plan
        .phases
        .iter()
        .filter(|p| options.phases.is_empty() || options.phases.contains(&p.name))
        .collect();
    // Checked against this machine before any target starts: a point past its file limit
    // would fail half-way, its sockets unopened and its /proc unreadable.
    let selected_names: Vec<&str> = selected.iter().map(|p| p.name.as_str()).collect();
    if let Some(why) =
        crate::machine::refusal(&plan, &selected_names, &crate::machine::Machine::read())
    {
        return Err(RunError::Machine(why));
    }
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
            plan: plan.clone(),
            phases: Vec::new(),
        },
    };
    // The target's working directory tells which revision of it ran, when it is a checkout.
    let target_dir = match plan.target.cwd.as_deref().filter(|cwd| !cwd.contains('{')) {
        Some(cwd) => options.spec_dir.join(cwd),
        None => options.spec_dir.clone(),
    };
    results.environment = crate::environment::read(&options.version, &target_dir);
    results.plan = plan.clone();
    results.quick = options.quick;
    results.spec = SpecRef {
        path: options.spec_path.clone(),
        hash: options.spec_hash.clone(),
    };
    let repeats = |phase: &PhasePlan| options.repeats.unwrap_or(phase.repeats);
    let runs: usize = selected
        .iter()
        .map(|p| p.points.len() * repeats(p) as usize)
        .sum();
    let estimated_s: f64 = selected
        .iter()
        .flat_map(|p| {
            p.points
                .iter()
                .map(move |point| point.run_time.as_secs_f64() * repeats(p) as f64)
        })
        .sum();
    on_event(Event::Started { runs, estimated_s });
    let (mut number, mut failed_runs, mut slo_failures, mut interrupted) = (0, 0, 0, false);
    let mut slo_unmeasured = 0;
    'phases: for phase in selected {
        let slot = match results.phases.iter().position(|p| p.name == phase.name) {
            Some(i) => i,
            None => {
                results.phases.push(PhaseResults {
                    name: phase.name.clone(),
                    points: Vec::new(),
                });
                results.phases.len() - 1
            }
        };
        results.phases[slot].points.clear();
        for point in &phase.points {
            results.phases[slot].points.push(PointResults {
                index: point.index,
                at: point.at.clone(),
                runs: Vec::new(),
            });
            let mut failed_here = false;
            for repeat in 1..=repeats(phase) {
                if *cancel.borrow() {
                    interrupted = true;
                    break 'phases;
                }
                number += 1;
                on_event(Event::RunStarted {
                    phase: &phase.name,
                    point,
                    repeat,
                    number,
                    runs,
                });
                let result = run_once(
                    &plan,
                    phase,
                    point,
                    repeat,
                    options,
                    cancel.clone(),
                    on_event,
                )
                .await;
                if result.failure.is_some() {
                    failed_runs += 1;
                    failed_here = true;
                }
                if matches!(result.failure, Some(Failure::Interrupted)) {
                    interrupted = true;
                }
                slo_failures += result.slo.iter().filter(|v| v.pass == Some(false)).count();
                // At the baseline (0 units) nothing is sent by design: its SLOs are not owed.
                if !is_baseline(&plan, point) {
                    slo_unmeasured += result.slo.iter().filter(|v| v.pass.is_none()).count();
                }
                on_event(Event::RunFinished {
                    phase: &phase.name,
                    point,
                    result: &result,
                });
                if let Some(points) = results.phases[slot].points.last_mut() {
                    points.runs.push(result);
                }
                results.write(&options.out)?;
                if interrupted {
                    break 'phases;
                }
                if !phase.cooldown.as_std().is_zero() {
                    tokio::time::sleep(phase.cooldown.as_std()).await;
                }
            }
            if failed_here && phase.on_failure == OnFailure::Stop {
                break;
            }
        }
    }
    results.write(&options.out)?;
    Ok(Outcome {
        results,
        failed_runs,
        slo_failures,
        slo_unmeasured,
        interrupted,
    })
}

/// A point where the units variable is 0: the server with no load, measured for its memory.
fn is_baseline(plan: &ResolvedPlan, point: &Point) -> bool {
    plan.capacity
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

async fn run_once(
    plan: &ResolvedPlan,
    phase: &PhasePlan,
    point: &Point,
    repeat: u32,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> RunResult {
    let started = Instant::now();
    let mut result = RunResult {
        repeat,
        started_ms: unix_ms(),
        duration_s: 0.0,
        port: 0,
        log: None,
        ready_after_s: None,
        load_average: LoadAverage::default(),
        failure: None,
        stopped: None,
        scenarios: BTreeMap::new(),
        process: ProcessResult::default(),
        metrics: MetricsResult::default(),
        generator: GeneratorResult::default(),
        slo: Vec::new(),
        notes: Vec::new(),
    };
    let target = &point.target;
    if target.limits.is_some() {
        result.notes.push(LIMITS_NOT_APPLIED.to_owned());
    }
    let allowed = http::Allowed::new(&target.allow_hosts);
    let mut external_group = None;
    // Where readiness and metrics are read: resolved and checked once, before the target
    // starts (a host load may not go to fails the run before anything runs).
    let (port, mut running, (ready_endpoint, metrics_endpoint)) = match &target.url {
        Some(url) => {
            let url =
                crate::target::fill(url, 0, &options.headroom).unwrap_or_else(|_| url.clone());
            let port = http::parse_url(&url)
                .and_then(|(authority, _)| authority.rsplit(':').next()?.parse().ok())
                .unwrap_or(80);
            let checked = match external_url_allowed(&url, target, &allowed).await {
                Ok(()) => endpoints(target, port, &options.headroom, &allowed).await,
                Err(message) => Err(message),
            };
            let endpoints = match checked {
                Ok(endpoints) => endpoints,
                Err(message) => {
                    result.failure = Some(Failure::Load { message });
                    return finish(result, started, plan);
                }
            };
            result
                .notes
                .push("an external target: the runner neither started nor stopped it".to_owned());
            match &target.pid_file {
                Some(file) => match external_pid(file, &options.spec_dir, &options.headroom) {
                    Ok(group) => external_group = Some(group),
                    Err(why) => result.notes.push(format!("its process was not sampled: {why}")),
                },
                None => result.notes.push(
                    "its process was not sampled: give `pid_file` in [target] to sample an external target".to_owned(),
                ),
            }
            (port, None, endpoints)
        }
        None => {
            let port = match free_port() {
                Ok(port) => port,
                Err(e) => {
                    result.failure = Some(Failure::SpawnFailed {
                        message: format!("no free loopback port: {e}"),
                    });
                    return finish(result, started, plan);
                }
            };
            let endpoints = match endpoints(target, port, &options.headroom, &allowed).await {
                Ok(endpoints) => endpoints,
                Err(message) => {
                    result.failure = Some(Failure::Load { message });
                    return finish(result, started, plan);
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
                headroom: &options.headroom,
                spec_dir: &options.spec_dir,
                log,
            };
            match Running::start(&launch).await {
                Ok(running) => (port, Some(running), endpoints),
                Err(failure) => {
                    result.failure = Some(failure);
                    return finish(result, started, plan);
                }
            }
        }
    };
    result.port = port;
    if let Some(running) = running.as_mut() {
        match running
            .wait_ready(target, port, ready_endpoint.as_ref())
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
                return finish(result, started, plan);
            }
        }
    }
    let group = running.as_ref().map(|r| r.pid as i32).or(external_group);
    let load_started = Instant::now();
    let cpu_before = sample::own_cpu_s();

    // The sampler: the process group every `sample_every`, and the load average.
    let (stop_sampling, sampling) = watch::channel(false);
    let sampler = tokio::spawn(sampler(
        group,
        phase.measure.sample_every.as_std(),
        load_started,
        sampling,
    ));

    // The load, watched for the target's death and for Ctrl-C, up to the point where every
    // scenario is held (HTTP: finished; rooms: drained, sockets still open).
    let (abort, aborted) = watch::channel(false);
    let (release, released) = watch::channel(false);
    let (arrivals, mut arrived) = watch::channel(0usize);
    let arrivals = Arc::new(arrivals);
    let live = Arc::new(load::Live::default());
    let mut scenarios = tokio::spawn(run_scenarios(
        point.scenarios.clone(),
        port,
        options.headroom.clone(),
        allowed.clone(),
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

    // The steady state, when the run is still whole.
    if result.failure.is_none() {
        let steady = steady_state(
            &phase.measure,
            metrics_endpoint.as_ref(),
            group,
            load_started,
        )
        .await;
        result.metrics = steady.0;
        let readings = steady.1;
        result.process.steady =
            steady_process(&readings.samples, phase.measure.steady_state.reduce);
        result.process.failed_samples += readings.failed;
        if readings.error.is_some() {
            result.process.sample_error = readings.error;
        }
        // Memory and CPU at steady state are what the page fits and prices: a group that was
        // there and could not be read is a failed run, not a run that used nothing.
        if result.process.steady.is_none()
            && group.is_some()
            && let Some(why) = &result.process.sample_error
        {
            result.failure = Some(Failure::ProcessUnread { why: why.clone() });
        }
        // A declared series that no scrape held: what the page fits was not measured. At the
        // baseline (no load), a counter that only appears with traffic may be absent.
        if !result.metrics.missing.is_empty() && !is_baseline(plan, point) {
            let metrics = &result.metrics;
            let why = match &metrics.scrape_error {
                Some(error) => format!(
                    "{} of {} scrapes failed ({error})",
                    metrics.failed_scrapes, phase.measure.steady_state.scrapes
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
        && let Some(running) = running.as_mut()
        && let Some(exit) = running.exited()
    {
        result.failure = Some(Failure::Died {
            exit,
            stderr_tail: running.stderr_tail(),
        });
    }
    let _ = stop_sampling.send(true);
    if let Ok((readings, load_average)) = sampler.await {
        result.process.samples = readings.samples;
        result.process.failed_samples += readings.failed;
        if result.process.sample_error.is_none() {
            result.process.sample_error = readings.error;
        }
        result.load_average = load_average;
    }
    if let Some(running) = running.as_mut() {
        result.stopped = Some(
            running
                .stop(target.stop.signal, target.stop.grace.as_std())
                .await,
        );
    }
    result.generator = generator(&result.scenarios, cpu_used, load_seconds);
    finish(result, started, plan)
}

fn finish(mut result: RunResult, started: Instant, plan: &ResolvedPlan) -> RunResult {
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

/// The note on a run whose spec sets `[target] limits`: they are not applied yet (W005).
pub const LIMITS_NOT_APPLIED: &str = "[target] limits were not applied: the target ran with the whole machine's CPUs and memory, not the instance size the limits describe";
