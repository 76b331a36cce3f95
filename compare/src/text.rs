//! A comparison in words: the cells of its rows and what is said above and below them, for
//! `headroom compare`'s table and Markdown and the capacity page's "compared with" section.

use std::collections::BTreeSet;

use headroom_matrix::slo::{FigureUnit, ScenarioFigure};

use crate::report::{FigureReport, Report, VerdictWord};
use crate::verdict::{ALPHA, Basis, Spread};

/// What is said above the figures: the levers that differ, unlike machines and limits.
pub fn warnings(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    if !report.levers.is_empty() {
        lines.push(format!("levers: {}", report.levers.join("; ")));
    }
    if !report.machine_differences.is_empty() {
        let consequence = if report.across_machines {
            "judged anyway (--allow-cross-hardware)"
        } else {
            "no figure is called better or worse (--allow-cross-hardware to judge anyway)"
        };
        lines.push(format!(
            "cross-hardware: differences include the machine ({}): {consequence}",
            report.machine_differences.join("; ")
        ));
    }
    for unlike in &report.unlike_shapes {
        lines.push(format!("unlike limits: {unlike}"));
    }
    lines
}

/// What is said below the figures: why some cannot be told, unmatched points, the gates.
pub fn notes(report: &Report, quick: bool) -> Vec<String> {
    let reasons: BTreeSet<&String> = report
        .figures
        .iter()
        .filter_map(|f| f.why.as_ref())
        .collect();
    let mut lines: Vec<String> = reasons
        .into_iter()
        .map(|why| format!("cannot tell: {why}"))
        .collect();
    for place in &report.only_in_base {
        lines.push(format!("only in the base: {place}"));
    }
    for place in &report.only_in_new {
        lines.push(format!("only in the new file: {place}"));
    }
    for note in &report.notes {
        lines.push(format!("note: {note}"));
    }
    let noisy = report.figures.iter().filter(|f| f.noisy).count();
    if noisy > 0 {
        lines.push(format!(
            "noisy: {noisy} of the figures have repeats that spread more than {:.0} % (standard \
             deviation over mean) on a side: add repeats",
            report.method.noisy_cv * 100.0
        ));
    }
    for gate in &report.gates {
        let change = gate
            .change
            .map_or("from 0".to_owned(), |c| format!("{:+.1} %", c * 100.0));
        let result = if gate.failed { "FAILED" } else { "passed" };
        lines.push(format!(
            "gate `{}` at {} ({}): {change}, {}: {result}",
            gate.rule, gate.point, gate.figure, gate.verdict
        ));
    }
    lines.push(format!(
        "Each side: the median of its repeats (min–max, ×repeats). Verdicts: a two-sided \
         Mann–Whitney U test on the repeats at {:.0} %: a figure that did not change is called \
         better or worse at most once in {:.0}; a change of the medians under {} is no \
         meaningful change (--min-effect) (docs/compare.md).",
        ALPHA * 100.0,
        1.0 / ALPHA,
        percent(report.method.min_effect)
    ));
    if quick {
        lines.push(
            "note: a --quick run is compared: its holds and repeats were cut, its figures are \
             not ones to plan with"
                .to_owned(),
        );
    }
    lines
}

/// A fraction as a percentage, as few digits as it needs: `3 %`, `0.5 %`.
fn percent(fraction: f64) -> String {
    let value = fraction * 100.0;
    if (value - value.round()).abs() < 1e-9 {
        format!("{value:.0} %")
    } else {
        format!("{value} %")
    }
}

/// The cells of a figure's row: point, figure, base, new, change, verdict; `unit` is what
/// one unit is (`user`).
/// A figure's verdict in words, without its p-value: `within noise`, `better: the brackets
/// are apart`; what a row of several points counts them by.
pub fn verdict_phrase(figure: &FigureReport) -> &'static str {
    // Two searched ceilings are judged by their brackets: no test, no p-value.
    let bracketed = figure.basis == Basis::Search;
    match figure.verdict {
        VerdictWord::Better if bracketed => "better: the brackets are apart",
        VerdictWord::Worse if bracketed => "worse: the brackets are apart",
        VerdictWord::WithinNoise if bracketed => "within noise: the brackets overlap",
        VerdictWord::NoMeaningfulChange if bracketed => {
            "no meaningful change: the brackets are apart by less than the minimum effect"
        }
        VerdictWord::CannotTell => "cannot tell",
        VerdictWord::WithinNoise => "within noise",
        VerdictWord::NoMeaningfulChange => "no meaningful change",
        VerdictWord::Better => "better",
        VerdictWord::Worse => "worse",
    }
}

