//! Points from other load tools' own output, one file per step of a sweep: k6's
//! `--summary-export` JSON and its `--out csv=FILE` samples, and Locust's `--csv` stats
//! (`PREFIX_stats.csv`). A team that keeps its scripts gets the planner and the page.
//!
//! Each file is one point: the step (the x value) comes from the file's name (the last number
//! in it: `users-40_stats.csv` is 40) or is given. Its figures become the series a points CSV
//! would have: `rate`, `requests`, `p50_ms`, `p90_ms`, `p95_ms`, `p99_ms` (those the file has)
//! and `failed_pct`, so fits and `--slo 'p95_ms < 200'` read them alike.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::points::{MeasuredSweep, OrderedX, SeriesPoints, Unit};

/// The tool and format a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `k6 run --summary-export FILE.json`.
    K6Summary,
    /// `k6 run --out csv=FILE.csv`: one line per sample.
    K6Csv,
    /// `locust --csv PREFIX`: `PREFIX_stats.csv`, one line per request name and `Aggregated`.
    Locust,
}

impl Tool {
    /// The tool's name, which names the sweep of its points.
    pub fn name(self) -> &'static str {
        match self {
            Tool::K6Summary | Tool::K6Csv => "k6",
            Tool::Locust => "locust",
        }
    }

    /// As the tool's documentation names it.
    pub fn describe(self) -> &'static str {
        match self {
            Tool::K6Summary => "a k6 summary export",
            Tool::K6Csv => "k6 CSV output",
            Tool::Locust => "Locust stats CSV",
        }
    }
}

/// The figures of one step, in milliseconds where they are times.
#[derive(Debug, Clone, PartialEq)]
pub struct StepFigures {
    /// What made them.
    pub tool: Tool,
    /// Requests completed.
    pub requests: u64,
    /// Requests per second over the run.
    pub rate: f64,
    /// Latency percentiles the file has, by percentile (50, 90, 95, 99), in milliseconds.
    pub latency_ms: BTreeMap<u32, f64>,
    /// The share of requests that failed, 0 to 1; `None` when the file does not say (no
    /// `http_req_failed` metric, no request): no `failed_pct` point is made up then.
    pub failed: Option<f64>,
}

/// Why a file could not be read as a tool's output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// Neither k6's nor Locust's output.
    #[error(
        "not a k6 summary export (`--summary-export`, JSON with `metrics.http_reqs`), k6 CSV output (`--out csv=`, header `metric_name,timestamp,metric_value,…`) or Locust stats (`--csv`, header `Type,Name,Request Count,…`)"
    )]
    Unknown,
    /// The format was recognized, and a figure it needs is missing or not a number.
    #[error("{tool}: {message}")]
    Figure {
        /// Which format.
        tool: &'static str,
        /// What is missing.
        message: String,
    },
}

/// The format of `text`, if it is one of the tools' outputs.
pub fn recognize(text: &str) -> Option<Tool> {
    let start = text.trim_start();
    if start.starts_with('{') {
        let document: Value = serde_json::from_str(text).ok()?;
        return document
            .get("metrics")
            .and_then(|m| m.get("http_reqs"))
            .map(|_| Tool::K6Summary);
    }
    let header = start.lines().next()?.trim();
    if header.starts_with("metric_name,timestamp,metric_value") {
        Some(Tool::K6Csv)
    } else if header.starts_with("Type,Name,Request Count,Failure Count") {
        Some(Tool::Locust)
    } else {
        None
    }
}

/// The figures of one tool output file.
pub fn read(text: &str) -> Result<StepFigures, ToolError> {
    match recognize(text).ok_or(ToolError::Unknown)? {
        Tool::K6Summary => k6_summary(text),
        Tool::K6Csv => k6_csv(text),
        Tool::Locust => locust(text),
    }
}

/// The step a file's name gives: its last number (`users-40_stats.csv` → 40,
/// `rate-2.5.json` → 2.5).
pub fn step_of(file_name: &str) -> Option<f64> {
    let stem = file_name
        .rsplit('/')
        .next()
        .unwrap_or(file_name)
        .trim_end_matches(".json")
        .trim_end_matches(".csv");
    let bytes = stem.as_bytes();
    let mut end = bytes.len();
    loop {
        while end > 0 && !bytes[end - 1].is_ascii_digit() {
            end -= 1;
        }
        if end == 0 {
            return None;
        }
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_digit() || bytes[start - 1] == b'.') {
            start -= 1;
        }
        let number = stem[start..end].trim_start_matches('.');
        if let Ok(value) = number.parse::<f64>() {
            return Some(value);
        }
        end = start;
    }
}

