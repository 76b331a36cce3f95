//! Hetzner Cloud's `GET /v1/pricing` answer: each server type's price at one location, net of
//! VAT (money as decimal strings), without its primary IPv4, which is priced as a line of its
//! own with volumes and backups. The answer has no cores or memory: they come from a table
//! that has the type (the shipped one, or `--specs FILE`), said in `spec_source`; a type no
//! table has is left out, and said.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;

use super::checks::{self, Priced};
use super::{Import, ImportError, ImportedTable, InstanceRow, LineRow, Provenance};
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
/// object alone) from `reader`, named `file`: read whole, at most
/// [`super::MAX_WHOLE_FILE_BYTES`], into the few fields read (no JSON tree of the whole).
pub fn import(reader: impl Read, file: &str, options: &Options) -> Result<Import, ImportError> {
    let location = super::name(&options.location)
        .map_err(|why| ImportError::Format(format!("the location {why}")))?;
    let (bytes, sha256) = super::read_whole(reader, file)?;
    let pricing = match serde_json::from_slice::<Answer>(&bytes) {
        Ok(answer) => answer.pricing,
        Err(wrapped) if wrapped.is_data() => match serde_json::from_slice::<Pricing>(&bytes) {
            Ok(pricing) => pricing,
            Err(bare) if bare.is_data() => {
                // The error of the shape the file meant: wrapped when it has `pricing`.
                let meant = if has_pricing_key(&bytes) {
                    wrapped
                } else {
                    bare
                };
                return Err(ImportError::Format(format!(
                    "not Hetzner Cloud's `/v1/pricing` answer: {meant}"
                )));
            }
            Err(syntax) => return Err(syntax.into()),
        },
        Err(syntax) => return Err(syntax.into()),
    };
    if pricing.currency != "EUR" {
        return Err(ImportError::Format(format!(
            "its prices are in {}: headroom prices Hetzner in euros (an account billed in EUR)",
            super::shown(&pricing.currency)
        )));
    }
    let provenance = Provenance {
        provider: "hetzner".to_owned(),
        what: format!(
            "Hetzner Cloud /v1/pricing at {location}, net of VAT, for {}",
            options.tier.applies_to()
        ),
        file: file.to_owned(),
        published: None,
        sha256,
    };
    rows(&pricing, provenance, options)
}

/// Whether the answer's top level has a `pricing` key (the API's own wrapping).
fn has_pricing_key(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Keys {
        pricing: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Keys>(bytes).is_ok_and(|keys| keys.pricing.is_some())
}

/// `prices` at `location`.
fn at<'p>(prices: &'p [AtLocation], location: &str) -> Option<&'p AtLocation> {
    prices.iter().find(|p| p.location == location)
}

/// An amount's net figure, a price the provider charges for `what` where it is given.
fn net(amount: Option<&Amount>, what: Priced) -> Result<Option<f64>, String> {
    let Some(amount) = amount else {
        return Ok(None);
    };
    let value = super::decimal(&amount.net).ok_or_else(|| {
        format!(
            "the net amount `{}` is not a number",
            super::shown(&amount.net)
        )
    })?;
    checks::plausible(value, what).map(Some)
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
    let mut implausible = Vec::new();
    let ipv4_month = lines(
        pricing,
        location,
        &source,
        &options.today,
        &mut table.hetzner_extra,
    )
    .unwrap_or_else(|why| {
        implausible.extend(why);
        None
    });
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
        let name = super::shown(&server.name);
        let Some(price) = at(&server.prices, location) else {
            notes.push(format!("{name}: not offered at {location}"));
            continue;
        };
        let month = net(price.price_monthly.as_ref(), Priced::EurMonth);
        let hour = net(price.price_hourly.as_ref(), Priced::EurHour);
        let (month, hour) = match (month, hour) {
            (Ok(Some(month)), Ok(hour)) => (month, hour),
            (Ok(None), Ok(_)) => {
                notes.push(format!("{name}: no monthly net price at {location}"));
                continue;
            }
            (Err(why), _) | (_, Err(why)) => {
                implausible.push(format!("server type {name} at {location}: {why}"));
                continue;
            }
        };
        let Some(spec) = known.get(&server.name.to_ascii_lowercase()) else {
            notes.push(format!(
                "{name}: the pricing answer has no cores or memory, nor has {specs_name} (give a table that has them with --specs FILE)"
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
            eur_per_hour_ipv6_only: hour,
            eur_per_month: ipv4_month.map(|ip| ((month + ip) * 10_000.0).round() / 10_000.0),
            applies_to: Some(options.tier.applies_to().to_owned()),
            spec_source: Some(format!("{specs_name} ({})", spec.source)),
            source: source.clone(),
            as_of: options.today.clone(),
            ..InstanceRow::default()
        });
    }
    if !implausible.is_empty() {
        return Err(ImportError::Implausible(implausible));
    }
    offered_at(pricing, location)?;
    Ok(Import {
        provenance,
        table,
        notes,
    })
}

