//! The AWS Price List bulk offer files
//! (`/offers/v1.0/aws/<AmazonEC2|AmazonRDS|AmazonVPC>/current/<region>/index.json`),
//! streamed: `products` are read one at a time and only those priced here are kept (EC2:
//! Linux on shared tenancy without pre-installed software, and EBS volumes; RDS: database
//! classes of one engine, Single-AZ, no licence; VPC: the in-use public IPv4 address), then
//! `terms.OnDemand` likewise, so the memory held is the kept rows', not the file's (about
//! 450 MB for EC2, 2.5 GB parsed whole).

mod products;
mod walk;

use std::collections::BTreeMap;
use std::io::Read;

use serde::de::DeserializeSeed;

use super::checks::{self, Priced};
use super::{
    DatabaseRow, Hashing, Import, ImportError, ImportedTable, InstanceRow, LineRow, Provenance,
};
pub use products::Filter;
use products::Kept;
use walk::Gathered;

/// The offers read here, by `offerCode`, and what each yields.
const OFFERS: [(&str, &str); 3] = [
    ("AmazonEC2", "instances and EBS volumes"),
    ("AmazonRDS", "database classes"),
    ("AmazonVPC", "the public IPv4 address"),
];

/// Reads an offer file from `reader` (named `file` on the command line), keeping what
/// `filter` asks for; `today` (`YYYY-MM-DD`) dates a file without a publication date, and
/// no file is published after it.
pub fn import(
    reader: impl Read,
    file: &str,
    filter: &Filter,
    today: &str,
) -> Result<Import, ImportError> {
    let mut hashing = Hashing::new(std::io::BufReader::with_capacity(1 << 16, reader));
    let mut gathered = Gathered::default();
    {
        let mut deserializer = serde_json::Deserializer::from_reader(&mut hashing);
        walk::Offer {
            filter,
            gathered: &mut gathered,
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
    }
    let sha256 = hashing
        .finish()
        .map_err(|e| ImportError::Format(format!("the file could not be read to its end: {e}")))?;
    let offer = match gathered.offer_code.as_deref() {
        Some(code) if OFFERS.iter().any(|(known, _)| *known == code) => code.to_owned(),
        Some(other) => {
            return Err(ImportError::Format(format!(
                "this is the `{other}` offer: `prices import aws` reads {}",
                offers_read()
            )));
        }
        None => {
            return Err(ImportError::Format(format!(
                "no `offerCode`: not an AWS Price List bulk offer file (`/offers/v1.0/aws/<offer>/current/<region>/index.json`: {})",
                offers_read()
            )));
        }
    };
    let published = match gathered.publication.as_deref() {
        Some(text) => Some(super::day_of(text).ok_or_else(|| {
            ImportError::Format(format!(
                "its `publicationDate` is `{}`, not a date (`2026-09-09T00:46:05Z`)",
                super::shown(text)
            ))
        })?),
        None => None,
    };
    if let Some(day) = &published {
        super::not_after_today(day, today)?;
    }
    let region_words = filter
        .region
        .as_deref()
        .map_or_else(String::new, |r| format!(" {r}"));
    let provenance = Provenance {
        provider: "aws".to_owned(),
        what: format!("AWS Price List bulk offer {offer}{region_words}"),
        file: file.to_owned(),
        published,
        sha256,
    };
    rows(gathered, provenance, filter, today)
}

/// The offers read, in words: `AmazonEC2 (instances and EBS volumes), …`.
fn offers_read() -> String {
    OFFERS
        .iter()
        .map(|(code, what)| format!("{code} ({what})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The kept products with their prices as rows, and what was left out.
fn rows(
    gathered: Gathered,
    provenance: Provenance,
    filter: &Filter,
    today: &str,
) -> Result<Import, ImportError> {
    let source = provenance.source();
    let as_of = provenance
        .published
        .clone()
        .unwrap_or_else(|| today.to_owned());
    let mut table = ImportedTable::default();
    let mut notes = Vec::new();
    let mut implausible = Vec::new();
    for (sku, kept) in &gathered.kept {
        let shown_sku = super::shown(sku);
        match gathered.priced.get(sku) {
            Some((usd, unit)) => match row(kept, *usd, unit, &source, &as_of, &mut table) {
                Ok(true) => {}
                Ok(false) => notes.push(format!(
                    "{} (sku {shown_sku}): priced per `{}`, not per hour or GB-month",
                    kept.name(),
                    super::shown(unit)
                )),
                Err(why) => implausible.push(format!("{} (sku {shown_sku}): {why}", kept.name())),
            },
            None => notes.push(match gathered.unpriced.get(sku) {
                Some(codes) => format!(
                    "{} (sku {shown_sku}): no on-demand price in US dollars (its terms: {})",
                    kept.name(),
                    super::shown(&codes.join(", "))
                ),
                None => format!("{} (sku {shown_sku}): no term in the file", kept.name()),
            }),
        }
    }
    if !implausible.is_empty() {
        return Err(ImportError::Implausible(implausible));
    }
    dedupe(&mut table.aws_ec2, &mut notes);
    notes.extend(
        gathered
            .unreadable
            .iter()
            .map(|why| format!("{why}: a product of a kind priced here that cannot be read")),
    );
    let unnamed = gathered.unreadable_count - gathered.unreadable.len() as u64;
    if unnamed > 0 {
        notes.push(format!(
            "{unnamed} more products of a kind priced here that cannot be read"
        ));
    }
    for (why, count) in &gathered.other {
        notes.push(format!(
            "{count} {}: {why}",
            if *count == 1 { "product" } else { "products" }
        ));
    }
    if table.rows() == 0 {
        let region = filter
            .region
            .as_deref()
            .map_or_else(String::new, |r| format!(" in {r}"));
        return Err(ImportError::NothingMatched(format!(
            "none of its {} products is priced here with an on-demand price{region}: {}{}",
            gathered.products,
            offers_read(),
            if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            }
        )));
    }
    Ok(Import {
        provenance,
        table,
        notes,
    })
}

/// The row of `kept` at `usd` per `unit` into `table`: an instance, a database class or the
/// address by the hour, a volume by the GB-month; whether the unit was the one it is priced by,
/// or why the price is not one AWS charges.
fn row(
    kept: &Kept,
    usd: f64,
    unit: &str,
    source: &str,
    as_of: &str,
    table: &mut ImportedTable,
) -> Result<bool, String> {
    let what = match (kept, unit) {
        (Kept::Instance { .. } | Kept::Database { .. }, "Hrs") => Priced::UsdHour,
        (Kept::Volume { .. }, "GB-Mo") => Priced::UsdGbMonth,
        (Kept::Address { .. }, "Hrs") => Priced::UsdAddressHour,
        _ => return Ok(false),
    };
    let usd = checks::plausible(usd, what)?;
    let line = |id: String, region: &str, unit: &str| LineRow {
        id,
        provider: "aws".to_owned(),
        region: region.to_owned(),
        unit: Some(unit.to_owned()),
        usd_per_unit: Some(usd),
        source: source.to_owned(),
        as_of: as_of.to_owned(),
        ..LineRow::default()
    };
    match (kept, unit) {
        (
            Kept::Instance {
                id,
                region,
                vcpu,
                memory_gib,
            },
            "Hrs",
        ) => table.aws_ec2.push(InstanceRow {
            id: id.clone(),
            provider: "aws".to_owned(),
            region: region.clone(),
            vcpu: *vcpu,
            memory_gib: *memory_gib,
            usd_per_hour: Some(usd),
            source: source.to_owned(),
            as_of: as_of.to_owned(),
            ..InstanceRow::default()
        }),
        (Kept::Volume { api_name, region }, "GB-Mo") => {
            table
                .aws_storage
                .push(line(format!("ebs-{api_name}-storage"), region, "GB-month"))
        }
        (
            Kept::Database {
                id,
                region,
                engine,
                vcpu,
                memory_gib,
            },
            "Hrs",
        ) => table.aws_rds.push(DatabaseRow {
            id: id.clone(),
            provider: "aws".to_owned(),
            engine: engine.to_lowercase(),
            region: region.clone(),
            deployment: "single-az".to_owned(),
            vcpu: *vcpu,
            memory_gib: *memory_gib,
            usd_per_hour: usd,
            source: source.to_owned(),
            as_of: as_of.to_owned(),
        }),
        (Kept::Address { region }, "Hrs") => table.aws_network.push(line(
            "public-ipv4".to_owned(),
            region,
            "public IPv4 address-hour (in use)",
        )),
        _ => return Ok(false),
    }
    Ok(true)
}

/// One row per instance type: a type the file lists more than once (another SKU with the
/// same attributes kept here) is kept at its first price, and each other price is said.
fn dedupe(rows: &mut Vec<InstanceRow>, notes: &mut Vec<String>) {
    let mut seen: BTreeMap<String, Option<f64>> = BTreeMap::new();
    let mut repeated = 0;
    rows.retain(|row| match seen.get(&row.id) {
        None => {
            seen.insert(row.id.clone(), row.usd_per_hour);
            true
        }
        Some(first) if *first == row.usd_per_hour => {
            repeated += 1;
            false
        }
        Some(first) => {
            notes.push(format!(
                "{}: listed again at ${}/hour; kept the first listing, ${}/hour",
                row.id,
                row.usd_per_hour.unwrap_or_default(),
                first.unwrap_or_default()
            ));
            false
        }
    });
    if repeated > 0 {
        notes.push(format!(
            "{repeated} more listings of instance types already read, at the same price: kept once"
        ));
    }
}
