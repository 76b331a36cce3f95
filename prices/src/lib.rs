//! headroom's price table: instance types, databases and monthly lines, each with its source
//! and as-of date.
//!
//! The table ships as data (`prices/data/prices.toml`, built from sourced facts) and is
//! embedded in the binary; a user's table in the same format overrides or extends it. Nothing
//! here reads files: callers pass the text. The compiler checks a spec's instances against it;
//! the planner (`headroom-pricing`) prices with it.

#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod checks;
pub mod entries;
pub mod import;

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
    /// `aws`, `hetzner` or `azure`.
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
    /// Price a month, in euros, with one primary IPv4 address (Hetzner; derived where
    /// `eur_per_month_ipv6_only` is the sourced figure).
    #[serde(default)]
    pub eur_per_month: Option<f64>,
    /// Price a month, in euros, without the primary IPv4 (as Hetzner quotes its servers since
    /// 2026): the server priced, its addresses a line of their own. New orders' tier.
    #[serde(default)]
    pub eur_per_month_ipv6_only: Option<f64>,
    /// The same for servers ordered before 2026-06-15, which keep Hetzner's 2026-04-01 rate.
    #[serde(default)]
    pub eur_per_month_ipv6_only_pre_2026_06_15: Option<f64>,
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
    /// vCPUs of the class, where a source gives them.
    #[serde(default)]
    pub vcpu: Option<u32>,
    /// Memory of the class in GiB, where a source gives it.
    #[serde(default)]
    pub memory_gib: Option<f64>,
    /// Absent when no source gave a list price for this class.
    #[serde(default)]
    pub usd_per_hour: Option<f64>,
    /// Where the price was read.
    #[serde(default)]
    pub source: Option<String>,
    /// Where a stand-in price (another engine or region) was read, when no source gave this
    /// class's own: said, never priced with.
    #[serde(default)]
    pub proxy_source: Option<String>,
    /// The day it was read (`YYYY-MM-DD`); `None` is shown as undated and counted stale.
    #[serde(default)]
    pub as_of: Option<String>,
    /// When the source says the price changes, if it does.
    #[serde(default)]
    pub stale_after: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawTable {
    #[serde(default)]
    aws_ec2: Vec<Instance>,
    #[serde(default)]
    hetzner_cloud: Vec<Instance>,
    #[serde(default)]
    azure_vm: Vec<Instance>,
    #[serde(default)]
    aws_rds: Vec<Database>,
    #[serde(default)]
    aws_storage: Vec<Line>,
    #[serde(default)]
    aws_network: Vec<Line>,
    #[serde(default)]
    aws_ec2_cpu_credit: Vec<Line>,
    #[serde(default)]
    aws_rds_storage: Vec<Line>,
    #[serde(default)]
    hetzner_extra: Vec<Line>,
    /// Where an imported table's prices come from (`headroom prices import`).
    #[serde(default)]
    import: Option<import::ImportRecord>,
}

impl RawTable {
    /// Every instance, by table in file order: EC2, Hetzner Cloud, Azure.
    fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.aws_ec2
            .iter()
            .chain(&self.hetzner_cloud)
            .chain(&self.azure_vm)
    }

    /// Every line, with the kind its table lists it as, in file order by table.
    fn lines(&self) -> impl Iterator<Item = (EntryKind, &Line)> {
        self.aws_storage
            .iter()
            .map(|l| (EntryKind::Storage, l))
            .chain(
                self.aws_rds_storage
                    .iter()
                    .map(|l| (EntryKind::DatabaseStorage, l)),
            )
            .chain(self.aws_network.iter().map(|l| (EntryKind::Network, l)))
            .chain(
                self.aws_ec2_cpu_credit
                    .iter()
                    .map(|l| (EntryKind::CpuCredits, l)),
            )
            .chain(self.hetzner_extra.iter().map(|l| (EntryKind::Extra, l)))
    }
}

