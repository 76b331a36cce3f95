//! The figures a plan derives from a results file, per instance the spec prices: the units to
//! plan with (`plan.t4g.medium.units`) and the cost of a unit-month in the instance's currency
//! (`plan.t4g.medium.usd_per_unit_month`, `plan.CX22.eur_per_unit_month`). Each is worked out from one repeat of every point at a
//! time (the first runs, then the second, …), so a derived figure has repeats like a measured
//! one and is judged the same way; a plan from the median would have none to judge. A plan
//! stands on every phase, so there are as many as the point with the fewest repeats has.

use std::collections::BTreeMap;

use headroom_prices::PriceTable;
use headroom_pricing::planner::{Measured, Request, plan};
use headroom_results::Results;

use crate::verdict::Direction;

/// What one unit is in the spec behind `results` (`room`; `unit` when it names none).
pub fn unit_of(results: &Results) -> String {
    Request::of_spec(&results.matrix, None).model.unit
}

/// Each derived figure's value in every repeat that could be planned.
pub fn of_results(
    results: &Results,
    table: &PriceTable,
) -> BTreeMap<String, (Direction, Vec<f64>)> {
    let mut figures: BTreeMap<String, (Direction, Vec<f64>)> = BTreeMap::new();
    let request = Request::of_spec(&results.matrix, None);
    if request.instances.is_empty() {
        return figures;
    }
    // A plan stands on every phase: as many plans as the point with the fewest repeats has.
    let repeats = results
        .phases
        .iter()
        .flat_map(|phase| phase.points.iter().map(|point| point.runs.len()))
        .filter(|runs| *runs > 0)
        .min()
        .unwrap_or(0);
    for repeat in 0..repeats {
        let mut one = results.clone();
        for phase in &mut one.phases {
            for point in &mut phase.points {
                point.runs = point.runs.get(repeat).cloned().into_iter().collect();
            }
        }
        let Ok(planned) = plan(&request, &Measured::from_results(&one), table) else {
            continue;
        };
        let mut add = |name: String, direction, value: f64| {
            figures
                .entry(name)
                .or_insert_with(|| (direction, Vec::new()))
                .1
                .push(value);
        };
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
        }
    }
    figures
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
        let relay = Results::from_json(include_str!(
            "../../tests/fixtures/render/relay-results.json"
        ))
        .expect("the fixture reads");
        let table = PriceTable::embedded().expect("the shipped table");
        // The relay's SLOs failed at the first step of its ceiling phase: nothing to plan with,
        // so no cost and no units (never a figure the plan refused to give).
        assert!(of_results(&relay, &table).is_empty());
        // Passing at every step: the ceiling is the cap (128 rooms), priced on both instances.
        let figures = of_results(&passing(relay.clone(), 1), &table);
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
        // Three runs at every point: three plans.
        let three = of_results(&passing(relay, 3), &table);
        assert_eq!(three["plan.t4g.medium.units"].1.len(), 3);
    }
}
