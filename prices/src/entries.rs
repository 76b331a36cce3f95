//! Every entry of a price table, as `headroom prices` lists it: what it is, its price, its
//! source and as-of date, and whether that date is too old to trust.

use serde::Serialize;

/// A month of a service that runs all the time: the AWS calculator's and Infracost's 730 hours.
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The tables of the data file and what their entries are.
const KINDS: &[(&str, &str)] = &[
    ("aws_ec2", "instance"),
    ("hetzner_cloud", "instance"),
    ("aws_rds", "database"),
    ("aws_storage", "storage"),
    ("aws_rds_storage", "database storage"),
    ("aws_network", "network"),
    ("aws_ec2_cpu_credit", "CPU credits"),
    ("hetzner_extra", "extra"),
];

/// One priced thing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// `instance`, `database` or `line`.
    pub kind: &'static str,
    /// The entry's id (`t4g.medium`, `db.t4g.micro`, `public-ipv4`).
    pub id: String,
    /// `aws` or `hetzner`.
    pub provider: String,
    /// vCPUs, for an instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcpu: Option<u64>,
    /// GiB for AWS, GB as Hetzner lists it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The price as the source gives it: "$0.0336/hour", "$0.08/GB-month", "€3.79/month".
    pub price: String,
    /// US dollars per 730-hour month, where the price is per hour or per month.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_month: Option<f64>,
    /// Euros per month (Hetzner).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_month: Option<f64>,
    /// Where the price was read.
    pub source: String,
    /// The day it was read (`YYYY-MM-DD`), or `undated`.
    pub as_of: String,
    /// When the source says the price changes, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_after: Option<String>,
    /// Why this price may be out of date.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A calendar day, for price ages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Day {
    /// Days since 1970-01-01.
    days: i64,
}

impl Day {
    /// `YYYY-MM-DD`, or the first ten characters of a longer date.
    pub fn parse(text: &str) -> Option<Day> {
        let text = text.get(..10)?;
        let mut parts = text.split('-');
        let year: i64 = parts.next()?.parse().ok()?;
        let month: i64 = parts.next()?.parse().ok()?;
        let day: i64 = parts.next()?.parse().ok()?;
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return None;
        }
        Some(Day {
            days: days_from_civil(year, month, day),
        })
    }

    /// The day of a Unix time, in UTC.
    pub fn from_unix_seconds(seconds: i64) -> Day {
        Day {
            days: seconds.div_euclid(86_400),
        }
    }

    /// Whole days from `earlier` to this day.
    pub fn days_since(self, earlier: Day) -> i64 {
        self.days - earlier.days
    }
}