/// A priced line that is not a machine: storage, an address, CPU credits, a provider's extra.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Line {
    /// The line's id (`ebs-gp3-storage`, `public-ipv4`).
    pub id: String,
    /// `aws` or `hetzner`.
    #[serde(default)]
    pub provider: Option<String>,
    /// What `usd_per_unit` is for (`GB-month`, `public IPv4 address-hour`).
    #[serde(default)]
    pub unit: Option<String>,
    /// Per `unit` (a GB-month, an address-hour).
    #[serde(default)]
    pub usd_per_unit: Option<f64>,
    /// A unit an hour, over a 730-hour month, where the unit is an hour.
    #[serde(default)]
    pub usd_per_month_730h: Option<f64>,
    /// A month, in euros (Hetzner).
    #[serde(default)]
    pub eur_per_month: Option<f64>,
    /// A GB-month, in euros (Hetzner volumes).
    #[serde(default)]
    pub eur_per_gb_month: Option<f64>,
    /// A TB, in euros (Hetzner traffic over the included).
    #[serde(default)]
    pub eur_per_tb: Option<f64>,
    /// A share of the instance's price, in percent (Hetzner backups).
    #[serde(default)]
    pub pct_of_instance_price: Option<f64>,
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
    /// Where a stand-in price was read, when no source gave this line's own.
    #[serde(default)]
    pub proxy_source: Option<String>,
    /// The day it was read (`YYYY-MM-DD`); `None` is shown as undated and counted stale.
    #[serde(default)]
    pub as_of: Option<String>,
    /// When the source says the price changes, if it does.
    #[serde(default)]
    pub stale_after: Option<String>,
}

/// What a priced entry is, as `headroom prices` lists it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum EntryKind {
    /// A compute instance type (`[[aws_ec2]]`, `[[hetzner_cloud]]`, `[[azure_vm]]`).
    #[serde(rename = "instance")]
    Instance,
    /// A managed database class (`[[aws_rds]]`).
    #[serde(rename = "database")]
    Database,
    /// Block storage (`[[aws_storage]]`).
    #[serde(rename = "storage")]
    Storage,
    /// A database's storage (`[[aws_rds_storage]]`).
    #[serde(rename = "database storage")]
    DatabaseStorage,
    /// Addresses and traffic (`[[aws_network]]`).
    #[serde(rename = "network")]
    Network,
    /// CPU credits of burstable instances (`[[aws_ec2_cpu_credit]]`).
    #[serde(rename = "CPU credits")]
    CpuCredits,
    /// A provider's extra (`[[hetzner_extra]]`).
    #[serde(rename = "extra")]
    Extra,
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EntryKind::Instance => "instance",
            EntryKind::Database => "database",
            EntryKind::Storage => "storage",
            EntryKind::DatabaseStorage => "database storage",
            EntryKind::Network => "network",
            EntryKind::CpuCredits => "CPU credits",
            EntryKind::Extra => "extra",
        })
    }
}

/// One entry of a table, by kind and id, in the order the table lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// What it is.
    pub kind: EntryKind,
    /// Its id.
    pub id: String,
}

/// Where a price table came from: named beside every dollar a plan gives, so a reader knows
/// which list, of which day, the cost stands on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableSource {
    /// `the shipped table` or the file as it was named (`--prices our-prices.toml`).
    pub name: String,
    /// The SHA-256 of the file's bytes, in hex: the same digest means the same prices.
    pub sha256: String,
    /// Its price entries.
    pub entries: usize,
    /// The oldest as-of date among its entries (`YYYY-MM-DD`); `null` when none is dated.
    pub oldest_as_of: Option<String>,
    /// The newest.
    pub newest_as_of: Option<String>,
}

/// What the shipped table is called where its provenance is named.
pub const SHIPPED: &str = "prices/data/prices.toml, the shipped table";

/// Instances, databases and lines by id, with their provenance, and the order they are
/// listed in.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    instances: BTreeMap<String, Instance>,
    databases: BTreeMap<String, Database>,
    lines: BTreeMap<String, Line>,
    listed: Vec<Listed>,
    sources: Vec<TableSource>,
    /// Each source's `[import]`, where it was imported.
    imports: Vec<Option<import::ImportRecord>>,
    /// The source each entry was read from, by id: an index into `sources`.
    origins: BTreeMap<String, usize>,
}

impl PriceTable {
    /// The shipped table.
    pub fn embedded() -> Result<PriceTable, PriceTableError> {
        Ok(PriceTable::from_toml(EMBEDDED)?.named(SHIPPED))
    }

    /// The table, its source called `name` (a file's path as given).
    #[must_use]
    pub fn named(mut self, name: &str) -> PriceTable {
        for source in &mut self.sources {
            name.clone_into(&mut source.name);
        }
        self
    }

    /// The tables this one was read from, the shipped one first.
    pub fn sources(&self) -> &[TableSource] {
        &self.sources
    }