/// Refused when the answer prices server types, none of them at `location`: the locations it
/// does price (the first 20) are named.
fn offered_at(pricing: &Pricing, location: &str) -> Result<(), ImportError> {
    let anywhere = |s: &ServerType| at(&s.prices, location).is_some();
    if !pricing.server_types.is_empty() && !pricing.server_types.iter().any(anywhere) {
        let offered: std::collections::BTreeSet<String> = pricing
            .server_types
            .iter()
            .flat_map(|s| s.prices.iter().map(|p| super::shown(&p.location)))
            .collect();
        let listed: Vec<String> = offered.iter().take(20).cloned().collect();
        return Err(ImportError::NothingMatched(format!(
            "no server type is priced at `{location}`; the answer prices {}{}",
            listed.join(", "),
            if offered.len() > listed.len() {
                format!(" and {} more", offered.len() - listed.len())
            } else {
                String::new()
            }
        )));
    }
    Ok(())
}

/// The lines beside the servers, into `out`: the primary IPv4 at `location`, volumes and
/// backups; the address's monthly price, which a server's price with one adds; or the prices
/// no provider charges.
fn lines(
    pricing: &Pricing,
    location: &str,
    source: &str,
    as_of: &str,
    out: &mut Vec<LineRow>,
) -> Result<Option<f64>, Vec<String>> {
    let line = |id: &str| LineRow {
        id: id.to_owned(),
        provider: "hetzner".to_owned(),
        region: location.to_owned(),
        source: source.to_owned(),
        as_of: as_of.to_owned(),
        ..LineRow::default()
    };
    let mut implausible = Vec::new();
    let mut checked = |what: &str, value: Result<Option<f64>, String>| {
        value.unwrap_or_else(|why| {
            implausible.push(format!("{what}: {why}"));
            None
        })
    };
    let ipv4 = pricing
        .primary_ips
        .iter()
        .find(|ip| ip.kind == "ipv4")
        .and_then(|ip| at(&ip.prices, location));
    let ipv4_month = ipv4.and_then(|p| {
        checked(
            "the primary IPv4's monthly price",
            net(p.price_monthly.as_ref(), Priced::EurMonth),
        )
    });
    if let Some(ipv4) = ipv4 {
        let hour = checked(
            "the primary IPv4's hourly price",
            net(ipv4.price_hourly.as_ref(), Priced::EurHour),
        );
        out.push(LineRow {
            eur_per_month: ipv4_month,
            eur_per_hour: hour,
            ..line("hetzner-primary-ipv4")
        });
    }
    if let Some(volume) = &pricing.volume {
        out.push(LineRow {
            eur_per_gb_month: checked(
                "the volume's price",
                net(Some(&volume.price_per_gb_month), Priced::EurGbMonth),
            ),
            ..line("hetzner-volume")
        });
    }
    if let Some(backup) = &pricing.server_backup {
        let percent = super::decimal(&backup.percentage)
            .ok_or_else(|| format!("`{}` is not a percentage", super::shown(&backup.percentage)))
            .and_then(|p| checks::plausible(p, Priced::Percent));
        out.push(LineRow {
            pct_of_instance_price: checked("the backups' share", percent.map(Some)),
            ..line("hetzner-backups")
        });
    }
    if implausible.is_empty() {
        Ok(ipv4_month)
    } else {
        Err(implausible)
    }
}
