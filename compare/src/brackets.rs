//! Searched SLO ceilings compared (issue 32): each side's ceiling is a bracket, the last load
//! that passed every run and the first that failed, both confirmed at the full hold and
//! repeats. Two brackets that do not overlap are a change beyond both searches' precision;
//! brackets that overlap are no change the searches can tell apart. A side without both ends
//! (a lower bound, a split, a search stopped early) cannot be compared by its bracket.

use headroom_prices::PriceTable;
use headroom_pricing::planner::{Measured, Request, plan};
use headroom_results::Results;

use crate::verdict::{Basis, CannotTell, Judgement, Spread, Verdict};

/// A searched ceiling's bracket, and the runs that confirmed its ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// The last load that passed.
    pub pass: f64,
    /// The first load that failed above it.
    pub fail: f64,
    /// The repeats each end was confirmed with.
    pub repeats: usize,
}

impl Bracket {
    fn spread(&self) -> Spread {
        Spread {
            repeats: self.repeats,
            min: self.pass,
            median: self.pass,
            max: self.fail,
            cv: None,
        }
    }
}

/// The bracket of the SLO ceiling the planner takes from `results`, when its phase searched
/// (`Some(None)`: it searched, and found no bracket with both ends); `None` when it did not.
pub fn of_results(results: &Results, table: &PriceTable) -> Option<Option<Bracket>> {
    let request = Request::of_spec(&results.matrix, None);
    let planned = plan(&request, &Measured::from_results(results), table).ok()?;
    let slo = planned.model.slo?;
    slo.search.as_ref()?;
    let repeats = results
        .phases
        .iter()
        .find(|p| p.name == slo.phase)
        .and_then(|p| p.search.as_ref())
        .and_then(|record| record.boundary())
        .map_or(0, |probe| probe.runs as usize);
    Some(match (slo.units, slo.first_failing) {
        (Some(pass), Some(fail)) => Some(Bracket {
            pass,
            fail,
            repeats,
        }),
        _ => None,
    })
}

/// Judges the new searched ceiling against the base's by their brackets: higher is better.
pub fn judge_brackets(base: Option<Bracket>, new: Option<Bracket>) -> Judgement {
    let change = match (base, new) {
        (Some(b), Some(n)) if b.pass > 0.0 => Some(n.pass / b.pass - 1.0),
        _ => None,
    };
    let verdict = match (base, new) {
        (Some(b), Some(n)) if n.pass >= b.fail => Verdict::Better,
        (Some(b), Some(n)) if n.fail <= b.pass => Verdict::Worse,
        (Some(_), Some(_)) => Verdict::WithinNoise,
        _ => Verdict::CannotTell(CannotTell::Missing {
            base: base.map_or(0, |b| b.repeats),
            new: new.map_or(0, |n| n.repeats),
        }),
    };
    Judgement {
        base: base.map(|b| b.spread()),
        new: new.map(|n| n.spread()),
        change,
        p_value: None,
        verdict,
        basis: Basis::Search,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bracket(pass: f64, fail: f64) -> Option<Bracket> {
        Some(Bracket {
            pass,
            fail,
            repeats: 3,
        })
    }

    #[test]
    fn brackets_apart_are_a_change_and_overlapping_ones_are_not() {
        let base = bracket(1_180.0, 1_240.0);
        let above = judge_brackets(base, bracket(1_240.0, 1_300.0));
        assert_eq!(above.verdict, Verdict::Better);
        assert_eq!(above.basis, Basis::Search);
        assert!(
            above
                .change
                .is_some_and(|c| (c - 60.0 / 1_180.0).abs() < 1e-9)
        );
        assert_eq!(
            judge_brackets(base, bracket(1_100.0, 1_180.0)).verdict,
            Verdict::Worse
        );
        // 1,200 … 1,260 overlaps 1,180 … 1,240: the searches cannot tell them apart.
        assert_eq!(
            judge_brackets(base, bracket(1_200.0, 1_260.0)).verdict,
            Verdict::WithinNoise
        );
        assert!(matches!(
            judge_brackets(base, None).verdict,
            Verdict::CannotTell(CannotTell::Missing { base: 3, new: 0 })
        ));
    }
}
