//! The CI gate: `--fail-on 'seen_by_all.p95 +10%'` fails a comparison when a figure got worse
//! by more than its threshold and the repeats do not put the change within noise.

use serde::Serialize;

use crate::matching::{Comparison, Row};
use crate::verdict::{Direction, Verdict};

/// One rule (`--fail-on`, or the spec's `[compare] fail_on`): the figures it names and how
/// much worse they may get.
pub use headroom_spec::compare::GateRule;

/// A rule that cannot be read, or that does not fit the figures it names.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GateError {
    #[error(
        "`--fail-on '{0}'`: write a figure and a signed percentage, as `seen_by_all.p95 +10%` or `api.rate -5%`"
    )]
    /// Not a figure and a signed percentage; the rule as written.
    Syntax(String),
    /// A figure by a name `compare` no longer uses; the sentence with the new one.
    #[error("{0}")]
    Renamed(String),
    /// No row of the comparison has the figure.
    #[error("gate `{rule}` names no figure of these files; they have: {figures}")]
    NoFigure {
        /// The rule as written.
        rule: String,
        /// The figures the files have, listed.
        figures: String,
    },
    #[error(
        "gate `{rule}`: `{figure}` is worse when {worse}: write its threshold as {sign}{percent}%"
    )]
    /// The threshold's sign lets the figure get better, not worse.
    WrongSign {
        /// The rule as written.
        rule: String,
        /// The figure it named.
        figure: String,
        /// Which way the figure is worse: `higher` or `lower`.
        worse: &'static str,
        /// The sign to write.
        sign: char,
        /// The threshold's size, in percent.
        percent: String,
    },
}

/// Reads a `--fail-on` rule: `seen_by_all.p95 +10%`.
pub fn parse(rule: &str) -> Result<GateRule, GateError> {
    GateRule::parse(rule).map_err(|error| match error {
        headroom_spec::compare::NotAGate::Syntax(_) => GateError::Syntax(rule.to_owned()),
        renamed => GateError::Renamed(renamed.to_string()),
    })
}

/// What one rule found at one point.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct GateOutcome {
    /// The rule as written.
    pub rule: String,
    /// The point: `phase: variables`.
    pub point: String,
    /// The figure the rule named there.
    pub figure: String,
    /// The change of the medians, as a fraction (+0.2: 20 % higher); absent when the base's
    /// median is 0 and the new one is not (counted as past any threshold).
    pub change: Option<f64>,
    /// The verdict of the repeats (`better`, `worse`, `within noise`, `cannot tell`).
    pub verdict: String,
    /// Past the threshold the wrong way, and not within noise.
    pub failed: bool,
}