    /// The table an entry (`t4g.medium`, `ebs-gp3-storage`) was read from: the last that
    /// listed it.
    pub fn source_of(&self, id: &str) -> Option<&TableSource> {
        self.sources.get(*self.origins.get(id)?)
    }

    /// The tables `headroom prices import` wrote among them, each with its `[import]`.
    pub fn imported(&self) -> impl Iterator<Item = (&TableSource, &import::ImportRecord)> {
        self.sources
            .iter()
            .zip(&self.imports)
            .filter_map(|(source, import)| Some((source, import.as_ref()?)))
    }

    /// Reads a table in the shipped format.
    pub fn from_toml(text: &str) -> Result<PriceTable, PriceTableError> {
        let raw: RawTable = toml::from_str(text).map_err(|error| PriceTableError::Parse {
            message: error.message().to_owned(),
            span: error.span(),
        })?;
        let entries = raw.instances().count() + raw.aws_rds.len() + raw.lines().count();
        if entries == 0 {
            return Err(PriceTableError::Parse {
                message: "it has no price entries: a price table lists [[aws_ec2]], [[hetzner_cloud]], [[azure_vm]], [[aws_rds]], [[aws_storage]] or [[aws_network]] entries (is this a spec?)".to_owned(),
                span: None,
            });
        }
        raw.check_names(text)?;
        raw.check_numbers()?;
        raw.check_dates(text)?;
        let mut table = PriceTable::default();
        for instance in raw.instances() {
            table.listed.push(Listed {
                kind: EntryKind::Instance,
                id: instance.id.clone(),
            });
            table
                .instances
                .insert(instance.id.clone(), instance.clone());
        }
        for database in &raw.aws_rds {
            table.listed.push(Listed {
                kind: EntryKind::Database,
                id: database.id.clone(),
            });
            table
                .databases
                .insert(database.id.clone(), database.clone());
        }
        for (kind, line) in raw.lines() {
            table.listed.push(Listed {
                kind,
                id: line.id.clone(),
            });
            table.lines.insert(line.id.clone(), line.clone());
        }
        let mut days: Vec<&str> = raw
            .instances()
            .map(|i| i.as_of.as_str())
            .chain(raw.aws_rds.iter().filter_map(|d| d.as_of.as_deref()))
            .chain(raw.lines().filter_map(|(_, l)| l.as_of.as_deref()))
            .filter(|day| entries::day(day).is_some())
            .collect();
        days.sort_unstable();
        table.sources.push(TableSource {
            name: "a price table".to_owned(),
            sha256: sha256_hex(text.as_bytes()),
            entries: table.listed.len(),
            oldest_as_of: days.first().map(|d| (*d).to_owned()),
            newest_as_of: days.last().map(|d| (*d).to_owned()),
        });
        table.imports.push(raw.import);
        table.origins = table.listed.iter().map(|l| (l.id.clone(), 0)).collect();
        Ok(table)
    }

    /// Entries of `other` replace entries with the same id, where they were listed; the
    /// others are added after them.
    pub fn extend(&mut self, other: PriceTable) {
        for listed in &other.listed {
            self.instances.remove(&listed.id);
            self.databases.remove(&listed.id);
            self.lines.remove(&listed.id);
            match self.listed.iter_mut().find(|l| l.id == listed.id) {
                Some(place) => *place = listed.clone(),
                None => self.listed.push(listed.clone()),
            }
        }
        let offset = self.sources.len();
        self.origins.extend(
            other
                .origins
                .into_iter()
                .map(|(id, origin)| (id, origin + offset)),
        );
        self.instances.extend(other.instances);
        self.databases.extend(other.databases);
        self.lines.extend(other.lines);
        self.sources.extend(other.sources);
        self.imports.extend(other.imports);
    }

    /// Every entry, in the order the table lists it (a user table's after the shipped one's).
    pub fn listed(&self) -> &[Listed] {
        &self.listed
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

impl Instance {
    /// The server's price a month in euros as the planner prices it, and whether it holds a
    /// primary IPv4 address: the price without one where the table has it (the addresses are
    /// a line of their own), else `eur_per_month`, which includes one.
    pub fn eur_month(&self) -> Option<(f64, bool)> {
        self.eur_per_month_ipv6_only
            .map(|eur| (eur, false))
            .or(self.eur_per_month.map(|eur| (eur, true)))
    }
}

#[cfg(test)]
mod tests;

/// The SHA-256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
