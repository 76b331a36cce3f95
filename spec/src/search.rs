//! A phase that finds its ceiling instead of listing steps:
//! `vary = { rate = { search = { from = "100/s", to = "20000/s", precision = "5%" } } }`.
//! How the search decides is the runner's (docs/search.md); this is what a spec writes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::units::{Duration, Percent};
use crate::vars::{RangeError, VarValue, ends_of};

/// `{ search = { … } }`: the phase searches its variable for the highest value that passes
/// every SLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSweep {
    /// Where to look and how closely.
    pub search: Search,
}

/// The search of one variable: probe upward from `from` (doubling) until a probe fails, then
/// halve the bracket between the last pass and the first fail down to `precision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// The first value probed: a load the server surely holds.
    pub from: VarValue,
    /// The highest value probed; passing there, the ceiling is "at least" this.
    pub to: VarValue,
    /// Stop when the bracket (first fail − last pass) is at most this share of the last pass.
    #[serde(default = "default_precision")]
    pub precision: Percent,
    /// The hold of a probe that brackets or bisects; the two probes that end the search run
    /// the phase's full hold. A quarter of the hold (at least 5 s) by default; at least 1 s
    /// and no longer than the hold (E046).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_hold: Option<Duration>,
    /// Runs of a probe that brackets or bisects; the two probes that end the search run the
    /// phase's `repeats`.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 100))]
    pub probe_repeats: u32,
    /// The most runs the search may take, confirmations included; stopped by it, the search
    /// reports the bracket it had.
    #[serde(default = "default_max_runs")]
    #[schemars(range(min = 2, max = 1000))]
    pub max_runs: u32,
    /// The most wall time the search may take; no probe starts past it. At least the holds of
    /// the first probe and the two confirmations (`probe_hold` × `probe_repeats` + 2 ×
    /// `repeats` × the hold), at most a week (E046).
    #[serde(default = "default_max_time")]
    pub max_time: Duration,
}

fn default_precision() -> Percent {
    Percent::new(5.0)
}

fn one() -> u32 {
    1
}

fn default_max_runs() -> u32 {
    30
}

fn default_max_time() -> Duration {
    Duration::from_secs(30 * 60)
}

/// A search's two ends as numbers: where it starts and stops, their unit, and whether they are
/// counts (whole numbers, searched as whole numbers).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchEnds {
    /// `from`.
    pub from: f64,
    /// `to`.
    pub to: f64,
    /// The unit both carry (`"/s"`), empty for plain numbers.
    pub unit: String,
    /// Both are integers: the search probes whole numbers.
    pub whole: bool,
}

impl SearchEnds {
    /// `load` as a variable's value: an integer for counts, with the unit for quantities.
    pub fn value(&self, load: f64) -> VarValue {
        if self.whole {
            VarValue::Integer(load.round() as i64)
        } else if self.unit.is_empty() {
            VarValue::Float(load)
        } else {
            VarValue::Text(crate::units::format_quantity(load, &self.unit))
        }
    }
}

impl Search {
    /// The ends as numbers, or why they make no search.
    pub fn ends(&self) -> Result<SearchEnds, RangeError> {
        let (from, to, unit, whole) = ends_of(&self.from, &self.to)?;
        if !(from > 0.0 && from.is_finite()) {
            return Err(RangeError::Ends(format!(
                "a search starts above 0, found `from` = {}",
                self.from
            )));
        }
        if to <= from || !to.is_finite() {
            return Err(RangeError::Ends(format!(
                "`to` ({}) must be above `from` ({}): a search looks upwards",
                self.to, self.from
            )));
        }
        Ok(SearchEnds {
            from,
            to,
            unit,
            whole,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(from: VarValue, to: VarValue) -> Search {
        Search {
            from,
            to,
            precision: default_precision(),
            probe_hold: None,
            probe_repeats: 1,
            max_runs: 30,
            max_time: default_max_time(),
        }
    }

    #[test]
    fn counts_are_whole_and_rates_keep_their_unit() {
        let users = search(VarValue::Integer(10), VarValue::Integer(2000));
        let ends = users.ends().expect("ends");
        assert!(ends.whole);
        assert_eq!(ends.value(437.6), VarValue::Integer(438));
        let rate = search(
            VarValue::Text("100/s".into()),
            VarValue::Text("20000/s".into()),
        );
        let ends = rate.ends().expect("ends");
        assert!(!ends.whole);
        assert_eq!((ends.from, ends.to), (100.0, 20000.0));
        assert_eq!(ends.value(1180.0).to_string(), "1180/s");
    }

    #[test]
    fn ends_that_make_no_search_say_why() {
        for (from, to) in [
            (VarValue::Integer(0), VarValue::Integer(10)),
            (VarValue::Integer(10), VarValue::Integer(10)),
            (VarValue::Integer(10), VarValue::Integer(5)),
            (VarValue::Text("1/s".into()), VarValue::Text("10s".into())),
            (VarValue::Text("fast".into()), VarValue::Integer(10)),
        ] {
            let error = search(from.clone(), to.clone()).ends();
            assert!(
                matches!(error, Err(RangeError::Ends(_))),
                "{from} {to}: {error:?}"
            );
        }
    }

    #[test]
    fn the_defaults_fit_a_ci_job() {
        let text = r#"search = { from = 10, to = 100 }"#;
        let sweep: SearchSweep = toml::from_str(text).expect("parses");
        assert_eq!(sweep.search.precision, Percent::new(5.0));
        assert_eq!(sweep.search.probe_repeats, 1);
        assert_eq!(sweep.search.max_runs, 30);
        assert_eq!(sweep.search.max_time, Duration::from_secs(1800));
        let unknown = r#"search = { from = 10, to = 100, precison = "5%" }"#;
        assert!(toml::from_str::<SearchSweep>(unknown).is_err());
    }
}
