//! SLO verdicts, per run: the figure, the threshold, pass or fail.

use headroom_compiler::slo::SloRule;

use crate::results::{RoomsResult, RunResult, ScenarioResult, SloVerdict, Summary};

/// Every rule of the spec against one run.
pub fn evaluate(rules: &[SloRule], run: &RunResult) -> Vec<SloVerdict> {
    rules
        .iter()
        .map(|rule| {
            let holds = |v: f64| Some(rule.comparison.holds(v, rule.threshold_value));
            let (value, pass, note) = match figure(rule, run) {
                // A time that never came: JSON has no infinity, so the note says it.
                Ok(value) if value.is_infinite() => (
                    None,
                    holds(value),
                    Some(
                        "never: the quantile falls among messages that never reached everyone"
                            .to_owned(),
                    ),
                ),
                Ok(value) => (Some(value), holds(value), None),
                Err(note) => (None, None, Some(note)),
            };
            SloVerdict {
                name: rule.name.clone(),
                expression: rule.expression.clone(),
                value,
                threshold: rule.threshold_value,
                pass,
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
    if let Some(rooms) = &result.rooms {
        return rooms_figure(rule.figure.as_str(), statistic, result, rooms);
    }
    match rule.figure.as_str() {
        "latency" => latency(result, statistic),
        "failed" => Ok(ratio(result.errors.total(), result.requests)),
        "dropped" => Ok(ratio(result.dropped, result.requests + result.dropped)),
        "rate" => Ok(result.rate),
        "requests" => Ok(result.requests as f64),
        other => Err(format!("`{other}` is not measured for an HTTP scenario")),
    }
}

/// A figure of a rooms scenario.
fn rooms_figure(
    figure: &str,
    statistic: &str,
    result: &ScenarioResult,
    rooms: &RoomsResult,
) -> Result<f64, String> {
    let sockets = &rooms.sockets;
    let messages = &rooms.messages;
    let of_expected = |part: u64| {
        if messages.expected == 0 {
            Err("no message was expected at any peer".to_owned())
        } else {
            Ok(part as f64 / messages.expected as f64)
        }
    };
    match figure {
        "connect" => summary_statistic(&rooms.connect, statistic, "no socket opened"),
        "sockets_failed" => Ok(ratio(sockets.failed.total(), sockets.planned)),
        "closed_by_server" => Ok(ratio(sockets.closed_by_server, sockets.opened)),
        "seen" => summary_statistic(&rooms.seen, statistic, "no message arrived"),
        "seen_by_all" => seen_by_all(result, rooms, statistic),
        "delivered" => of_expected(messages.delivered),
        "reach" => of_expected(messages.on_time),
        "late" => of_expected(messages.late),
        "messages" => Ok(messages.sent as f64),
        "reload" => match &rooms.reload {
            Some(reload) => summary_statistic(&reload.latency, statistic, "no page was reloaded"),
            None => Err("the scenario has no `reload`".to_owned()),
        },
        "reload_failed" => match &rooms.reload {
            Some(reload) => Ok(ratio(reload.errors.total(), reload.requests)),
            None => Err("the scenario has no `reload`".to_owned()),
        },
        other => Err(format!("`{other}` is not measured for a rooms scenario")),
    }
}

/// Seen by everyone, over every message that expected someone: one that never reached
/// everyone counts as never, so a quantile that falls among those fails (with no value).
fn seen_by_all(
    result: &ScenarioResult,
    rooms: &RoomsResult,
    statistic: &str,
) -> Result<f64, String> {
    let messages = &rooms.messages;
    if messages.reached_all + messages.incomplete == 0 {
        return Err("no message was expected at any peer".to_owned());
    }
    let quantile = match statistic {
        "p50" => 0.50,
        "p90" => 0.90,
        "p95" => 0.95,
        "p99" => 0.99,
        "p99.9" => 0.999,
        "max" => 1.0,
        "min" | "mean" => {
            return summary_statistic(&rooms.seen_by_all, statistic, "no message reached everyone");
        }
        other => return Err(format!("`{other}` is not a statistic")),
    };
    let histogram = result
        .histograms
        .get("seen_by_all")
        .and_then(|text| crate::results::deserialize_histogram(text))
        .ok_or_else(|| "the seen_by_all histogram is missing".to_owned())?;
    Ok(rooms
        .seen_by_all_quantile(&histogram, quantile)
        .unwrap_or(f64::INFINITY))
}

fn summary_statistic(s: &Summary, statistic: &str, empty: &str) -> Result<f64, String> {
    if s.count == 0 {
        return Err(empty.to_owned());
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
    summary_statistic(&result.latency, statistic, "no request completed")
}
