//! Why a row's better or worse is not called, the test's verdict kept: the sides ran on unlike
//! machines or limits, or other work competed for the machine during a run it rests on.

use headroom_results::{PointResults, Results};

use crate::sides::Sides;
use crate::verdict::{CannotTell, Judgement, Verdict};

/// Why better and worse are not called on a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Withheld {
    /// The sides ran on different machines or under different limits.
    Unlike,
    /// Other work took a share of the machine during a run the row rests on, in words.
    Competed(String),
}

impl Withheld {
    /// `judgement` with its verdict withheld, when one is: across unlike machines better and
    /// worse (a change within noise still says the machines did not matter), beside other
    /// work any verdict (its runs are not the server's alone, either way).
    pub(crate) fn apply(withheld: Option<&Withheld>, judgement: &mut Judgement) {
        let Some(withheld) = withheld else {
            return;
        };
        let withholds = match withheld {
            Withheld::Unlike => matches!(judgement.verdict, Verdict::Better | Verdict::Worse),
            Withheld::Competed(_) => !matches!(judgement.verdict, Verdict::CannotTell(_)),
        };
        if !withholds {
            return;
        }
        let was = Box::new(judgement.verdict.clone());
        judgement.verdict = Verdict::CannotTell(match withheld {
            Withheld::Unlike => CannotTell::Unlike(was),
            Withheld::Competed(why) => CannotTell::Competed {
                why: why.clone(),
                was,
            },
        });
    }

    /// Unlike when the sides are, else competed when a run of either point competed (each
    /// side named as `names` says).
    pub(crate) fn of_pair(
        unlike: bool,
        names: Sides<&str>,
        points: Sides<&PointResults>,
    ) -> Option<Withheld> {
        if unlike {
            return Some(Withheld::Unlike);
        }
        competed(names.base, points.base)
            .or_else(|| competed(names.new, points.new))
            .map(Withheld::Competed)
    }

    /// Of figures that rest on every run of two files (the plan's, the fits', a search's):
    /// unlike when the files are, else competed when any run of either did.
    pub(crate) fn of_files(unlike: bool, base: &Results, new: &Results) -> Option<Withheld> {
        if unlike {
            return Some(Withheld::Unlike);
        }
        let of = |side: &str, results: &Results| {
            results
                .phases
                .iter()
                .flat_map(|phase| phase.points.iter())
                .find_map(|point| competed(side, point))
        };
        of("base", base)
            .or_else(|| of("new", new))
            .map(Withheld::Competed)
    }
}

/// The first run of `point` over whose hold other work competed for the machine (it was run
/// again and competed all the same), in words: `run 3 of the base: other processes used 0.93
/// cores over the hold`.
fn competed(side: &str, point: &PointResults) -> Option<String> {
    point.runs.iter().find_map(|run| {
        let machine = run.machine_cpu.filter(|m| m.others_competed())?;
        Some(format!(
            "run {} of {side}: {} over the hold",
            run.repeat,
            machine.describe()
        ))
    })
}
