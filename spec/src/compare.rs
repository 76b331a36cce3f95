//! `[compare]`: the gates `headroom compare` holds a change to, committed beside the bench.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What `headroom compare` checks when it compares a results file of this spec with another.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    /// Gates, as `--fail-on` takes them: a figure (or the end of its name after a dot) and
    /// the change it may take the worse way, signed: `"seen_by_all.p95 +10%"`,
    /// `"usd_per_unit_month +5%"`, `"api.rate -5%"`. `compare` exits 2 when a figure is worse
    /// by more than that and its repeats do not put the change within noise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(regex(pattern = GATE_PATTERN)))]
    pub fail_on: Vec<String>,
}

/// The pattern every `fail_on` rule matches (the schema's), for the compiler's diagnostic.
pub const GATE_PATTERN: &str =
    r"^\s*\S+\s+[+-]([0-9]*[1-9][0-9]*(\.[0-9]*)?|[0-9]*\.[0-9]*[1-9][0-9]*)%\s*$";

/// One gate rule, read: the figures it names and how much worse they may get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRule {
    /// As written: `seen_by_all.p95 +10%`.
    pub rule: String,
    /// A figure's name, or its end after a dot (`seen_by_all.p95` names `edits.seen_by_all.p95`).
    pub figure: String,
    /// The change allowed, as a fraction with its sign: +0.10 lets a figure rise 10 %.
    pub threshold: f64,
}

/// A rule that is not a figure and a signed, non-zero percentage, or that names a figure by
/// a name `compare` no longer uses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotAGate {
    /// Not a figure and a signed, non-zero percentage.
    #[error(
        "`{0}` is not a gate rule: write a figure and a signed percentage, as `seen_by_all.p95 +10%` or `api.rate -5%`"
    )]
    Syntax(String),
    /// A figure by its old name (`rss_mib`): figures are named as SLOs name them.
    #[error(
        "gate `{rule}`: `{old}` is now `{new}` (figures are named as SLOs name them): write `{suggested}`"
    )]
    Renamed {
        /// The rule as written.
        rule: String,
        /// The name it used.
        old: String,
        /// The figure catalogue's name for it.
        new: String,
        /// The rule with the new name.
        suggested: String,
    },
}

/// The names `compare` used before the figure catalogue (issue 31), and the catalogue's for
/// each: `rss_mib` is `rss` (in bytes), `cpu_cores` is `cpu`, `SCENARIO.errors` is
/// `SCENARIO.failed`, `series.NAME` is `NAME`.
pub fn renamed(figure: &str) -> Option<String> {
    match figure {
        "rss_mib" => return Some("rss".to_owned()),
        "cpu_cores" => return Some("cpu".to_owned()),
        "errors" => return Some("failed".to_owned()),
        _ => {}
    }
    if let Some(series) = figure.strip_prefix("series.") {
        return Some(series.to_owned());
    }
    figure
        .strip_suffix(".errors")
        .map(|scenario| format!("{scenario}.failed"))
}

impl GateRule {
    /// Reads `seen_by_all.p95 +10%`.
    pub fn parse(rule: &str) -> Result<GateRule, NotAGate> {
        let wrong = || NotAGate::Syntax(rule.trim().to_owned());
        let (figure, change) = rule
            .trim()
            .rsplit_once(char::is_whitespace)
            .ok_or_else(wrong)?;
        let figure = figure.trim();
        let percent = change.strip_suffix('%').ok_or_else(wrong)?;
        if figure.is_empty()
            || figure.contains(char::is_whitespace)
            || !(percent.starts_with('+') || percent.starts_with('-'))
            || !percent[1..].chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            return Err(wrong());
        }
        let threshold: f64 = percent.parse().map_err(|_| wrong())?;
        if !threshold.is_finite() || threshold == 0.0 {
            return Err(wrong());
        }
        if let Some(new) = renamed(figure) {
            return Err(NotAGate::Renamed {
                rule: rule.trim().to_owned(),
                old: figure.to_owned(),
                suggested: format!("{new} {change}"),
                new,
            });
        }
        Ok(GateRule {
            rule: rule.trim().to_owned(),
            figure: figure.to_owned(),
            threshold: threshold / 100.0,
        })
    }

    /// Whether the rule names `figure`: the whole name, or its end after a dot.
    pub fn names(&self, figure: &str) -> bool {
        figure == self.figure
            || figure
                .strip_suffix(self.figure.as_str())
                .is_some_and(|head| head.ends_with('.'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_a_figure_and_a_signed_percentage() {
        let rule = GateRule::parse(" seen_by_all.p95 +10% ").expect("a rule");
        assert_eq!(
            (rule.rule.as_str(), rule.figure.as_str(), rule.threshold),
            ("seen_by_all.p95 +10%", "seen_by_all.p95", 0.1)
        );
        assert_eq!(
            GateRule::parse("api.rate -5%").map(|r| r.threshold),
            Ok(-0.05)
        );
        assert!(rule.names("edits.seen_by_all.p95"));
        assert!(!rule.names("edits.xseen_by_all.p95"));
        for wrong in [
            "p95 10%", "p95 +10", "+10%", "p95 +0%", "p95 +x%", "a b +1%",
        ] {
            assert_eq!(
                GateRule::parse(wrong),
                Err(NotAGate::Syntax(wrong.to_owned())),
                "{wrong}"
            );
        }
    }

    /// Issue 31: `compare` names figures as SLOs do; a gate on an old name is refused with
    /// the new one in the rule it should be.
    #[test]
    fn a_gate_on_an_old_name_is_refused_with_the_new_one() {
        for (old, new) in [
            ("rss_mib +5%", "rss +5%"),
            ("cpu_cores +10%", "cpu +10%"),
            ("api.errors +1%", "api.failed +1%"),
            ("errors +1%", "failed +1%"),
            ("series.heap +3%", "heap +3%"),
        ] {
            let refused = GateRule::parse(old).expect_err("an old name");
            assert!(
                matches!(&refused, NotAGate::Renamed { suggested, .. } if suggested == new),
                "{refused:?}"
            );
        }
        assert_eq!(
            GateRule::parse("rss_mib +5%").map_err(|e| e.to_string()),
            Err(
                "gate `rss_mib +5%`: `rss_mib` is now `rss` (figures are named as SLOs name \
                 them): write `rss +5%`"
                    .to_owned()
            )
        );
        assert!(GateRule::parse("api.failed +1%").is_ok());
    }

    /// The schema's pattern and the parser agree, on what passes and what does not.
    #[test]
    fn the_pattern_and_the_parser_agree() {
        let pattern = regex::Regex::new(GATE_PATTERN).expect("the pattern compiles");
        for rule in [
            "p95 +10%",
            "api.rate -5%",
            "x +0.5%",
            "x +.5%",
            "x -5.%",
            "x +00.01%",
            " x  +1% ",
            "p95 10%",
            "p95 +0%",
            "p95 +0.0%",
            "x +1e3%",
            "+10%",
            "a b +1%",
            "p95 +x%",
        ] {
            assert_eq!(
                pattern.is_match(rule),
                GateRule::parse(rule).is_ok(),
                "{rule}"
            );
        }
    }
}
