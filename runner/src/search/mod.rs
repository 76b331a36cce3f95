//! The ceiling search's decisions (issue 32): which load to probe next, from the verdicts so
//! far. Pure: no clock, no target. Bracket, then bisect: probe upward geometrically from
//! `from` until a probe fails (or `to` passes: a lower bound), then halve the bracket between
//! the last pass and the first fail until `(fail − pass) / pass ≤ precision`. Bracketing
//! probes may be short (`probe_hold`); the final bracket's two ends are confirmed at the full
//! hold and repeats, and a confirmation that disagrees moves the bracket and the search goes
//! on. A split verdict (some repeats pass, some fail) is not a pass: it bounds the bracket
//! from above as a fail does, so the ceiling reported is the highest load below every split
//! and fail whose every run passed at the full hold ([`Search::reported`], the one place
//! that decides it). A probe the generator could not send ends the search: the ceiling is
//! past what this machine can load. A probe other work competed with is put back: the same
//! load is probed again, a few times at most.

#[cfg(test)]
mod tests;

/// What one search may do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bounds {
    /// The lowest load probed: failing there, the ceiling lies below it.
    pub(crate) from: f64,
    /// The first load probed: `from`, or where another instance's bracket says the ceiling
    /// is (a warm start); failing there, probes step down by `growth` towards `from`.
    pub(crate) start: f64,
    /// The highest load probed: passing there, the ceiling is a lower bound.
    pub(crate) to: f64,
    /// The bracket's width over its pass at which the search stops (0.05 for 5 %).
    pub(crate) precision: f64,
    /// Each bracketing probe's load over the last one's (down, over the next one's).
    pub(crate) growth: f64,
    /// Loads are counts (users, rooms): probed as whole numbers.
    pub(crate) whole: bool,
    /// The most probes, confirmations included.
    pub(crate) max_probes: u32,
}

/// How one probe went, over its repeats.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ProbeVerdict {
    /// Every repeat passed its SLOs.
    Pass,
    /// Every repeat failed one.
    Fail,
    /// Some passed and some failed: the boundary is within noise at this load.
    Split {
        /// Repeats that passed.
        passes: u32,
        /// Repeats run.
        of: u32,
    },
    /// The generator could not send what was intended: neither pass nor fail.
    GeneratorBound(String),
    /// A run said nothing of the load (the target never came up, nothing was measured, a
    /// run was interrupted): neither pass nor fail, in words.
    Unjudged(String),
    /// Other work or the hypervisor took the machine over a run's every try: neither pass
    /// nor fail, and the load is probed again ([`COMPETED_PROBES`] in a row end the search).
    Competed(String),
}

/// Probes in a row at one load that other work took the machine from before the search ends
/// unjudged there: interference only takes capacity away, so one such probe is put back and
/// tried again (issue 59), but a machine that never calms ends the search within its budget.
pub(crate) const COMPETED_PROBES: usize = 3;

/// Whether a probe explores (a short hold may do) or confirms an end of the final bracket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Bracketing or bisecting.
    Explore,
    /// At the full hold and repeats, an end of the bracket found.
    Confirm,
}

/// What the search does next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// Run a probe at `load`.
    Probe {
        /// The load.
        load: f64,
        /// How.
        stage: Stage,
    },
    /// The search is over.
    Done(Ending),
}

/// How a search ended, with the bracket it had.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// `pass` passes and `fail` fails, within the precision, both confirmed.
    Converged {
        /// The highest load that passed.
        pass: f64,
        /// The lowest that failed.
        fail: f64,
    },
    /// Every probe passed up to `to`: the ceiling is at least `pass`.
    LowerBound {
        /// The highest load that passed (`to`).
        pass: f64,
    },
    /// `from` itself failed: the ceiling lies below it.
    BelowFrom {
        /// `from`.
        fail: f64,
    },
    /// A probe the generator could not send: the ceiling is past what this machine loads.
    GeneratorBound {
        /// The load it could not send.
        at: f64,
        /// Why, in words.
        why: String,
    },
    /// A probe said nothing of the load: the search cannot go on from it.
    Unjudged {
        /// The load probed.
        at: f64,
        /// Why, in words.
        why: String,
    },
    /// Its budget ran out first (`max_probes` here; the runner's runs and time).
    OutOfBudget {
        /// Which budget, in words.
        why: String,
    },
}

