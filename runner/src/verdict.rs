//! SLO verdicts, per run: the figure, the threshold, pass or fail.

use headroom_compiler::slo::SloRule;

use crate::results::{RunResult, ScenarioResult, SloVerdict};

/// Every rule of the spec against one run.
pub fn evaluate(rules: &[SloRule], run: &RunResult) -> Vec<SloVerdict> {
    rules
        .iter()
        .map(|rule| {
            let (value, note) = match figure(rule, run) {
                Ok(value) => (Some(value), None),
                Err(note) => (None, Some(note)),
            };
            SloVerdict {
                name: rule.name.clone(),
                expression: rule.expression.clone(),
                value,
                threshold: rule.threshold_value,
                pass: value.map(|v| rule.comparison.holds(v, rule.threshold_value)),
                note,
            }
        })
        .collect()
}

/// The figure a rule names, in result units: seconds, fractions, bytes, per second, counts.
fn figure(rule: &SloRule, run: &RunResult) -> Result<f64, String> {
    let Some(scenario) = &rule.scenario else {
        return match rule.figure.as_str() {
            "rss" => steady(run).map(|s| s.rss_bytes as f64),
            "cpu" => steady(run).map(|s| s.cpu_pct / 100.0),
            series => run
                .metrics
                .steady
                .get(series)
                .copied()
                .ok_or_else(|| format!("the metrics held no `{series}`")),
        };
    };
    let result = run
        .scenarios
        .get(scenario)
        .ok_or_else(|| format!("scenario `{scenario}` did not run"))?;
    if let Some(skipped) = &result.skipped {
        return Err(format!("scenario `{scenario}` was not measured: {skipped}"));
    }
    let statistic = rule.statistic.as_deref().unwrap_or_default();
    match rule.figure.as_str() {
        "latency" => latency(result, statistic),
        "failed" => Ok(ratio(result.errors.total(), result.requests)),
        "dropped" => Ok(ratio(result.dropped, result.requests + result.dropped)),
        "rate" => Ok(result.rate),
        "requests" => Ok(result.requests as f64),
        other => Err(format!("`{other}` is not measured for an HTTP scenario")),
    }
}

fn steady(run: &RunResult) -> Result<crate::results::ProcessSample, String> {
    run.process
        .steady
        .or_else(|| run.process.samples.last().copied())
        .ok_or_else(|| "the server's process was not sampled".to_owned())
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn latency(result: &ScenarioResult, statistic: &str) -> Result<f64, String> {
    let s = &result.latency;
    if s.count == 0 {
        return Err("no request completed".to_owned());
    }
    let ms = match statistic {
        "p50" => s.p50_ms,
        "p90" => s.p90_ms,
        "p95" => s.p95_ms,
        "p99" => s.p99_ms,
        "p99.9" => s.p999_ms,
        "max" => s.max_ms,
        "mean" => s.mean_ms,
        "min" => s.min_ms,
        other => return Err(format!("`{other}` is not a statistic")),
    };
    Ok(ms / 1000.0)
}
