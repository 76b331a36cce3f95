//! The points the planner fits: from a `headroom run` results file, or from a CSV measured
//! elsewhere (k6 numbers in a spreadsheet).
//!
//! The results file is read as the documented JSON contract (`schemas/results.schema.json`),
//! not through the runner's types: the planner reads results, never runner internals.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// What a series' values are, from its name's suffix (CSV) or its source (results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Kept in bytes (`_bytes`, `_kib`, `_mib`, `_gib` are converted).
    Bytes,
    /// Kept in seconds (`_ms`, `_s`).
    Seconds,
    /// Kept as a fraction (`_pct` is divided by 100).
    Fraction,
    Plain,
}

/// One series against x: every run (or CSV row) is a point, repeats included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesPoints {
    pub name: String,
    pub unit: Unit,
    pub points: Vec<(f64, f64)>,
}

/// The points of one sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The phase (or `csv`).
    pub name: String,
    /// The variable on the x axis.
    pub x: String,
    pub series: Vec<SeriesPoints>,
    /// Per x that was judged (by SLOs, or by a run that failed): whether every run there
    /// passed, and what did not. An x where nothing was judged has no entry.
    pub verdicts: BTreeMap<OrderedX, Verdict>,
}

/// The judgement of one x over its runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Verdict {
    /// Every SLO of every run held there, and no run failed.
    pub pass: bool,
    /// What did not hold, as written: `edits.seen_by_all.p95 < 2500ms (measured 2.93 s)`, a
    /// figure that was not measured (`… unmeasured: no request was sent`), or a failed run.
    pub broke: Vec<String>,
}

impl Verdict {
    /// Records one judgement: `None` for a pass, else what broke.
    pub fn judge(&mut self, broke: Option<String>) {
        match broke {
            None => {}
            Some(what) => {
                self.pass = false;
                if !self.broke.contains(&what) {
                    self.broke.push(what);
                }
            }
        }
    }

    /// A fresh verdict that passes until something breaks.
    pub fn passing() -> Verdict {
        Verdict {
            pass: true,
            broke: Vec::new(),
        }
    }
}

/// An x value usable as a map key (x values are finite).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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
    #[error("line {line}, column {column}: {message}")]
    Csv {
        line: u64,
        column: usize,
        message: String,
    },
    #[error("{0}")]
    Results(String),
}

/// The factor from a column's written unit to the unit it is kept in (`_ms` → 0.001).
pub fn unit_scale(name: &str) -> f64 {
    series_unit(name).1
}

fn series_unit(name: &str) -> (Unit, f64) {
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

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "pass" | "ok" => Some(true),
        "false" | "no" | "0" | "fail" | "failed" => Some(false),
        _ => None,
    }
}

/// Reads a CSV with a header: the `x` column, numeric series columns (unit from the suffix),
/// and optional `pass` or `failed` columns.
pub fn from_csv(text: &str, x: &str) -> Result<Sweep, PointsError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| PointsError::Csv {
            line: 1,
            column: 1,
            message: e.to_string(),
        })?
        .clone();
    let x_index = header
        .iter()
        .position(|h| h == x)
        .ok_or_else(|| PointsError::Csv {
            line: 1,
            column: 1,
            message: format!(
                "no column `{x}`; the columns are: {}",
                header.iter().collect::<Vec<_>>().join(", ")
            ),
        })?;
    let pass_index = header.iter().position(|h| h == "pass");
    let failed_index = header.iter().position(|h| h == "failed");
    let series_columns: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != x_index && Some(*i) != pass_index && Some(*i) != failed_index)
        .map(|(i, h)| (i, h.to_owned()))
        .collect();
    let mut series: Vec<SeriesPoints> = series_columns
        .iter()
        .map(|(_, name)| SeriesPoints {
            name: name.clone(),
            unit: series_unit(name).0,
            points: Vec::new(),
        })
        .collect();
    let mut verdicts = BTreeMap::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            PointsError::Csv {
                line,
                column: 1,
                message: e.to_string(),
            }
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let number = |index: usize, what: &str| -> Result<f64, PointsError> {
            let text = record.get(index).unwrap_or_default();
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| PointsError::Csv {
                    line,
                    column: index + 1,
                    message: format!("`{text}` in column `{what}` is not a number"),
                })
        };
        let x_value = number(x_index, x)?;
        for ((index, name), target) in series_columns.iter().zip(series.iter_mut()) {
            if record.get(*index).is_some_and(str::is_empty) {
                continue; // An empty cell: this series was not measured at this row.
            }
            let value = number(*index, name)? * series_unit(name).1;
            target.points.push((x_value, value));
        }
        let verdict = |index: Option<usize>, column: &str| -> Result<Option<bool>, PointsError> {
            let Some(index) = index else { return Ok(None) };
            let text = record.get(index).unwrap_or_default();
            parse_bool(text).map(Some).ok_or_else(|| PointsError::Csv {
                line,
                column: index + 1,
                message: format!("`{text}` in column `{column}` is not true or false"),
            })
        };
        let passed = match (
            verdict(pass_index, "pass")?,
            verdict(failed_index, "failed")?,
        ) {
            (Some(pass), _) => Some(pass),
            (None, Some(failed)) => Some(!failed),
            (None, None) => None,
        };
        if let Some(passed) = passed {
            let entry = verdicts
                .entry(OrderedX(x_value))
                .or_insert_with(Verdict::passing);
            entry.judge((!passed).then(|| format!("line {line} of the points is marked failed")));
        }
    }
    series.retain(|s| !s.points.is_empty());
    Ok(Sweep {
        name: "csv".to_owned(),
        x: x.to_owned(),
        series,
        verdicts,
    })
}