/// What a search reports, however it ended: the ceiling is a load every run passed at the
/// full hold (confirmed) below every split and fail; a pass that only a shorter exploring
/// probe saw is kept apart, never reported as the ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Reported {
    /// The highest confirmed pass below `fail`: the ceiling.
    pub(crate) pass: Option<f64>,
    /// The highest pass below `fail` above `pass` that no full-hold probe confirmed.
    pub(crate) unconfirmed: Option<f64>,
    /// The lowest load that failed or split.
    pub(crate) fail: Option<f64>,
}

/// A search under way: the probes so far, from which the bracket is read.
#[derive(Debug, Clone)]
pub(crate) struct Search {
    bounds: Bounds,
    /// Every probe, in order.
    probes: Vec<(f64, Stage, ProbeVerdict)>,
    /// The search's end, once a probe ended it.
    ended: Option<Ending>,
}

/// An end of the bracket: its load, and whether a full probe gave its latest verdict.
type End = Option<(f64, bool)>;

impl Search {
    /// A search within `bounds`, nothing probed yet.
    pub(crate) fn new(bounds: Bounds) -> Search {
        Search {
            bounds,
            probes: Vec::new(),
            ended: None,
        }
    }

    /// Every probe so far, in order.
    #[cfg(test)]
    pub(crate) fn probes(&self) -> &[(f64, Stage, ProbeVerdict)] {
        &self.probes
    }

    /// Records how the probe at `load` went.
    pub(crate) fn record(&mut self, load: f64, stage: Stage, verdict: ProbeVerdict) {
        self.probes.push((load, stage, verdict.clone()));
        match verdict {
            ProbeVerdict::GeneratorBound(why) => {
                self.ended = Some(Ending::GeneratorBound { at: load, why });
            }
            ProbeVerdict::Unjudged(why) => self.ended = Some(Ending::Unjudged { at: load, why }),
            ProbeVerdict::Competed(why) => {
                let in_a_row = self
                    .probes
                    .iter()
                    .rev()
                    .take_while(|(l, _, v)| *l == load && matches!(v, ProbeVerdict::Competed(_)))
                    .count();
                if in_a_row >= COMPETED_PROBES {
                    self.ended = Some(Ending::Unjudged {
                        at: load,
                        why: format!("{why} (at each of {in_a_row} probes of this load)"),
                    });
                }
            }
            // The pass below a bound generator, confirmed at the full hold, failed: the
            // ceiling is below it after all, within what this machine sends: search on.
            ProbeVerdict::Fail | ProbeVerdict::Split { .. }
                if matches!(self.ended, Some(Ending::GeneratorBound { .. })) =>
            {
                self.ended = None;
            }
            ProbeVerdict::Pass | ProbeVerdict::Fail | ProbeVerdict::Split { .. } => {}
        }
    }

    /// Each load's latest verdict, `(load, every run passed, at the full hold)`: a
    /// confirmation overrides what exploring said at the same load; a split is not a pass.
    fn latest(&self) -> Vec<(f64, bool, bool)> {
        let mut latest: Vec<(f64, bool, bool)> = Vec::new();
        for (load, stage, verdict) in &self.probes {
            let passed = match verdict {
                ProbeVerdict::Pass => true,
                ProbeVerdict::Fail | ProbeVerdict::Split { .. } => false,
                ProbeVerdict::GeneratorBound(_)
                | ProbeVerdict::Unjudged(_)
                | ProbeVerdict::Competed(_) => continue,
            };
            let confirmed = *stage == Stage::Confirm;
            match latest.iter_mut().find(|(l, _, _)| l == load) {
                Some(entry) => *entry = (*load, passed, confirmed),
                None => latest.push((*load, passed, confirmed)),
            }
        }
        latest
    }

