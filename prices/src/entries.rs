//! Every entry of a price table, as `headroom prices` lists it: what it is, its price, its
//! source and as-of date, and whether that date is too old to trust.

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::{Database, EntryKind, Instance, Line, PriceTable};

/// A month of a service that runs all the time: the AWS calculator's and Infracost's 730 hours.
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The version of `headroom prices --json`'s shape (schemas/prices.schema.json).
pub const PRICES_FORMAT: u32 = 1;

/// `headroom prices --json`: every entry of the shipped table and the user's, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PriceListing {
    /// The version of this shape (1); a reader refuses another.
    pub format: u32,
    /// The hours of a month the monthly figures are for (730).
    pub hours_per_month: f64,
    /// The day the ages were counted to (`YYYY-MM-DD`).
    pub today: String,
    /// Every entry, the shipped table's first, in the order the tables list them.
    pub entries: Vec<Entry>,
}

/// One priced thing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// The entry's id (`t4g.medium`, `db.t4g.micro`, `public-ipv4`).
    pub id: String,
    /// `aws`, `hetzner` or `azure`.
    pub provider: String,
    /// vCPUs, for an instance or a database class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcpu: Option<u64>,
    /// GiB for AWS, GB as Hetzner lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The price as the source gives it: "$0.0336/hour", "$0.08/GB-month", "€3.79/month".
    pub price: String,
    /// US dollars per 730-hour month, where the price is per hour or per month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_month: Option<f64>,
    /// Euros per month (Hetzner): a server's as the planner prices it, without its primary
    /// IPv4 where the table gives that price (its `price` says which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eur_per_month: Option<f64>,
    /// Where the price was read.
    pub source: String,
    /// The day it was read (`YYYY-MM-DD`), or `undated`.
    pub as_of: String,
    /// When the source says the price changes, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_after: Option<String>,
    /// Why this price may be out of date.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A day written `YYYY-MM-DD`, and nothing else.
pub fn day(text: &str) -> Option<Date> {
    if text.len() != 10 {
        return None;
    }
    text.parse().ok()
}

/// Whole days from `earlier` to `later`.
pub fn days_between(earlier: Date, later: Date) -> i64 {
    later
        .since(earlier)
        .map_or(0, |span| i64::from(span.get_days()))
}

/// Today in UTC.
pub fn today_utc() -> Date {
    jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
}

/// Why a price dated `as_of` may be out of date on `today`.
pub fn staleness(
    as_of: &str,
    stale_after: Option<&str>,
    today: Date,
    max_age_days: i64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    match day(as_of) {
        Some(day) if day > today => warnings.push(format!(
            "as of {as_of}, after today ({today}): a price is read before it is planned with, so this date is wrong"
        )),
        Some(day) => {
            let age = days_between(day, today);
            if age > max_age_days {
                warnings.push(format!(
                    "as of {as_of}: {} days old (over {max_age_days})",
                    headroom_spec::numbers::count(age as f64)
                ));
            }
        }
        None if as_of == crate::UNDATED => warnings
            .push("undated: no date is known for this price, so it is counted stale".to_owned()),
        None => warnings.push(format!("its as-of date is not a date (\"{as_of}\")")),
    }
    if let Some(after) = stale_after.and_then(day)
        && today >= after
    {
        warnings.push(format!(
            "stale since {after}: the provider changed its prices"
        ));
    }
    warnings
}

/// Every entry of `table`, in the order it lists them, its ages counted to `today`.
pub fn list(table: &PriceTable, today: Date, max_age_days: i64) -> Vec<Entry> {
    let mut entries = Vec::new();
    for listed in table.listed() {
        let priced = match listed.kind {
            EntryKind::Instance => table.instance(&listed.id).map(of_instance),
            EntryKind::Database => table.database(&listed.id).map(of_database),
            _ => table.line(&listed.id).map(of_line),
        };
        let Some(priced) = priced else { continue };
        let mut warnings = staleness(
            &priced.as_of,
            priced.stale_after.as_deref(),
            today,
            max_age_days,
        );
        if priced.price.is_none() {
            warnings
                .push("no price: only proxies from other engines or regions were found".to_owned());
        }
        entries.push(Entry {
            kind: listed.kind,
            id: listed.id.clone(),
            provider: priced.provider,
            vcpu: priced.vcpu.map(u64::from),
            memory: priced.memory,
            price: priced
                .price
                .unwrap_or_else(|| "no sourced price".to_owned()),
            usd_per_month: priced.usd_per_month,
            eur_per_month: priced.eur_per_month,
            source: priced.source,
            as_of: priced.as_of,
            stale_after: priced.stale_after,
            warnings,
        });
    }
    entries
}

/// What an entry of any kind says, before its age is judged.
struct Priced {
    provider: String,
    vcpu: Option<u32>,
    memory: Option<String>,
    price: Option<String>,
    usd_per_month: Option<f64>,
    eur_per_month: Option<f64>,
    source: String,
    as_of: String,
    stale_after: Option<String>,
}

