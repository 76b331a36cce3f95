//! A row per point: min, median and max over its repeats, per scenario.

use std::collections::BTreeSet;

use headroom_figures::{Named, Reading, figures_count};
use headroom_matrix::slo::{ScenarioFigure, Statistic};

use super::series::SeriesCell;
use super::stat::Stat;
use headroom_results::{MessageCounts, PointResults, RunResult, ScenarioResult};
use headroom_spec::VarValue;
use schemars::JsonSchema;
use serde::Serialize;

/// One named request of an HTTP scenario at one point, measured apart over the repeats.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct RequestCell {
    /// `scenario.request`: `browse.list`.
    pub name: String,
    /// Requests of this kind over the repeats.
    pub requests: Option<Stat>,
    /// Its latency's p50 over the repeats, in milliseconds.
    pub p50_ms: Option<Stat>,
    /// Its latency's p95 over the repeats, in milliseconds.
    pub p95_ms: Option<Stat>,
    /// Its latency's p99 over the repeats, in milliseconds.
    pub p99_ms: Option<Stat>,
    /// Failed requests of this kind in a run (the figure catalogue's errors: those intended
    /// in the hold), over the repeats, as `requests` is.
    pub errors: Option<Stat>,
    /// Those errors by kind, in all the repeats together (`12 unexpected status (12 ×
    /// 500)`); empty without errors.
    pub errors_by_kind: String,
    /// The latency SLOs that judge this request apart, as written after its figure (`p95 <
    /// 100ms`); empty when none does.
    pub slos: Vec<String>,
}

/// One figure over a point's runs: the values in milliseconds, and the runs in which it was a
/// time that never came.
struct OverRuns {
    values: Option<Stat>,
    never: usize,
}

/// A time figure of every run of a point that measured it, read through the catalogue.
fn over_runs(runs: &[RunResult], named: Named<'_>) -> OverRuns {
    let readings: Vec<Reading> = runs
        .iter()
        .filter(|run| figures_count(run))
        .filter_map(|run| headroom_figures::read(run, &named).ok())
        .collect();
    let values: Vec<f64> = readings
        .iter()
        .filter_map(|reading| reading.value())
        .map(|seconds| seconds * 1000.0)
        .collect();
    OverRuns {
        values: Stat::of(&values),
        never: readings.len() - values.len(),
    }
}

/// The named requests of `names`' scenarios measured apart at `point`, scenario by scenario.
fn request_cells(point: &PointResults, names: &[String]) -> Vec<RequestCell> {
    let mut cells = Vec::new();
    for scenario in names {
        let requests: BTreeSet<&String> = point
            .runs
            .iter()
            .filter(|r| figures_count(r))
            .filter_map(|r| r.scenarios.get(scenario))
            .flat_map(|s| s.by_request.keys())
            .collect();
        for request in requests {
            let apart: Vec<&headroom_results::RequestResult> = point
                .runs
                .iter()
                .filter(|r| figures_count(r))
                .filter_map(|r| r.scenarios.get(scenario)?.by_request.get(request))
                .collect();
            let latency = Named::scenario(scenario, ScenarioFigure::Latency).of_request(request);
            let quantile = |statistic| over_runs(&point.runs, latency.at(statistic)).values;
            let counts: Vec<f64> = apart.iter().map(|a| a.requests as f64).collect();
            let failed: Vec<f64> = apart.iter().map(|a| a.errors.total() as f64).collect();
            let mut by_kind = headroom_results::ErrorCounts::default();
            for one in &apart {
                by_kind.add(&one.errors);
            }
            cells.push(RequestCell {
                name: format!("{scenario}.{request}"),
                requests: Stat::of(&counts),
                p50_ms: quantile(Statistic::P50),
                p95_ms: quantile(Statistic::P95),
                p99_ms: quantile(Statistic::P99),
                errors: Stat::of(&failed),
                errors_by_kind: by_kind.describe(),
                slos: Vec::new(),
            });
        }
    }
    cells
}