/// The test's p-value after the phrase (` (p 0.008)`), where a test gave one.
fn p_said(figure: &FigureReport) -> String {
    let p = figure.p_value.unwrap_or(1.0);
    match figure.verdict {
        _ if figure.basis == Basis::Search => String::new(),
        VerdictWord::CannotTell => String::new(),
        VerdictWord::WithinNoise => format!(" (p {p:.2})"),
        _ if p < 0.001 => " (p < 0.001)".to_owned(),
        _ => format!(" (p {p:.3})"),
    }
}

/// Whether a figure's verdict is a change to read: better or worse.
pub fn changed(figure: &FigureReport) -> bool {
    matches!(figure.verdict, VerdictWord::Better | VerdictWord::Worse)
}

/// The rows to show: every figure with `all`; else each figure's points that changed, then
/// one row counting its other points by verdict (`6 other points`, `within noise ×4, no
/// meaningful change ×2`), counted from the verdicts, not from their cells.
pub fn rows(report: &Report, all: bool) -> Vec<[String; 6]> {
    if all {
        return report
            .figures
            .iter()
            .map(|f| cells(f, &report.unit))
            .collect();
    }
    // A figure of a phase: its points that changed, then the rest counted.
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for figure in &report.figures {
        let key = (figure.phase.as_str(), figure.figure.as_str());
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    let mut rows = Vec::new();
    for (phase, name) in groups {
        let of = report
            .figures
            .iter()
            .filter(|f| f.phase == phase && f.figure == name);
        let (moved, rest): (Vec<&FigureReport>, Vec<&FigureReport>) = of.partition(|f| changed(f));
        rows.extend(moved.iter().map(|f| cells(f, &report.unit)));
        if rest.len() == 1 && moved.is_empty() {
            rows.push(cells(rest[0], &report.unit));
        } else if !rest.is_empty() {
            rows.push(counted_row(phase, name, &rest, !moved.is_empty()));
        }
    }
    rows
}

/// One row for a figure's points that did not change, counted by verdict.
fn counted_row(phase: &str, name: &str, rest: &[&FigureReport], others: bool) -> [String; 6] {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for figure in rest {
        let phrase = verdict_phrase(figure);
        match counted.iter_mut().find(|(w, _)| *w == phrase) {
            Some((_, n)) => *n += 1,
            None => counted.push((phrase, 1)),
        }
    }
    let verdicts: Vec<String> = counted.iter().map(|(w, n)| format!("{w} ×{n}")).collect();
    [
        format!(
            "{phase}: {} {}point{}",
            rest.len(),
            if others { "other " } else { "" },
            if rest.len() == 1 { "" } else { "s" }
        ),
        name.to_owned(),
        String::new(),
        String::new(),
        String::new(),
        verdicts.join(", "),
    ]
}

/// A figure's row: point, figure, base, new, change, verdict.
pub fn cells(figure: &FigureReport, unit: &str) -> [String; 6] {
    // Two searched ceilings are judged by their brackets: no test, no p-value.
    let verdict = format!("{}{}", verdict_phrase(figure), p_said(figure));
    let verdict = if figure.noisy {
        format!("{verdict}, noisy")
    } else {
        verdict
    };
    let point = if figure.point.is_empty() {
        figure.phase.clone()
    } else {
        format!("{}: {}", figure.phase, figure.point)
    };
    [
        point,
        figure.figure.clone(),
        spread(figure.base, figure, unit),
        spread(figure.new, figure, unit),
        figure
            .change
            .map_or("-".to_owned(), |c| format!("{:+.1} %", c * 100.0)),
        verdict,
    ]
}

/// A side's median, range and count, in the figure's unit: `12.40 ms (11.90–12.80, ×5)`,
/// `$0.1456 per user-month (0.1432–0.1464, ×5)`; a fitted slope with its 95 % interval and
/// points: `497.4 KiB per room (495.6–499.2 at 95 %, 9 points)`. `unit` is what one unit is
/// (`user`).
fn spread(side: Option<Spread>, figure: &FigureReport, unit: &str) -> String {
    let Some(side) = side else {
        return "-".to_owned();
    };
    let unit = Unit::of(&figure.figure, side.max.abs().max(side.min.abs()), unit);
    let median = format!("{}{}", unit.currency, unit.number(side.median));
    if figure.basis == Basis::Search {
        return format!(
            "passes at {}, fails at {} (×{} at each end)",
            unit.number(side.min),
            unit.number(side.max),
            side.repeats
        );
    }
    if figure.basis == Basis::Fit {
        return format!(
            "{median} {} ({}–{} at 95 %, {} points)",
            unit.name,
            unit.number(side.min),
            unit.number(side.max),
            side.repeats
        );
    }
    if side.repeats == 1 {
        return format!("{median} {}", unit.name);
    }
    format!(
        "{median} {} ({}–{}, ×{})",
        unit.name,
        unit.number(side.min),
        unit.number(side.max),
        side.repeats
    )
}

/// How a figure's values are written: scaled, to some decimals, with a unit (and a currency
/// sign before the median).
struct Unit {
    currency: &'static str,
    name: String,
    scale: f64,
    decimals: usize,
}

impl Unit {
    /// The unit of `figure` (read from its name), for values up to `largest`; `counted` is
    /// what one of the plan's units is (`user`).
    fn of(figure: &str, largest: f64, counted: &str) -> Unit {
        let last = figure.rsplit('.').next().unwrap_or(figure);
        let unit = |name: &str, scale, decimals| Unit {
            currency: "",
            name: name.to_owned(),
            scale,
            decimals,
        };
        if figure.starts_with("fit.") {
            let per = format!("per {counted}");
            return match last.strip_suffix("_per_unit") {
                Some("bytes") => unit(&format!("KiB {per}"), 1.0 / 1024.0, 1),
                Some("cores") => unit(&format!("millicores {per}"), 1000.0, 2),
                Some("seconds") => unit(&format!("ms {per}"), 1000.0, 3),
                _ => unit(&per, 1.0, 4),
            };
        }
        if figure == "ceiling.slo.units" {
            return unit(&headroom_spec::numbers::plural(counted), 1.0, 0);
        }
        if figure.starts_with("plan.") {
            return match last.split_once("_per_unit_month") {
                Some((currency, "")) => Unit {
                    currency: match currency {
                        "usd" => "$",
                        "eur" => "€",
                        _ => "",
                    },
                    ..unit(&format!("per {counted}-month"), 1.0, 4)
                },
                _ => unit(&headroom_spec::numbers::plural(counted), 1.0, 0),
            };
        }
        // The figure catalogue's names and units: a statistic of a time in seconds, shares
        // as fractions, memory in bytes, CPU in cores.
        let parts: Vec<&str> = figure.split('.').collect();
        let catalogued = parts
            .iter()
            .rev()
            .find_map(|part| ScenarioFigure::parse(part));
        if headroom_matrix::slo::Statistic::parse(last).is_some() {
            if largest >= 1.0 {
                unit("s", 1.0, 3)
            } else {
                unit("ms", 1000.0, 2)
            }
        } else if figure == "rss" {
            unit("MiB", 1.0 / (1024.0 * 1024.0), 1)
        } else if figure == "cpu" {
            unit("cores", 1.0, 3)
        } else {
            match catalogued.map(ScenarioFigure::unit) {
                Some(FigureUnit::Ratio) => unit("%", 100.0, 2),
                Some(FigureUnit::Rate) => unit("/s", 1.0, 1),
                _ => unit("", 1.0, 3),
            }
        }
    }

    fn number(&self, value: f64) -> String {
        format!("{:.*}", self.decimals, value * self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Better, Method};

    fn figure(point: &str, verdict: VerdictWord, p_value: f64, noisy: bool) -> FigureReport {
        FigureReport {
            phase: "memory".to_owned(),
            point: point.to_owned(),
            figure: "rss".to_owned(),
            better: Better::Lower,
            basis: Basis::Repeats,
            base: None,
            new: None,
            change: Some(0.01),
            p_value: Some(p_value),
            verdict,
            why: None,
            unlike_verdict: None,
            noisy,
        }
    }

    /// Issue 44: a figure's quiet points are folded by their verdicts, never by splitting the
    /// words their cells say: a noisy one and one of another p-value count as the same verdict.
    #[test]
    fn quiet_points_are_counted_by_their_verdicts() {
        let report = Report {
            format: crate::report::COMPARE_FORMAT,
            method: Method {
                test: String::new(),
                alpha: ALPHA,
                exact_up_to: 0,
                noisy_cv: 0.1,
                min_effect: 0.03,
            },
            machine_differences: Vec::new(),
            levers: Vec::new(),
            unlike_shapes: Vec::new(),
            unit: "room".to_owned(),
            across_machines: false,
            figures: vec![
                figure("rooms = 1", VerdictWord::WithinNoise, 0.4, false),
                figure("rooms = 2", VerdictWord::WithinNoise, 0.9, true),
                figure("rooms = 4", VerdictWord::Worse, 0.008, false),
                figure("rooms = 8", VerdictWord::NoMeaningfulChange, 0.0004, false),
            ],
            only_in_base: Vec::new(),
            only_in_new: Vec::new(),
            notes: Vec::new(),
            gates: Vec::new(),
            failed: false,
        };
        let folded = rows(&report, false);
        assert_eq!(folded.len(), 2, "{folded:?}");
        assert_eq!(folded[0][5], "worse (p 0.008)");
        assert_eq!(folded[1][0], "memory: 3 other points");
        assert_eq!(folded[1][5], "within noise ×2, no meaningful change ×1");
        assert_eq!(rows(&report, true).len(), 4);
        assert_eq!(
            cells(&report.figures[1], "room")[5],
            "within noise (p 0.90), noisy"
        );
    }
}