/// Reads every phase of a results file that sweeps one variable (the capacity units variable
/// when a phase varies several). Failed runs are left out of the fits, and fail their x.
pub fn from_results(text: &str) -> Result<Vec<Sweep>, PointsError> {
    let results: Value = serde_json::from_str(text)
        .map_err(|e| PointsError::Results(format!("not a results file: {e}")))?;
    if results["format"].as_u64() != Some(1) {
        return Err(PointsError::Results(format!(
            "a results file of format {}, and this headroom reads format 1",
            results["format"]
        )));
    }
    let units = results["plan"]["capacity"]["units"].as_str();
    let mut sweeps = Vec::new();
    for (phase, plan) in results["phases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|phase| Some((phase, plan_phase(&results, phase["name"].as_str()?)?)))
    {
        let axes: Vec<&str> = plan["axes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["variable"].as_str())
            .collect();
        let x = match (axes.as_slice(), units) {
            ([only], _) => *only,
            (_, Some(units)) if axes.contains(&units) => units,
            _ => continue,
        };
        let mut by_series: BTreeMap<String, SeriesPoints> = BTreeMap::new();
        let mut verdicts = BTreeMap::new();
        for point in phase["points"].as_array().into_iter().flatten() {
            let Some(x_value) = number(&point["at"][x]) else {
                continue;
            };
            for run in point["runs"].as_array().into_iter().flatten() {
                let failed = !run["failure"].is_null();
                let judged: Vec<&Value> = run["slo"].as_array().into_iter().flatten().collect();
                // A point is judged by its SLOs, or by a run that failed; a point with neither
                // says nothing about a ceiling.
                // The baseline (0 units) with nothing measured is not a step of the ceiling:
                // no load was sent there by design.
                let baseline =
                    x_value == 0.0 && !failed && judged.iter().all(|v| v["pass"].is_null());
                if !baseline && (failed || !judged.is_empty()) {
                    let entry = verdicts
                        .entry(OrderedX(x_value))
                        .or_insert_with(Verdict::passing);
                    if failed {
                        entry.judge(Some(format!(
                            "a run failed ({})",
                            run["failure"]["kind"]
                                .as_str()
                                .unwrap_or("see the results file")
                                .replace('_', " ")
                        )));
                    }
                    for slo in judged {
                        entry.judge(broken_slo(slo));
                    }
                }
                if failed {
                    continue;
                }
                let mut add = |name: &str, unit: Unit, value: Option<f64>| {
                    if let Some(value) = value {
                        by_series
                            .entry(name.to_owned())
                            .or_insert_with(|| SeriesPoints {
                                name: name.to_owned(),
                                unit,
                                points: Vec::new(),
                            })
                            .points
                            .push((x_value, value));
                    }
                };
                add(
                    "rss",
                    Unit::Bytes,
                    run["process"]["steady"]["rss_bytes"].as_f64(),
                );
                // No `cpu` series from a results file: the steady-state CPU is read after the
                // load has ended (an idle server), so it says nothing about CPU per unit.
                for (name, value) in run["metrics"]["steady"].as_object().into_iter().flatten() {
                    let unit = series_unit_of_plan(plan, name);
                    add(name, unit, value.as_f64());
                }
            }
        }
        sweeps.push(Sweep {
            name: phase["name"].as_str().unwrap_or_default().to_owned(),
            x: x.to_owned(),
            series: by_series.into_values().collect(),
            verdicts,
        });
    }
    Ok(sweeps)
}

/// What a verdict of the results file says broke, if anything: a failure with its value, or
/// an SLO that could not be judged (unmeasured is never a pass).
fn broken_slo(verdict: &Value) -> Option<String> {
    let expression = verdict["expression"].as_str().unwrap_or("an SLO");
    match verdict["pass"].as_bool() {
        Some(true) => None,
        Some(false) => Some(format!("`{expression}` failed")),
        None => Some(format!(
            "`{expression}` unmeasured: {}",
            verdict["note"].as_str().unwrap_or("no value")
        )),
    }
}

fn plan_phase<'a>(results: &'a Value, name: &str) -> Option<&'a Value> {
    results["plan"]["phases"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
}

/// A number, or a rate as a number per second (`"6000/m"` is 100): a rate is a unit too
/// ("how many requests per second one box answers").
fn number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| {
        value
            .as_str()?
            .parse::<headroom_spec::Rate>()
            .ok()
            .map(headroom_spec::Rate::as_per_second)
    })
}

