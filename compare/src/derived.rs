//! The figures a plan derives from a results file, per instance the spec prices: the units to
//! plan with (`plan.t4g.medium.units`) and the cost of a unit-month in the instance's currency
//! (`plan.t4g.medium.usd_per_unit_month`, `plan.CX23.eur_per_unit_month`). Each is worked out from one repeat of every point at a
//! time (the first runs, then the second, …), so a derived figure has repeats like a measured
//! one and is judged the same way; a plan from the median would have none to judge. A plan
//! stands on every phase, so there are as many as the point with the fewest repeats has.

use std::collections::BTreeMap;

use headroom_prices::PriceTable;
use headroom_pricing::plan::Resource;
use headroom_pricing::planner::{Measured, Request, plan};
use headroom_results::Results;

use crate::slopes::Slope;
use crate::verdict::Direction;

/// A fitted slope of a results file: where it was fitted (`` `memory` phase, per rooms ``) and
/// the line's slope.
pub type FittedSlopes = BTreeMap<String, (String, Slope)>;

/// The slopes the planner fits over a results file's sweeps, every run of every point:
/// memory per unit (`fit.rss.bytes_per_unit`) and CPU per unit (`fit.cpu.cores_per_unit`),
/// named by series and unit. Lower is better for each: what a unit costs the server.
pub fn slopes_of(results: &Results, table: &PriceTable) -> FittedSlopes {
    let request = Request::of_spec(&results.matrix, None);
    let Ok(planned) = plan(&request, &Measured::from_results(results), table) else {
        return FittedSlopes::new();
    };
    planned
        .report
        .fits
        .iter()
        .map(|fit| {
            (
                format!("fit.{}.{}_per_unit", fit.series, fit.unit),
                (
                    format!("`{}` phase, per {}", fit.phase, fit.x),
                    Slope {
                        slope: fit.slope,
                        se: fit.slope_se,
                        ci95: fit.slope_ci95,
                        n: fit.n,
                    },
                ),
            )
        })
        .collect()
}

/// Plans every repeat that can be planned: every point's first run, then its second, … as
/// many times as the point with the fewest runs has.
fn for_each_repeat(
    results: &Results,
    table: &PriceTable,
    mut each: impl FnMut(&headroom_pricing::planner::Planned),
) {
    let request = Request::of_spec(&results.matrix, None);
    let repeats = results
        .phases
        .iter()
        .flat_map(|phase| phase.points.iter().map(|point| point.runs.len()))
        .filter(|runs| *runs > 0)
        .min()
        .unwrap_or(0);
    // One copy, its runs replaced repeat by repeat: a copy of the whole file a repeat made
    // 3,000 repeats of a point take quadratic time (over 5 minutes).
    let mut one = results.clone();
    for repeat in 0..repeats {
        for (phase, all) in one.phases.iter_mut().zip(&results.phases) {
            for (point, of) in phase.points.iter_mut().zip(&all.points) {
                point.runs.clear();
                point.runs.extend(of.runs.get(repeat).cloned());
            }
        }
        if let Ok(planned) = plan(&request, &Measured::from_results(&one), table) {
            each(&planned);
        }
    }
}

/// What a results file's plans give, repeat by repeat.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derived {
    /// Each figure's value in every repeat that gave it, with its direction.
    pub figures: BTreeMap<String, (Direction, Vec<f64>)>,
    /// What binds each instance the plan priced, in words (`the measured memory ceiling`,
    /// `the cap`), one a repeat that priced it, by instance.
    pub bindings: BTreeMap<String, Vec<String>>,
}

/// The ceiling a plan's units stand on, as the comparison's notes say it: measured or not.
fn binding_phrase(resource: Resource) -> String {
    match resource {
        Resource::Cap => "the cap, not a measured ceiling".to_owned(),
        Resource::Cpu => "the given CPU ceiling, not a measured one".to_owned(),
        Resource::None => "nothing".to_owned(),
        measured => format!("the measured {} ceiling", measured.name()),
    }
}

/// What one unit is in the spec behind `results` (`room`; `unit` when it names none).
pub fn unit_of(results: &Results) -> String {
    Request::of_spec(&results.matrix, None).model.unit
}