pub(super) fn point_row(point: &PointResults, names: &[String]) -> Point {
    let runs = &point.runs;
    let rss: Vec<f64> = runs
        .iter()
        .filter(|r| figures_count(r))
        .filter_map(|r| r.process.steady.as_ref())
        .map(|s| s.rss_bytes as f64)
        .collect();
    let cpu: Vec<f64> = runs
        .iter()
        .filter(|r| figures_count(r))
        .filter_map(|r| r.process.hold_cpu_cores)
        .collect();
    let scenarios = names
        .iter()
        .filter_map(|name| scenario_cell(runs, name))
        .collect();
    let mut slo_failed = Vec::new();
    let mut slo_unmeasured = Vec::new();
    let mut failures = Vec::new();
    for run in runs {
        for verdict in &run.slo {
            let list = match verdict.pass {
                Some(false) => &mut slo_failed,
                None => &mut slo_unmeasured,
                Some(true) => continue,
            };
            if !list.contains(&verdict.name) {
                list.push(verdict.name.clone());
            }
        }
        if let Some(failure) = &run.failure {
            failures.push(failure.kind().replace('_', " "));
        }
    }
    Point {
        variables: variables(&point.at),
        x: None,
        runs: runs.len(),
        rss_bytes: Stat::of(&rss),
        cpu_cores: Stat::of(&cpu),
        scenarios,
        requests: request_cells(point, names),
        slo_failed,
        slo_unmeasured,
        slo_judged: runs.iter().any(|run| !run.slo.is_empty()),
        failures,
        services: Vec::new(),
        series: Vec::new(),
    }
}

/// One scenario's cell at a point, over the runs whose figures count; `None` when no such
/// run ran it.
fn scenario_cell(runs: &[RunResult], name: &str) -> Option<ScenarioCell> {
    let results: Vec<&ScenarioResult> = runs
        .iter()
        .filter(|r| figures_count(r))
        .filter_map(|r| r.scenarios.get(name))
        .filter(|s| s.skipped.is_none())
        .collect();
    let first = results.first()?;
    let kind = first.kind.clone();
    let rooms = kind == "rooms";
    let requests: Vec<f64> = results.iter().map(|s| s.requests as f64).collect();
    // Rooms: the time until everyone had a message; HTTP: the request latency. Read as
    // the figure catalogue defines them, as the SLO verdicts and the run table read them.
    let figure = if rooms {
        ScenarioFigure::SeenByAll
    } else {
        ScenarioFigure::Latency
    };
    let quantile = |statistic| over_runs(runs, Named::scenario(name, figure).at(statistic));
    let p95 = quantile(Statistic::P95);
    let mut by_kind = headroom_results::ErrorCounts::default();
    for result in &results {
        by_kind.add(&result.errors);
    }
    let failed: Vec<f64> = results.iter().map(|s| s.errors.total() as f64).collect();
    let dropped: Vec<f64> = results.iter().map(|s| s.dropped as f64).collect();
    let sum = |pick: fn(&MessageCounts) -> u64| -> Option<u64> {
        rooms.then(|| {
            results
                .iter()
                .filter_map(|s| s.rooms.as_ref())
                .map(|r| pick(&r.messages))
                .sum()
        })
    };
    Some(ScenarioCell {
        name: name.to_owned(),
        kind,
        requests: Stat::of(&requests),
        p95_ms: p95.values,
        p95_never: p95.never,
        p50_ms: quantile(Statistic::P50).values,
        p99_ms: quantile(Statistic::P99).values,
        errors: Stat::of(&failed),
        errors_by_kind: by_kind.describe(),
        dropped: Stat::of(&dropped).filter(|d| d.max > 0.0),
        delivered: sum(|m| m.delivered),
        expected: sum(|m| m.expected),
        misrouted: sum(|m| m.misrouted).filter(|n| *n > 0),
        duplicates: sum(|m| m.duplicates).filter(|n| *n > 0),
    })
}

/// Each service's memory and CPU at one point, over its runs that did not fail.
pub(super) fn service_cells(point: &PointResults, names: &[String]) -> Vec<ServiceCell> {
    let runs: Vec<_> = point.runs.iter().filter(|r| figures_count(r)).collect();
    names
        .iter()
        .map(|name| {
            let processes: Vec<_> = runs
                .iter()
                .filter_map(|r| r.services.get(name))
                .map(|s| &s.process)
                .collect();
            let rss: Vec<f64> = processes
                .iter()
                .filter_map(|p| p.steady.as_ref())
                .map(|s| s.rss_bytes as f64)
                .collect();
            let cpu: Vec<f64> = processes.iter().filter_map(|p| p.hold_cpu_cores).collect();
            ServiceCell {
                name: name.clone(),
                rss_bytes: Stat::of(&rss),
                cpu_cores: Stat::of(&cpu),
            }
        })
        .collect()
}

