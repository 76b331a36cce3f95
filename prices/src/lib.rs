//! headroom's price table: instance types, databases and monthly lines, each with its source
//! and as-of date.
//!
//! The table ships as data (`prices/data/prices.toml`, built from sourced facts) and is
//! embedded in the binary; a user's table in the same format overrides or extends it. Nothing
//! here reads files: callers pass the text. The compiler checks a spec's instances against it;
//! the planner (`headroom-pricing`) prices with it.

#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::Deserialize;

pub mod entries;

/// The as-of date of a price whose source gives none.
pub const UNDATED: &str = "undated";

/// The shipped table, as embedded in the binary.
pub const EMBEDDED: &str = include_str!("../data/prices.toml");

/// Why a price table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PriceTableError {
    /// The text is not a price table.
    #[error("the price table is not valid: {message}")]
    Parse {
        /// What is wrong.
        message: String,
        /// Byte range of the problem in the table's text.
        span: Option<std::ops::Range<usize>>,
    },
}

/// A compute instance type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Instance {
    /// The instance type (`t4g.medium`).
    pub id: String,
    /// `aws` or `hetzner`.
    pub provider: String,
    /// Where the price holds (`us-east-1`).
    #[serde(default)]
    pub region: Option<String>,
    /// vCPUs.
    pub vcpu: u32,
    /// AWS gives GiB; Hetzner lists "GB" (recorded as written, in `memory_gb`).
    #[serde(default)]
    pub memory_gib: Option<f64>,
    /// Memory in GB (10⁹ bytes), when the provider lists it so.
    #[serde(default)]
    pub memory_gb: Option<f64>,
    /// On-demand price an hour, in US dollars (AWS).
    #[serde(default)]
    pub usd_per_hour: Option<f64>,
    /// Price a month, in euros (Hetzner).
    #[serde(default)]
    pub eur_per_month: Option<f64>,
    /// A burstable instance: full speed only while CPU credits last.
    #[serde(default)]
    pub burstable: bool,
    /// The CPU a burstable instance sustains without credits, per vCPU, in percent.
    #[serde(default)]
    pub baseline_cpu_pct_per_vcpu: Option<f64>,
    /// Where the price was read.
    pub source: String,
    /// The day it was read (`YYYY-MM-DD`).
    pub as_of: String,
    /// When the source says the price changes, if it does.
    #[serde(default)]
    pub stale_after: Option<String>,
}

/// A managed database class.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Database {
    /// The database class (`db.t4g.micro`).
    pub id: String,
    /// `aws`.
    pub provider: String,
    /// Absent when no source gave a list price for this class.
    #[serde(default)]
    pub usd_per_hour: Option<f64>,
    /// Where the price was read.
    #[serde(default)]
    pub source: Option<String>,
    /// The day it was read (`YYYY-MM-DD`); `None` is shown as undated and counted stale.
    #[serde(default)]
    pub as_of: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RawTable {
    #[serde(default)]
    aws_ec2: Vec<Instance>,
    #[serde(default)]
    hetzner_cloud: Vec<Instance>,
    #[serde(default)]
    aws_rds: Vec<Database>,
    #[serde(default)]
    aws_storage: Vec<Line>,
    #[serde(default)]
    aws_network: Vec<Line>,
    #[serde(default)]
    aws_ec2_cpu_credit: Vec<Line>,
}

/// A priced line that is not a machine: storage, an address, CPU credits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Line {
    /// The line's id (`ebs-gp3-storage`, `public-ipv4`).
    pub id: String,
    /// Per `unit` (a GB-month, an address-hour).
    #[serde(default)]
    pub usd_per_unit: Option<f64>,
    /// A CPU credit's price per vCPU-hour, in US dollars.
    #[serde(default)]
    pub usd_per_vcpu_hour: Option<f64>,
    /// The price an hour, in US dollars.
    #[serde(default)]
    pub usd_per_hour: Option<f64>,
    /// Instance families these credits are for (`t4g`).
    #[serde(default)]
    pub families: Vec<String>,
    /// What a month includes for free, in GB.
    #[serde(default)]
    pub free_gb_per_month: Option<f64>,
    /// Where the price was read.
    #[serde(default)]
    pub source: Option<String>,
    /// The day it was read (`YYYY-MM-DD`); `None` is shown as undated and counted stale.
    #[serde(default)]
    pub as_of: Option<String>,
}

/// Instances and databases by id, with their provenance.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    instances: BTreeMap<String, Instance>,
    databases: BTreeMap<String, Database>,
    lines: BTreeMap<String, Line>,
}

impl PriceTable {
    /// The shipped table.
    pub fn embedded() -> Result<PriceTable, PriceTableError> {
        PriceTable::from_toml(EMBEDDED)
    }