/// A sweep of `x` over the steps: one point per file, named for the tool.
pub fn sweep(x: &str, steps: &[(f64, StepFigures)]) -> MeasuredSweep {
    let name = steps.first().map_or("points", |(_, f)| f.tool.name());
    let mut series: BTreeMap<String, SeriesPoints> = BTreeMap::new();
    let mut add = |name: String, unit: Unit, x: f64, value: f64| {
        series
            .entry(name.clone())
            .or_insert_with(|| SeriesPoints {
                name,
                unit,
                points: Vec::new(),
            })
            .points
            .push((x, value));
    };
    for (step, figures) in steps {
        add("rate".to_owned(), Unit::Plain, *step, figures.rate);
        add(
            "requests".to_owned(),
            Unit::Plain,
            *step,
            figures.requests as f64,
        );
        if let Some(failed) = figures.failed {
            add("failed_pct".to_owned(), Unit::Fraction, *step, failed);
        }
        for (percentile, ms) in &figures.latency_ms {
            add(
                format!("p{percentile}_ms"),
                Unit::Seconds,
                *step,
                ms / 1000.0,
            );
        }
    }
    let verdicts: BTreeMap<OrderedX, _> = BTreeMap::new();
    MeasuredSweep::new(name, x, series.into_values().collect(), verdicts)
}

fn figure_error(tool: Tool, message: impl Into<String>) -> ToolError {
    ToolError::Figure {
        tool: tool.describe(),
        message: message.into(),
    }
}

/// k6's summary export: `metrics.http_reqs.{count,rate}`, `metrics.http_req_duration`'s
/// `med`, `p(90)`, `p(95)`, `p(99)` (those `summaryTrendStats` asked for) in milliseconds, and
/// `metrics.http_req_failed.value`, the failed share.
fn k6_summary(text: &str) -> Result<StepFigures, ToolError> {
    let tool = Tool::K6Summary;
    let document: Value =
        serde_json::from_str(text).map_err(|e| figure_error(tool, e.to_string()))?;
    let metrics = &document["metrics"];
    let number = |metric: &str, field: &str| -> Result<f64, ToolError> {
        metrics[metric][field]
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| figure_error(tool, format!("no number at `metrics.{metric}.{field}`")))
    };
    let requests = number("http_reqs", "count")?;
    let rate = number("http_reqs", "rate")?;
    let mut latency_ms = BTreeMap::new();
    for (percentile, field) in [(50, "med"), (90, "p(90)"), (95, "p(95)"), (99, "p(99)")] {
        if let Some(value) = metrics["http_req_duration"][field].as_f64() {
            latency_ms.insert(percentile, value);
        }
    }
    if !latency_ms.contains_key(&50) {
        return Err(figure_error(tool, "no `metrics.http_req_duration.med`"));
    }
    // k6 before v0.31 has no `http_req_failed`: the failed share is then not known.
    let failed = match metrics.get("http_req_failed") {
        Some(_) => Some(number("http_req_failed", "value")?),
        None => None,
    };
    Ok(StepFigures {
        tool,
        requests: requests as u64,
        rate,
        latency_ms,
        failed,
    })
}

