//! What a run gathered, into its result: the steady state read once every scenario holds
//! (the process and the metrics), the samples taken during the load, and each scenario's
//! outcome on the run's one hold.

use super::is_baseline;
use crate::results::{Failure, RunResult};
use crate::sample;
use crate::scenarios::nothing_measured;
use crate::steady::{steady_process, steady_state};
use headroom_load::{hold::RunHold, web};
use headroom_matrix::{MatrixPhase, Point, RunMatrix};
use tokio::time::Instant;

/// The steady state of one run: what it reads, and where.
pub(super) struct Steady<'a> {
    pub(super) matrix: &'a RunMatrix,
    pub(super) phase: &'a MatrixPhase,
    pub(super) point: &'a Point,
    pub(super) metrics: Option<&'a web::Endpoint>,
    pub(super) groups: Vec<(Option<String>, crate::sample::ServerProcesses)>,
    pub(super) load_started: Instant,
}

impl Steady<'_> {
    /// Scrapes the metrics and reads the process at steady state into `result`; a process
    /// that could not be read, or a declared series no scrape held, fails the run.
    pub(super) async fn measure(&self, result: &mut RunResult) {
        if result.failure.is_some() {
            return;
        }
        let measure = &self.phase.measure;
        let groups = self.groups.clone();
        let (metrics, sampled, unscraped) =
            steady_state(measure, self.metrics, groups, self.load_started).await;
        result.metrics = metrics;
        let reduce = measure.steady_state.reduce;
        crate::stack::take_readings(
            result,
            sampled.readings,
            sampled.total,
            |process, readings| {
                process.steady = steady_process(&readings.samples, reduce);
                process.failed_samples += readings.failed;
                if readings.error.is_some() {
                    process.sample_error = readings.error;
                }
            },
        );
        // Memory and CPU at steady state are what the page fits and prices: a group that was
        // there and could not be read is a failed run, not a run that used nothing.
        if result.process.steady.is_none()
            && !self.groups.is_empty()
            && let Some(why) = &result.process.sample_error
        {
            result.failure = Some(Failure::ProcessUnread { why: why.clone() });
        }
        // A declared series that no scrape held: what the page fits was not measured. At the
        // baseline (no load), a counter that only appears with traffic may be absent.
        if !result.metrics.missing.is_empty() && !is_baseline(self.matrix, self.point) {
            let metrics = &result.metrics;
            let why = match &metrics.scrape_error {
                Some(error) => format!(
                    "{} of {} scrapes failed ({error})",
                    metrics.failed_scrapes, measure.steady_state.scrapes
                ),
                None if !unscraped.is_empty() => unscraped.join("; "),
                None => "the metrics held no such series (check its labels in [measure])".into(),
            };
            result.failure = Some(Failure::MetricsMissing {
                series: metrics.missing.clone(),
                why,
            });
        }
    }
}

/// The load's samples into `result` (each service's and their sum, or the target's), with
/// the CPU over the run's hold read from them, and what others took of the machine meanwhile.
pub(super) fn take_samples(result: &mut RunResult, sampled: sample::Sampled) {
    let window = result.hold.map(|hold| (hold.from_s, hold.to_s));
    let machine = sampled.machine;
    crate::stack::take_readings(
        result,
        sampled.readings,
        sampled.total,
        |process, readings| {
            process.hold_cpu_cores =
                window.and_then(|window| sample::cpu_cores_over(&readings.samples, window));
            process.samples = readings.samples;
            process.failed_samples += readings.failed;
            if process.sample_error.is_none() {
                process.sample_error = readings.error;
            }
        },
    );
    result.machine_cpu = window
        .zip(result.process.hold_cpu_cores)
        .and_then(|(window, target)| sample::machine_cpu_over(&machine, window, target));
}

/// The scenarios' outcomes and the run's hold into `result`; what fails the run: a scenario
/// that failed or measured nothing, the target's death, the load not carried.
pub(super) fn take_outcomes(
    result: &mut RunResult,
    outcomes: Vec<(String, Result<crate::results::ScenarioResult, String>)>,
    run_hold: &RunHold,
    point: &Point,
    stack: &mut crate::stack::Stack,
) {
    result.hold = run_hold.window().map(|window| {
        let (from_s, to_s) = run_hold.seconds(&window);
        crate::results::Interval { from_s, to_s }
    });
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
        && let Some(died) = stack.died()
    {
        result.failure = Some(died);
    }
    if result.failure.is_none()
        && let Some(failure) = super::carried::not_carried(result)
    {
        result.failure = Some(failure);
    }
}