    /// Reads a table in the shipped format.
    pub fn from_toml(text: &str) -> Result<PriceTable, PriceTableError> {
        let raw: RawTable = toml::from_str(text).map_err(|error| PriceTableError::Parse {
            message: error.message().to_owned(),
            span: error.span(),
        })?;
        let entries = raw.aws_ec2.len()
            + raw.hetzner_cloud.len()
            + raw.aws_rds.len()
            + raw.aws_storage.len()
            + raw.aws_network.len()
            + raw.aws_ec2_cpu_credit.len();
        if entries == 0 {
            return Err(PriceTableError::Parse {
                message: "it has no price entries: a price table lists [[aws_ec2]], [[hetzner_cloud]], [[aws_rds]], [[aws_storage]] or [[aws_network]] entries (is this a spec?)".to_owned(),
                span: None,
            });
        }
        raw.check_numbers()?;
        raw.check_dates(text)?;
        let mut table = PriceTable::default();
        for instance in raw.aws_ec2.into_iter().chain(raw.hetzner_cloud) {
            table.instances.insert(instance.id.clone(), instance);
        }
        for database in raw.aws_rds {
            table.databases.insert(database.id.clone(), database);
        }
        for line in raw
            .aws_storage
            .into_iter()
            .chain(raw.aws_network)
            .chain(raw.aws_ec2_cpu_credit)
        {
            table.lines.insert(line.id.clone(), line);
        }
        Ok(table)
    }

    /// Entries of `other` replace entries with the same id; the others are added.
    pub fn extend(&mut self, other: PriceTable) {
        self.instances.extend(other.instances);
        self.databases.extend(other.databases);
        self.lines.extend(other.lines);
    }

    /// A priced line by id: `ebs-gp3-storage`, `public-ipv4`, `t4g-unlimited-surplus`.
    pub fn line(&self, id: &str) -> Option<&Line> {
        self.lines.get(id)
    }

    /// The surplus CPU credit price for an instance's family (`t4g.medium` → `t4g`).
    pub fn cpu_credit(&self, instance: &str) -> Option<&Line> {
        let family = instance.split('.').next()?;
        self.lines
            .values()
            .find(|l| l.families.iter().any(|f| f == family))
    }

    /// The instance of this id.
    pub fn instance(&self, id: &str) -> Option<&Instance> {
        self.instances.get(id)
    }

    /// The database class of this id.
    pub fn database(&self, id: &str) -> Option<&Database> {
        self.databases.get(id)
    }

    /// Instance ids of one provider (`"aws"`, `"hetzner"`), sorted.
    pub fn instance_ids(&self, provider: &str) -> impl Iterator<Item = &str> {
        self.instances
            .values()
            .filter(move |i| i.provider == provider)
            .map(|i| i.id.as_str())
    }

    /// Every database class's id.
    pub fn database_ids(&self) -> impl Iterator<Item = &str> {
        self.databases.keys().map(String::as_str)
    }
}