impl std::fmt::Display for Day {
    /// `YYYY-MM-DD` (Howard Hinnant's `civil_from_days`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let z = self.days + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z - era * 146_097;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let mp = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        write!(f, "{year:04}-{month:02}-{day:02}")
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Why a price dated `as_of` may be out of date on `today`.
pub fn staleness(
    as_of: &str,
    stale_after: Option<&str>,
    today: Day,
    max_age_days: i64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    match Day::parse(as_of) {
        Some(day) => {
            let age = today.days_since(day);
            if age > max_age_days {
                warnings.push(format!(
                    "as of {}: {} days old (over {max_age_days})",
                    &as_of[..10],
                    headroom_spec::numbers::count(age as f64)
                ));
            }
        }
        None if as_of == crate::UNDATED || as_of == "unknown" => warnings
            .push("undated: no date is known for this price, so it is counted stale".to_owned()),
        None => warnings.push(format!("its as-of date is not a date (\"{as_of}\")")),
    }
    if let Some(after) = stale_after.and_then(Day::parse)
        && today >= after
    {
        warnings.push(format!(
            "stale since {}: the provider changed its prices",
            stale_after.unwrap_or_default()
        ));
    }
    warnings
}

fn text(table: &toml::Table, key: &str) -> Option<String> {
    table
        .get(key)
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
}

fn float(table: &toml::Table, key: &str) -> Option<f64> {
    table
        .get(key)
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
}

/// Every entry of a table's text, in file order.
pub fn read(document: &toml::Table, today: Day, max_age_days: i64) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (table, kind) in KINDS {
        for item in document
            .get(*table)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(item) = item.as_table() else {
                continue;
            };
            let memory = float(item, "memory_gib")
                .map(|gib| format!("{gib} GiB"))
                .or_else(|| float(item, "memory_gb").map(|gb| format!("{gb} GB")));
            let usd_hour = float(item, "usd_per_hour");
            let (price, usd_per_month) = if let Some(hour) = usd_hour {
                (format!("${hour}/hour"), Some(hour * HOURS_PER_MONTH))
            } else if let Some(vcpu_hour) = float(item, "usd_per_vcpu_hour") {
                (format!("${vcpu_hour}/vCPU-hour above the baseline"), None)
            } else if let Some(per_unit) = float(item, "usd_per_unit") {
                let unit = text(item, "unit").unwrap_or_default();
                let monthly = float(item, "usd_per_month_730h");
                (format!("${per_unit} per {unit}"), monthly)
            } else if let Some(eur) = float(item, "eur_per_month") {
                (format!("€{eur}/month"), None)
            } else if let Some(eur) = float(item, "eur_per_gb_month") {
                (format!("€{eur}/GB-month"), None)
            } else if let Some(eur) = float(item, "eur_per_tb") {
                (format!("€{eur}/TB"), None)
            } else if let Some(pct) = float(item, "pct_of_instance_price") {
                (format!("{pct} % of the instance price"), None)
            } else {
                ("no sourced price".to_owned(), None)
            };
            let as_of = text(item, "as_of").unwrap_or_else(|| crate::UNDATED.to_owned());
            let stale_after = text(item, "stale_after");
            let mut warnings = staleness(&as_of, stale_after.as_deref(), today, max_age_days);
            if price == "no sourced price" {
                warnings.push(
                    "no price: only proxies from other engines or regions were found".to_owned(),
                );
            }
            entries.push(Entry {
                kind,
                id: text(item, "id").unwrap_or_default(),
                provider: text(item, "provider").unwrap_or_default(),
                vcpu: item
                    .get("vcpu")
                    .and_then(toml::Value::as_integer)
                    .map(|v| v as u64),
                memory,
                price,
                usd_per_month,
                eur_per_month: float(item, "eur_per_month"),
                source: text(item, "source").unwrap_or_else(|| match text(item, "proxy_source") {
                    Some(proxy) => format!(
                        "no source for this price; a proxy (other engine or region): {proxy}"
                    ),
                    None => "no source".to_owned(),
                }),
                as_of,
                stale_after,
                warnings,
            });
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11, item 12: a price without a date is shown as undated and counted stale.
    #[test]
    fn an_undated_price_is_counted_stale() {
        let today = Day::parse("2026-11-30").expect("day");
        let warnings = staleness(crate::UNDATED, None, today, 180);
        assert_eq!(
            warnings,
            ["undated: no date is known for this price, so it is counted stale"]
        );
        assert!(staleness("2026-11-01", None, today, 180).is_empty());
    }

    #[test]
    fn days_count_like_a_calendar() {
        let day = |t: &str| Day::parse(t).expect("date");
        assert_eq!(day("1970-01-01").days, 0);
        assert_eq!(day("2026-11-30").days_since(day("2026-07-20")), 133);
        assert_eq!(day("2024-03-01").days_since(day("2024-02-28")), 2);
        assert_eq!(Day::from_unix_seconds(86_400 * 365), day("1971-01-01"));
        for written in [
            "1970-01-01",
            "2000-02-29",
            "2024-03-01",
            "2026-12-02",
            "2100-12-31",
        ] {
            assert_eq!(day(written).to_string(), written);
        }
        assert_eq!(Day::parse("2026 (article date not shown)"), None);
    }

    #[test]
    fn old_and_undated_prices_warn() {
        let today = Day::parse("2026-11-30").expect("date");
        assert!(staleness("2026-07-20", None, today, 180).is_empty());
        assert_eq!(staleness("2024-07-01", None, today, 180).len(), 1);
        assert!(
            staleness("2025-08-19", Some("2026-04-01"), today, 1000)[0]
                .contains("stale since 2026-04-01")
        );
        assert!(
            staleness("unknown (merge request page)", None, today, 180)[0].contains("not a date")
        );
    }

    #[test]
    fn every_entry_of_the_shipped_table_is_listed() {
        let document: toml::Table = toml::from_str(crate::EMBEDDED).expect("table");
        let today = Day::parse("2026-11-30").expect("date");
        let entries = read(&document, today, 180);
        assert_eq!(entries.len(), 58);
        let medium = entries
            .iter()
            .find(|e| e.id == "t4g.medium")
            .expect("t4g.medium");
        assert!((medium.usd_per_month.expect("monthly") - 24.528).abs() < 1e-9);
        assert_eq!(medium.as_of, "2026-07-20");
        assert!(medium.warnings.is_empty());
        let cx22 = entries.iter().find(|e| e.id == "CX22").expect("CX22");
        assert!(cx22.warnings.iter().any(|w| w.contains("stale since")));
    }
}
