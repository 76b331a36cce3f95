//! Two results files side by side: points matched by phase and variables, and every figure
//! both sides measured judged from its repeats.

use std::collections::{BTreeMap, BTreeSet};

use headroom_prices::PriceTable;
use headroom_results::{PointResults, Results};
use headroom_spec::{Series, VarValue};

use crate::slopes::judge_slopes;
use crate::verdict::{CannotTell, Direction, Judgement, Verdict, judge};
use crate::withheld::Withheld;
use crate::{derived, figures, likeness};

/// One figure of one matched point, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The phase.
    pub phase: String,
    /// The point's variables, `rooms = 4, fanout = 8` (empty when the phase sweeps nothing).
    pub point: String,
    /// The figure, by its SLO name (`api.latency.p95`).
    pub figure: String,
    /// Which way of it is better.
    pub direction: Direction,
    /// Its repeats on each side, judged.
    pub judgement: Judgement,
}

/// What two results files have in common, judged, and what only one of them has.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// How the new side's machine differs from the base's (empty: alike).
    pub machine_differences: Vec<String>,
    /// The `[vars]` values that differ between the two runs (`workers: 1 → 2 (--set)`): the
    /// levers that were pulled, as the results record them.
    pub levers: Vec<String>,
    /// Matched points whose target ran in different shapes: `phase: variables: base shape
    /// against new shape`.
    pub unlike_shapes: Vec<String>,
    /// What one unit is in the base's spec (`room`), for the plan's figures.
    pub unit: String,
    /// A row per matched point and figure either side measured.
    pub rows: Vec<Row>,
    /// Points (`phase: variables`) only the base has.
    pub only_in_base: Vec<String>,
    /// Points only the new side has.
    pub only_in_new: Vec<String>,
    /// What a reader must know to read the verdicts (a generator that was the bottleneck,
    /// repeats not interleaved).
    pub notes: Vec<String>,
    /// The smallest change called better or worse (a fraction), once applied.
    pub min_effect: f64,
}

impl Comparison {
    /// Better or worse by less than `min_effect` (a fraction: 0.03 is 3 %) reads "no
    /// meaningful change" (`verdict::MIN_EFFECT` by default); across unlike machines a
    /// withheld verdict is told the same way.
    pub fn apply_min_effect(&mut self, min_effect: f64) {
        self.min_effect = min_effect;
        for row in &mut self.rows {
            crate::verdict::apply_min_effect(&mut row.judgement, min_effect);
            if let Verdict::CannotTell(CannotTell::Unlike(was)) = &mut row.judgement.verdict
                && matches!(**was, Verdict::Better | Verdict::Worse)
                && row.judgement.change.is_some_and(|c| c.abs() < min_effect)
            {
                **was = Verdict::NoMeaningfulChange;
            }
        }
    }
}

/// Matches `base`'s points with `new`'s by phase name and variables, in `base`'s order, and
/// judges every figure either side measured (a figure one side lacks is judged "cannot tell").
/// Across different machines or instance shapes no figure is better or worse (it is "cannot
/// tell", the test's verdict kept) unless `across_machines` says to judge anyway.
///
/// The plans the two files' specs ask for (`[plan] instances`) are derived from each, priced
/// with `table`, and their figures judged as the phase `plan` ([`derived`]).
pub fn compare(
    base: &Results,
    new: &Results,
    across_machines: bool,
    table: &PriceTable,
) -> Comparison {
    let mut comparison = Comparison {
        machine_differences: likeness::machine_differences(&base.environment, &new.environment),
        levers: likeness::levers(base, new),
        unit: derived::unit_of(base),
        ..Comparison::default()
    };
    if base.spec.hash != new.spec.hash {
        comparison.notes.push(format!(
            "the files come from different specs (`{}` {}, `{}` {}): the differences include \
             the spec's, not only the server's",
            base.spec.path, base.spec.hash, new.spec.path, new.spec.hash
        ));
    }
    for phase in &base.phases {
        let theirs = new.phases.iter().find(|p| p.name == phase.name);
        for point in &phase.points {
            let label = label(point);
            let Some(other) =
                theirs.and_then(|p| p.points.iter().find(|other| other.at == point.at))
            else {
                comparison.only_in_base.push(place(&phase.name, &label));
                continue;
            };
            let place_here = place(&phase.name, &label);
            comparison
                .notes
                .extend(likeness::disturbed("base", &place_here, point));
            comparison
                .notes
                .extend(likeness::disturbed("new", &place_here, other));
            let (base_shape, new_shape) = (likeness::shape(point), likeness::shape(other));
            if base_shape != new_shape {
                comparison.unlike_shapes.push(format!(
                    "{}: {base_shape} against {new_shape}",
                    place(&phase.name, &label)
                ));
            }
            let unlike = !across_machines
                && (!comparison.machine_differences.is_empty() || base_shape != new_shape);
            let series = declared_series(base, &phase.name);
            let withheld = Withheld::of_pair(unlike, ("the base", point), ("the new file", other));
            judge_pair(
                &phase.name,
                &label,
                (point, other),
                series,
                withheld.as_ref(),
                &mut comparison,
            );
        }
    }
    comparison.notes.extend(uncompared_series(base));
    let unlike = !across_machines && !comparison.machine_differences.is_empty();
    let withheld = Withheld::of_files(unlike, base, new);
    let unlike = withheld.as_ref();
    let (ours, others) = (
        derived::of_results(base, table),
        derived::of_results(new, table),
    );
    judge_figures(
        "plan",
        "",
        (&ours.figures, &others.figures),
        unlike,
        &mut comparison,
    );
    comparison
        .notes
        .extend(binding_changes(&ours.bindings, &others.bindings));
    judge_searched_ceilings(base, new, unlike, table, &mut comparison);
    judge_fitted_slopes(
        (
            &derived::slopes_of(base, table),
            &derived::slopes_of(new, table),
        ),
        unlike,
        &mut comparison,
    );
    for phase in &new.phases {
        let ours = base.phases.iter().find(|p| p.name == phase.name);
        for point in &phase.points {
            if !ours.is_some_and(|p| p.points.iter().any(|mine| mine.at == point.at)) {
                comparison
                    .only_in_new
                    .push(place(&phase.name, &label(point)));
            }
        }
    }
    comparison
}