fn of_instance(instance: &Instance) -> Priced {
    let eur = instance.eur_month();
    let price = instance
        .usd_per_hour
        .map(|hour| format!("${hour}/hour"))
        .or_else(|| {
            eur.map(|(eur, with_ipv4)| {
                let earlier = instance
                    .eur_per_month_ipv6_only_pre_2026_06_15
                    .map_or(String::new(), |earlier| {
                        format!("; €{earlier} if ordered before 2026-06-15")
                    });
                let address = if with_ipv4 { "with" } else { "without" };
                format!("€{eur}/month {address} its IPv4{earlier}")
            })
        });
    Priced {
        provider: instance.provider.clone(),
        vcpu: Some(instance.vcpu),
        memory: memory(instance.memory_gib, instance.memory_gb),
        price,
        usd_per_month: instance.usd_per_hour.map(|hour| hour * HOURS_PER_MONTH),
        eur_per_month: eur.map(|(eur, _)| eur),
        source: instance.source.clone(),
        as_of: instance.as_of.clone(),
        stale_after: instance.stale_after.clone(),
    }
}

fn of_database(database: &Database) -> Priced {
    Priced {
        provider: database.provider.clone(),
        vcpu: database.vcpu,
        memory: memory(database.memory_gib, None),
        price: database.usd_per_hour.map(|hour| format!("${hour}/hour")),
        usd_per_month: database.usd_per_hour.map(|hour| hour * HOURS_PER_MONTH),
        eur_per_month: None,
        source: source(database.source.as_deref(), database.proxy_source.as_deref()),
        as_of: undated(database.as_of.as_deref()),
        stale_after: database.stale_after.clone(),
    }
}

fn of_line(line: &Line) -> Priced {
    let (price, usd_per_month) = if let Some(hour) = line.usd_per_hour {
        (Some(format!("${hour}/hour")), Some(hour * HOURS_PER_MONTH))
    } else if let Some(vcpu_hour) = line.usd_per_vcpu_hour {
        (
            Some(format!("${vcpu_hour}/vCPU-hour above the baseline")),
            None,
        )
    } else if let Some(per_unit) = line.usd_per_unit {
        let unit = line.unit.as_deref().unwrap_or_default();
        (
            Some(format!("${per_unit} per {unit}")),
            line.usd_per_month_730h,
        )
    } else if let Some(eur) = line.eur_per_month {
        (Some(format!("€{eur}/month")), None)
    } else if let Some(eur) = line.eur_per_gb_month {
        (Some(format!("€{eur}/GB-month")), None)
    } else if let Some(eur) = line.eur_per_tb {
        (Some(format!("€{eur}/TB")), None)
    } else if let Some(pct) = line.pct_of_instance_price {
        (Some(format!("{pct} % of the instance price")), None)
    } else {
        (None, None)
    };
    Priced {
        provider: line.provider.clone().unwrap_or_default(),
        vcpu: None,
        memory: None,
        price,
        usd_per_month,
        eur_per_month: line.eur_per_month,
        source: source(line.source.as_deref(), line.proxy_source.as_deref()),
        as_of: undated(line.as_of.as_deref()),
        stale_after: line.stale_after.clone(),
    }
}

/// GiB as AWS gives it, else GB as Hetzner lists it.
fn memory(gib: Option<f64>, gb: Option<f64>) -> Option<String> {
    gib.map(|gib| format!("{gib} GiB"))
        .or_else(|| gb.map(|gb| format!("{gb} GB")))
}

fn source(source: Option<&str>, proxy: Option<&str>) -> String {
    match (source, proxy) {
        (Some(source), _) => source.to_owned(),
        (None, Some(proxy)) => {
            format!("no source for this price; a proxy (other engine or region): {proxy}")
        }
        (None, None) => "no source".to_owned(),
    }
}

