//! Two results files side by side: points matched by phase and variables, and every figure
//! both sides measured judged from its repeats.

use std::collections::{BTreeMap, BTreeSet};

use headroom_prices::PriceTable;
use headroom_results::{PointResults, Results};
use headroom_spec::VarValue;

use crate::verdict::{CannotTell, Direction, Judgement, Verdict, judge};
use crate::{derived, figures, likeness};

/// One figure of one matched point, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub phase: String,
    /// The point's variables, `rooms=4 fanout=8` (empty when the phase sweeps nothing).
    pub point: String,
    pub figure: String,
    pub direction: Direction,
    pub judgement: Judgement,
}

/// What two results files have in common, judged, and what only one of them has.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// How the new side's machine differs from the base's (empty: alike).
    pub machine_differences: Vec<String>,
    /// Matched points whose target ran in different shapes: `phase: variables: base shape
    /// against new shape`.
    pub unlike_shapes: Vec<String>,
    /// What one unit is in the base's spec (`room`), for the plan's figures.
    pub unit: String,
    pub rows: Vec<Row>,
    /// Points (`phase: variables`) only the base has.
    pub only_in_base: Vec<String>,
    /// Points only the new side has.
    pub only_in_new: Vec<String>,
    /// What a reader must know to read the verdicts (a generator that was the bottleneck,
    /// repeats not interleaved).
    pub notes: Vec<String>,
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
            judge_pair(&phase.name, &label, (point, other), unlike, &mut comparison);
        }
    }
    let unlike = !across_machines && !comparison.machine_differences.is_empty();
    let (ours, others) = (
        derived::of_results(base, table),
        derived::of_results(new, table),
    );
    judge_figures("plan", "", (&ours, &others), unlike, &mut comparison);
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
/// `unlike`: better and worse become "cannot tell", the test's verdict kept.
fn judge_pair(
    phase: &str,
    label: &str,
    (point, other): (&PointResults, &PointResults),
    unlike: bool,
    comparison: &mut Comparison,
) {
    judge_figures(
        phase,
        label,
        (&repeats(point), &repeats(other)),
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
    unlike: bool,
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
        if unlike && matches!(judgement.verdict, Verdict::Better | Verdict::Worse) {
            let verdict = Box::new(judgement.verdict);
            judgement.verdict = Verdict::CannotTell(CannotTell::Unlike(verdict));
        }
        comparison.rows.push(Row {
            phase: phase.to_owned(),
            point: label.to_owned(),
            figure: name.clone(),
            direction,
            judgement,
        });
    }
}

