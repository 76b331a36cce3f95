//! Figures in words, one text for every output: an SLO verdict as the page's ceiling section,
//! the planner's notes and `plan` say it, and a figure's value in its unit.

use headroom_matrix::slo::{FigureUnit, SloRule};
use headroom_results::SloVerdict;
use headroom_spec::numbers::{duration_ms, mib, number, percent};

/// A value in result units, written in its figure's unit: seconds as ms or s, a share as a
/// percentage, bytes as MiB, cores, a rate per second; a plain number when the unit is not
/// known (a verdict whose rule is not in the results' spec).
pub fn value(value: f64, unit: Option<FigureUnit>) -> String {
    match unit {
        Some(FigureUnit::Latency | FigureUnit::Time) => duration_ms(value * 1000.0),
        Some(FigureUnit::Ratio) => percent(value),
        Some(FigureUnit::Size) => mib(value, None),
        Some(FigureUnit::Cpu) => format!("{value:.2} cores"),
        Some(FigureUnit::Rate) => format!("{}/s", number(value)),
        Some(FigureUnit::Count) | None => number(value),
    }
}

/// One SLO verdict in a sentence: `` `edits.seen_by_all.p95 < 2500ms`: measured 2.93 s ``,
/// `` `…`: never: the quantile falls among messages that never reached everyone ``, or
/// `` `api.failed < 1%`: not measured: no request was sent ``. `rules` are the results'
/// spec's, for the figure's unit.
pub fn slo_sentence(verdict: &SloVerdict, rules: &[SloRule]) -> String {
    let expression = &verdict.expression;
    let unit = rules
        .iter()
        .find(|r| r.name == verdict.name)
        .map(|r| r.unit);
    let note = verdict.note.as_deref().unwrap_or("no value");
    match (verdict.pass, verdict.value) {
        (Some(_), Some(measured)) => match &verdict.note {
            Some(note) => format!("`{expression}`: measured {}; {note}", value(measured, unit)),
            None => format!("`{expression}`: measured {}", value(measured, unit)),
        },
        (Some(_), None) => format!("`{expression}`: {note}"),
        (None, _) => format!("`{expression}`: not measured: {note}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(pass: Option<bool>, value: Option<f64>, note: Option<&str>) -> SloVerdict {
        SloVerdict {
            name: "seen".to_owned(),
            expression: "edits.seen_by_all.p95 < 2500ms".to_owned(),
            value,
            threshold: 2.5,
            pass,
            note: note.map(str::to_owned),
        }
    }

    #[test]
    fn a_verdict_in_one_sentence() {
        let rule = headroom_compiler::slo::parse(
            "seen",
            "edits.seen_by_all.p95 < 2500ms",
            &[headroom_compiler::slo::Figure {
                scenario: Some("edits".to_owned()),
                request: None,
                name: "seen_by_all".to_owned(),
                unit: FigureUnit::Latency,
            }],
        )
        .expect("a rule");
        let rules = [rule];
        assert_eq!(
            slo_sentence(&verdict(Some(false), Some(2.93), None), &rules),
            "`edits.seen_by_all.p95 < 2500ms`: measured 2.93 s"
        );
        assert_eq!(
            slo_sentence(
                &verdict(Some(false), None, Some(crate::verdict::NEVER)),
                &rules
            ),
            "`edits.seen_by_all.p95 < 2500ms`: never: the quantile falls among messages that \
             never reached everyone"
        );
        assert_eq!(
            slo_sentence(
                &verdict(None, None, Some("no message was expected at any peer")),
                &rules
            ),
            "`edits.seen_by_all.p95 < 2500ms`: not measured: no message was expected at any peer"
        );
        // A measured value with a note: where it went, after it.
        assert_eq!(
            slo_sentence(
                &verdict(
                    Some(false),
                    Some(2.93),
                    Some("the wait for a connection alone …")
                ),
                &rules
            ),
            "`edits.seen_by_all.p95 < 2500ms`: measured 2.93 s; the wait for a connection alone …"
        );
        assert_eq!(value(0.0123, Some(FigureUnit::Ratio)), "1.2 %");
        assert_eq!(value(1.5, Some(FigureUnit::Cpu)), "1.50 cores");
    }
}