fn undated(as_of: Option<&str>) -> String {
    as_of.unwrap_or(crate::UNDATED).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(text: &str) -> Date {
        day(text).expect("a date")
    }

    /// Issue 11, item 12: a price without a date is shown as undated and counted stale.
    #[test]
    fn an_undated_price_is_counted_stale() {
        let today = on("2026-11-30");
        let warnings = staleness(crate::UNDATED, None, today, 180);
        assert_eq!(
            warnings,
            ["undated: no date is known for this price, so it is counted stale"]
        );
        assert!(staleness("2026-11-01", None, today, 180).is_empty());
    }

    #[test]
    fn days_count_like_a_calendar() {
        assert_eq!(days_between(on("2026-07-20"), on("2026-11-30")), 133);
        assert_eq!(days_between(on("2024-02-28"), on("2024-03-01")), 2);
        assert_eq!(days_between(on("1970-01-01"), on("1971-01-01")), 365);
        assert_eq!(day("2026 (article date not shown)"), None);
        assert_eq!(day("2026-02-30"), None, "no such day");
        assert_eq!(day("2026-11-30T10:00"), None, "a day, and nothing else");
    }

    #[test]
    fn a_price_dated_after_today_is_stale() {
        let today = on("2026-11-30");
        assert_eq!(
            staleness("2030-01-01", None, today, 180),
            [
                "as of 2030-01-01, after today (2026-11-30): a price is read before it is planned with, so this date is wrong"
            ]
        );
        assert!(staleness("2026-11-30", None, today, 180).is_empty());
    }

    #[test]
    fn old_and_undated_prices_warn() {
        let today = on("2026-11-30");
        assert!(staleness("2026-07-20", None, today, 180).is_empty());
        assert_eq!(
            staleness("2024-07-01", None, today, 180),
            ["as of 2024-07-01: 882 days old (over 180)"]
        );
        assert_eq!(
            staleness("2025-08-19", Some("2026-04-01"), today, 1000),
            ["stale since 2026-04-01: the provider changed its prices"]
        );
        assert!(
            staleness("unknown (merge request page)", None, today, 180)[0].contains("not a date")
        );
    }

    #[test]
    fn every_entry_of_the_shipped_table_is_listed() {
        let table = PriceTable::embedded().expect("table");
        let entries = list(&table, on("2026-11-30"), 180);
        assert_eq!(entries.len(), 66);
        let medium = entries
            .iter()
            .find(|e| e.id == "t4g.medium")
            .expect("t4g.medium");
        assert_eq!(medium.kind, EntryKind::Instance);
        let monthly = medium.usd_per_month.expect("monthly");
        assert!((monthly - 24.528).abs() < 1e-9, "{monthly}");
        assert_eq!(medium.as_of, "2026-07-20");
        assert!(medium.warnings.is_empty());
        // Hetzner's server prices without the primary IPv4, and the tier of servers ordered
        // before 2026-06-15 beside them.
        let cx23 = entries.iter().find(|e| e.id == "CX23").expect("CX23");
        assert_eq!(
            cx23.price,
            "€5.49/month without its IPv4; €3.99 if ordered before 2026-06-15"
        );
        assert_eq!(cx23.eur_per_month, Some(5.49));
        assert!(cx23.warnings.is_empty(), "{:?}", cx23.warnings);
        assert!(
            !entries.iter().any(|e| e.id == "CX22"),
            "not sold: left out"
        );
        let backups = entries
            .iter()
            .find(|e| e.id == "hetzner-backups")
            .expect("a Hetzner extra");
        assert_eq!(backups.kind, EntryKind::Extra);
        assert_eq!(backups.price, "20 % of the instance price");
        // Priced from the AWS Price List since 2026-09 (a MySQL stand-in before).
        let large = entries
            .iter()
            .find(|e| e.id == "db.t4g.large")
            .expect("db.t4g.large");
        assert_eq!(large.price, "$0.129/hour");
        assert_eq!(large.as_of, "2026-09-09");
        let kinds: Vec<EntryKind> = entries.iter().map(|e| e.kind).collect();
        let first_extra = kinds.iter().position(|k| *k == EntryKind::Extra);
        assert_eq!(
            first_extra,
            Some(kinds.len() - 5),
            "file order, extras last"
        );
    }

    /// The listing and the planner read one table: a user's entry replaces the shipped one
    /// where it was listed, and a new one comes after.
    #[test]
    fn a_user_table_is_listed_where_it_overrides() {
        let mut table = PriceTable::embedded().expect("table");
        let before: Vec<String> = list(&table, on("2026-11-30"), 180)
            .into_iter()
            .map(|e| e.id)
            .collect();
        let user = PriceTable::from_toml(
            "[[aws_ec2]]\nid = \"t4g.medium\"\nprovider = \"aws\"\nvcpu = 2\nmemory_gib = 4.0\nusd_per_hour = 0.03\nsource = \"our invoice\"\nas_of = \"2026-11-01\"\n\n[[aws_ec2]]\nid = \"x9.huge\"\nprovider = \"aws\"\nvcpu = 64\nmemory_gib = 512.0\nusd_per_hour = 9.0\nsource = \"our invoice\"\nas_of = \"2026-11-01\"\n",
        )
        .expect("user table");
        table.extend(user);
        let after = list(&table, on("2026-11-30"), 180);
        let at = |id: &str| after.iter().position(|e| e.id == id);
        assert_eq!(
            at("t4g.medium"),
            before.iter().position(|id| id == "t4g.medium")
        );
        assert_eq!(at("x9.huge"), Some(before.len()));
        let medium = &after[at("t4g.medium").expect("listed")];
        assert_eq!(medium.price, "$0.03/hour");
        assert_eq!(
            Some(medium.usd_per_month.expect("monthly")),
            table
                .instance("t4g.medium")
                .and_then(|i| i.usd_per_hour)
                .map(|h| h * HOURS_PER_MONTH),
            "the listing's month is the planner's"
        );
    }
}