/// `--by` names no variable that a phase of the file gives two values or more.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("`--by {variable}`: no phase of this file gives `{variable}` two values or more; {swept}")]
pub struct NotALever {
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
                        judge_pair(&phase.name, &label, (point, other), false, &mut comparison);
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

/// Each figure's values over a point's runs (failed runs give none).
fn repeats(point: &PointResults) -> Figures {
    let mut repeats = Figures::new();
    for run in &point.runs {
        for (name, (direction, value)) in figures::of_run(run) {
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
    at.iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn place(phase: &str, label: &str) -> String {
    if label.is_empty() {
        phase.to_owned()
    } else {
        format!("{phase}: {label}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real results file: a relay's `memory` phase (three repeats at 1, 32 and 128 rooms) and
    /// its `rooms` phase (one repeat each).
    fn relay() -> Results {
        Results::from_json(include_str!(
            "../../tests/fixtures/render/relay-results.json"
        ))
        .expect("the fixture reads")
    }

    fn table() -> PriceTable {
        PriceTable::embedded().expect("the shipped table")
    }

    /// Sets `point`'s runs to `repeats` copies of its first, RSS scaled by each of `scales`.
    fn with_rss(results: &mut Results, point: usize, scales: &[f64]) {
        let points = &mut results.phases[0].points;
        let first = points[point].runs[0].clone();
        points[point].runs = scales
            .iter()
            .map(|scale| {
                let mut run = first.clone();
                let steady = run.process.steady.as_mut().expect("a steady sample");
                steady.rss_bytes = (steady.rss_bytes as f64 * scale) as u64;
                run
            })
            .collect();
    }

    #[test]
    fn a_file_against_itself_calls_nothing() {
        let relay = relay();
        let comparison = compare(&relay, &relay, false, &table());
        assert!(comparison.machine_differences.is_empty() && comparison.unlike_shapes.is_empty());
        assert!(comparison.only_in_base.is_empty() && comparison.only_in_new.is_empty());
        // Six points, each with latency figures of the `edits` rooms scenario and RSS.
        let points: BTreeSet<(&str, &str)> = comparison
            .rows
            .iter()
            .map(|r| (r.phase.as_str(), r.point.as_str()))
            .collect();
        assert_eq!(points.len(), 6, "{points:?}");
        assert!(
            comparison
                .rows
                .iter()
                .any(|r| r.figure == "edits.seen_by_all.p95")
        );
        assert!(comparison.rows.iter().any(|r| r.figure == "rss_mib"));
        // Three repeats a side (or one) cannot reach 5 %: every figure says so, none is called.
        for row in &comparison.rows {
            assert!(
                matches!(
                    row.judgement.verdict,
                    Verdict::CannotTell(CannotTell::TooFewRepeats { .. })
                ),
                "{row:?}"
            );
        }
    }

    #[test]
    fn more_memory_in_every_repeat_is_worse_and_unmatched_points_are_named() {
        let mut base = relay();
        let mut new = relay();
        with_rss(&mut base, 0, &[1.0, 1.01, 0.99, 1.02, 0.98]);
        with_rss(&mut new, 0, &[1.2, 1.21, 1.19, 1.22, 1.18]);
        let run = &mut new.phases[0].points[0].runs[1];
        run.generator.bound = true;
        run.generator.reason = Some("the generator's schedule lag p99 was 9.0 ms".to_owned());
        new.phases[0].points.remove(2);
        let comparison = compare(&base, &new, false, &table());
        let rss = comparison
            .rows
            .iter()
            .find(|r| r.phase == "memory" && r.point == "rooms=1" && r.figure == "rss_mib")
            .expect("RSS at one room");
        assert_eq!(rss.judgement.verdict, Verdict::Worse);
        let change = rss.judgement.change.expect("a base median");
        assert!((change - 0.2).abs() < 0.01, "{change}");
        // Every repeat is a copy of one run: the latencies tie and are within noise.
        let seen = comparison
            .rows
            .iter()
            .find(|r| r.point == "rooms=1" && r.figure == "edits.seen.p95")
            .expect("seen p95 at one room");
        assert_eq!(seen.judgement.verdict, Verdict::WithinNoise);
        assert_eq!(
            comparison.only_in_base,
            vec!["memory: rooms=128".to_owned()]
        );
        assert_eq!(
            comparison.notes,
            [
                "new, memory: rooms=1: the generator was the bottleneck in 1 of 5 runs (the generator's schedule lag p99 was 9.0 ms): those figures are not the server's"
            ]
        );
        // From an edited spec: said first.
        new.spec.hash = "0123456789abcdef".to_owned();
        let edited = compare(&base, &new, false, &table());
        assert!(
            edited.notes[0].starts_with("the files come from different specs"),
            "{:?}",
            edited.notes
        );
        assert!(comparison.only_in_new.is_empty());
        // The same on another machine: not called, unless told to judge across machines.
        new.environment.cpu_model = "Another CPU".to_owned();
        let rss_verdict = |comparison: &Comparison| {
            comparison
                .rows
                .iter()
                .find(|r| r.point == "rooms=1" && r.figure == "rss_mib")
                .map(|r| r.judgement.verdict.clone())
        };
        let unlike = compare(&base, &new, false, &table());
        assert_eq!(unlike.machine_differences.len(), 1, "{unlike:?}");
        assert_eq!(
            rss_verdict(&unlike),
            Some(Verdict::CannotTell(CannotTell::Unlike(Box::new(
                Verdict::Worse
            ))))
        );
        assert_eq!(
            rss_verdict(&compare(&base, &new, true, &table())),
            Some(Verdict::Worse)
        );
    }
    #[test]
    fn a_lever_is_judged_against_its_first_value_in_each_phase() {
        let relay = relay();
        let levers = compare_levers(&relay, "rooms").expect("rooms is swept");
        let points: BTreeSet<(&str, &str)> = levers
            .rows
            .iter()
            .map(|r| (r.phase.as_str(), r.point.as_str()))
            .collect();
        assert_eq!(
            points.into_iter().collect::<Vec<_>>(),
            [
                ("memory", "rooms 1 → 128"),
                ("memory", "rooms 1 → 32"),
                ("rooms", "rooms 16 → 128"),
                ("rooms", "rooms 16 → 64")
            ]
        );
        let rss = levers
            .rows
            .iter()
            .find(|r| r.point == "rooms 1 → 32" && r.figure == "rss_mib")
            .expect("RSS from 1 to 32 rooms");
        // 7.8 to 22.8 MiB in three repeats a side: too few to call.
        let change = rss.judgement.change.expect("a base median");
        assert!((change - 1.92).abs() < 0.05, "{change}");
        assert!(matches!(
            rss.judgement.verdict,
            Verdict::CannotTell(CannotTell::TooFewRepeats { base: 3, new: 3 })
        ));
        // The relay's repeats ran point by point (their start times say so).
        assert!(
            levers.notes[0].contains("not interleaved"),
            "{:?}",
            levers.notes
        );
        // The same runs started in rounds (every point once, then again): no such note.
        let mut rounds = relay.clone();
        for phase in &mut rounds.phases {
            for (position, point) in phase.points.iter_mut().enumerate() {
                for (repeat, run) in point.runs.iter_mut().enumerate() {
                    run.started_ms = (repeat * 1000 + position) as u64;
                }
            }
        }
        let notes = compare_levers(&rounds, "rooms")
            .expect("rooms is swept")
            .notes;
        assert!(
            notes.iter().all(|n| !n.contains("interleaved")),
            "{notes:?}"
        );
        assert_eq!(
            compare_levers(&relay, "fanout").map_err(|e| e.to_string()),
            Err("`--by fanout`: no phase of this file gives `fanout` two values or more; its levers are `rooms`".to_owned())
        );
    }
}
