//! Fleets: the cheapest that holds a number of units, and what a budget holds.

use super::InstancePlan;
use crate::numbers::count;
use serde::Serialize;

/// A fleet of one instance type.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Fleet {
    /// The instance type.
    pub instance: String,
    /// `USD` or `EUR`.
    pub currency: &'static str,
    /// How many instances.
    pub count: u64,
    /// The units they hold together.
    pub units: f64,
    /// Every instance with its own lines, plus the shared lines once.
    pub per_month: f64,
    /// Why this fleet is not the first choice, or cannot be one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn costs(plan: &InstancePlan) -> (f64, f64) {
    let shared: f64 = plan
        .all_in
        .lines
        .iter()
        .filter(|l| l.shared)
        .map(|l| l.per_month)
        .sum();
    (plan.all_in.per_month - shared, shared)
}

/// The cheapest way to hold `units` with each instance type (a whole number of instances),
/// cheapest first; the others say how much more they cost.
pub fn for_units(plans: &[InstancePlan], units: f64) -> Vec<Fleet> {
    let mut fleets: Vec<Fleet> = plans
        .iter()
        .map(|plan| {
            let (each, shared) = costs(plan);
            let Some(planned) = plan.planned_units.filter(|p| *p >= 1.0) else {
                return Fleet {
                    instance: plan.name.clone(),
                    currency: plan.currency,
                    count: 0,
                    units: 0.0,
                    per_month: f64::INFINITY,
                    note: Some(match &plan.not_priced {
                        Some(why) => format!("not priced: {why}"),
                        None => format!("holds no unit (binding: {})", plan.binding.resource),
                    }),
                };
            };
            let count = (units / planned).ceil().max(1.0) as u64;
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: count as f64 * planned,
                per_month: count as f64 * each + shared,
                note: None,
            }
        })
        .collect();
    fleets.sort_by(|a, b| a.per_month.total_cmp(&b.per_month));
    if let Some(best) = fleets
        .first()
        .map(|f| (f.per_month, f.currency, f.instance.clone()))
    {
        for fleet in fleets.iter_mut().skip(1) {
            if fleet.note.is_none() {
                fleet.note = Some(if fleet.currency != best.1 {
                    format!(
                        "priced in {}, not comparable with {}",
                        fleet.currency, best.2
                    )
                } else {
                    format!(
                        "{:.2} more a month than the {} fleet",
                        fleet.per_month - best.0,
                        best.2
                    )
                });
            }
        }
    }
    fleets
}

/// The most units `budget` a month holds with each instance type, most first.
pub fn for_budget(plans: &[InstancePlan], budget: f64) -> Vec<Fleet> {
    let mut fleets: Vec<Fleet> = plans
        .iter()
        .map(|plan| {
            let (each, shared) = costs(plan);
            let Some(planned) = plan.planned_units else {
                return Fleet {
                    instance: plan.name.clone(),
                    currency: plan.currency,
                    count: 0,
                    units: 0.0,
                    per_month: 0.0,
                    note: Some(format!(
                        "not priced: {}",
                        plan.not_priced
                            .as_deref()
                            .unwrap_or("no ceiling to plan with")
                    )),
                };
            };
            let count = if each > 0.0 {
                ((budget - shared) / each).floor().max(0.0) as u64
            } else {
                0
            };
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: count as f64 * planned,
                per_month: count as f64 * each + shared,
                note: (count == 0).then(|| {
                    format!(
                        "one instance and the shared lines cost {:.2}, over the budget",
                        each + shared
                    )
                }),
            }
        })
        .collect();
    fleets.sort_by(|a, b| {
        b.units
            .total_cmp(&a.units)
            .then(a.per_month.total_cmp(&b.per_month))
    });
    if let Some((best_units, best)) = fleets.first().map(|f| (f.units, f.instance.clone())) {
        for fleet in fleets.iter_mut().skip(1) {
            if fleet.note.is_none() {
                fleet.note = Some(format!(
                    "holds {} fewer than the {best} fleet",
                    count(best_units - fleet.units)
                ));
            }
        }
    }
    fleets
}