/// Every rule against every row it names. A rule that names no figure, or whose sign says a
/// better change is a failure, is an error.
pub fn check(gates: &[GateRule], comparison: &Comparison) -> Result<Vec<GateOutcome>, GateError> {
    let mut outcomes = Vec::new();
    for gate in gates {
        let rows: Vec<&Row> = comparison
            .rows
            .iter()
            .filter(|row| gate.names(&row.figure))
            .collect();
        if rows.is_empty() {
            let figures: std::collections::BTreeSet<&str> =
                comparison.rows.iter().map(|r| r.figure.as_str()).collect();
            return Err(GateError::NoFigure {
                rule: gate.rule.clone(),
                figures: figures.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
        for row in rows {
            let worse_up = row.direction == Direction::LowerIsBetter;
            if worse_up != (gate.threshold > 0.0) {
                return Err(GateError::WrongSign {
                    rule: gate.rule.clone(),
                    figure: row.figure.clone(),
                    worse: if worse_up { "higher" } else { "lower" },
                    sign: if worse_up { '+' } else { '-' },
                    percent: format!("{}", (gate.threshold * 100.0).abs()),
                });
            }
            let past = match row.judgement.change {
                Some(change) if worse_up => change > gate.threshold,
                Some(change) => change < gate.threshold,
                // From 0 to something: past any threshold upwards, never downwards.
                None => worse_up,
            };
            let failed = past && row.judgement.verdict != Verdict::WithinNoise;
            outcomes.push(GateOutcome {
                rule: gate.rule.clone(),
                point: if row.point.is_empty() {
                    row.phase.clone()
                } else {
                    format!("{}: {}", row.phase, row.point)
                },
                figure: row.figure.clone(),
                change: row.judgement.change,
                verdict: row.judgement.verdict.word().to_owned(),
                failed,
            });
        }
        // A point the base has and the new file lacks (a run killed, a phase not run) was
        // not shown to hold: it fails the gate, never passes it by absence.
        for place in &comparison.only_in_base {
            outcomes.push(GateOutcome {
                rule: gate.rule.clone(),
                point: place.clone(),
                figure: gate.figure.clone(),
                change: None,
                verdict: "missing from the new file".to_owned(),
                failed: true,
            });
        }
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::judge;

    fn row(figure: &str, direction: Direction, base: &[f64], new: &[f64]) -> Row {
        Row {
            phase: "load".to_owned(),
            point: "users=10".to_owned(),
            figure: figure.to_owned(),
            direction,
            judgement: judge(base, new, direction),
        }
    }

    #[test]
    fn a_rule_is_a_figure_and_a_signed_percentage() {
        let gate = parse("seen_by_all.p95 +10%").expect("a rule");
        assert_eq!(
            (gate.figure.as_str(), gate.threshold),
            ("seen_by_all.p95", 0.1)
        );
        assert!(gate.names("edits.seen_by_all.p95"));
        assert!(gate.names("seen_by_all.p95"));
        assert!(!gate.names("edits.seen_by_all.p950"));
        assert!(!gate.names("xseen_by_all.p95"));
        assert_eq!(parse("api.rate -5%").expect("a rule").threshold, -0.05);
        for bad in ["p95", "p95 10%", "p95 +10", "+10%", "p95 +x%", "p95 +0%"] {
            assert_eq!(parse(bad), Err(GateError::Syntax(bad.to_owned())), "{bad}");
        }
        // Issue 31: an old name is refused with the catalogue's.
        assert_eq!(
            parse("rss_mib +5%").map_err(|e| e.to_string()),
            Err(
                "gate `rss_mib +5%`: `rss_mib` is now `rss` (figures are named as SLOs name \
                 them): write `rss +5%`"
                    .to_owned()
            )
        );
    }

    #[test]
    fn worse_past_the_threshold_fails_unless_within_noise() {
        let comparison = Comparison {
            rows: vec![
                // 20 % slower in every one of five repeats: worse, fails a 10 % gate.
                row(
                    "api.latency.p95",
                    Direction::LowerIsBetter,
                    &[10.0, 10.1, 9.9, 10.2, 9.8],
                    &[12.0, 12.1, 11.9, 12.2, 11.8],
                ),
                // 20 % lower rate in one noisy repeat each: cannot tell, past the threshold:
                // fails (a gate errs towards stopping a change it cannot clear).
                row("api.rate", Direction::HigherIsBetter, &[100.0], &[80.0]),
                // Errors from none to some: no ratio, past any threshold.
                row(
                    "api.failed",
                    Direction::LowerIsBetter,
                    &[0.0; 5],
                    &[0.01; 5],
                ),
            ],
            ..Comparison::default()
        };
        let gates = [
            parse("latency.p95 +10%").expect("rule"),
            parse("rate -10%").expect("rule"),
            parse("failed +50%").expect("rule"),
            parse("latency.p95 +25%").expect("rule"),
        ];
        let outcomes = check(&gates, &comparison).expect("checked");
        let failed: Vec<bool> = outcomes.iter().map(|o| o.failed).collect();
        assert_eq!(failed, [true, true, true, false]);
        // Within noise never fails, however far the medians moved.
        let noisy = Comparison {
            rows: vec![row(
                "api.latency.p95",
                Direction::LowerIsBetter,
                &[10.0, 30.0, 12.0, 28.0, 11.0],
                &[29.0, 11.0, 31.0, 12.0, 27.0],
            )],
            ..Comparison::default()
        };
        let outcome = check(&gates[..1], &noisy).expect("checked");
        assert_eq!(outcome[0].verdict, "within noise");
        assert!(!outcome[0].failed);
    }

    #[test]
    fn a_rule_that_names_nothing_or_the_wrong_way_is_an_error() {
        let comparison = Comparison {
            rows: vec![row("api.rate", Direction::HigherIsBetter, &[1.0], &[1.0])],
            ..Comparison::default()
        };
        let nothing = check(&[parse("usd_per_unit +5%").expect("rule")], &comparison);
        assert_eq!(
            nothing.map_err(|e| e.to_string()),
            Err(
                "gate `usd_per_unit +5%` names no figure of these files; they have: api.rate"
                    .to_owned()
            )
        );
        let wrong = check(&[parse("rate +5%").expect("rule")], &comparison);
        assert_eq!(
            wrong.map_err(|e| e.to_string()),
            Err(
                "gate `rate +5%`: `api.rate` is worse when lower: write its threshold as -5%"
                    .to_owned()
            )
        );
    }

    /// Issue 30: a new file missing a point the base has (its run was killed) fails every
    /// gate at that point; it passed them before.
    #[test]
    fn a_point_missing_from_the_new_file_fails_the_gate() {
        let comparison = Comparison {
            rows: vec![row(
                "api.latency.p95",
                Direction::LowerIsBetter,
                &[10.0, 10.1, 9.9, 10.0],
                &[10.0, 10.1, 9.9, 10.0],
            )],
            only_in_base: vec!["load: rate=200/s".to_owned()],
            ..Comparison::default()
        };
        let gates = [parse("latency.p95 +10%").expect("a rule")];
        let outcomes = check(&gates, &comparison).expect("checked");
        assert_eq!(outcomes.len(), 2);
        assert!(!outcomes[0].failed, "the matched point holds");
        assert!(outcomes[1].failed, "{:?}", outcomes[1]);
        assert_eq!(outcomes[1].point, "load: rate=200/s");
        assert_eq!(outcomes[1].verdict, "missing from the new file");
    }
}
