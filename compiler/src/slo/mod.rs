//! SLO rules: `"edits.seen_by_all.p95 < 1s"`, `"browse.failed < 1%"`, `"rss < 3GiB"`.
//!
//! A figure is `[scenario.]name[.statistic]`. What a scenario produces depends on its kind and
//! settings (an idle room scenario has no delivery latency), so the catalogue is built per spec.

use std::fmt;
use std::ops::Range;

use headroom_matrix::slo::{FigureUnit, ScenarioFigure};
use headroom_spec::phase::SeriesUnit;
use headroom_spec::scenario::RoomsProtocol;
use headroom_spec::{Scenario, Spec};

/// A figure some scenario or the sampler produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    /// `None` for figures of the whole point (`rss`, a metrics series).
    pub scenario: Option<String>,
    /// A named request of the scenario, for its figures measured apart (`list` in
    /// `browse.list.latency.p95`).
    pub request: Option<String>,
    /// Its name: `latency`, `failed`, `rss`, a series.
    pub name: String,
    /// What it measures, which decides its threshold's unit.
    pub unit: FigureUnit,
}

/// The figures a spec produces.
pub fn catalogue(spec: &Spec) -> Vec<Figure> {
    let mut figures = Vec::new();
    let mut add = |scenario: Option<&str>, name: &str, unit| {
        figures.push(Figure {
            scenario: scenario.map(str::to_owned),
            request: None,
            name: name.to_owned(),
            unit,
        });
    };
    add(None, "rss", FigureUnit::Size);
    add(None, "cpu", FigureUnit::Cpu);
    let mut series: Vec<&headroom_spec::Series> = spec.measure.series.iter().collect();
    for phase in &spec.phases {
        series.extend(phase.measure.iter().flat_map(|m| m.series.iter()));
    }
    for s in series {
        let unit = match s.effective_unit() {
            SeriesUnit::Bytes => FigureUnit::Size,
            SeriesUnit::Seconds => FigureUnit::Time,
            SeriesUnit::Count => FigureUnit::Count,
        };
        add(None, &s.name, unit);
    }
    for scenario in &spec.scenarios {
        let name = Some(scenario.name());
        let produced: Vec<ScenarioFigure> = match scenario {
            Scenario::Http(_) => ScenarioFigure::HTTP.to_vec(),
            Scenario::Rooms(rooms) => {
                let mut produced = ScenarioFigure::ROOMS.to_vec();
                if rooms.send.is_some() && !rooms.idle {
                    produced.extend(ScenarioFigure::ROOMS_SENDING);
                }
                if rooms.reload.is_some() {
                    produced.extend(ScenarioFigure::ROOMS_RELOADING);
                }
                let acks = rooms.socket_io.as_ref().is_some_and(|s| s.ack);
                if acks
                    && rooms.protocol == RoomsProtocol::SocketIo
                    && rooms.send.is_some()
                    && !rooms.idle
                {
                    produced.extend(ScenarioFigure::ROOMS_ACKING);
                }
                produced
            }
        };
        for figure in produced {
            add(name, figure.as_str(), figure.unit());
        }
    }
    // Each named request of an HTTP scenario of several, measured apart.
    for scenario in &spec.scenarios {
        let Scenario::Http(http) = scenario else {
            continue;
        };
        if http.requests.len() < 2 {
            continue;
        }
        for request in http.requests.iter().filter_map(|r| r.name.as_deref()) {
            for figure in ScenarioFigure::BY_REQUEST {
                figures.push(Figure {
                    scenario: Some(http.name.clone()),
                    request: Some(request.to_owned()),
                    name: figure.as_str().to_owned(),
                    unit: figure.unit(),
                });
            }
        }
    }
    figures
}

/// The figures a scenario of this kind could produce with other settings, for hints.
fn conditional_figure(name: &str) -> Option<&'static str> {
    let figure = ScenarioFigure::parse(name)?;
    if ScenarioFigure::ROOMS_SENDING.contains(&figure) {
        Some("a rooms scenario produces it when it sends (`send = {…}` and not `idle = true`)")
    } else if ScenarioFigure::ROOMS_RELOADING.contains(&figure) {
        Some("a rooms scenario produces it when it has `reload = {…}`")
    } else if ScenarioFigure::ROOMS_ACKING.contains(&figure) {
        Some(
            "a Socket.IO rooms scenario produces it when it sends asking acks (`protocol = \"socket.io\"`, `socket_io = { ack = true }`)",
        )
    } else {
        None
    }
}