    /// The bracket the probes make: the lowest load whose latest verdict is a fail or a
    /// split, and the highest below it whose latest verdict is a pass (a pass above a fail is
    /// noise and left out), each with whether a full-hold probe gave that verdict.
    fn bracket(&self) -> (End, End) {
        let latest = self.latest();
        let fail = latest
            .iter()
            .filter(|(_, passed, _)| !passed)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|&(load, _, confirmed)| (load, confirmed));
        let pass = latest
            .iter()
            .filter(|(load, passed, _)| *passed && fail.is_none_or(|(f, _)| *load < f))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|&(load, _, confirmed)| (load, confirmed));
        (pass, fail)
    }

    /// What the search reports: the one decision of the ceiling, which the record, `plan`,
    /// `plan --json` and the page all read.
    pub(crate) fn reported(&self) -> Reported {
        let latest = self.latest();
        let (pass, fail) = self.bracket();
        let fail = fail.map(|(f, _)| f);
        let confirmed = latest
            .iter()
            .filter(|(load, passed, confirmed)| {
                *passed && *confirmed && fail.is_none_or(|f| *load < f)
            })
            .map(|&(load, _, _)| load)
            .max_by(f64::total_cmp);
        // The bracket's pass is the highest below the fail: unconfirmed, it lies above any
        // confirmed one.
        let unconfirmed = pass
            .filter(|(_, confirmed)| !confirmed)
            .map(|(load, _)| load);
        Reported {
            pass: confirmed,
            unconfirmed,
            fail,
        }
    }

    /// What to do next.
    pub(crate) fn next(&self) -> Next {
        let bracket = self.bracket();
        if let Some(ended) = &self.ended {
            // Past what the generator sends, the pass below is the answer, a lower bound:
            // confirmed at the full hold first, so it is one to plan with.
            if let (Ending::GeneratorBound { .. }, (Some((pass, false)), _)) = (ended, bracket) {
                return self.probe(pass, Stage::Confirm);
            }
            return Next::Done(ended.clone());
        }
        let b = &self.bounds;
        if self.probes.len() >= b.max_probes as usize {
            return Next::Done(self.out_of_budget(format!("{} probes", b.max_probes)));
        }
        match bracket {
            (None, None) => self.probe(b.start.clamp(b.from, b.to), Stage::Explore),
            (None, Some((fail, confirmed))) => {
                if fail <= b.from {
                    if confirmed {
                        Next::Done(Ending::BelowFrom { fail })
                    } else {
                        self.probe(fail, Stage::Confirm)
                    }
                } else {
                    // Nothing passed below this fail (a warm start too high, or a pass
                    // overturned by its confirmation): step down towards `from`.
                    let lower = self.rounded((fail / b.growth).max(b.from));
                    let lower = if lower >= fail { b.from } else { lower };
                    self.probe(lower, Stage::Explore)
                }
            }
            (Some((pass, confirmed)), None) => {
                if pass >= b.to {
                    if confirmed {
                        Next::Done(Ending::LowerBound { pass })
                    } else {
                        self.probe(pass, Stage::Confirm)
                    }
                } else {
                    self.probe(self.rounded((pass * b.growth).min(b.to)), Stage::Explore)
                }
            }
            (Some((pass, pass_confirmed)), Some((fail, fail_confirmed))) => {
                let narrow = (fail - pass) / pass <= b.precision;
                let mid = self.between(pass, fail);
                let indivisible = mid <= pass || mid >= fail;
                if !(narrow || indivisible) {
                    self.probe(mid, Stage::Explore)
                } else if !pass_confirmed {
                    self.probe(pass, Stage::Confirm)
                } else if !fail_confirmed {
                    self.probe(fail, Stage::Confirm)
                } else {
                    Next::Done(Ending::Converged { pass, fail })
                }
            }
        }
    }

    /// The search stopped by a budget (`why`: `30 runs`, `30m`); its bracket is
    /// [`Search::reported`].
    pub(crate) fn out_of_budget(&self, why: String) -> Ending {
        Ending::OutOfBudget { why }
    }

    /// The search stopped at `at` for a reason outside its probes (`why`).
    pub(crate) fn stopped(&self, at: f64, why: String) -> Ending {
        Ending::Unjudged { at, why }
    }

    fn probe(&self, load: f64, stage: Stage) -> Next {
        Next::Probe { load, stage }
    }

    /// Halfway between `low` and `high`, whole for counts.
    fn between(&self, low: f64, high: f64) -> f64 {
        self.rounded(low + (high - low) / 2.0)
    }

    /// Counts to whole numbers; rates to four significant digits (a rate of 1,183.59375/s
    /// reads as 1,184/s: a tenth of a percent is far inside any precision asked).
    fn rounded(&self, load: f64) -> f64 {
        if self.bounds.whole {
            load.floor()
        } else if load > 0.0 {
            let scale = 10f64.powi(3 - load.log10().floor() as i32);
            (load * scale).round() / scale
        } else {
            load
        }
    }
}
