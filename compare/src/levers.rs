//! A lever inside one file (`headroom compare --by VARIABLE`): each later value of a swept
//! variable judged against its first, the other variables held.

use std::collections::BTreeSet;

use headroom_results::{PhaseResults, PointResults, Results};
use headroom_spec::VarValue;

use crate::derived;
use crate::likeness;
use crate::matching::{
    Comparison, declared_series, judge_pair, label, label_of, place, uncompared_series,
};
use crate::sides::Sides;
use crate::withheld::Withheld;

/// `--by` names no variable that a phase of the file gives two values or more.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("`--by {variable}`: no phase of this file gives `{variable}` two values or more; {swept}")]
pub struct NotALever {
    /// The variable `--by` named.
    pub variable: String,
    /// The variables that are levers, in words.
    pub swept: String,
}

/// A lever inside one file: in each phase that gives `variable` several values, its points
/// are grouped by their other variables, and each later value of the lever (in the phase's
/// order) is judged against its first. One file is one machine; points differing in their
/// limits differ by the lever, so nothing is withheld as unlike.
pub fn compare_levers(results: &Results, variable: &str) -> Result<Comparison, NotALever> {
    let mut comparison = Comparison {
        unit: derived::unit_of(results),
        ..Comparison::default()
    };
    let mut found = false;
    // Whether two compared points ran their repeats one after the other (A A A B B B).
    let mut grouped = false;
    for phase in &results.phases {
        let values = lever_values(phase, variable);
        let Some((first, later)) = values.split_first().filter(|(_, later)| !later.is_empty())
        else {
            continue;
        };
        found = true;
        for point in &phase.points {
            let here = place(&phase.name, &label(point));
            comparison
                .notes
                .extend(likeness::disturbed("the file", &here, point));
        }
        let lever = Lever {
            results,
            phase,
            variable,
        };
        grouped |= lever.judge(first, later, &mut comparison);
    }
    if !found {
        return Err(not_a_lever(results, variable));
    }
    if grouped {
        comparison.notes.push(format!(
            "the repeats of `{variable}`'s values ran one value after the other (A A A B B B), \
             not interleaved: a drift of the machine during the phase falls on one side \
             (a phase's `order = \"interleaved\"`, the default, runs them in rounds)"
        ));
    }
    comparison.notes.extend(uncompared_series(results));
    Ok(comparison)
}

/// The values `variable` takes in `phase`, in the phase's order.
fn lever_values<'p>(phase: &'p PhaseResults, variable: &str) -> Vec<&'p VarValue> {
    let mut values: Vec<&VarValue> = Vec::new();
    for value in phase
        .points
        .iter()
        .filter_map(|point| point.at.get(variable))
    {
        if !values.contains(&value) {
            values.push(value);
        }
    }
    values
}

/// Why `variable` is no lever of `results`: no phase sweeps a variable, or its levers are
/// others (a variable that takes several values in a phase).
fn not_a_lever(results: &Results, variable: &str) -> NotALever {
    let mut levers = BTreeSet::new();
    for phase in &results.phases {
        for point in &phase.points {
            for (name, value) in &point.at {
                if phase.points.iter().any(|p| p.at.get(name) != Some(value)) {
                    levers.insert(name.clone());
                }
            }
        }
    }
    let swept = if levers.is_empty() {
        "no phase sweeps a variable".to_owned()
    } else {
        let names: Vec<String> = levers.iter().map(|l| format!("`{l}`")).collect();
        format!("its levers are {}", names.join(", "))
    };
    NotALever {
        variable: variable.to_owned(),
        swept,
    }
}

/// A variable of one phase of one file, compared with itself.
struct Lever<'a> {
    results: &'a Results,
    phase: &'a PhaseResults,
    variable: &'a str,
}

impl Lever<'_> {
    /// Judges each point at the lever's `first` value against the points at each of its
    /// `later` values with the same other variables; true when two compared points ran their
    /// repeats one after the other.
    fn judge(&self, first: &VarValue, later: &[&VarValue], comparison: &mut Comparison) -> bool {
        let (phase, variable) = (self.phase, self.variable);
        let rest = |point: &PointResults| {
            let mut at = point.at.clone();
            at.remove(variable);
            at
        };
        let mut grouped = false;
        for point in phase
            .points
            .iter()
            .filter(|p| p.at.get(variable) == Some(first))
        {
            let others = rest(point);
            let others_label = label_of(&others);
            for &value in later {
                let lever = format!("{variable} {first} → {value}");
                let label = if others_label.is_empty() {
                    lever
                } else {
                    format!("{others_label}, {lever}")
                };
                let other = phase
                    .points
                    .iter()
                    .find(|o| o.at.get(variable) == Some(value) && rest(o) == others);
                let Some(other) = other else {
                    comparison.notes.push(format!(
                        "{}: no point with {variable} = {value} to compare",
                        place(&phase.name, &others_label)
                    ));
                    continue;
                };
                grouped |= !interleaved(point, other);
                let series = declared_series(self.results, &phase.name);
                let points = Sides {
                    base: point,
                    new: other,
                };
                let names = Sides {
                    base: "the file",
                    new: "the file",
                };
                let withheld = Withheld::of_pair(false, names, points);
                judge_pair(
                    &phase.name,
                    &label,
                    points,
                    series,
                    withheld.as_ref(),
                    comparison,
                );
            }
        }
        grouped
    }
}

/// Whether two points' repeats ran mixed in time, by their start times: false when every run
/// of one started before every run of the other and both ran more than once.
fn interleaved(a: &PointResults, b: &PointResults) -> bool {
    let span = |point: &PointResults| {
        let starts = point.runs.iter().map(|run| run.started_ms);
        (starts.clone().min(), starts.max())
    };
    if a.runs.len() < 2 || b.runs.len() < 2 {
        return true;
    }
    match (span(a), span(b)) {
        ((Some(a_first), Some(a_last)), (Some(b_first), Some(b_last))) => {
            a_last > b_first && b_last > a_first
        }
        _ => true,
    }
}
