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

impl Kept {
    pub(super) fn name(&self) -> String {
        match self {
            Kept::Instance { id, .. } => id.clone(),
            Kept::Volume { api_name, .. } => format!("EBS {api_name}"),
            Kept::Database { id, engine, .. } => format!("RDS {id} ({engine})"),
            Kept::Address { .. } => "public IPv4 address".to_owned(),
        }
    }

    /// The product kept, if it is one priced here: a Linux instance on shared tenancy with no
    /// pre-installed software, in use (not a capacity reservation), an EBS volume, an RDS
    /// class of `filter`'s engine (Single-AZ, no licence), or the public IPv4 address in use;
    /// in `filter`'s region.
    pub(super) fn of(product: &Product, filter: &Filter) -> Option<Kept> {
        let attribute = |name: &str| product.attributes.get(name).map(String::as_str);
        let region = attribute("regionCode")?;
        if filter.region.as_deref().is_some_and(|r| r != region) {
            return None;
        }
        match product.family.as_deref()? {
            "Compute Instance" => {
                let linux = attribute("operatingSystem") == Some("Linux")
                    && attribute("operation") == Some("RunInstances")
                    && attribute("tenancy") == Some("Shared")
                    && attribute("preInstalledSw") == Some("NA")
                    && attribute("capacitystatus") == Some("Used")
                    && attribute("licenseModel") == Some("No License required");
                if !linux {
                    return None;
                }
                Some(Kept::Instance {
                    id: attribute("instanceType")?.to_owned(),
                    region: region.to_owned(),
                    vcpu: attribute("vcpu")?.trim().parse().ok()?,
                    memory_gib: attribute("memory").and_then(gib),
                })
            }
            "Storage" => Some(Kept::Volume {
                api_name: attribute("volumeApiName")?.to_owned(),
                region: region.to_owned(),
            }),
            "Database Instance" => {
                let ours = attribute("databaseEngine") == Some(filter.engine.as_str())
                    && attribute("deploymentOption") == Some("Single-AZ")
                    && attribute("licenseModel") == Some("No license required");
                if !ours {
                    return None;
                }
                Some(Kept::Database {
                    id: attribute("instanceType")?.to_owned(),
                    region: region.to_owned(),
                    engine: filter.engine.clone(),
                    vcpu: attribute("vcpu").and_then(|v| v.trim().parse().ok()),
                    memory_gib: attribute("memory").and_then(gib),
                })
            }
            // AmazonVPC lists the address in use beside idle and contiguous-block ones; its
            // usage type is regional (`USE1-PublicIPv4:InUseAddress`).
            _ if attribute("usagetype").is_some_and(|u| u.ends_with("PublicIPv4:InUseAddress")) => {
                Some(Kept::Address {
                    region: region.to_owned(),
                })
            }
            _ => None,
        }
    }
}

/// `8 GiB` (and `0.5 GiB`, `1,024 GiB`) as GiB.
fn gib(text: &str) -> Option<f64> {
    let number = text.trim().strip_suffix("GiB")?.trim().replace(',', "");
    crate::import::decimal(&number)
}