/// k6's CSV output: every `http_req_duration` sample (milliseconds), every `http_req_failed`
/// (0 or 1); the rate over the time from the first request's timestamp to the last's, plus one
/// tick of their resolution. k6 writes whole seconds by default (`K6_CSV_TIME_FORMAT=unix`):
/// then the run's length is known to a second, and so is the rate of a short run only roughly;
/// `unix_milli`, `unix_micro` and `unix_nano` are read by their magnitude.
fn k6_csv(text: &str) -> Result<StepFigures, ToolError> {
    let tool = Tool::K6Csv;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut durations = Vec::new();
    let (mut failed, mut judged) = (0u64, 0u64);
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for record in reader.records() {
        let record = record.map_err(|e| figure_error(tool, e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let value = |index: usize| -> Result<f64, ToolError> {
            let text = record.get(index).unwrap_or_default();
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    figure_error(
                        tool,
                        format!(
                            "line {line}: `{text}` is not a number (timestamps as numbers: K6_CSV_TIME_FORMAT=unix_milli)"
                        ),
                    )
                })
        };
        match record.get(0).unwrap_or_default() {
            "http_req_duration" => {
                let at = value(1)?;
                first = first.min(at);
                last = last.max(at);
                durations.push(value(2)?);
            }
            "http_req_failed" => {
                judged += 1;
                if value(2)? > 0.0 {
                    failed += 1;
                }
            }
            _ => {}
        }
    }
    if durations.is_empty() {
        return Err(figure_error(tool, "no `http_req_duration` sample"));
    }
    // Seconds, milliseconds, microseconds or nanoseconds since 1970, by magnitude.
    let tick = match last {
        t if t < 1e11 => 1.0,
        t if t < 1e14 => 1e-3,
        t if t < 1e17 => 1e-6,
        _ => 1e-9,
    };
    durations.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let index = ((q * durations.len() as f64).ceil() as usize).clamp(1, durations.len());
        durations[index - 1]
    };
    let latency_ms = [(50, 0.5), (90, 0.9), (95, 0.95), (99, 0.99)]
        .into_iter()
        .map(|(percentile, q)| (percentile, rank(q)))
        .collect();
    // The run spans from the first tick to the end of the last.
    let seconds = (last - first + 1.0) * tick;
    Ok(StepFigures {
        tool,
        requests: durations.len() as u64,
        rate: durations.len() as f64 / seconds,
        latency_ms,
        failed: (judged > 0).then(|| failed as f64 / judged as f64),
    })
}

