//! How a phase that searches its ceiling found it: its probes in order (each also a point of
//! the phase, read like any other), each probe's verdict and why, the bracket, the budget
//! spent and how the search ended.

use headroom_spec::VarValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A searched phase's record (`vary = { x = { search = … } }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchRecord {
    /// The variable searched.
    pub variable: String,
    /// The probes, in the order they ran.
    pub probes: Vec<SearchProbe>,
    /// How the search ended.
    pub ending: SearchEnding,
    /// How it ended, in words (what the page and `plan` say).
    pub said: String,
    /// The ceiling: the highest value every run passed at the full hold and repeats
    /// (confirmed), below every split and fail. Absent when no value was confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<VarValue>,
    /// The highest value that passed a shorter exploring probe, above `pass`, that no
    /// full-hold probe confirmed: no ceiling is priced from it. Absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfirmed: Option<VarValue>,
    /// The lowest value that failed, or whose runs split (some passed, some failed), above
    /// `pass`. Absent when none did (a lower bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<VarValue>,
    /// The precision asked, as a fraction (0.05 for `"5%"`).
    pub precision: f64,
    /// `(fail − pass) / pass` of the final bracket, when it has both ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_reached: Option<f64>,
    /// Runs the search took, confirmations included.
    pub runs: u32,
    /// Seconds from its first probe's start to its end.
    pub wall_s: f64,
    /// Where the search started from another instance's bracket (`[plan] emulate`), not
    /// from `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start: Option<WarmStart>,
}

/// A search started from the bracket another instance's search found, scaled by the vCPU ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WarmStart {
    /// The phase whose bracket it started from.
    pub from_phase: String,
    /// That phase's last pass.
    pub its_pass: VarValue,
    /// This instance's vCPUs over that one's.
    pub scale: f64,
    /// The value the search started at.
    pub start: VarValue,
}

/// One probe: a load, run `runs` times, judged on every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchProbe {
    /// Its point's index in the phase's points.
    pub point: usize,
    /// The value probed.
    pub load: VarValue,
    /// Bracketing or bisecting (`explore`, a short hold may do) or confirming an end of the
    /// final bracket at the full hold and repeats (`confirm`).
    pub stage: ProbeStage,
    /// The hold each of its runs had, in seconds.
    pub hold_s: f64,
    /// Its runs.
    pub runs: u32,
    /// Of them, the ones that passed every SLO.
    pub passes: u32,
    /// What the probe said.
    pub verdict: ProbeOutcome,
    /// Why, in words: the SLO that failed, the split, what the generator could not send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Whether a probe explored or confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStage {
    /// Bracketing or bisecting, at `probe_hold` and `probe_repeats`.
    Explore,
    /// An end of the final bracket, at the phase's hold and repeats.
    Confirm,
}

/// A probe's verdict over its runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeOutcome {
    /// Every run passed every SLO.
    Pass,
    /// Every run failed one.
    Fail,
    /// Some passed, some failed: the boundary is within noise at this load.
    Split,
    /// The generator could not send what was intended: neither pass nor fail.
    GeneratorBound,
    /// A run said nothing of the load (never ready, nothing measured, interrupted).
    Unjudged,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchEnding {
    /// The bracket is within the precision, both ends confirmed.
    Converged,
    /// Every probe passed up to `to` (or `[capacity] cap`): the ceiling is at least `pass`.
    LowerBound,
    /// `from` failed: the ceiling lies below where the search started.
    BelowFrom,
    /// A probe's runs split and the search stopped there (files written before a split
    /// bounded the bracket as a fail does and the search went on below it).
    Split,
    /// The generator could not send a probe's load: the ceiling is past what this machine
    /// can send.
    GeneratorBound,
    /// A probe said nothing of the load.
    Unjudged,
    /// `max_runs` or `max_time` ran out first.
    OutOfBudget,
}

impl SearchRecord {
    /// `pass` as a number, when there is one.
    pub fn pass_number(&self) -> Option<f64> {
        self.pass.as_ref().and_then(number)
    }

    /// The probe that bounds the ceiling from above: the latest at the bracket's fail, or,
    /// when the search ended on a split, the probe that split.
    pub fn boundary(&self) -> Option<&SearchProbe> {
        match &self.fail {
            Some(fail) => self.probes.iter().rev().find(|p| &p.load == fail),
            None if self.ending == SearchEnding::Split => self
                .probes
                .iter()
                .rev()
                .find(|p| p.verdict == ProbeOutcome::Split),
            None => None,
        }
    }

    /// Why the bracket's top did not pass: the words of its probe ([`Self::boundary`]).
    pub fn fail_why(&self) -> Option<&str> {
        self.boundary().and_then(|p| p.why.as_deref())
    }

    /// `unconfirmed` as a number, when there is one.
    pub fn unconfirmed_number(&self) -> Option<f64> {
        self.unconfirmed.as_ref().and_then(number)
    }

    /// `fail` as a number, when there is one.
    pub fn fail_number(&self) -> Option<f64> {
        self.fail.as_ref().and_then(number)
    }
}

impl SearchProbe {
    /// The value probed as a number: `1180` of `"1180/s"`.
    pub fn load_number(&self) -> Option<f64> {
        number(&self.load)
    }
}

/// A value's number: `1180` of `"1180/s"`.
fn number(value: &VarValue) -> Option<f64> {
    match value {
        VarValue::Integer(n) => Some(*n as f64),
        VarValue::Float(x) => Some(*x),
        VarValue::Text(text) => headroom_spec::units::split_quantity(text).map(|(n, _)| n),
    }
}
