//! The prices a plan stands on: the tables they were read from, and those out of date.

use headroom_pricing::plan::InstancePlan;

/// Each out-of-date price the plans used, once: `CX22: as of 2025-08-19: 474 days old (over
/// 180)`.
pub(crate) fn stale_prices<'a>(plans: impl Iterator<Item = &'a InstancePlan>) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    for stale in plans.flat_map(|plan| &plan.stale_prices) {
        let row = format!("{}: {}", stale.name, stale.why.join(", "));
        if !said.contains(&row) {
            said.push(row);
        }
    }
    said
}

/// `Priced from prices/data/prices.toml, the shipped table (sha256 1a2b3c4d5e6f, 66 prices as
/// of 2025-08-19 to 2026-11-30).`: the tables a plan's dollars come from.
pub(crate) fn priced_from(tables: &[headroom_pricing::TableSource]) -> String {
    let named: Vec<String> = tables
        .iter()
        .map(|table| {
            let dates = match (&table.oldest_as_of, &table.newest_as_of) {
                (Some(oldest), Some(newest)) if oldest != newest => {
                    format!(" as of {oldest} to {newest}")
                }
                (Some(day), _) => format!(" as of {day}"),
                _ => ", undated".to_owned(),
            };
            let plural = if table.entries == 1 { "" } else { "s" };
            format!(
                "{} (sha256 {}, {} price{plural}{dates})",
                table.name,
                table.sha256.get(..12).unwrap_or(&table.sha256),
                table.entries
            )
        })
        .collect();
    format!("Priced from {}.", named.join(", then "))
}

/// With `--check`: the out-of-date prices refused (an error naming each and the ways out), or
/// accepted by `--stale-ok` (a note); nothing when every price is within its age.
pub(crate) fn say_stale(
    stale: &[String],
    stale_ok: bool,
    days: i64,
    tables: &[headroom_pricing::TableSource],
) {
    if stale.is_empty() {
        return;
    }
    let from: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let rows = format!(
        "{} (priced from {})",
        stale.join("; "),
        from.join(", then ")
    );
    if stale_ok {
        eprintln!(
            "note: priced with {} out-of-date price(s), accepted by --stale-ok: {rows}",
            stale.len()
        );
    } else {
        eprintln!(
            "error: plan --check refuses {} out-of-date price(s) (older than {days} days, or changed by the provider since): {rows}; refresh them (`headroom prices`, docs/planning.md), give a table of your own (--prices FILE), allow older ones (--max-price-age, [plan] max_price_age) or accept them (--stale-ok)",
            stale.len()
        );
    }
}

/// The table a plan prices from: `--prices`' tables (`prices`) alone, or laid over the spec's (`table`)
/// with `--fall-back-prices`; the spec's without `--prices`.
pub(crate) fn table(
    prices: &[std::path::PathBuf],
    fall_back: bool,
    table: headroom_pricing::PriceTable,
) -> anyhow::Result<headroom_pricing::PriceTable> {
    let mut given: Option<headroom_pricing::PriceTable> = None;
    for path in prices {
        let read = crate::read_price_table(path, "named by --prices")?;
        match &mut given {
            Some(given) => given.extend(read),
            None => given = Some(read),
        }
    }
    Ok(match given {
        Some(given) if fall_back => {
            let mut table = table;
            table.extend(given);
            table
        }
        Some(given) => given,
        None => table,
    })
}