/// Locust's stats CSV: its `Aggregated` line (every request name together): `Request Count`,
/// `Failure Count`, `Requests/s`, and the `50%`, `90%`, `95%`, `99%` columns in milliseconds.
fn locust(text: &str) -> Result<StepFigures, ToolError> {
    let tool = Tool::Locust;
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| figure_error(tool, e.to_string()))?
        .clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| figure_error(tool, format!("no `{name}` column")))
    };
    let name_at = column("Name")?;
    let aggregated = reader
        .records()
        .filter_map(Result::ok)
        .find(|record| record.get(name_at) == Some("Aggregated"))
        .ok_or_else(|| figure_error(tool, "no `Aggregated` line"))?;
    let number = |name: &str| -> Result<f64, ToolError> {
        let text = aggregated.get(column(name)?).unwrap_or_default();
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| figure_error(tool, format!("`{text}` in `{name}` is not a number")))
    };
    let requests = number("Request Count")?;
    let failures = number("Failure Count")?;
    let mut latency_ms = BTreeMap::new();
    for percentile in [50, 90, 95, 99] {
        latency_ms.insert(percentile, number(&format!("{percentile}%"))?);
    }
    Ok(StepFigures {
        tool,
        requests: requests as u64,
        rate: number("Requests/s")?,
        latency_ms,
        failed: (requests > 0.0).then(|| failures / requests),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture recorded from a real run of the tool (test-support/fixtures/*/README.md).
    fn recorded(path: &str) -> StepFigures {
        let text = headroom_test_support::fixtures::text(path);
        read(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The figures of real k6 v0.45.0 and Locust 2.47.0 outputs, as the tools printed them.
    #[test]
    fn recorded_outputs_read_as_the_tools_reported_them() {
        let summary = recorded("k6/vus-20.json");
        assert_eq!((summary.tool, summary.requests), (Tool::K6Summary, 1580));
        assert!((summary.rate - 195.419_104_895).abs() < 1e-6);
        assert!((summary.latency_ms[&50] - 1.25151).abs() < 1e-9);
        assert!((summary.latency_ms[&95] - 3.725_789_95).abs() < 1e-9);
        assert!(
            !summary.latency_ms.contains_key(&99),
            "k6 reports no p(99) by default"
        );
        assert_eq!(summary.failed, Some(0.0));
        // One request in four was a 404: `http_req_failed.value` is the failed share.
        let mixed = recorded("k6/mixed-vus-4.json");
        assert_eq!(mixed.requests, 120);
        assert!((mixed.failed.expect("judged") - 28.0 / 120.0).abs() < 1e-12);
        // The same script's samples: 40 requests, 10 of them failed. Whole-second timestamps
        // over three seconds; milliseconds give the rate to the millisecond.
        let seconds = recorded("k6/vus-2.csv");
        assert_eq!((seconds.tool, seconds.requests), (Tool::K6Csv, 40));
        assert!((seconds.failed.expect("judged") - 0.25).abs() < 1e-12);
        assert!((seconds.rate - 40.0 / 3.0).abs() < 1e-9);
        let milli = recorded("k6/vus-2.unix-milli.csv");
        assert!((milli.failed.expect("judged") - 0.25).abs() < 1e-12);
        assert!((17.0..21.0).contains(&milli.rate), "{}", milli.rate);
        let locust = recorded("locust/users-20_stats.csv");
        assert_eq!((locust.tool, locust.requests), (Tool::Locust, 1340));
        assert!((locust.rate - 191.386_181_138).abs() < 1e-6);
        assert_eq!(locust.latency_ms[&95], 11.0);
        assert_eq!(locust.failed, Some(0.0));
    }

    /// An old k6 summary without `http_req_failed` says nothing of failures: no `failed_pct`
    /// point is made (it is not 0 %).
    #[test]
    fn a_summary_without_failures_counted_has_no_failed_share() {
        let text = r#"{"metrics":{"http_reqs":{"count":10,"rate":5},"http_req_duration":{"med":2,"p(95)":4}}}"#;
        let figures = read(text).expect("a summary");
        assert_eq!(figures.failed, None);
        let swept = sweep("vus", &[(1.0, figures)]);
        assert!(swept.series.iter().all(|s| s.name != "failed_pct"));
        assert!(swept.series.iter().any(|s| s.name == "p95_ms"));
    }

    #[test]
    fn steps_come_from_the_last_number_of_the_name() {
        assert_eq!(step_of("users-40_stats.csv"), Some(40.0));
        assert_eq!(step_of("runs/k6-rate-2.5.json"), Some(2.5));
        assert_eq!(step_of("200.csv"), Some(200.0));
        assert_eq!(step_of("summary.json"), None);
        assert_eq!(step_of("vus-2.unix-milli.csv"), Some(2.0));
    }

    #[test]
    fn an_unknown_file_names_the_formats() {
        assert_eq!(read("users,p95_ms\n1,2\n"), Err(ToolError::Unknown));
        assert_eq!(read("{\"a\":1}"), Err(ToolError::Unknown));
    }

    #[test]
    fn k6_csv_samples_give_exact_percentiles() {
        let mut text = String::from(
            "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n",
        );
        for i in 1..=100 {
            let second = 1_700_000_000 + (i - 1) / 25;
            text.push_str(&format!(
                "http_reqs,{second},1.000000,,,,true,,GET,x,HTTP/1.1,default,,200,,,x,,\n"
            ));
            text.push_str(&format!(
                "http_req_duration,{second},{i}.000000,,,,true,,GET,x,HTTP/1.1,default,,200,,,x,,\n"
            ));
            let failed = u8::from(i % 10 == 0);
            text.push_str(&format!("http_req_failed,{second},{failed}.000000,,,,true,,GET,x,HTTP/1.1,default,,200,,,x,,\n"));
        }
        let figures = read(&text).expect("k6 csv");
        assert_eq!(figures.tool, Tool::K6Csv);
        assert_eq!(figures.requests, 100);
        // 100 requests over four whole seconds.
        assert!((figures.rate - 25.0).abs() < 1e-9, "{}", figures.rate);
        assert_eq!(figures.latency_ms[&50], 50.0);
        assert_eq!(figures.latency_ms[&95], 95.0);
        assert_eq!(figures.latency_ms[&99], 99.0);
        assert!((figures.failed.expect("judged") - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_sweep_has_a_point_per_step_in_the_series_units() {
        let figures = |rate: f64, p95: f64| StepFigures {
            tool: Tool::Locust,
            requests: 100,
            rate,
            latency_ms: [(50, 2.0), (95, p95)].into_iter().collect(),
            failed: Some(0.01),
        };
        let sweep = sweep(
            "users",
            &[(10.0, figures(95.0, 8.0)), (20.0, figures(190.0, 12.0))],
        );
        let series = |name: &str| {
            sweep
                .series
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        assert_eq!(series("rate").points, [(10.0, 95.0), (20.0, 190.0)]);
        assert_eq!(series("p95_ms").unit, Unit::Seconds);
        assert_eq!(series("p95_ms").points, [(10.0, 0.008), (20.0, 0.012)]);
        assert_eq!(series("failed_pct").points[0], (10.0, 0.01));
        assert_eq!(sweep.x, "users");
    }
}
