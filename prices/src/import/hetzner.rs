//! Hetzner Cloud's `GET /v1/pricing` answer: each server type's price at one location, net of
//! VAT (money as decimal strings), without its primary IPv4, which is priced as a line of its
//! own with volumes and backups. The answer has no cores or memory: they come from a table
//! that has the type (the shipped one, or `--specs FILE`), said in `spec_source`; a type no
//! table has is left out, and said.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;

use super::{Hashing, Import, ImportError, ImportedTable, InstanceRow, LineRow, Provenance};
use crate::PriceTable;

/// Which of Hetzner's price tiers the answer's prices are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tier {
    /// New orders and rescales (from 2026-06-15 08:00 CEST): what the API quotes today.
    #[default]
    NewOrders,
    /// Servers ordered before 2026-06-15, which keep the 2026-04-01 rate until rescaled: an
    /// account whose servers pay it, importing its own answer.
    OrderedBefore,
}

impl Tier {
    fn applies_to(self) -> &'static str {
        match self {
            Tier::NewOrders => "new orders and rescales from 2026-06-15 08:00 CEST",
            Tier::OrderedBefore => {
                "servers ordered before 2026-06-15, at the rate they keep until rescaled"
            }
        }
    }
}

/// What to read of the answer.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The location priced (`fsn1`, `nbg1`, `hel1`, `ash`…).
    pub location: String,
    /// The tier the prices are.
    pub tier: Tier,
    /// Where the server types' cores and memory come from, and its name.
    pub specs: (&'a PriceTable, &'a str),
    /// The day of import, for an answer that carries no date (it does not).
    pub today: String,
}

#[derive(Deserialize)]
struct Answer {
    pricing: Pricing,
}

#[derive(Deserialize)]
struct Pricing {
    currency: String,
    #[serde(default)]
    primary_ips: Vec<AddressPrices>,
    #[serde(default)]
    server_backup: Option<Backup>,
    #[serde(default)]
    server_types: Vec<ServerType>,
    #[serde(default)]
    volume: Option<PerGb>,
}

#[derive(Deserialize)]
struct AddressPrices {
    #[serde(rename = "type")]
    kind: String,
    prices: Vec<AtLocation>,
}

#[derive(Deserialize)]
struct Backup {
    percentage: String,
}

#[derive(Deserialize)]
struct PerGb {
    price_per_gb_month: Amount,
}

#[derive(Deserialize)]
struct ServerType {
    name: String,
    prices: Vec<AtLocation>,
}

#[derive(Deserialize)]
struct AtLocation {
    location: String,
    #[serde(default)]
    price_hourly: Option<Amount>,
    #[serde(default)]
    price_monthly: Option<Amount>,
}

#[derive(Deserialize)]
struct Amount {
    net: String,
}

/// Reads a `/v1/pricing` answer (wrapped in `{"pricing": …}` as the API sends it, or the
/// object alone) from `reader`, named `file`.
pub fn import(reader: impl Read, file: &str, options: &Options) -> Result<Import, ImportError> {
    let mut hashing = Hashing::new(reader);
    let value: serde_json::Value = serde_json::from_reader(&mut hashing)?;
    let sha256 = hashing
        .finish()
        .map_err(|e| ImportError::Format(format!("the file could not be read to its end: {e}")))?;
    let pricing = if value.get("pricing").is_some() {
        serde_json::from_value::<Answer>(value).map(|a| a.pricing)
    } else {
        serde_json::from_value::<Pricing>(value)
    }
    .map_err(|e| ImportError::Format(format!("not Hetzner Cloud's `/v1/pricing` answer: {e}")))?;
    if pricing.currency != "EUR" {
        return Err(ImportError::Format(format!(
            "its prices are in {}: headroom prices Hetzner in euros (an account billed in EUR)",
            pricing.currency
        )));
    }
    let provenance = Provenance {
        provider: "hetzner".to_owned(),
        what: format!(
            "Hetzner Cloud /v1/pricing at {}, net of VAT, for {}",
            options.location,
            options.tier.applies_to()
        ),
        file: file.to_owned(),
        published: None,
        sha256,
    };
    rows(&pricing, provenance, options)
}

/// `prices` at `location`.
fn at<'p>(prices: &'p [AtLocation], location: &str) -> Option<&'p AtLocation> {
    prices.iter().find(|p| p.location == location)
}