/// Judges every figure either of two points measured, as rows labelled `phase` and `label`;
/// `unlike` (or competed): better and worse become "cannot tell", the test's verdict kept.
fn judge_pair(
    phase: &str,
    label: &str,
    (point, other): (&PointResults, &PointResults),
    series: &[Series],
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    judge_figures(
        phase,
        label,
        (&repeats(point, series), &repeats(other, series)),
        unlike,
        comparison,
    );
}

/// Figures by name, each with its direction and its repeats.
type Figures = BTreeMap<String, (Direction, Vec<f64>)>;

/// Judges every figure either side has, as rows labelled `phase` and `label`.
fn judge_figures(
    phase: &str,
    label: &str,
    (ours, others): (&Figures, &Figures),
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    let names: BTreeSet<&String> = ours.keys().chain(others.keys()).collect();
    for name in names {
        let (direction, base_values) = ours
            .get(name)
            .map_or((None, Vec::new()), |(d, v)| (Some(*d), v.clone()));
        let (other_direction, new_values) = others
            .get(name)
            .map_or((None, Vec::new()), |(d, v)| (Some(*d), v.clone()));
        let Some(direction) = direction.or(other_direction) else {
            continue;
        };
        let mut judgement = judge(&base_values, &new_values, direction);
        Withheld::apply(unlike, &mut judgement);
        comparison.rows.push(Row {
            phase: phase.to_owned(),
            point: label.to_owned(),
            figure: name.clone(),
            direction,
            judgement,
        });
    }
}

/// Judges the slopes either side fitted, as rows of the phase `fit`, each labelled where it
/// was fitted; `unlike`: better and worse become "cannot tell".
fn judge_fitted_slopes(
    (ours, others): (&derived::FittedSlopes, &derived::FittedSlopes),
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    let names: BTreeSet<&String> = ours.keys().chain(others.keys()).collect();
    for name in names {
        let (base, new) = (ours.get(name), others.get(name));
        let Some((label, _)) = base.or(new) else {
            continue;
        };
        let direction = Direction::LowerIsBetter;
        let mut judgement = judge_slopes(base.map(|b| b.1), new.map(|n| n.1), direction);
        Withheld::apply(unlike, &mut judgement);
        comparison.rows.push(Row {
            phase: "fit".to_owned(),
            point: label.clone(),
            figure: name.clone(),
            direction,
            judgement,
        });
    }
}

/// The SLO ceilings of two searches, by their brackets, when either side searched.
fn judge_searched_ceilings(
    base: &Results,
    new: &Results,
    unlike: Option<&Withheld>,
    table: &PriceTable,
    comparison: &mut Comparison,
) {
    let (ours, others) = (
        crate::brackets::of_results(base, table),
        crate::brackets::of_results(new, table),
    );
    if ours.is_none() && others.is_none() {
        return;
    }
    let mut judgement = crate::brackets::judge_brackets(ours.flatten(), others.flatten());
    Withheld::apply(unlike, &mut judgement);
    comparison.rows.push(Row {
        phase: "plan".to_owned(),
        point: "searched".to_owned(),
        figure: "ceiling.slo.units".to_owned(),
        direction: Direction::HigherIsBetter,
        judgement,
    });
}

