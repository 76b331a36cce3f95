//! The products of an offer file priced here: what each is, read from its family and
//! attributes.

use std::collections::BTreeMap;

use serde::Deserialize;

/// What to keep of an offer file.
#[derive(Debug, Clone)]
pub struct Filter {
    /// Only products of this region (`us-east-1`); every region in the file when `None`.
    pub region: Option<String>,
    /// The database engine of RDS classes, as the offer writes it (`PostgreSQL`, `MySQL`).
    pub engine: String,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            region: None,
            engine: "PostgreSQL".to_owned(),
        }
    }
}

/// A product as the file lists it; only its family and attributes are read.
#[derive(Deserialize)]
pub(super) struct Product {
    #[serde(rename = "productFamily", default)]
    family: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
}

/// A product kept: an instance type or a volume, without its price yet.
#[derive(Debug, Clone)]
pub(super) enum Kept {
    Instance {
        id: String,
        region: String,
        vcpu: u32,
        memory_gib: Option<f64>,
    },
    Volume {
        api_name: String,
        region: String,
    },
    /// An RDS database class of the engine asked, Single-AZ, with no licence.
    Database {
        id: String,
        region: String,
        engine: String,
        vcpu: Option<u32>,
        memory_gib: Option<f64>,
    },
    /// The public IPv4 address in use (AmazonVPC).
    Address {
        region: String,
    },
}

/// What became of a product: kept, left out as another kind of product (counted by why), or
/// one of the kind priced here that cannot be read (said by name).
#[derive(Debug)]
pub(super) enum Sorted {
    Kept(Kept),
    /// Not a product priced here: why, in words shared by every product like it.
    Other(&'static str),
    /// A product of a kind priced here whose attributes cannot be read: what is wrong.
    Unreadable(String),
}

impl Kept {
    pub(super) fn name(&self) -> String {
        match self {
            Kept::Instance { id, .. } => id.clone(),
            Kept::Volume { api_name, .. } => format!("EBS {api_name}"),
            Kept::Database { id, engine, .. } => format!("RDS {id} ({engine})"),
            Kept::Address { .. } => "public IPv4 address".to_owned(),
        }
    }

    /// The product sorted: kept if it is one priced here (a Linux instance on shared tenancy
    /// with no pre-installed software, in use, not a capacity reservation; an EBS volume; an
    /// RDS class of `filter`'s engine, Single-AZ, no licence; the public IPv4 address in use;
    /// in `filter`'s region), with its names checked and its vCPUs and memory read.
    pub(super) fn of(product: &Product, filter: &Filter) -> Sorted {
        match Kept::sorted(product, filter) {
            Ok(Some(kept)) => Sorted::Kept(kept),
            Ok(None) => Sorted::Other(Kept::why_not(product, filter)),
            Err(why) => Sorted::Unreadable(why),
        }
    }

    /// Why a product not kept was not: the same words for every product like it.
    fn why_not(product: &Product, filter: &Filter) -> &'static str {
        let attribute = |name: &str| product.attributes.get(name).map(String::as_str);
        match (attribute("regionCode"), product.family.as_deref()) {
            (None, _) => "no region (`regionCode`)",
            (Some(region), _) if filter.region.as_deref().is_some_and(|r| r != region) => {
                "another region"
            }
            (_, Some("Compute Instance")) => {
                "not Linux on shared tenancy, in use, with no pre-installed software or licence"
            }
            (_, Some("Database Instance")) => {
                "another database engine, deployment or licence than the one asked"
            }
            _ => {
                "another product family than instances, volumes, database classes and the public IPv4 address"
            }
        }
    }

    fn sorted(product: &Product, filter: &Filter) -> Result<Option<Kept>, String> {
        let attribute = |name: &str| product.attributes.get(name).map(String::as_str);
        let Some(region) = attribute("regionCode") else {
            return Ok(None);
        };
        if filter.region.as_deref().is_some_and(|r| r != region) {
            return Ok(None);
        }
        let named = |key: &str| -> Result<String, String> {
            let text = attribute(key).ok_or_else(|| format!("no `{key}`"))?;
            crate::import::name(text)
                .map(str::to_owned)
                .map_err(|why| format!("its `{key}` {why}"))
        };
        let region = || {
            crate::import::name(region)
                .map(str::to_owned)
                .map_err(|why| format!("its `regionCode` {why}"))
        };
        let Some(family) = product.family.as_deref() else {
            return Ok(None);
        };
        match family {
            "Compute Instance" => {
                let linux = attribute("operatingSystem") == Some("Linux")
                    && attribute("operation") == Some("RunInstances")
                    && attribute("tenancy") == Some("Shared")
                    && attribute("preInstalledSw") == Some("NA")
                    && attribute("capacitystatus") == Some("Used")
                    && attribute("licenseModel") == Some("No License required");
                if !linux {
                    return Ok(None);
                }
                let vcpu = attribute("vcpu").ok_or("no `vcpu`")?;
                let memory = attribute("memory").ok_or("no `memory`")?;
                Ok(Some(Kept::Instance {
                    id: named("instanceType")?,
                    region: region()?,
                    vcpu: vcpus(vcpu)?,
                    memory_gib: Some(memory_of(memory)?),
                }))
            }
            "Storage" => Ok(Some(Kept::Volume {
                api_name: named("volumeApiName")?,
                region: region()?,
            })),
            "Database Instance" => {
                let ours = attribute("databaseEngine") == Some(filter.engine.as_str())
                    && attribute("deploymentOption") == Some("Single-AZ")
                    && attribute("licenseModel") == Some("No license required");
                if !ours {
                    return Ok(None);
                }
                Ok(Some(Kept::Database {
                    id: named("instanceType")?,
                    region: region()?,
                    engine: filter.engine.clone(),
                    vcpu: attribute("vcpu").map(vcpus).transpose()?,
                    memory_gib: attribute("memory").map(memory_of).transpose()?,
                }))
            }
            // AmazonVPC lists the address in use beside idle and contiguous-block ones; its
            // usage type is regional (`USE1-PublicIPv4:InUseAddress`).
            _ if attribute("usagetype").is_some_and(|u| u.ends_with("PublicIPv4:InUseAddress")) => {
                Ok(Some(Kept::Address { region: region()? }))
            }
            _ => Ok(None),
        }
    }
}

/// `8 GiB` as GiB, or what is wrong with it.
fn memory_of(text: &str) -> Result<f64, String> {
    gib(text).ok_or_else(|| {
        format!(
            "its `memory` is `{}`, not a size in GiB (`8 GiB`)",
            crate::import::shown(text)
        )
    })
}

/// `2` (and `2 vCPU`, `96 vCPUs`) as vCPUs, at least one.
fn vcpus(text: &str) -> Result<u32, String> {
    let trimmed = text.trim();
    let number = trimmed
        .strip_suffix("vCPUs")
        .or_else(|| trimmed.strip_suffix("vCPU"))
        .unwrap_or(trimmed)
        .trim();
    match number.parse::<u32>() {
        Ok(count) if count > 0 && f64::from(count) <= crate::import::checks::MOST_VCPUS => {
            Ok(count)
        }
        _ => Err(format!(
            "its `vcpu` is `{}`, not a count of vCPUs (`2`)",
            crate::import::shown(text)
        )),
    }
}

/// `8 GiB` (and `0.5 GiB`, `1,024 GiB`) as GiB.
fn gib(text: &str) -> Option<f64> {
    let number = text.trim().strip_suffix("GiB")?.trim().replace(',', "");
    crate::import::decimal(&number)
        .filter(|gib| *gib > 0.0 && *gib <= crate::import::checks::MOST_GIB)
}
