//! Two results files side by side: points matched by phase and variables, and every figure
//! both sides measured judged from its repeats.

use std::collections::{BTreeMap, BTreeSet};

use headroom_prices::PriceTable;
use headroom_results::{PointResults, Results};
use headroom_spec::{Series, VarValue};

use crate::sides::Sides;
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
    judge_matched_points(base, new, across_machines, &mut comparison);
    comparison.notes.extend(uncompared_series(base));
    let unlike = !across_machines && !comparison.machine_differences.is_empty();
    let withheld = Withheld::of_files(unlike, base, new);
    let unlike = withheld.as_ref();
    let (ours, others) = (
        derived::of_results(base, table),
        derived::of_results(new, table),
    );
    let figures = Sides {
        base: &ours.figures,
        new: &others.figures,
    };
    judge_figures("plan", "", figures, unlike, &mut comparison);
    comparison
        .notes
        .extend(binding_changes(&ours.bindings, &others.bindings));
    judge_searched_ceilings(base, new, unlike, table, &mut comparison);
    let slopes = Sides {
        base: &derived::slopes_of(base, table),
        new: &derived::slopes_of(new, table),
    };
    judge_fitted_slopes(slopes, unlike, &mut comparison);
    comparison.only_in_new = only_in_new(base, new);
    comparison
}

/// Judges every point of `base` that `new` has too (by phase name and variables), in
/// `base`'s order; the rest are listed as only in the base. Unlike machines or shapes
/// withhold better and worse unless `across_machines`.
fn judge_matched_points(
    base: &Results,
    new: &Results,
    across_machines: bool,
    comparison: &mut Comparison,
) {
    for phase in &base.phases {
        let theirs = new.phases.iter().find(|p| p.name == phase.name);
        for point in &phase.points {
            let label = label(point);
            let place_here = place(&phase.name, &label);
            let Some(other) =
                theirs.and_then(|p| p.points.iter().find(|other| other.at == point.at))
            else {
                comparison.only_in_base.push(place_here);
                continue;
            };
            comparison
                .notes
                .extend(likeness::disturbed("base", &place_here, point));
            comparison
                .notes
                .extend(likeness::disturbed("new", &place_here, other));
            let (base_shape, new_shape) = (likeness::shape(point), likeness::shape(other));
            if base_shape != new_shape {
                comparison
                    .unlike_shapes
                    .push(format!("{place_here}: {base_shape} against {new_shape}"));
            }
            let unlike = !across_machines
                && (!comparison.machine_differences.is_empty() || base_shape != new_shape);
            let points = Sides {
                base: point,
                new: other,
            };
            let names = Sides {
                base: "the base",
                new: "the new file",
            };
            let withheld = Withheld::of_pair(unlike, names, points);
            let series = declared_series(base, &phase.name);
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
}

/// The points only `new` has, as places.
fn only_in_new(base: &Results, new: &Results) -> Vec<String> {
    let mut only = Vec::new();
    for phase in &new.phases {
        let ours = base.phases.iter().find(|p| p.name == phase.name);
        for point in &phase.points {
            if !ours.is_some_and(|p| p.points.iter().any(|mine| mine.at == point.at)) {
                only.push(place(&phase.name, &label(point)));
            }
        }
    }
    only
}

/// Judges every figure either of two points measured, as rows labelled `phase` and `label`;
/// `unlike` (or competed): better and worse become "cannot tell", the test's verdict kept.
pub(crate) fn judge_pair(
    phase: &str,
    label: &str,
    points: Sides<&PointResults>,
    series: &[Series],
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    let figures = Sides {
        base: &repeats(points.base, series),
        new: &repeats(points.new, series),
    };
    judge_figures(phase, label, figures, unlike, comparison);
}

/// Figures by name, each with its direction and its repeats.
type Figures = BTreeMap<String, (Direction, Vec<f64>)>;

/// Judges every figure either side has, as rows labelled `phase` and `label`.
fn judge_figures(
    phase: &str,
    label: &str,
    figures: Sides<&Figures>,
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    let Sides {
        base: ours,
        new: others,
    } = figures;
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
    slopes: Sides<&derived::FittedSlopes>,
    unlike: Option<&Withheld>,
    comparison: &mut Comparison,
) {
    let Sides {
        base: ours,
        new: others,
    } = slopes;
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

/// The `[measure]` series of the phase `name` in the spec behind `results`.
pub(crate) fn declared_series<'a>(results: &'a Results, name: &str) -> &'a [Series] {
    results
        .matrix
        .phases
        .iter()
        .find(|phase| phase.name == name)
        .map_or(&[], |phase| phase.measure.series.as_slice())
}

/// A note naming the `[measure]` series that are not compared because the spec does not say
/// which way of them is better.
pub(crate) fn uncompared_series(results: &Results) -> Option<String> {
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

pub(crate) fn label(point: &PointResults) -> String {
    label_of(&point.at)
}

pub(crate) fn label_of(at: &BTreeMap<String, VarValue>) -> String {
    headroom_spec::vars::point_label(at)
}

pub(crate) fn place(phase: &str, label: &str) -> String {
    if label.is_empty() {
        phase.to_owned()
    } else {
        format!("{phase}: {label}")
    }
}

#[cfg(test)]
mod tests;
