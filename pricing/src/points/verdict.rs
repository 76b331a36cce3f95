//! What one step of a sweep says about the SLOs: passed, or what broke and whether it broke
//! with a value measured.

use serde::Serialize;

/// The judgement of one x over its runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct StepVerdict {
    /// Every SLO of every run held there, and no run failed.
    pub pass: bool,
    /// What did not hold, in the one sentence a verdict has (`headroom_figures::text`):
    /// `` `edits.seen_by_all.p95 < 2500ms`: measured 2.93 s ``, `` `…`: not measured: no request was sent ``, or a failed run.
    pub broke: Vec<String>,
    /// Something broke with a value measured (an SLO over its threshold), not only for want
    /// of one (a failed run, a figure not measured): a server that answered nothing there
    /// has no ceiling below it to sweep for.
    pub measured_breach: bool,
}

impl StepVerdict {
    /// Records one judgement: `None` for a pass, else what broke, measured (an SLO over its
    /// threshold).
    pub fn judge(&mut self, broke: Option<String>) {
        if broke.is_some() {
            self.measured_breach = true;
        }
        self.record(broke);
    }

    /// Records what broke for want of a figure: a failed run, an SLO with nothing measured.
    pub fn judge_unmeasured(&mut self, broke: String) {
        self.record(Some(broke));
    }

    fn record(&mut self, broke: Option<String>) {
        if let Some(what) = broke {
            self.pass = false;
            if !self.broke.contains(&what) {
                self.broke.push(what);
            }
        }
    }

    /// A fresh verdict that passes until something breaks.
    pub fn passing() -> StepVerdict {
        StepVerdict {
            pass: true,
            broke: Vec::new(),
            measured_breach: false,
        }
    }
}
