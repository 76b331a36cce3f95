//! `headroom prices`: the price table, every entry with its as-of date and what makes it old.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::entries::{self, HOURS_PER_MONTH, PRICES_FORMAT, PriceListing};
use headroom_pricing::{PriceTable, PriceTableError};
use jiff::civil::Date;

use crate::exit;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PricesArgs {
    /// Read a provider's own price list into a price table (`--prices FILE` takes it).
    #[command(subcommand)]
    import: Option<PricesCommand>,
    /// Only this provider's entries.
    #[arg(long, value_parser = ["aws", "hetzner", "azure"])]
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

/// Today in UTC, or the day `HEADROOM_TODAY` (YYYY-MM-DD) names, so output can be reproduced.
pub fn today() -> Result<Date> {
    match std::env::var("HEADROOM_TODAY") {
        Ok(text) => entries::day(&text)
            .with_context(|| format!("HEADROOM_TODAY is `{text}`; write it as YYYY-MM-DD")),
        Err(_) => Ok(entries::today_utc()),
    }
}

#[derive(clap::Subcommand)]
enum PricesCommand {
    /// Read a provider's own price list (AWS's bulk offer files, Hetzner's `/v1/pricing`
    /// answer, Azure's Retail Prices pages) into a price table, each row naming the file, its
    /// date and its SHA-256.
    #[command(
        subcommand,
        after_help = "Examples:\n  headroom prices import aws index.json --region us-east-1 --out aws-prices.toml\n  headroom prices import hetzner pricing.json --location fsn1 --out hetzner-prices.toml\n  headroom prices import azure page-*.json --region eastus --sizes sizes.json\n  headroom plan spec.toml --prices aws-prices.toml\n\nThe file is data: a name that is not one (a newline, a quote) is left out and said, prices no provider charges (negative, zero, absurd) or a publication date after today refuse it, and what was left out goes in the table's [import], not its rows.\n\nExit codes: 0 the table was written, 1 the file could not be read as the provider's format, holds a price no provider charges, or --out names a file prices import did not write (an input, a device, a results file)."
    )]
    Import(crate::prices_import::ImportCommand),
}

pub fn run(args: PricesArgs) -> Result<u8> {
    if let Some(PricesCommand::Import(command)) = &args.import {
        return crate::prices_import::run(command, today()?);
    }
    let today = today()?;
    let max_age = (args.max_age.as_secs_f64() / 86_400.0).round() as i64;
    let mut table = PriceTable::embedded().context("the shipped price table is broken")?;
    if let Some(path) = &args.prices {
        let text = crate::read_bounded(path, crate::MAX_PRICE_TABLE_BYTES, "the price table", "")?;
        let own = PriceTable::from_toml(&text).map_err(|error| {
            let PriceTableError::Parse { span, .. } = &error;
            let place = span.as_ref().map_or(String::new(), |s| {
                let (line, column) = headroom_compiler::line_column(&text, s.start);
                format!(":{line}:{column}")
            });
            anyhow::anyhow!("{}{place}: {error}", path.display())
        })?;
        table.extend(own);
    }
    let mut listed = entries::list(&table, today, max_age);
    if let Some(provider) = &args.provider {
        listed.retain(|e| &e.provider == provider);
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let listing = PriceListing {
            format: PRICES_FORMAT,
            hours_per_month: HOURS_PER_MONTH,
            today: today.to_string(),
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
            Cell::new(entry.kind.to_string()),
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
