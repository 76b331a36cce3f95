//! Parsing one rule: the comparison, `[scenario.]figure[.statistic]` against the spec's
//! figures, and the threshold in the figure's unit.

use super::{Figure, SloError, SloErrorKind, conditional_figure};
use headroom_matrix::slo::{Comparison, FigureUnit, SloRule, Statistic, Threshold};
use std::ops::Range;

const OPERATORS: &[(&str, Comparison)] = &[
    ("<=", Comparison::AtMost),
    (">=", Comparison::AtLeast),
    ("==", Comparison::Equal),
    ("<", Comparison::Below),
    (">", Comparison::Above),
];

/// Parses `figure op value` against the figures the spec produces.
pub fn parse(name: &str, expression: &str, figures: &[Figure]) -> Result<SloRule, SloError> {
    let sides = Sides::split(name, expression)?;
    let named = Named::read(sides.left, figures);
    let figure = find_figure(name, &sides, &named, figures)?;
    let statistic = statistic_of(name, &sides, figure, named.statistic)?;
    let (left, right) = (sides.left, sides.right);
    let threshold = parse_threshold(figure.unit, right).ok_or_else(|| SloError {
        kind: SloErrorKind::Unit,
        message: format!(
            "SLO `{name}`: `{right}` is not {}",
            figure.unit.threshold_forms()
        ),
        range: sides.right_range.clone(),
        hint: format!(
            "`{left}` is compared with {}",
            figure.unit.threshold_forms()
        ),
    })?;
    Ok(SloRule {
        name: name.to_owned(),
        expression: expression.to_owned(),
        scenario: named.scenario.map(str::to_owned),
        request: named.request.map(str::to_owned),
        figure: figure.name.clone(),
        statistic,
        unit: figure.unit,
        comparison: sides.comparison,
        threshold_value: threshold.value(),
        threshold,
    })
}

/// An SLO expression cut at its comparison: the figure on the left, the value on the right,
/// each trimmed, with where each lies in the expression.
struct Sides<'a> {
    left: &'a str,
    right: &'a str,
    left_range: Range<usize>,
    right_range: Range<usize>,
    operator: &'static str,
    comparison: Comparison,
}

impl<'a> Sides<'a> {
    fn split(name: &str, expression: &'a str) -> Result<Sides<'a>, SloError> {
        let syntax = |message: String, range: Range<usize>| {
            SloError {
            kind: SloErrorKind::Syntax,
            message,
            range,
            hint: "write an SLO as `figure < value`, e.g. \"edits.seen_by_all.p95 < 1s\" or \"browse.failed < 1%\"".to_owned(),
        }
        };
        let (at, operator, comparison) = OPERATORS
            .iter()
            .filter_map(|(op, cmp)| expression.find(op).map(|at| (at, *op, *cmp)))
            .min_by_key(|(at, op, _)| (*at, std::cmp::Reverse(op.len())))
            .ok_or_else(|| {
                syntax(
                    format!("SLO `{name}` has no comparison (<, <=, >, >=, ==)"),
                    0..expression.len(),
                )
            })?;
        let left_raw = &expression[..at];
        let right_raw = &expression[at + operator.len()..];
        let (left, right) = (left_raw.trim(), right_raw.trim());
        let left_start = left_raw.len() - left_raw.trim_start().len();
        let right_start = at + operator.len() + (right_raw.len() - right_raw.trim_start().len());
        if left.is_empty() {
            return Err(syntax(
                format!("SLO `{name}` has no figure before `{operator}`"),
                0..at + operator.len(),
            ));
        }
        if right.is_empty() {
            return Err(syntax(
                format!("SLO `{name}` has no value after `{operator}`"),
                at..at + operator.len(),
            ));
        }
        let right_range = right_start..right_start + right.len();
        if OPERATORS.iter().any(|(op, _)| right.contains(op)) {
            return Err(syntax(
                format!("SLO `{name}` compares more than once"),
                right_range,
            ));
        }
        Ok(Sides {
            left,
            right,
            left_range: left_start..left_start + left.len(),
            right_range,
            operator,
            comparison,
        })
    }
}

/// The left side read as `[scenario.]figure[.statistic]`.
struct Named<'a> {
    /// The first dotted segment, as written (a scenario, or a figure of the whole point).
    first: &'a str,
    /// Whether more than one segment was written.
    dotted: bool,
    scenario: Option<&'a str>,
    /// A named request of the scenario (`list` in `browse.list.latency.p95`).
    request: Option<&'a str>,
    figure: Option<&'a str>,
    statistic: Option<&'a str>,
    /// The spec's scenarios that produce figures, each once, in order.
    scenarios: Vec<&'a str>,
}

impl<'a> Named<'a> {
    fn read(left: &'a str, figures: &'a [Figure]) -> Named<'a> {
        // `scenario.figure.stat`, where a statistic may hold a dot (`p99.9`).
        let segments: Vec<&str> = left.splitn(3, '.').collect();
        let mut scenarios: Vec<&str> = Vec::new();
        for scenario in figures.iter().filter_map(|f| f.scenario.as_deref()) {
            if !scenarios.contains(&scenario) {
                scenarios.push(scenario);
            }
        }
        // `scenario.request.figure.stat`, when the second segment names one of its requests.
        let by_request: Vec<&str> = left.splitn(4, '.').collect();
        let is_request = by_request.len() > 2
            && figures.iter().any(|f| {
                f.scenario.as_deref() == Some(by_request[0])
                    && f.request.as_deref() == Some(by_request[1])
            });
        let (scenario, request, figure, statistic) = if is_request {
            (
                Some(by_request[0]),
                Some(by_request[1]),
                by_request.get(2).copied(),
                by_request.get(3).copied(),
            )
        } else if scenarios.contains(&segments[0]) {
            (
                Some(segments[0]),
                None,
                segments.get(1).copied(),
                segments.get(2).copied(),
            )
        } else {
            let mut rest = left.splitn(2, '.');
            (None, None, rest.next(), rest.next())
        };
        Named {
            first: segments[0],
            dotted: segments.len() > 1,
            scenario,
            request,
            figure,
            statistic,
            scenarios,
        }
    }
}