impl RawTable {
    /// Prices and sizes are facts about money and machines: finite, and not negative; an
    /// instance has a vCPU.
    fn check_numbers(&self) -> Result<(), PriceTableError> {
        let numbers = self
            .aws_ec2
            .iter()
            .chain(&self.hetzner_cloud)
            .flat_map(|i| {
                [
                    ("usd_per_hour", i.usd_per_hour),
                    ("eur_per_month", i.eur_per_month),
                    ("memory_gib", i.memory_gib),
                    ("memory_gb", i.memory_gb),
                    ("baseline_cpu_pct_per_vcpu", i.baseline_cpu_pct_per_vcpu),
                ]
                .map(|(key, value)| (i.id.as_str(), key, value))
            })
            .chain(
                self.aws_rds
                    .iter()
                    .map(|d| (d.id.as_str(), "usd_per_hour", d.usd_per_hour)),
            )
            .chain(
                self.aws_storage
                    .iter()
                    .chain(&self.aws_network)
                    .chain(&self.aws_ec2_cpu_credit)
                    .flat_map(|l| {
                        [
                            ("usd_per_unit", l.usd_per_unit),
                            ("usd_per_vcpu_hour", l.usd_per_vcpu_hour),
                            ("usd_per_hour", l.usd_per_hour),
                            ("free_gb_per_month", l.free_gb_per_month),
                        ]
                        .map(|(key, value)| (l.id.as_str(), key, value))
                    }),
            );
        for (id, key, value) in numbers {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                return Err(PriceTableError::Parse {
                    message: format!(
                        "`{key}` of `{id}` is {value}: a price or a size is a finite number of 0 or more"
                    ),
                    span: None,
                });
            }
        }
        if let Some(instance) = self
            .aws_ec2
            .iter()
            .chain(&self.hetzner_cloud)
            .find(|i| i.vcpu == 0)
        {
            return Err(PriceTableError::Parse {
                message: format!(
                    "`vcpu` of `{}` is 0: an instance has at least one",
                    instance.id
                ),
                span: None,
            });
        }
        Ok(())
    }

    /// An as-of date is a fact: a date, or absent (shown as undated and counted stale).
    fn check_dates(&self, text: &str) -> Result<(), PriceTableError> {
        let dates = self
            .aws_ec2
            .iter()
            .chain(&self.hetzner_cloud)
            .map(|i| (i.id.as_str(), Some(i.as_of.as_str())))
            .chain(
                self.aws_rds
                    .iter()
                    .map(|d| (d.id.as_str(), d.as_of.as_deref())),
            )
            .chain(
                self.aws_storage
                    .iter()
                    .chain(&self.aws_network)
                    .chain(&self.aws_ec2_cpu_credit)
                    .map(|l| (l.id.as_str(), l.as_of.as_deref())),
            );
        for (id, as_of) in dates {
            if let Some(as_of) = as_of
                && (as_of.len() != 10 || entries::Day::parse(as_of).is_none())
            {
                return Err(PriceTableError::Parse {
                    message: format!(
                        "the as-of date of `{id}` is \"{as_of}\", not a date: write it as YYYY-MM-DD, or leave `as_of` out when no date is known (it is then shown as undated and counted stale)"
                    ),
                    span: text
                        .find(&format!("\"{as_of}\""))
                        .map(|at| at..at + as_of.len() + 2),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_reads_with_provenance() {
        let table = PriceTable::embedded().expect("embedded table");
        let medium = table.instance("t4g.medium").expect("t4g.medium");
        assert_eq!(medium.vcpu, 2);
        assert_eq!(medium.memory_gib, Some(4.0));
        assert_eq!(medium.usd_per_hour, Some(0.0336));
        assert_eq!(medium.as_of, "2026-07-20");
        assert!(medium.burstable);
        assert_eq!(table.instance_ids("aws").count(), 27);
        assert_eq!(table.instance_ids("hetzner").count(), 9);
        // Sourced where a source exists, absent (not guessed) where none does.
        assert_eq!(
            table.database("db.t4g.micro").and_then(|d| d.usd_per_hour),
            Some(0.016)
        );
        assert_eq!(
            table.database("db.t4g.large").and_then(|d| d.usd_per_hour),
            None
        );
    }

    #[test]
    fn a_user_table_overrides_and_extends() {
        let mut table = PriceTable::embedded().expect("embedded table");
        let user = PriceTable::from_toml(
            r#"
[[aws_ec2]]
id = "t4g.medium"
provider = "aws"
vcpu = 2
memory_gib = 4.0
usd_per_hour = 0.03
source = "our invoice"
as_of = "2026-11-01"

[[aws_ec2]]
id = "x9.huge"
provider = "aws"
vcpu = 64
memory_gib = 512.0
usd_per_hour = 9.0
source = "our invoice"
as_of = "2026-11-01"
"#,
        )
        .expect("user table");
        table.extend(user);
        assert_eq!(
            table.instance("t4g.medium").and_then(|i| i.usd_per_hour),
            Some(0.03)
        );
        assert!(table.instance("x9.huge").is_some());
    }

    /// Issue 12: a negative price or memory is refused, naming the entry and the key, and so
    /// is a file with no price entries at all (a spec given as a price table).
    #[test]
    fn nonsense_in_a_user_table_is_refused() {
        let entry = |extra: &str| {
            format!(
                "[[aws_ec2]]\nid = \"x1\"\nprovider = \"aws\"\nvcpu = 2\nmemory_gib = 4.0\nsource = \"ours\"\nas_of = \"2026-11-01\"\n{extra}"
            )
        };
        let error = PriceTable::from_toml(&entry("usd_per_hour = -0.5\n")).expect_err("negative");
        assert_eq!(
            error.to_string(),
            "the price table is not valid: `usd_per_hour` of `x1` is -0.5: a price or a size is a finite number of 0 or more"
        );
        assert!(PriceTable::from_toml(&entry("usd_per_hour = nan\n")).is_err());
        let spec = "[bench]\nname = \"relay\"\n\n[target]\ncommand = [\"server\"]\n";
        let error = PriceTable::from_toml(spec).expect_err("a spec is no price table");
        assert!(error.to_string().contains("is this a spec?"), "{error}");
        assert!(PriceTable::from_toml(&entry("usd_per_hour = 0.05\n")).is_ok());
    }

    /// Issue 11, item 12: every as-of date of the shipped table is a date, and a table whose
    /// date is a research note is refused, naming the entry.
    #[test]
    fn as_of_dates_are_dates() {
        let table = PriceTable::embedded().expect("embedded table");
        let credit = table.cpu_credit("t4g.medium").expect("t4g credits");
        assert_eq!(credit.as_of, None, "the t4g credit price has no known date");
        assert_eq!(
            table
                .database("db.t4g.micro")
                .and_then(|d| d.as_of.clone())
                .as_deref(),
            Some("2024-02-02")
        );
        let error = PriceTable::from_toml(
            "[[aws_rds]]\nid = \"db.x\"\nprovider = \"aws\"\nas_of = \"2026 (article date not shown)\"\n",
        )
        .expect_err("a note is not a date");
        assert!(error.to_string().contains("`db.x`"), "{error}");
        assert!(error.to_string().contains("YYYY-MM-DD"), "{error}");
        assert!(!EMBEDDED.contains("confidence"));
        assert!(!EMBEDDED.contains("not shown in stored copy"));
    }

    #[test]
    fn a_broken_table_says_where() {
        let error = PriceTable::from_toml("[[aws_ec2]]\nid = 3\n").expect_err("broken");
        let PriceTableError::Parse { span, .. } = error;
        assert!(span.is_some());
    }
}
