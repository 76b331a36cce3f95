//! SLO verdicts, per run: the figure, the threshold, pass or fail.

use headroom_compiler::slo::{PointFigure, ScenarioFigure, SloRule, Statistic};

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
    if let Some(point) = rule.point_figure() {
        return match point {
            PointFigure::Rss => steady(run).map(|s| s.rss_bytes as f64),
            PointFigure::Cpu => steady(run)?.cpu_pct.map(|pct| pct / 100.0).ok_or_else(|| {
                "the server's CPU was read once at the steady state: CPU use needs two readings (set `steady_state.scrapes` to 2 or more)".to_owned()
            }),
            PointFigure::Series(series) => run
                .metrics
                .steady
                .get(series)
                .copied()
                .ok_or_else(|| format!("the metrics held no `{series}`")),
        };
    }
    // The compiler parsed the rule against the figures scenarios produce.
    let (scenario, figure) = rule
        .scenario_figure()
        .ok_or_else(|| format!("`{}` is not a figure a scenario produces", rule.figure))?;
    let result = run
        .scenarios
        .get(scenario)
        .ok_or_else(|| format!("scenario `{scenario}` did not run"))?;
    if let Some(skipped) = &result.skipped {
        return Err(format!("scenario `{scenario}` was not measured: {skipped}"));
    }
    let statistic = rule.statistic;
    if let Some(request) = &rule.request {
        let apart = result.by_request.get(request).ok_or_else(|| {
            format!("request `{request}` of scenario `{scenario}` was not measured apart")
        })?;
        return match figure {
            ScenarioFigure::Latency => summary_statistic(
                &apart.latency,
                statistic,
                &no_expected_answer(&apart.errors, apart.requests),
            ),
            ScenarioFigure::Failed => ratio(
                apart.errors.total(),
                apart.requests,
                "no such request was sent",
            ),
            ScenarioFigure::Requests => Ok(apart.requests as f64),
            other => Err(format!(
                "`{}` is not measured for one request",
                other.as_str()
            )),
        };
    }
    if let Some(rooms) = &result.rooms {
        return rooms_figure(figure, statistic, result, rooms);
    }
    match figure {
        ScenarioFigure::Latency => latency(result, statistic),
        ScenarioFigure::Failed => ratio(
            result.errors.total(),
            result.requests,
            "no request was sent",
        ),
        ScenarioFigure::Dropped => ratio(
            result.dropped,
            result.requests + result.dropped,
            "no request was due",
        ),
        ScenarioFigure::Rate => Ok(result.rate),
        ScenarioFigure::Requests => Ok(result.requests as f64),
        other => Err(format!(
            "`{}` is not measured for an HTTP scenario",
            other.as_str()
        )),
    }
}

/// A figure of a rooms scenario.
fn rooms_figure(
    figure: ScenarioFigure,
    statistic: Option<Statistic>,
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
        ScenarioFigure::Connect => summary_statistic(&rooms.connect, statistic, "no socket opened"),
        ScenarioFigure::SocketsFailed => ratio(
            sockets.failed.total(),
            sockets.planned,
            "no socket was planned",
        ),
        ScenarioFigure::ClosedByServer => {
            ratio(sockets.closed_by_server, sockets.opened, "no socket opened")
        }
        ScenarioFigure::Seen => summary_statistic(&rooms.seen, statistic, "no message arrived"),
        ScenarioFigure::SeenByAll => seen_by_all(result, rooms, statistic),
        ScenarioFigure::Delivered => of_expected(messages.delivered),
        ScenarioFigure::Reach => of_expected(messages.on_time),
        ScenarioFigure::Late => of_expected(messages.late),
        ScenarioFigure::Messages => Ok(messages.sent as f64),
        ScenarioFigure::Reload => match &rooms.reload {
            Some(reload) => summary_statistic(&reload.latency, statistic, "no page was reloaded"),
            None => Err("the scenario has no `reload`".to_owned()),
        },
        ScenarioFigure::ReloadFailed => match &rooms.reload {
            Some(reload) => ratio(
                reload.errors.total(),
                reload.requests,
                "no page was reloaded",
            ),
            None => Err("the scenario has no `reload`".to_owned()),
        },
        other => Err(format!(
            "`{}` is not measured for a rooms scenario",
            other.as_str()
        )),
    }
}