/// The figures of the plans of every repeat: the SLO ceiling where it was measured
/// (`ceiling.slo.units`: not a lower bound, not below the first step), and per priced
/// instance the units to plan with and the cost of a unit-month; and what binds each.
pub fn of_results(results: &Results, table: &PriceTable) -> Derived {
    let mut derived = Derived::default();
    for_each_repeat(results, table, |planned| {
        let mut add = |name: String, direction, value: f64| {
            derived
                .figures
                .entry(name)
                .or_insert_with(|| (direction, Vec::new()))
                .1
                .push(value);
        };
        // A searched ceiling is one bracket, the same in every repeat: compared by it
        // (`brackets`), not by a rank test on copies of it.
        if let Some(slo) = &planned.model.slo
            && slo.search.is_none()
            && let Some(units) = slo.units.filter(|_| !slo.lower_bound)
        {
            add(
                "ceiling.slo.units".to_owned(),
                Direction::HigherIsBetter,
                units,
            );
        }
        for instance in &planned.plans {
            if let Some(units) = instance.planned_units {
                add(
                    format!("plan.{}.units", instance.name),
                    Direction::HigherIsBetter,
                    units,
                );
            }
            if let Some(cost) = instance.per_unit_month {
                add(
                    format!(
                        "plan.{}.{}_per_unit_month",
                        instance.name,
                        instance.currency.to_lowercase()
                    ),
                    Direction::LowerIsBetter,
                    cost,
                );
            }
            if instance.planned_units.is_some() {
                derived
                    .bindings
                    .entry(instance.name.clone())
                    .or_default()
                    .push(binding_phrase(instance.binding.resource));
            }
        }
    });
    derived
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every SLO of every run passes, and every point has `repeats` runs (copies of its first).
    fn passing(mut results: Results, repeats: usize) -> Results {
        for phase in &mut results.phases {
            for point in &mut phase.points {
                let mut first = point.runs[0].clone();
                for verdict in &mut first.slo {
                    verdict.pass = Some(true);
                }
                point.runs = vec![first; repeats];
            }
        }
        results
    }

    #[test]
    fn a_plan_is_derived_once_a_repeat_and_only_when_it_prices() {
        let relay = headroom_test_support::results::relay();
        let table = PriceTable::embedded().expect("the shipped table");
        // The relay's SLOs failed at the first step of its ceiling phase: nothing to plan with,
        // so no cost and no units (never a figure the plan refused to give).
        assert!(of_results(&relay, &table).figures.is_empty());
        // Passing at every step: the ceiling is the cap (128 rooms), priced on both instances.
        let derived = of_results(&passing(relay.clone(), 1), &table);
        // No `ceiling.slo.units`: every step passed, the SLO ceiling is a lower bound.
        let figures = derived.figures;
        let names: Vec<&str> = figures.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "plan.t4g.large.units",
                "plan.t4g.large.usd_per_unit_month",
                "plan.t4g.medium.units",
                "plan.t4g.medium.usd_per_unit_month"
            ]
        );
        let (direction, units) = &figures["plan.t4g.medium.units"];
        assert_eq!(
            (*direction, units.as_slice()),
            (Direction::HigherIsBetter, &[128.0][..])
        );
        let (direction, cost) = &figures["plan.t4g.medium.usd_per_unit_month"];
        assert_eq!(*direction, Direction::LowerIsBetter);
        // $24.528 a month (730 hours of t4g.medium) over 128 rooms.
        assert!((cost[0] - 24.528 / 128.0).abs() < 1e-9, "{cost:?}");
        assert_eq!(
            derived.bindings["t4g.medium"],
            ["the cap, not a measured ceiling"]
        );
        // Three runs at every point: three plans.
        let three = of_results(&passing(relay.clone(), 3), &table);
        assert_eq!(three.figures["plan.t4g.medium.units"].1.len(), 3);
        // The relay's memory per room, fitted over every run of its `memory` phase.
        let slopes = slopes_of(&relay, &table);
        let (label, rss) = &slopes["fit.rss.bytes_per_unit"];
        assert_eq!(label, "`memory` phase, per rooms");
        // 497.4 KiB a room (the page's fit of the same file), n 9 (three repeats of three).
        assert!((rss.slope / 1024.0 - 497.4).abs() < 0.1, "{rss:?}");
        assert_eq!(rss.n, 9);
        assert!(rss.ci95[0] < rss.slope && rss.slope < rss.ci95[1]);
    }
}
