//! The points the planner fits: from a `headroom run` results file, or from a CSV measured
//! elsewhere (k6 numbers in a spreadsheet).
//!
//! The results file is read through its typed contract (`headroom-results`), never by key:
//! a renamed field fails to compile here, it does not empty a figure.

use std::collections::BTreeMap;

use headroom_matrix::MatrixPhase;
use headroom_results::{Results, RunResult, SloVerdict};
use headroom_spec::{Series, SeriesUnit, VarValue};
use serde::Serialize;

mod csv_points;
mod verdict;
pub use csv_points::from_csv;
pub use verdict::StepVerdict;

/// What a series' values are, from its name's suffix (CSV) or its source (results).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Kept in bytes (`_bytes`, `_kib`, `_mib`, `_gib` are converted).
    Bytes,
    /// Kept in seconds (`_ms`, `_s`).
    Seconds,
    /// Kept as a fraction (`_pct` is divided by 100).
    Fraction,
    /// A plain number.
    Plain,
}

/// One series against x: every run (or CSV row) is a point, repeats included.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SeriesPoints {
    /// The series' name (`rss`, a column).
    pub name: String,
    /// Its unit.
    pub unit: Unit,
    /// `(x, value)` per run.
    pub points: Vec<(f64, f64)>,
}

/// The points of one sweep.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MeasuredSweep {
    /// The phase (or `csv`).
    pub name: String,
    /// The variable on the x axis.
    pub x: String,
    /// Every series measured over the sweep.
    pub series: Vec<SeriesPoints>,
    /// The instance whose shape the sweep ran in (`[plan] emulate`); `None` for a phase of the
    /// spec's own.
    pub emulates: Option<headroom_matrix::EmulatedInstance>,
    /// The core count the sweep ran the ceiling phase at (`[plan] scale_cores`); `None` for
    /// a phase of the spec's own.
    pub scales: Option<headroom_matrix::ScaledCores>,
    /// The cgroup shape its runs were measured in, in words (`2 CPU, 3.5GiB memory, no swap
    /// (cgroup v1)`); `None` when no limits were applied.
    pub measured_in: Option<String>,
    /// Per x that was judged (by SLOs, or by a run that failed): whether every run there
    /// passed, and what did not. An x where nothing was judged has no entry.
    pub verdicts: BTreeMap<OrderedX, StepVerdict>,
    /// How the phase searched its ceiling, when it did: its bracket is the SLO ceiling.
    pub search: Option<headroom_results::SearchRecord>,
}

impl MeasuredSweep {
    /// A sweep of the spec's own (or given points): not run in an instance's shape, no limits.
    pub fn new(
        name: &str,
        x: &str,
        series: Vec<SeriesPoints>,
        verdicts: BTreeMap<OrderedX, StepVerdict>,
    ) -> MeasuredSweep {
        MeasuredSweep {
            name: name.to_owned(),
            x: x.to_owned(),
            series,
            emulates: None,
            scales: None,
            measured_in: None,
            verdicts,
            search: None,
        }
    }
}

/// An x value usable as a map key (x values are finite).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct OrderedX(pub f64);