/// Seen by everyone, over every message that expected someone: one that never reached
/// everyone counts as never, so a quantile that falls among those fails (with no value).
fn seen_by_all(
    result: &ScenarioResult,
    rooms: &RoomsResult,
    statistic: Option<Statistic>,
) -> Result<f64, String> {
    let messages = &rooms.messages;
    if messages.reached_all + messages.incomplete == 0 {
        return Err("no message was expected at any peer".to_owned());
    }
    let Some(quantile) = statistic.and_then(Statistic::quantile) else {
        return summary_statistic(&rooms.seen_by_all, statistic, "no message reached everyone");
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

/// A statistic of a distribution, in seconds. The compiler gives every distribution's SLO a
/// statistic; one without is said, not read as 0.
fn summary_statistic(
    s: &Summary,
    statistic: Option<Statistic>,
    empty: &str,
) -> Result<f64, String> {
    let Some(statistic) = statistic else {
        return Err("the SLO names no statistic of the distribution".to_owned());
    };
    if s.count == 0 {
        return Err(empty.to_owned());
    }
    let ms = match statistic {
        Statistic::P50 => s.p50_ms,
        Statistic::P90 => s.p90_ms,
        Statistic::P95 => s.p95_ms,
        Statistic::P99 => s.p99_ms,
        Statistic::P999 => s.p999_ms,
        Statistic::Max => s.max_ms,
        Statistic::Mean => s.mean_ms,
        Statistic::Min => s.min_ms,
    };
    Ok(ms / 1000.0)
}

fn steady(run: &RunResult) -> Result<crate::results::ProcessSample, String> {
    run.process
        .steady
        .or_else(|| run.process.samples.last().copied())
        .ok_or_else(|| "the server's process was not sampled".to_owned())
}

/// `part / whole`, or why there is no such share: of nothing, no share failed or passed (0 of
/// 0 is not 0 %).
fn ratio(part: u64, whole: u64, empty: &str) -> Result<f64, String> {
    if whole == 0 {
        Err(empty.to_owned())
    } else {
        Ok(part as f64 / whole as f64)
    }
}

fn latency(result: &ScenarioResult, statistic: Option<Statistic>) -> Result<f64, String> {
    summary_statistic(
        &result.latency,
        statistic,
        &no_expected_answer(&result.errors, result.requests),
    )
}

/// Why a latency has nothing behind it: no request ended, or none got an expected answer
/// (each failure named by its kind, as the latency of a failure is not the server's speed).
fn no_expected_answer(errors: &crate::results::ErrorCounts, requests: u64) -> String {
    if requests == 0 {
        return "not measured: no request ended".to_owned();
    }
    format!(
        "not measured: none of the {} requests got an expected answer ({})",
        headroom_spec::numbers::count(requests as f64),
        errors.describe()
    )
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::results::ProcessSample;

    use headroom_compiler::slo::{Figure, FigureUnit, parse};

    fn rule(expression: &str) -> SloRule {
        let figure = |scenario: Option<&str>, name: &str, unit| Figure {
            scenario: scenario.map(str::to_owned),
            request: None,
            name: name.to_owned(),
            unit,
        };
        let slow = |name: &str, unit| Figure {
            request: Some("slow".to_owned()),
            ..figure(Some("api"), name, unit)
        };
        let figures = [
            figure(Some("api"), "failed", FigureUnit::Ratio),
            figure(Some("api"), "latency", FigureUnit::Latency),
            slow("latency", FigureUnit::Latency),
            slow("failed", FigureUnit::Ratio),
            figure(None, "cpu", FigureUnit::Cpu),
            figure(None, "rss", FigureUnit::Size),
        ];
        parse("slo", expression, &figures).expect("a rule")
    }

    fn run() -> RunResult {
        RunResult {
            duration_s: 1.0,
            port: 1,
            ..RunResult::started(1, 0)
        }
    }

    /// Issue 11, item 5: `failed < 1%` when no request was sent is unmeasured, not a pass.
    #[test]
    fn a_share_of_nothing_is_unmeasured() {
        let mut run = run();
        run.scenarios
            .insert("api".to_owned(), ScenarioResult::default());
        let verdicts = evaluate(&[rule("api.failed < 1%")], &run);
        assert_eq!(verdicts[0].pass, None, "{verdicts:?}");
        assert_eq!(verdicts[0].value, None);
        assert_eq!(verdicts[0].note.as_deref(), Some("no request was sent"));
        run.scenarios.get_mut("api").expect("api").requests = 100;
        assert_eq!(
            evaluate(&[rule("api.failed < 1%")], &run)[0].pass,
            Some(true)
        );
    }

    /// Issue 11, item 4: a steady state read once has no CPU: `cpu < 50%` is unmeasured.
    #[test]
    fn cpu_read_once_is_unmeasured() {
        let mut run = run();
        run.process.steady = Some(ProcessSample {
            t_s: 1.0,
            rss_bytes: 1 << 20,
            cpu_pct: None,
            processes: 1,
        });
        let verdicts = evaluate(&[rule("cpu < 50%"), rule("rss < 1GiB")], &run);
        assert_eq!(verdicts[0].pass, None, "{verdicts:?}");
        assert!(
            verdicts[0]
                .note
                .as_deref()
                .unwrap_or("")
                .contains("two readings")
        );
        assert_eq!(verdicts[1].pass, Some(true));
    }

    /// Issue 17: an SLO on one named request reads that request's figures: the slow route
    /// fails its p95 while the scenario's, mostly fast answers, passes.
    #[test]
    fn a_request_is_judged_by_its_own_figures() {
        let mut run = run();
        let mut api = ScenarioResult {
            requests: 100,
            latency: Summary {
                count: 100,
                p95_ms: 40.0,
                ..Summary::default()
            },
            ..ScenarioResult::default()
        };
        api.by_request.insert(
            "slow".to_owned(),
            crate::results::RequestResult {
                requests: 10,
                ok: 9,
                latency: Summary {
                    count: 10,
                    p95_ms: 400.0,
                    ..Summary::default()
                },
                errors: crate::results::ErrorCounts {
                    status: 1,
                    ..Default::default()
                },
                histogram: String::new(),
            },
        );
        run.scenarios.insert("api".to_owned(), api);
        let verdicts = evaluate(
            &[
                rule("api.latency.p95 < 100ms"),
                rule("api.slow.latency.p95 < 100ms"),
                rule("api.slow.failed < 5%"),
            ],
            &run,
        );
        let passes: Vec<Option<bool>> = verdicts.iter().map(|v| v.pass).collect();
        assert_eq!(
            passes,
            [Some(true), Some(false), Some(false)],
            "{verdicts:?}"
        );
        assert_eq!(verdicts[1].value, Some(0.4));
        assert_eq!(verdicts[2].value, Some(0.1));
        // A request that was not measured apart (results from before): unmeasured, said.
        run.scenarios
            .get_mut("api")
            .expect("api")
            .by_request
            .clear();
        let unmeasured = evaluate(&[rule("api.slow.latency.p95 < 100ms")], &run);
        assert_eq!(unmeasured[0].pass, None);
        assert!(
            unmeasured[0]
                .note
                .as_deref()
                .is_some_and(|n| n.contains("not measured apart")),
            "{unmeasured:?}"
        );
    }
}
