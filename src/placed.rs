//! `headroom plan`'s words for a stack priced apart (`--place`, `[plan] place`): each service's
//! instance in the plan table, then what one stack of them holds and costs.

use std::io::Write;

use anyhow::Result;
use headroom_pricing::numbers::{count, plural};
use headroom_pricing::plan::{InstancePlan, Model, Placement};

/// The placed instances (in `table`'s columns) and the stack's units and cost.
pub fn write(
    out: &mut impl Write,
    placement: &Placement,
    model: &Model,
    table: impl Fn(&[InstancePlan]) -> String,
) -> Result<()> {
    let unit = plural(&model.unit);
    let names: Vec<String> = placement
        .services
        .iter()
        .map(|s| format!("`{}` on {}", s.service, s.plan.name))
        .collect();
    writeln!(
        out,
        "\nPriced apart, one instance per service ({}), each planned with its own memory and CPU per {} and the stack's SLO ceiling:",
        names.join(", "),
        model.unit
    )?;
    let plans: Vec<InstancePlan> = placement.services.iter().map(|s| s.plan.clone()).collect();
    writeln!(out, "{}", table(&plans))?;
    let currency = plans.first().map_or("USD", |p| p.currency);
    let binding: Vec<String> = placement
        .binding_services
        .iter()
        .map(|s| format!("`{s}`"))
        .collect();
    let binds = if binding.len() > 1 { "bind" } else { "binds" };
    let binding = binding.join(" and ");
    let priced = (
        placement.planned_units,
        placement.per_unit_month,
        placement.all_in_per_unit_month,
    );
    match priced {
        (Some(units), Some(per_unit), Some(all_in_per_unit)) => {
            let at_most = if placement.cost_is_upper_bound {
                "at most "
            } else {
                ""
            };
            writeln!(
                out,
                "One stack holds {} {unit} ({binding} {binds}): {:.2} {currency} a month, {at_most}{:.2} per {}-month ({:.2} all in)",
                count(units),
                placement.per_month,
                per_unit,
                model.unit,
                all_in_per_unit,
            )?;
        }
        _ => writeln!(
            out,
            "One stack of these instances is not priced per {}: {}",
            model.unit,
            placement
                .not_priced
                .as_deref()
                .unwrap_or("no instance has a ceiling to plan with")
        )?,
    }
    Ok(())
}