fn series_unit_of_plan(plan: &Value, name: &str) -> Unit {
    let series = plan["measure"]["series"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == name);
    match series.and_then(|s| s["unit"].as_str()) {
        Some("bytes") => Unit::Bytes,
        Some("seconds") => Unit::Seconds,
        Some(_) => Unit::Plain,
        None => {
            let metric = series
                .and_then(|s| s["metric"].as_str())
                .unwrap_or_default();
            if metric.ends_with("_bytes") {
                Unit::Bytes
            } else if metric.ends_with("_seconds") {
                Unit::Seconds
            } else {
                Unit::Plain
            }
        }
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

    /// Issue 11, item 13: the baseline point (0 units, nothing sent, every SLO unmeasured) is
    /// fitted but not judged; an unmeasured SLO elsewhere is never a pass.
    #[test]
    fn the_baseline_is_fitted_not_judged() {
        let run = |rss: u64, pass: serde_json::Value| {
            serde_json::json!({"process": {"steady": {"rss_bytes": rss}},
                "slo": [{"expression": "api.failed < 1%", "pass": pass, "note": "no request was sent"}]})
        };
        let results = serde_json::json!({
            "format": 1,
            "plan": {"capacity": {"units": "users"},
                     "phases": [{"name": "users", "axes": [{"variable": "users"}]}]},
            "phases": [{"name": "users", "points": [
                {"at": {"users": 0}, "runs": [run(100, serde_json::Value::Null)]},
                {"at": {"users": 10}, "runs": [run(200, serde_json::json!(true))]},
                {"at": {"users": 20}, "runs": [run(300, serde_json::Value::Null)]},
            ]}]
        });
        let sweeps = from_results(&results.to_string()).expect("sweeps");
        let sweep = &sweeps[0];
        assert_eq!(sweep.series[0].points.len(), 3, "the baseline is fitted");
        assert!(!sweep.verdicts.contains_key(&OrderedX(0.0)), "not judged");
        assert!(sweep.verdicts[&OrderedX(10.0)].pass);
        let at_20 = &sweep.verdicts[&OrderedX(20.0)];
        assert!(!at_20.pass, "unmeasured is never a pass");
        assert_eq!(
            at_20.broke,
            ["`api.failed < 1%` unmeasured: no request was sent"]
        );
    }

    /// Issue 11, item 13: a rate variable is a unit, read per second.
    #[test]
    fn rates_are_read_per_second() {
        assert_eq!(number(&serde_json::json!("400/s")), Some(400.0));
        assert_eq!(number(&serde_json::json!("6000/m")), Some(100.0));
        assert_eq!(number(&serde_json::json!(16)), Some(16.0));
        assert_eq!(number(&serde_json::json!("lots")), None);
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