/// Why a rule did not parse: what, where in the expression, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SloError {
    /// What kind of mistake it is, which decides its diagnostic code.
    pub kind: SloErrorKind,
    /// What is wrong.
    pub message: String,
    /// Where, in the expression.
    pub range: Range<usize>,
    /// How to fix it.
    pub hint: String,
}

/// The kinds of mistake an SLO can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SloErrorKind {
    /// Not `figure < value`.
    Syntax,
    /// A figure the spec does not produce.
    UnknownFigure,
    /// A threshold in the wrong unit.
    Unit,
}

impl fmt::Display for SloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

mod parse;

pub use parse::parse;

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_matrix::slo::{Comparison, Statistic};

    fn figures() -> Vec<Figure> {
        let mut figures = vec![Figure {
            scenario: None,
            request: None,
            name: "rss".into(),
            unit: FigureUnit::Size,
        }];
        for (name, unit) in [
            ("latency", FigureUnit::Latency),
            ("failed", FigureUnit::Ratio),
        ] {
            figures.push(Figure {
                scenario: Some("browse".into()),
                request: None,
                name: name.into(),
                unit,
            });
            figures.push(Figure {
                scenario: Some("browse".into()),
                request: Some("list".into()),
                name: name.into(),
                unit,
            });
        }
        figures
    }

    #[test]
    fn parses_rules() {
        let rule = parse("p95", "browse.latency.p99.9 <= 1s", &figures()).expect("rule");
        assert_eq!(rule.statistic, Some(Statistic::P999));
        assert_eq!(rule.comparison, Comparison::AtMost);
        assert_eq!(rule.threshold_value, 1.0);
        let rule = parse("failed", "browse.failed < 1%", &figures()).expect("rule");
        assert!((rule.threshold_value - 0.01).abs() < 1e-12);
        let rule = parse("memory", "rss < 3GiB", &figures()).expect("rule");
        assert_eq!(rule.threshold_value, 3.0 * 1024.0 * 1024.0 * 1024.0);
        // A named request's own figure: scenario, request, figure, statistic (with its dot).
        let rule = parse("list", "browse.list.latency.p99.9 < 200ms", &figures()).expect("rule");
        assert_eq!(
            (
                rule.scenario.as_deref(),
                rule.request.as_deref(),
                rule.figure.as_str()
            ),
            (Some("browse"), Some("list"), "latency")
        );
        assert_eq!(rule.statistic, Some(Statistic::P999));
        let rule = parse("list", "browse.list.failed < 1%", &figures()).expect("rule");
        assert_eq!(rule.request.as_deref(), Some("list"));
        // The scenario's own stays the scenario's.
        let rule = parse("p95", "browse.latency.p95 < 1s", &figures()).expect("rule");
        assert_eq!(rule.request, None);
        // A request that is not one: the figures named, with the request's among them.
        let error = parse("x", "browse.lst.latency.p95 < 1s", &figures()).expect_err("no such");
        assert_eq!(error.kind, SloErrorKind::UnknownFigure);
        assert!(error.hint.contains("browse.list.latency"), "{}", error.hint);
    }

    #[test]
    fn errors_point_into_the_expression() {
        let error = parse("x", "browse.latncy.p95 < 1s", &figures()).expect_err("unknown");
        assert_eq!(error.kind, SloErrorKind::UnknownFigure);
        assert_eq!(error.range, 0..13);
        assert!(error.hint.contains("browse.latency"), "{}", error.hint);
        let error = parse("x", "browse.latency.p95 < 1%", &figures()).expect_err("unit");
        assert_eq!(error.kind, SloErrorKind::Unit);
        assert_eq!(error.range, 21..23);
        let error = parse("x", "browse.latency < 1s", &figures()).expect_err("stat");
        assert_eq!(error.kind, SloErrorKind::Syntax);
        let error = parse("x", "browse.latency.p95 1s", &figures()).expect_err("op");
        assert_eq!(error.kind, SloErrorKind::Syntax);
    }
}
