//! The rows an import writes, in the shipped table's format (`prices/data/prices.toml`), so
//! `PriceTable::from_toml` reads them back as it reads a team's own table.

use serde::{Deserialize, Serialize};

/// An imported table's `[import]`: where its prices come from and what was left out, as data
/// (never comments: a name from the provider's file cannot end a string and start a row).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportRecord {
    /// `aws`, `hetzner`, `azure`.
    pub provider: String,
    /// The file, its publication date and its SHA-256, as every row's `source` starts.
    pub source: String,
    /// What was read but left out, and why, each in words.
    #[serde(default)]
    pub left_out: Vec<String>,
}

/// An imported table: its instances and its priced lines, by the shipped table's sections.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportedTable {
    /// AWS EC2 instance types.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aws_ec2: Vec<InstanceRow>,
    /// Hetzner Cloud server types.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hetzner_cloud: Vec<InstanceRow>,
    /// Azure virtual machine sizes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub azure_vm: Vec<InstanceRow>,
    /// RDS database classes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aws_rds: Vec<DatabaseRow>,
    /// EBS volumes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aws_storage: Vec<LineRow>,
    /// The public IPv4 address.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aws_network: Vec<LineRow>,
    /// Hetzner's addresses, volumes and backups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hetzner_extra: Vec<LineRow>,
}

impl ImportedTable {
    /// How many rows it has.
    pub fn rows(&self) -> usize {
        self.aws_ec2.len()
            + self.hetzner_cloud.len()
            + self.azure_vm.len()
            + self.aws_rds.len()
            + self.aws_storage.len()
            + self.aws_network.len()
            + self.hetzner_extra.len()
    }
}

/// An instance type, as `[[aws_ec2]]`, `[[hetzner_cloud]]` and `[[azure_vm]]` write one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InstanceRow {
    /// The type (`m5.large`, `CX23`).
    pub id: String,
    /// `aws`, `hetzner`, `azure`.
    pub provider: String,
    /// Where the price holds (`us-east-2`, `fsn1`, `eastus`).
    pub region: String,
    /// vCPUs.
    pub vcpu: u32,
    /// Memory in GiB, as AWS gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<f64>,
    /// Memory in GB, as Hetzner lists it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_gb: Option<f64>,
    /// On-demand, an hour, US dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_hour: Option<f64>,
    /// A month, euros, without the primary IPv4 (Hetzner's server price).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_month_ipv6_only: Option<f64>,
    /// An hour, euros, without the primary IPv4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_hour_ipv6_only: Option<f64>,
    /// A month, euros, with one primary IPv4 (derived: the server and the address's price).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_month: Option<f64>,
    /// Who pays this price (Hetzner's tiers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applies_to: Option<String>,
    /// Where the vCPUs and memory were read, when not from the same file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_source: Option<String>,
    /// Where the price was read.
    pub source: String,
    /// The day the file was published.
    pub as_of: String,
}

/// A database class, as `[[aws_rds]]` writes one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DatabaseRow {
    /// The class (`db.t4g.micro`).
    pub id: String,
    /// `aws`.
    pub provider: String,
    /// The engine, lower case (`postgresql`).
    pub engine: String,
    /// Where the price holds.
    pub region: String,
    /// `single-az`.
    pub deployment: String,
    /// vCPUs, where the file gives them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcpu: Option<u32>,
    /// Memory in GiB, where the file gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<f64>,
    /// On-demand, an hour, US dollars.
    pub usd_per_hour: f64,
    /// Where the price was read.
    pub source: String,
    /// The day the file was published.
    pub as_of: String,
}

/// A priced line, as `[[aws_storage]]`, `[[aws_network]]` and `[[hetzner_extra]]` write one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LineRow {
    /// The line (`ebs-gp3-storage`, `hetzner-primary-ipv4`).
    pub id: String,
    /// `aws`, `hetzner`.
    pub provider: String,
    /// Where the price holds.
    pub region: String,
    /// What `usd_per_unit` is for (`GB-month`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Per unit, US dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_unit: Option<f64>,
    /// A month, euros.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_month: Option<f64>,
    /// An hour, euros.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_hour: Option<f64>,
    /// A GB-month, euros.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eur_per_gb_month: Option<f64>,
    /// A share of the instance's price, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_of_instance_price: Option<f64>,
    /// Where the price was read.
    pub source: String,
    /// The day the file was published.
    pub as_of: String,
}
