//! The fleets `plan` was asked for: the cheapest that holds a number of units, and the most
//! units a budget holds, per instance type.

use std::io::Write;

use anyhow::Result;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::plan::{InstancePlan, for_budget, for_units};
use headroom_pricing::planner::Request;

use crate::slo_line::units;

/// The fleets asked for: for a number of units, and for a budget, the cheapest first.
pub(crate) fn write_fleets(
    out: &mut impl Write,
    plans: &[InstancePlan],
    request: &Request,
    unit: &str,
) -> Result<()> {
    if let Some(units) = request.units {
        writeln!(
            out,
            "\nTo hold {units} {}, the cheapest first:",
            headroom_pricing::numbers::plural(unit)
        )?;
        writeln!(out, "{}", fleet_table(&for_units(plans, units as f64)))?;
    }
    if let Some(budget) = request.budget {
        writeln!(
            out,
            "\nWith {budget:.2} a month, the most {} first:",
            headroom_pricing::numbers::plural(unit)
        )?;
        writeln!(out, "{}", fleet_table(&for_budget(plans, budget)))?;
    }
    Ok(())
}

fn fleet_table(fleets: &[headroom_pricing::plan::Fleet]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "rank",
        "instance",
        "count",
        "holds",
        "per month",
        "why not first",
    ]);
    for (rank, fleet) in fleets.iter().enumerate() {
        table.add_row(vec![
            Cell::new(rank + 1).set_alignment(CellAlignment::Right),
            Cell::new(&fleet.instance),
            Cell::new(fleet.count).set_alignment(CellAlignment::Right),
            Cell::new(units(fleet.units)).set_alignment(CellAlignment::Right),
            Cell::new(if fleet.per_month.is_finite() {
                headroom_templates::format::money(fleet.per_month, Some(fleet.currency.to_owned()))
            } else {
                "-".to_owned()
            })
            .set_alignment(CellAlignment::Right),
            Cell::new(fleet.note.clone().unwrap_or_default()),
        ]);
    }
    table.to_string()
}
