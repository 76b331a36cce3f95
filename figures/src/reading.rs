//! A figure of one run, computed as the catalogue defines it: the one computation the SLO
//! verdicts, the run table, the page and `compare` share.

use hdrhistogram::Histogram;
use headroom_matrix::slo::{PointFigure, ScenarioFigure, SloRule, Statistic};
use headroom_results::{
    ErrorCounts, HistogramKey, RoomsResult, RunResult, ScenarioResult, Summary,
};

use crate::catalogue::{self, Definition};

/// Which figure, of a scenario or of the whole point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which<'a> {
    /// A scenario's figure (`latency`, `seen_by_all`).
    Scenario(ScenarioFigure),
    /// The point's own (`rss`, `cpu`, a `[measure]` series).
    Point(PointFigure<'a>),
}

/// A figure of a run as a user names it: `edits.seen_by_all.p95`, `api.list.failed`, `rss`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<'a> {
    /// The scenario, for a scenario's figure.
    pub scenario: Option<&'a str>,
    /// A named request of the scenario, for its figures measured apart.
    pub request: Option<&'a str>,
    /// The figure.
    pub which: Which<'a>,
    /// The statistic of a distribution (`p95`); `None` for a single value.
    pub statistic: Option<Statistic>,
}

impl<'a> Named<'a> {
    /// The figure an SLO rule names (the compiler parsed it against the catalogue).
    pub fn of_rule(rule: &'a SloRule) -> Result<Named<'a>, String> {
        let which = match (rule.scenario_figure(), rule.point_figure()) {
            (Some((_, figure)), _) => Which::Scenario(figure),
            (None, Some(point)) => Which::Point(point),
            (None, None) => {
                return Err(format!(
                    "`{}` is not a figure a scenario produces",
                    rule.figure
                ));
            }
        };
        Ok(Named {
            scenario: rule.scenario.as_deref(),
            request: rule.request.as_deref(),
            which,
            statistic: rule.statistic,
        })
    }

    /// A scenario's figure.
    pub fn scenario(scenario: &'a str, figure: ScenarioFigure) -> Named<'a> {
        Named {
            scenario: Some(scenario),
            request: None,
            which: Which::Scenario(figure),
            statistic: None,
        }
    }

    /// The point's own figure.
    pub fn point(figure: PointFigure<'a>) -> Named<'a> {
        Named {
            scenario: None,
            request: None,
            which: Which::Point(figure),
            statistic: None,
        }
    }

    /// The same figure of one named request of the scenario.
    pub fn of_request(self, request: &'a str) -> Named<'a> {
        Named {
            request: Some(request),
            ..self
        }
    }

    /// The same distribution at one statistic.
    pub fn at(self, statistic: Statistic) -> Named<'a> {
        Named {
            statistic: Some(statistic),
            ..self
        }
    }

    /// Its definition in the catalogue.
    pub fn definition(&self) -> Definition {
        match self.which {
            Which::Scenario(figure) => catalogue::of_scenario(figure),
            Which::Point(figure) => catalogue::of_point(figure),
        }
    }

    /// As an SLO writes it: `edits.seen_by_all.p95`, `api.list.failed`, `rss`, `heap`.
    pub fn name(&self) -> String {
        let figure = match self.which {
            Which::Scenario(figure) => figure.as_str(),
            Which::Point(PointFigure::Rss) => "rss",
            Which::Point(PointFigure::Cpu) => "cpu",
            Which::Point(PointFigure::Series(series)) => series,
        };
        [self.scenario, self.request, Some(figure)]
            .into_iter()
            .flatten()
            .chain(self.statistic.map(Statistic::as_str))
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// A figure's value in result units (seconds, a fraction, bytes, per second, cores, a count),
/// or a time that never came.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// The figure.
    Value(f64),
    /// A time that never came: the statistic falls among messages that never reached
    /// everyone. Worse than any value; JSON has no infinity, so it is said in words.
    Never,
}

impl Reading {
    /// The value, `None` when it never came.
    pub fn value(self) -> Option<f64> {
        match self {
            Reading::Value(value) => Some(value),
            Reading::Never => None,
        }
    }
}

/// The figure `named` of `run`, or why it has nothing behind it (a share of no requests, a
/// process never sampled: unmeasured, never 0).
pub fn read(run: &RunResult, named: &Named<'_>) -> Result<Reading, String> {
    let figure = match named.which {
        Which::Point(point) => return point_figure(run, point).map(Reading::Value),
        Which::Scenario(figure) => figure,
    };
    let scenario = named.scenario.unwrap_or_default();
    let result = run
        .scenarios
        .get(scenario)
        .ok_or_else(|| format!("scenario `{scenario}` did not run"))?;
    if let Some(skipped) = &result.skipped {
        return Err(format!("scenario `{scenario}` was not measured: {skipped}"));
    }
    let statistic = named.statistic;
    if let Some(request) = named.request {
        return request_figure(result, scenario, request, figure, statistic).map(Reading::Value);
    }
    if let Some(rooms) = &result.rooms {
        return rooms_figure(figure, statistic, result, rooms);
    }
    http_figure(figure, statistic, result).map(Reading::Value)
}

/// An HTTP scenario's wait for a connection (`connection_wait`) at `statistic`, in seconds:
/// what a latency that failed spent before its request could be sent. `None` for a rooms
/// scenario, one that did not run, or no wait recorded.
pub fn connection_wait(run: &RunResult, scenario: &str, statistic: Statistic) -> Option<f64> {
    let result = run.scenarios.get(scenario)?;
    if result.rooms.is_some() {
        return None;
    }
    summary_statistic(&result.connection_wait, Some(statistic), "").ok()
}

/// Whether a run's figures count toward its point: its value over the repeats on the page,
/// the fits, the plan and `compare` all read the runs that did not fail. A run that failed
/// (the target crashed or never got ready, a step failed) measured no load that can stand
/// beside its repeats; it is counted as failed, never as a repeat.
pub fn figures_count(run: &RunResult) -> bool {
    run.failure.is_none()
}

fn point_figure(run: &RunResult, figure: PointFigure<'_>) -> Result<f64, String> {
    match figure {
        PointFigure::Rss => run
            .process
            .steady
            .map(|steady| steady.rss_bytes as f64)
            .ok_or_else(|| "the server's process was not read at the steady state".to_owned()),
        PointFigure::Cpu => run.process.hold_cpu_cores.ok_or_else(|| {
            "the server's CPU over the hold was not measured (its process was not read at the \
             hold's start and end)"
                .to_owned()
        }),
        PointFigure::Series(series) => run
            .metrics
            .steady
            .get(series)
            .copied()
            .ok_or_else(|| format!("the metrics held no `{series}`")),
    }
}

fn request_figure(
    result: &ScenarioResult,
    scenario: &str,
    request: &str,
    figure: ScenarioFigure,
    statistic: Option<Statistic>,
) -> Result<f64, String> {
    let apart = result.by_request.get(request).ok_or_else(|| {
        format!("request `{request}` of scenario `{scenario}` was not measured apart")
    })?;
    match figure {
        ScenarioFigure::Latency => summary_statistic(
            &apart.latency,
            statistic,
            &no_expected_answer(&apart.errors, apart.requests),
        ),
        ScenarioFigure::Failed => {
            let outside = apart.outside_hold.as_ref();
            ratio(
                apart.errors.total() + outside.map_or(0, |o| o.errors.total()),
                apart.requests + outside.map_or(0, |o| o.requests),
                "no such request was sent",
            )
        }
        ScenarioFigure::Requests => Ok(apart.requests as f64),
        other => Err(format!(
            "`{}` is not measured for one request",
            other.as_str()
        )),
    }
}

fn http_figure(
    figure: ScenarioFigure,
    statistic: Option<Statistic>,
    result: &ScenarioResult,
) -> Result<f64, String> {
    match figure {
        ScenarioFigure::Latency => summary_statistic(
            &result.latency,
            statistic,
            &no_expected_answer(&result.errors, result.requests),
        ),
        // Every request of the run: one that failed outside the hold (timed out while the
        // load ramped up) is a failure the server caused all the same.
        ScenarioFigure::Failed => {
            let outside = result.outside_hold.as_ref();
            ratio(
                result.errors.total() + outside.map_or(0, |o| o.errors.total()),
                result.requests + outside.map_or(0, |o| o.requests),
                "no request was sent",
            )
        }
        ScenarioFigure::Dropped => ratio(
            result.dropped,
            result.requests + result.dropped,
            "no request was due",
        ),
        // No request ended: no rate was measured (a stopped server is not "0/s, within noise").
        ScenarioFigure::Rate if result.requests == 0 => Err("no request ended".to_owned()),
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
) -> Result<Reading, String> {
    let sockets = &rooms.sockets;
    let messages = &rooms.messages;
    let of_expected = |part: u64| {
        ratio(
            part,
            messages.expected,
            "no message was expected at any peer",
        )
    };
    let value = match figure {
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
        ScenarioFigure::SeenByAll => return seen_by_all(result, rooms, statistic),
        ScenarioFigure::Delivered => of_expected(messages.delivered),
        ScenarioFigure::Reach => of_expected(messages.on_time),
        ScenarioFigure::Late => of_expected(messages.late),
        ScenarioFigure::Messages => Ok(messages.sent as f64),
        ScenarioFigure::Misrouted => Ok(messages.misrouted as f64),
        ScenarioFigure::Duplicates => Ok(messages.duplicates as f64),
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
        ScenarioFigure::Ack => match &rooms.socket_io {
            Some(socket_io) => summary_statistic(&socket_io.ack, statistic, "no ack came"),
            None => Err("the scenario does not speak Socket.IO".to_owned()),
        },
        ScenarioFigure::Unacked => match &rooms.socket_io {
            Some(socket_io) => ratio(
                socket_io.acks_asked.saturating_sub(socket_io.acks_received),
                socket_io.acks_asked,
                "no message asked an ack",
            ),
            None => Err("the scenario does not speak Socket.IO".to_owned()),
        },
        other => Err(format!(
            "`{}` is not measured for a rooms scenario",
            other.as_str()
        )),
    };
    value.map(Reading::Value)
}

/// Seen by everyone, over every message that expected someone: one that never reached
/// everyone counts as never (the catalogue's definition), so a statistic that falls among
/// those is [`Reading::Never`]. Read from the histogram of the complete messages and the
/// count of incomplete ones, never from the summary alone (which is over complete ones).
fn seen_by_all(
    result: &ScenarioResult,
    rooms: &RoomsResult,
    statistic: Option<Statistic>,
) -> Result<Reading, String> {
    let Some(statistic) = statistic else {
        return Err("the SLO names no statistic of the distribution".to_owned());
    };
    let messages = &rooms.messages;
    if messages.reached_all + messages.incomplete == 0 {
        return Err("no message was expected at any peer".to_owned());
    }
    let histogram = result
        .histogram(HistogramKey::SeenByAll)
        .ok_or_else(|| "the seen_by_all histogram is missing".to_owned())?;
    Ok(seen_by_all_statistic(&histogram, rooms, statistic))
}

/// A statistic of seen-by-all with the incomplete messages at infinity.
fn seen_by_all_statistic(
    histogram: &Histogram<u64>,
    rooms: &RoomsResult,
    statistic: Statistic,
) -> Reading {
    let complete = rooms.messages.reached_all;
    let incomplete = rooms.messages.incomplete;
    let seconds = |micros: f64| Reading::Value(micros / 1e6);
    if complete == 0 || histogram.is_empty() {
        return Reading::Never;
    }
    match statistic.quantile() {
        Some(quantile) => rooms
            .seen_by_all_quantile(histogram, quantile)
            .map_or(Reading::Never, Reading::Value),
        None if statistic == Statistic::Min => seconds(histogram.min() as f64),
        None if incomplete > 0 => Reading::Never,
        None => seconds(histogram.mean()),
    }
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

/// `part / whole`, or why there is no such share: of nothing, no share failed or passed (0 of
/// 0 is not 0 %).
fn ratio(part: u64, whole: u64, empty: &str) -> Result<f64, String> {
    if whole == 0 {
        Err(empty.to_owned())
    } else {
        Ok(part as f64 / whole as f64)
    }
}

/// Why a latency has nothing behind it: no request ended, or none got an expected answer
/// (each failure named by its kind, as the latency of a failure is not the server's speed).
fn no_expected_answer(errors: &ErrorCounts, requests: u64) -> String {
    if requests == 0 {
        return "no request ended".to_owned();
    }
    format!(
        "none of the {} requests got an expected answer ({})",
        headroom_spec::numbers::count(requests as f64),
        errors.describe()
    )
}

#[cfg(test)]
mod tests;