/// A note for each priced instance saying what its plan figures stand on, on both sides or
/// each: `t4g.medium: the units and costs stand on the measured memory ceiling, in 5 of 5
/// repeats of the base; on the measured CPU ceiling, in 5 of 5 of the new file`.
fn binding_changes(
    ours: &BTreeMap<String, Vec<String>>,
    others: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    // The resource that bound most often, and how often, of how many.
    let most = |bindings: &Vec<String>| {
        let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
        for binding in bindings {
            *counts.entry(binding).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(resource, n)| (resource.clone(), n, bindings.len()))
    };
    let mut notes = Vec::new();
    for (instance, bindings) in ours {
        let (Some(base), Some(new)) = (most(bindings), others.get(instance).and_then(most)) else {
            continue;
        };
        notes.push(if base.0 == new.0 {
            format!(
                "{instance}: the units and costs stand on {}, in {} of {} repeats of the base and {} of {} of the new file",
                base.0, base.1, base.2, new.1, new.2
            )
        } else {
            format!(
                "{instance}: the units and costs stand on {}, in {} of {} repeats of the base; on {}, in {} of {} of the new file",
                base.0, base.1, base.2, new.0, new.1, new.2
            )
        });
    }
    notes
}

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
    let mut levers = BTreeSet::new();
    let mut found = false;
    // Whether two compared points ran their repeats one after the other (A A A B B B).
    let mut grouped = false;
    for phase in &results.phases {
        let mut values: Vec<&VarValue> = Vec::new();
        for point in &phase.points {
            for (name, value) in &point.at {
                if phase.points.iter().any(|p| p.at.get(name) != Some(value)) {
                    levers.insert(name.clone());
                }
            }
            if let Some(value) = point.at.get(variable)
                && !values.contains(&value)
            {
                values.push(value);
            }
        }
        let Some((first, later)) = values.split_first().filter(|(_, later)| !later.is_empty())
        else {
            continue;
        };
        found = true;
        let rest = |point: &PointResults| {
            let mut at = point.at.clone();
            at.remove(variable);
            at
        };
        for point in &phase.points {
            let here = place(&phase.name, &label(point));
            comparison
                .notes
                .extend(likeness::disturbed("the file", &here, point));
        }
        for point in phase
            .points
            .iter()
            .filter(|p| p.at.get(variable) == Some(*first))
        {
            let others = rest(point);
            let others_label = label_of(&others);
            for value in later {
                let lever = format!("{variable} {first} → {value}");
                let label = if others_label.is_empty() {
                    lever
                } else {
                    format!("{others_label}, {lever}")
                };
                let other = phase
                    .points
                    .iter()
                    .find(|o| o.at.get(variable) == Some(*value) && rest(o) == others);
                match other {
                    Some(other) => {
                        grouped |= !interleaved(point, other);
                        let series = declared_series(results, &phase.name);
                        let withheld =
                            Withheld::of_pair(false, ("the file", point), ("the file", other));
                        judge_pair(
                            &phase.name,
                            &label,
                            (point, other),
                            series,
                            withheld.as_ref(),
                            &mut comparison,
                        );
                    }
                    None => comparison.notes.push(format!(
                        "{}: no point with {variable} = {value} to compare",
                        place(&phase.name, &others_label)
                    )),
                }
            }
        }
    }
    if !found {
        let swept = if levers.is_empty() {
            "no phase sweeps a variable".to_owned()
        } else {
            let names: Vec<String> = levers.iter().map(|l| format!("`{l}`")).collect();
            format!("its levers are {}", names.join(", "))
        };
        return Err(NotALever {
            variable: variable.to_owned(),
            swept,
        });
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

/// The `[measure]` series of the phase `name` in the spec behind `results`.
fn declared_series<'a>(results: &'a Results, name: &str) -> &'a [Series] {
    results
        .matrix
        .phases
        .iter()
        .find(|phase| phase.name == name)
        .map_or(&[], |phase| phase.measure.series.as_slice())
}

/// A note naming the `[measure]` series that are not compared because the spec does not say
/// which way of them is better.
fn uncompared_series(results: &Results) -> Option<String> {
    let names: BTreeSet<&str> = results
        .matrix
        .phases
        .iter()
        .flat_map(|phase| phase.measure.series.iter())
        .filter(|series| series.better.is_none())
        .map(|series| series.name.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "[measure] series not compared, the spec does not say which way of them is better \
             (give them `better = \"lower\"` or `\"higher\"`): {}",
            names.join(", ")
        )
    })
}

/// Each figure's values over a point's runs (failed runs give none).
fn repeats(point: &PointResults, series: &[Series]) -> Figures {
    let mut repeats = Figures::new();
    for run in &point.runs {
        for (name, (direction, value)) in figures::of_run(run, series) {
            repeats
                .entry(name)
                .or_insert_with(|| (direction, Vec::new()))
                .1
                .push(value);
        }
    }
    repeats
}

fn label(point: &PointResults) -> String {
    label_of(&point.at)
}

fn label_of(at: &BTreeMap<String, VarValue>) -> String {
    headroom_spec::vars::point_label(at)
}

fn place(phase: &str, label: &str) -> String {
    if label.is_empty() {
        phase.to_owned()
    } else {
        format!("{phase}: {label}")
    }
}

#[cfg(test)]
mod tests;