impl PartialOrd for OrderedX {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Eq for OrderedX {}

impl Ord for OrderedX {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Why points could not be read; CSV errors carry the 1-based line and column.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointsError {
    /// A CSV that does not read.
    #[error("line {line}, column {column}: {message}")]
    Csv {
        /// The line, from 1.
        line: u64,
        /// The column, from 1.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A results file that does not give points.
    #[error("{0}")]
    Results(String),
}

/// Why `--slo 'SERIES < VALUE'` could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SloFilterError {
    /// No `<`, `<=`, `>`, `>=` or `==`.
    #[error("`--slo {0}` has no comparison; write it as `p95_ms < 200`")]
    NoComparison(String),
    /// The value is not a finite number.
    #[error("`--slo {slo}`: the value after `{operator}` is not a finite number")]
    NotANumber {
        /// The flag's value.
        slo: String,
        /// The comparison found.
        operator: String,
    },
    /// No sweep has the series.
    #[error("`--slo {slo}`: no sweep has a series `{series}`")]
    NoSeries {
        /// The flag's value.
        slo: String,
        /// The series it names.
        series: String,
    },
}

/// Applies `--slo 'SERIES < VALUE'` to the points: a point where the series breaks the
/// threshold fails. The value is in the series' column unit (`p95_ms < 200` is 200 ms).
pub fn apply_slo(sweeps: &mut [MeasuredSweep], slo: &str) -> Result<(), SloFilterError> {
    const OPERATORS: [&str; 5] = ["<=", ">=", "==", "<", ">"];
    let (at, op) = OPERATORS
        .iter()
        .filter_map(|op| slo.find(op).map(|at| (at, *op)))
        .min_by_key(|(at, op)| (*at, std::cmp::Reverse(op.len())))
        .ok_or_else(|| SloFilterError::NoComparison(slo.to_owned()))?;
    let series = slo[..at].trim();
    let threshold: f64 = slo[at + op.len()..]
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| SloFilterError::NotANumber {
            slo: slo.to_owned(),
            operator: op.to_owned(),
        })?;
    let threshold = threshold * unit_scale(series);
    let mut found = false;
    for sweep in sweeps.iter_mut() {
        let Some(points) = sweep
            .series
            .iter()
            .find(|s| s.name == series)
            .map(|s| s.points.clone())
        else {
            continue;
        };
        found = true;
        for (x, value) in points {
            let holds = match op {
                "<" => value < threshold,
                "<=" => value <= threshold,
                ">" => value > threshold,
                ">=" => value >= threshold,
                _ => (value - threshold).abs() <= f64::EPSILON * threshold.abs().max(1.0),
            };
            let verdict = sweep
                .verdicts
                .entry(OrderedX(x))
                .or_insert_with(StepVerdict::passing);
            verdict.judge((!holds).then(|| format!("`{slo}` failed")));
        }
    }
    if !found {
        return Err(SloFilterError::NoSeries {
            slo: slo.to_owned(),
            series: series.to_owned(),
        });
    }
    Ok(())
}

/// The factor from a column's written unit to the unit it is kept in (`_ms` → 0.001).
pub fn unit_scale(name: &str) -> f64 {
    series_unit(name).1
}

pub(crate) fn series_unit(name: &str) -> (Unit, f64) {
    const SUFFIXES: &[(&str, Unit, f64)] = &[
        ("_bytes", Unit::Bytes, 1.0),
        ("_kib", Unit::Bytes, 1024.0),
        ("_mib", Unit::Bytes, 1_048_576.0),
        ("_gib", Unit::Bytes, 1_073_741_824.0),
        ("_ms", Unit::Seconds, 0.001),
        ("_s", Unit::Seconds, 1.0),
        ("_pct", Unit::Fraction, 0.01),
    ];
    SUFFIXES
        .iter()
        .find(|(suffix, _, _)| name.ends_with(suffix))
        .map_or((Unit::Plain, 1.0), |(_, unit, scale)| (*unit, *scale))
}

/// The sweeps of a results file: one per phase with one axis (or with the units variable
/// among its axes), every run a point of every series it measured (`rss`, and each metrics
/// series), repeats included. Failed runs add no point, and judge their x as failed.
pub fn from_results(results: &Results) -> Vec<MeasuredSweep> {
    let units = results.matrix.capacity.units.as_deref();
    let mut sweeps = Vec::new();
    for phase in &results.phases {
        let Some(plan) = results.matrix.phases.iter().find(|p| p.name == phase.name) else {
            continue;
        };
        let axes: Vec<&str> = plan.axes.iter().map(|a| a.variable.as_str()).collect();
        let x = match (axes.as_slice(), units) {
            ([only], _) => *only,
            (_, Some(units)) if axes.contains(&units) => units,
            _ => continue,
        };
        let mut by_series: BTreeMap<String, SeriesPoints> = BTreeMap::new();
        let mut verdicts = BTreeMap::new();
        for point in &phase.points {
            let Some(x_value) = point.at.get(x).and_then(number) else {
                continue;
            };
            for run in &point.runs {
                judge_step(&mut verdicts, x_value, run, &results.matrix.slo);
                if headroom_figures::figures_count(run) {
                    add_series(&mut by_series, plan, x_value, run);
                }
            }
        }
        let measured_in =
            phase
                .points
                .iter()
                .flat_map(|p| p.runs.iter())
                .find_map(|run| match &run.limits {
                    Some(headroom_results::RunLimits::Applied(applied)) => Some(applied.describe()),
                    _ => None,
                });
        sweeps.push(MeasuredSweep {
            name: phase.name.clone(),
            x: x.to_owned(),
            series: by_series.into_values().collect(),
            emulates: plan.emulates.clone(),
            scales: plan.scales.clone(),
            measured_in,
            verdicts,
            search: phase.search.clone(),
        });
    }
    sweeps
}

/// A run's word on the step at `x_value`: a point is judged by its SLOs, or by a run that
/// failed; a point with neither says nothing about a ceiling. The baseline (0 units) with
/// nothing measured is not a step of the ceiling: no load was sent there by design.
fn judge_step(
    verdicts: &mut BTreeMap<OrderedX, StepVerdict>,
    x_value: f64,
    run: &RunResult,
    rules: &[headroom_matrix::slo::SloRule],
) {
    let baseline =
        x_value == 0.0 && run.failure.is_none() && run.slo.iter().all(|v| v.pass.is_none());
    if baseline || (run.failure.is_none() && run.slo.is_empty()) {
        return;
    }
    let entry = verdicts
        .entry(OrderedX(x_value))
        .or_insert_with(StepVerdict::passing);
    if let Some(failure) = &run.failure {
        entry.judge_unmeasured(format!(
            "a run failed ({})",
            failure.kind().replace('_', " ")
        ));
    }
    for slo in &run.slo {
        match (slo.pass, broken_slo(slo, rules)) {
            (None, Some(why)) => entry.judge_unmeasured(why),
            (_, broke) => entry.judge(broke),
        }
    }
}

/// A run's points at `x_value` of every series it measured: `rss`, `cpu` (from the hold,
/// never from the steady state, which is read from an idle server after the load), each
/// service's apart (`db.rss`, `db.cpu`; the two above are their sum) and each metrics series.
fn add_series(
    by_series: &mut BTreeMap<String, SeriesPoints>,
    plan: &MatrixPhase,
    x_value: f64,
    run: &RunResult,
) {
    let mut add = |name: &str, unit: Unit, value: f64| {
        by_series
            .entry(name.to_owned())
            .or_insert_with(|| SeriesPoints {
                name: name.to_owned(),
                unit,
                points: Vec::new(),
            })
            .points
            .push((x_value, value));
    };
    if let Some(steady) = &run.process.steady {
        add("rss", Unit::Bytes, steady.rss_bytes as f64);
    }
    if let Some(cores) = run.process.hold_cpu_cores {
        add("cpu", Unit::Plain, cores);
    }
    for (service, result) in &run.services {
        if let Some(steady) = &result.process.steady {
            add(
                &format!("{service}.rss"),
                Unit::Bytes,
                steady.rss_bytes as f64,
            );
        }
        if let Some(cores) = result.process.hold_cpu_cores {
            add(&format!("{service}.cpu"), Unit::Plain, cores);
        }
    }
    for (name, value) in &run.metrics.steady {
        add(name, metrics_series_unit(plan, name), *value);
    }
}

/// What a verdict of the results file says broke, if anything, in the one sentence every
/// output gives a verdict: a failure with its value, or an SLO that could not be judged
/// (unmeasured is never a pass).
fn broken_slo(verdict: &SloVerdict, rules: &[headroom_matrix::slo::SloRule]) -> Option<String> {
    headroom_figures::verdict::breaks_the_step(verdict)
        .then(|| headroom_figures::text::slo_sentence(verdict, rules))
}

/// A number, or a rate as a number per second (`"6000/m"` is 100): a rate is a unit too
/// ("how many requests per second one box answers").
fn number(value: &VarValue) -> Option<f64> {
    match value {
        VarValue::Integer(n) => Some(*n as f64),
        VarValue::Float(x) => Some(*x),
        VarValue::Text(text) => text
            .parse::<headroom_spec::Rate>()
            .ok()
            .map(headroom_spec::Rate::as_per_second),
    }
}

/// The unit of a metrics series of the phase: as `[measure]` gives it, or as its metric's name
/// says.
fn metrics_series_unit(plan: &MatrixPhase, name: &str) -> Unit {
    match plan
        .measure
        .series
        .iter()
        .find(|s| s.name == name)
        .map(Series::effective_unit)
    {
        Some(SeriesUnit::Bytes) => Unit::Bytes,
        Some(SeriesUnit::Seconds) => Unit::Seconds,
        Some(SeriesUnit::Count) | None => Unit::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_reads_with_units_and_verdicts() {
        let text = "rooms,rss_mib,p95_ms,pass\n1,218.8,12,true\n4,260.9,15,yes\n16,399.7,,false\n";
        let sweep = from_csv(text, "rooms").expect("csv");
        assert_eq!(sweep.series.len(), 2);
        let rss = &sweep.series[0];
        assert_eq!((rss.name.as_str(), rss.unit), ("rss_mib", Unit::Bytes));
        assert_eq!(rss.points[0], (1.0, 218.8 * 1_048_576.0));
        let p95 = &sweep.series[1];
        assert_eq!(p95.points, vec![(1.0, 0.012), (4.0, 0.015)]);
        let at_16 = sweep.verdicts.get(&OrderedX(16.0)).expect("16 judged");
        assert!(!at_16.pass);
        assert_eq!(at_16.broke, ["line 4 of the points is marked failed"]);
        assert!(sweep.verdicts[&OrderedX(1.0)].pass);
    }

    /// The relay fixture, read as a typed results file.
    fn relay_results() -> Results {
        headroom_test_support::results::relay()
    }

    /// Issue 11, item 13: the baseline point (0 units, nothing sent, every SLO unmeasured) is
    /// fitted but not judged; an unmeasured SLO elsewhere is never a pass.
    #[test]
    fn the_baseline_is_fitted_not_judged() {
        let mut results = relay_results();
        results.matrix.capacity.units = Some("rooms".to_owned());
        let memory = &mut results.phases[0];
        assert_eq!(memory.name, "memory");
        memory.points.truncate(3);
        for (point, (rooms, pass)) in
            memory
                .points
                .iter_mut()
                .zip([(0, None), (10, Some(true)), (20, None)])
        {
            point
                .at
                .insert("rooms".to_owned(), VarValue::Integer(rooms));
            for run in &mut point.runs {
                run.failure = None;
                run.slo = vec![SloVerdict {
                    name: "failed".to_owned(),
                    expression: "api.failed < 1%".to_owned(),
                    value: None,
                    threshold: 0.01,
                    pass,
                    note: Some("no request was sent".to_owned()),
                }];
            }
        }
        let sweeps = from_results(&results);
        let sweep = &sweeps[0];
        let rss = sweep.series.iter().find(|s| s.name == "rss").expect("rss");
        let xs: Vec<f64> = rss.points.iter().map(|(x, _)| *x).collect();
        assert!(xs.contains(&0.0), "the baseline is fitted: {xs:?}");
        assert!(!sweep.verdicts.contains_key(&OrderedX(0.0)), "not judged");
        assert!(sweep.verdicts[&OrderedX(10.0)].pass);
        let at_20 = &sweep.verdicts[&OrderedX(20.0)];
        assert!(!at_20.pass, "unmeasured is never a pass");
        assert_eq!(
            at_20.broke,
            ["`api.failed < 1%`: not measured: no request was sent"]
        );
    }

    /// Issue 11, item 13: a rate variable is a unit, read per second.
    #[test]
    fn rates_are_read_per_second() {
        let text = |t: &str| VarValue::Text(t.to_owned());
        assert_eq!(number(&text("400/s")), Some(400.0));
        assert_eq!(number(&text("6000/m")), Some(100.0));
        assert_eq!(number(&VarValue::Integer(16)), Some(16.0));
        assert_eq!(number(&text("lots")), None);
    }

    #[test]
    fn a_bad_csv_says_where() {
        let error = from_csv("rooms,rss_mib\n1,218.8\n4,lots\n", "rooms").expect_err("bad");
        assert_eq!(
            error,
            PointsError::Csv {
                line: 3,
                column: 2,
                message: "`lots` in column `rss_mib` is not a number".into()
            }
        );
        let error = from_csv("rooms,rss_mib\n1,2,3\n", "rooms").expect_err("ragged");
        assert!(matches!(error, PointsError::Csv { line: 2, .. }), "{error}");
        let error = from_csv("users,rss\n1,2\n", "rooms").expect_err("no x");
        assert!(error.to_string().contains("no column `rooms`"), "{error}");
    }
}