/// An amount's net figure.
fn net(amount: Option<&Amount>) -> Option<f64> {
    amount.and_then(|a| super::decimal(&a.net))
}

/// The answer's rows at the location asked, and what was left out.
fn rows(
    pricing: &Pricing,
    provenance: Provenance,
    options: &Options,
) -> Result<Import, ImportError> {
    let source = provenance.source();
    let location = options.location.as_str();
    let mut table = ImportedTable::default();
    let ipv4_month = lines(
        pricing,
        location,
        &source,
        &options.today,
        &mut table.hetzner_extra,
    );
    let mut notes = Vec::new();
    let (specs, specs_name) = options.specs;
    let known: BTreeMap<String, &crate::Instance> = specs
        .listed()
        .iter()
        .filter_map(|l| specs.instance(&l.id))
        .filter(|i| i.provider == "hetzner")
        .map(|i| (i.id.to_ascii_lowercase(), i))
        .collect();
    for server in &pricing.server_types {
        let Some(price) = at(&server.prices, location) else {
            notes.push(format!("{}: not offered at {location}", server.name));
            continue;
        };
        let Some(month) = net(price.price_monthly.as_ref()) else {
            notes.push(format!(
                "{}: no monthly net price at {location}",
                server.name
            ));
            continue;
        };
        let Some(spec) = known.get(&server.name.to_ascii_lowercase()) else {
            notes.push(format!(
                "{}: the pricing answer has no cores or memory, nor has {specs_name} (give a table that has them with --specs FILE)",
                server.name
            ));
            continue;
        };
        table.hetzner_cloud.push(InstanceRow {
            id: spec.id.clone(),
            provider: "hetzner".to_owned(),
            region: location.to_owned(),
            vcpu: spec.vcpu,
            memory_gb: spec.memory_gb,
            memory_gib: spec.memory_gib,
            eur_per_month_ipv6_only: Some(month),
            eur_per_hour_ipv6_only: net(price.price_hourly.as_ref()),
            eur_per_month: ipv4_month.map(|ip| ((month + ip) * 10_000.0).round() / 10_000.0),
            applies_to: Some(options.tier.applies_to().to_owned()),
            spec_source: Some(format!("{specs_name} ({})", spec.source)),
            source: source.clone(),
            as_of: options.today.clone(),
            ..InstanceRow::default()
        });
    }
    let anywhere = |s: &ServerType| at(&s.prices, location).is_some();
    if !pricing.server_types.is_empty() && !pricing.server_types.iter().any(anywhere) {
        let offered: std::collections::BTreeSet<&str> = pricing
            .server_types
            .iter()
            .flat_map(|s| s.prices.iter().map(|p| p.location.as_str()))
            .collect();
        return Err(ImportError::NothingMatched(format!(
            "no server type is priced at `{location}`; the answer prices {}",
            offered.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(Import {
        provenance,
        table,
        notes,
    })
}

/// The lines beside the servers, into `out`: the primary IPv4 at `location`, volumes and
/// backups; the address's monthly price, which a server's price with one adds.
fn lines(
    pricing: &Pricing,
    location: &str,
    source: &str,
    as_of: &str,
    out: &mut Vec<LineRow>,
) -> Option<f64> {
    let line = |id: &str| LineRow {
        id: id.to_owned(),
        provider: "hetzner".to_owned(),
        region: location.to_owned(),
        source: source.to_owned(),
        as_of: as_of.to_owned(),
        ..LineRow::default()
    };
    let ipv4 = pricing
        .primary_ips
        .iter()
        .find(|ip| ip.kind == "ipv4")
        .and_then(|ip| at(&ip.prices, location));
    let ipv4_month = ipv4.and_then(|p| net(p.price_monthly.as_ref()));
    if let Some(ipv4) = ipv4 {
        out.push(LineRow {
            eur_per_month: ipv4_month,
            eur_per_hour: net(ipv4.price_hourly.as_ref()),
            ..line("hetzner-primary-ipv4")
        });
    }
    if let Some(volume) = &pricing.volume {
        out.push(LineRow {
            eur_per_gb_month: super::decimal(&volume.price_per_gb_month.net),
            ..line("hetzner-volume")
        });
    }
    if let Some(backup) = &pricing.server_backup {
        out.push(LineRow {
            pct_of_instance_price: super::decimal(&backup.percentage),
            ..line("hetzner-backups")
        });
    }
    ipv4_month
}