/// The figure the left side names, or what the spec has instead.
fn find_figure<'f>(
    name: &str,
    sides: &Sides<'_>,
    named: &Named<'_>,
    figures: &'f [Figure],
) -> Result<&'f Figure, SloError> {
    let scenario = named.scenario;
    let Some(figure_name) = named.figure else {
        let known: Vec<String> = figures
            .iter()
            .filter(|f| f.scenario.as_deref() == scenario && f.request.is_none())
            .map(|f| format!("`{}.{}`", named.first, f.name))
            .collect();
        return Err(SloError {
            kind: SloErrorKind::UnknownFigure,
            message: format!(
                "SLO `{name}` names scenario `{}` but no figure of it",
                named.first
            ),
            range: sides.left_range.clone(),
            hint: format!("add a figure: {}", known.join(", ")),
        });
    };
    if let Some(figure) = figures.iter().find(|f| {
        f.scenario.as_deref() == scenario
            && f.request.as_deref() == named.request
            && f.name == figure_name
    }) {
        return Ok(figure);
    }
    let candidates: Vec<String> = figures
        .iter()
        .map(|f| match (&f.scenario, &f.request) {
            (Some(s), Some(r)) => format!("{s}.{r}.{}", f.name),
            (Some(s), None) => format!("{s}.{}", f.name),
            _ => f.name.clone(),
        })
        .collect();
    let written = match (scenario, named.request) {
        (Some(s), Some(r)) => format!("{s}.{r}.{figure_name}"),
        (Some(s), None) => format!("{s}.{figure_name}"),
        _ => figure_name.to_owned(),
    };
    let hint = conditional_figure(figure_name)
        .map(str::to_owned)
        .or_else(|| crate::suggest::did_you_mean(&written, candidates.iter().map(String::as_str)))
        .unwrap_or_else(|| {
            if scenario.is_none() && named.dotted {
                let written_scenario = named.first;
                match crate::suggest::did_you_mean(
                    written_scenario,
                    named.scenarios.iter().copied(),
                ) {
                    Some(suggestion) => {
                        format!("`{written_scenario}` is not a scenario; {suggestion}")
                    }
                    None => format!(
                        "`{written_scenario}` is not a scenario; the scenarios are: {}",
                        named.scenarios.join(", ")
                    ),
                }
            } else {
                format!("the figures are: {}", candidates.join(", "))
            }
        });
    let start = sides.left_range.start;
    let end = start
        + scenario.map_or(0, |s| s.len() + 1)
        + named.request.map_or(0, |r| r.len() + 1)
        + figure_name.len();
    Err(SloError {
        kind: SloErrorKind::UnknownFigure,
        message: format!("SLO `{name}` is over `{written}`, which no scenario produces"),
        range: start..end.min(sides.left_range.end),
        hint,
    })
}

/// The statistic a figure takes: one for a distribution, none for a single value.
fn statistic_of(
    name: &str,
    sides: &Sides<'_>,
    figure: &Figure,
    written: Option<&str>,
) -> Result<Option<Statistic>, SloError> {
    let (left, left_range) = (sides.left, &sides.left_range);
    let stat_start = left_range.end - written.map_or(0, str::len);
    match (figure.unit, written) {
        (FigureUnit::Latency, None) => Err(SloError {
            kind: SloErrorKind::Syntax,
            message: format!("SLO `{name}`: `{left}` is a distribution and needs a statistic"),
            range: left_range.clone(),
            hint: format!(
                "add one of {}: \"{left}.p95 {} {}\"",
                Statistic::listed(),
                sides.operator,
                sides.right
            ),
        }),
        (FigureUnit::Latency, Some(stat)) => {
            Statistic::parse(stat).map(Some).ok_or_else(|| SloError {
                kind: SloErrorKind::Syntax,
                message: format!("SLO `{name}`: `{stat}` is not a statistic"),
                range: stat_start..left_range.end,
                hint: crate::suggest::did_you_mean(stat, Statistic::ALL.map(Statistic::as_str))
                    .unwrap_or_else(|| format!("use one of {}", Statistic::listed())),
            })
        }
        (_, None) => Ok(None),
        (_, Some(stat)) => Err(SloError {
            kind: SloErrorKind::Syntax,
            message: format!(
                "SLO `{name}`: `{}` is a single value and takes no statistic",
                figure.name
            ),
            range: stat_start.saturating_sub(1)..left_range.end,
            hint: format!("remove `.{stat}`"),
        }),
    }
}

fn parse_threshold(unit: FigureUnit, text: &str) -> Option<Threshold> {
    match unit {
        FigureUnit::Latency | FigureUnit::Time => text.parse().ok().map(Threshold::Duration),
        FigureUnit::Ratio | FigureUnit::Cpu => text.parse().ok().map(Threshold::Percent),
        FigureUnit::Size => text.parse().ok().map(Threshold::Size),
        FigureUnit::Rate => text.parse().ok().map(Threshold::Rate),
        FigureUnit::Count => text
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Threshold::Number),
    }
}