/// One service of a stack at one point: its own memory and CPU.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ServiceCell {
    /// The service's name.
    pub name: String,
    /// Its memory at the steady state over the repeats, in bytes (one process: RSS; several:
    /// their PSS summed, shared pages once).
    pub rss_bytes: Option<Stat>,
    /// Its CPU while every scenario held its load, in cores, over the repeats.
    pub cpu_cores: Option<Stat>,
}

/// `rooms = 16, edit_rate = 0.45/s`, or `(one point)` for a phase without axes.
pub(super) fn variables(at: &std::collections::BTreeMap<String, VarValue>) -> String {
    if at.is_empty() {
        return "(one point)".to_owned();
    }
    headroom_spec::vars::point_label(at)
}

/// One point of a phase: a row of the page's table.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Point {
    /// The swept variables as people read them: `rooms = 16`.
    pub variables: String,
    /// Its value on the phase's `axis` (`400` of `rate = 400/s`); `null` without one.
    pub x: Option<f64>,
    /// How many runs (repeats) the point had.
    pub runs: usize,
    /// The steady-state resident set over the repeats, in bytes; `null` when no run measured it.
    pub rss_bytes: Option<Stat>,
    /// The server's CPU over the hold, in cores, over the repeats; `null` when not measured.
    pub cpu_cores: Option<Stat>,
    /// A cell per scenario of the phase, in `Phase.scenarios`' order.
    pub scenarios: Vec<ScenarioCell>,
    /// A cell per named request measured apart (`browse.list`), in order.
    pub requests: Vec<RequestCell>,
    /// SLOs that failed at some run of the point.
    pub slo_failed: Vec<String>,
    /// SLOs whose figure was not measured at some run (no request sent): never a pass.
    pub slo_unmeasured: Vec<String>,
    /// Whether any SLO was judged at the point: without SLOs (or on a segment's share) its
    /// column reads "–", never "pass".
    pub slo_judged: bool,
    /// Why runs failed, when some did.
    pub failures: Vec<String>,
    /// A stack's services apart, in `Phase.services`' order; the RSS above is their sum.
    pub services: Vec<ServiceCell>,
    /// Each `[measure]` series, in `Phase.series`' order.
    pub series: Vec<SeriesCell>,
}

/// One scenario at one point: a cell group of the row.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ScenarioCell {
    /// The scenario's name.
    pub name: String,
    /// `http` or `rooms`.
    pub kind: String,
    /// HTTP: requests; rooms: messages sent.
    pub requests: Option<Stat>,
    /// HTTP: the request latency's p95; rooms: the time until everyone had a message, p95
    /// (over the runs where it came).
    pub p95_ms: Option<Stat>,
    /// Rooms: the runs whose p95 never came (it falls among messages that never reached
    /// everyone: the figure catalogue's `seen_by_all`).
    pub p95_never: usize,
    /// The same latency's p50 and p99.
    pub p50_ms: Option<Stat>,
    /// The latency's p99 over the repeats, in milliseconds.
    pub p99_ms: Option<Stat>,
    /// Failed requests in a run (rooms: sockets that failed), over the repeats, as
    /// `requests` is: the run table's and the SLOs' errors, starts dropped at `max_in_flight`
    /// not among them (`dropped`).
    pub errors: Option<Stat>,
    /// The errors by kind, in all the repeats together, as the results have them (`12
    /// unexpected status (12 × 500), 2 timed out`); empty without errors.
    pub errors_by_kind: String,
    /// HTTP: starts due in the hold but skipped at `max_in_flight`, over the repeats; `null`
    /// when no run dropped one.
    pub dropped: Option<Stat>,
    /// Rooms: frames delivered and expected, summed over the repeats.
    pub delivered: Option<u64>,
    /// Rooms: frames expected, summed over the repeats; `null` for HTTP.
    pub expected: Option<u64>,
    /// Rooms: copies at a socket outside the sender's room, summed over the repeats; `null`
    /// when there were none (the figure catalogue's `misrouted`).
    #[serde(default)]
    pub misrouted: Option<u64>,
    /// Rooms: second and later copies at one recipient, summed over the repeats; `null` when
    /// there were none (`duplicates`).
    #[serde(default)]
    pub duplicates: Option<u64>,
}
