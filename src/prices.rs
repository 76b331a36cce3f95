//! `headroom prices`: the price table, every entry with its as-of date and what makes it old.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::entries::{self, Day, Entry, HOURS_PER_MONTH};
use serde::Serialize;

use crate::exit;

#[derive(clap::Args)]
pub struct PricesArgs {
    /// Only this provider's entries.
    #[arg(long, value_parser = ["aws", "hetzner"])]
    provider: Option<String>,
    /// A price table of your own (same format): its entries replace or extend the shipped ones.
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    /// Prices older than this draw a warning.
    #[arg(long, default_value = "180d")]
    max_age: headroom_spec::Duration,
    /// Print the table as JSON, sources included.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Listing {
    hours_per_month: f64,
    today: String,
    entries: Vec<Entry>,
}

/// Today, or the day `HEADROOM_TODAY` (YYYY-MM-DD) names, so output can be reproduced.
pub fn today() -> Result<(Day, String)> {
    if let Ok(text) = std::env::var("HEADROOM_TODAY") {
        let day = Day::parse(&text)
            .with_context(|| format!("HEADROOM_TODAY is `{text}`; write it as YYYY-MM-DD"))?;
        return Ok((day, text));
    }
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let day = Day::from_unix_seconds(seconds);
    Ok((
        day,
        format!(
            "{} days after 1970-01-01",
            day.days_since(Day::from_unix_seconds(0))
        ),
    ))
}

pub fn run(args: PricesArgs) -> Result<u8> {
    let (today, today_text) = today()?;
    let max_age = (args.max_age.as_secs_f64() / 86_400.0).round() as i64;
    let shipped: toml::Table =
        toml::from_str(headroom_pricing::EMBEDDED).context("the shipped price table is broken")?;
    let mut listed = entries::read(&shipped, today, max_age);
    if let Some(path) = &args.prices {
        let text = crate::read_bounded(path, crate::MAX_PRICE_TABLE_BYTES, "the price table", "")?;
        let own: toml::Table = toml::from_str(&text).map_err(|e| {
            let place = e.span().map_or(String::new(), |s| {
                let (line, column) = headroom_compiler::line_column(&text, s.start);
                format!(":{line}:{column}")
            });
            anyhow::anyhow!("{}{place}: {}", path.display(), e.message())
        })?;
        // The same checks as a table a plan reads: no entries (a spec?), negative prices.
        headroom_pricing::PriceTable::from_toml(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        for entry in entries::read(&own, today, max_age) {
            match listed.iter_mut().find(|e| e.id == entry.id) {
                Some(existing) => *existing = entry,
                None => listed.push(entry),
            }
        }
    }
    if let Some(provider) = &args.provider {
        listed.retain(|e| &e.provider == provider);
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let listing = Listing {
            hours_per_month: HOURS_PER_MONTH,
            today: today_text,
            entries: listed,
        };
        serde_json::to_writer_pretty(&mut stdout, &listing)?;
        writeln!(stdout)?;
        return Ok(exit::OK);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "kind", "id", "vCPU", "memory", "price", "$/month", "as of", "warning",
    ]);
    for entry in &listed {
        table.add_row(vec![
            Cell::new(entry.kind),
            Cell::new(&entry.id),
            Cell::new(entry.vcpu.map_or_else(String::new, |v| v.to_string()))
                .set_alignment(CellAlignment::Right),
            Cell::new(entry.memory.clone().unwrap_or_default()).set_alignment(CellAlignment::Right),
            Cell::new(&entry.price),
            Cell::new(
                entry
                    .usd_per_month
                    .map_or_else(String::new, |m| format!("{m:.2}")),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(&entry.as_of),
            Cell::new(entry.warnings.join("; ")),
        ]);
    }
    writeln!(stdout, "{table}")?;
    let stale = listed.iter().filter(|e| !e.warnings.is_empty()).count();
    writeln!(
        stdout,
        "{} entries, {stale} with a warning. A month is {HOURS_PER_MONTH} hours. Sources: `headroom prices --json`.",
        listed.len()
    )?;
    Ok(exit::OK)
}
