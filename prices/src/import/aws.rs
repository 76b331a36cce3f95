//! The AWS Price List bulk offer file for EC2
//! (`/offers/v1.0/aws/AmazonEC2/current/<region>/index.json`), streamed: `products` are read
//! one at a time and only those priced here are kept (Linux on shared tenancy without
//! pre-installed software, and EBS volumes), then `terms.OnDemand` likewise, so the memory
//! held is the kept rows', not the file's (about 450 MB for EC2, 2.5 GB parsed whole).

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};

use super::{Hashing, Import, ImportError, ImportedTable, InstanceRow, LineRow, Provenance};

/// AWS's code for the on-demand term, the same for every product.
const ON_DEMAND: &str = "JRTCKXETXF";

/// What to keep of an offer file.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only products of this region (`us-east-1`); every region in the file when `None`.
    pub region: Option<String>,
}

/// A product as the file lists it; only its family and attributes are read.
#[derive(Deserialize)]
struct Product {
    #[serde(rename = "productFamily", default)]
    family: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
}

/// A product kept: an instance type or a volume, without its price yet.
#[derive(Debug, Clone)]
enum Kept {
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
}

/// One offer term of a product; its price dimensions carry the price.
#[derive(Deserialize)]
struct Term {
    #[serde(rename = "offerTermCode")]
    code: String,
    #[serde(rename = "priceDimensions", default)]
    dimensions: BTreeMap<String, Dimension>,
}

#[derive(Deserialize)]
struct Dimension {
    #[serde(default)]
    unit: String,
    #[serde(rename = "pricePerUnit", default)]
    price: BTreeMap<String, String>,
    #[serde(rename = "beginRange", default)]
    begin: Option<String>,
}

/// What the walk over the file gathers.
#[derive(Default)]
struct Gathered {
    offer_code: Option<String>,
    publication: Option<String>,
    products_read: bool,
    products: u64,
    kept: BTreeMap<String, Kept>,
    /// Kept products' on-demand prices, US dollars per unit, and the unit.
    priced: BTreeMap<String, (f64, String)>,
    /// Kept products with terms but no on-demand USD price: their term codes.
    unpriced: BTreeMap<String, Vec<String>>,
}

/// Reads an EC2 offer file from `reader` (named `file` on the command line), keeping what
/// `filter` asks for.
pub fn import(reader: impl Read, file: &str, filter: &Filter) -> Result<Import, ImportError> {
    let mut hashing = Hashing::new(std::io::BufReader::with_capacity(1 << 16, reader));
    let mut gathered = Gathered::default();
    {
        let mut deserializer = serde_json::Deserializer::from_reader(&mut hashing);
        Offer {
            filter,
            gathered: &mut gathered,
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
    }
    let sha256 = hashing
        .finish()
        .map_err(|e| ImportError::Format(format!("the file could not be read to its end: {e}")))?;
    match gathered.offer_code.as_deref() {
        Some("AmazonEC2") => {}
        Some(other) => {
            return Err(ImportError::Format(format!(
                "this is the `{other}` offer: `prices import aws` reads the AmazonEC2 offer file (instances and EBS volumes)"
            )));
        }
        None => {
            return Err(ImportError::Format(
                "no `offerCode`: not an AWS Price List bulk offer file (`/offers/v1.0/aws/AmazonEC2/current/<region>/index.json`)".to_owned(),
            ));
        }
    }
    let published = gathered.publication.as_deref().and_then(super::day_of);
    let region_words = filter
        .region
        .as_deref()
        .map_or_else(String::new, |r| format!(" {r}"));
    let provenance = Provenance {
        provider: "aws".to_owned(),
        what: format!("AWS Price List bulk offer AmazonEC2{region_words}"),
        file: file.to_owned(),
        published,
        sha256,
    };
    rows(gathered, provenance, filter)
}

/// The kept products with their prices as rows, and what was left out.
fn rows(
    gathered: Gathered,
    provenance: Provenance,
    filter: &Filter,
) -> Result<Import, ImportError> {
    let source = provenance.source();
    let as_of = provenance
        .published
        .clone()
        .unwrap_or_else(|| crate::entries::today_utc().to_string());
    let mut table = ImportedTable::default();
    let mut notes = Vec::new();
    for (sku, kept) in &gathered.kept {
        let price = gathered.priced.get(sku);
        match (kept, price) {
            (
                Kept::Instance {
                    id,
                    region,
                    vcpu,
                    memory_gib,
                },
                Some((usd, unit)),
            ) if unit == "Hrs" => table.aws_ec2.push(InstanceRow {
                id: id.clone(),
                provider: "aws".to_owned(),
                region: region.clone(),
                vcpu: *vcpu,
                memory_gib: *memory_gib,
                usd_per_hour: Some(*usd),
                source: source.clone(),
                as_of: as_of.clone(),
                ..InstanceRow::default()
            }),
            (Kept::Volume { api_name, region }, Some((usd, unit))) if unit == "GB-Mo" => {
                table.aws_storage.push(LineRow {
                    id: format!("ebs-{api_name}-storage"),
                    provider: "aws".to_owned(),
                    region: region.clone(),
                    unit: Some("GB-month".to_owned()),
                    usd_per_unit: Some(*usd),
                    source: source.clone(),
                    as_of: as_of.clone(),
                    ..LineRow::default()
                });
            }
            (kept, Some((_, unit))) => notes.push(format!(
                "{} (sku {sku}): priced per `{unit}`, not per hour or GB-month",
                kept.name()
            )),
            (kept, None) => notes.push(match gathered.unpriced.get(sku) {
                Some(codes) => format!(
                    "{} (sku {sku}): no on-demand price in US dollars (its terms: {})",
                    kept.name(),
                    codes.join(", ")
                ),
                None => format!("{} (sku {sku}): no term in the file", kept.name()),
            }),
        }
    }
    dedupe(&mut table.aws_ec2, &mut notes);
    if table.rows() == 0 {
        let region = filter
            .region
            .as_deref()
            .map_or_else(String::new, |r| format!(" in {r}"));
        return Err(ImportError::NothingMatched(format!(
            "none of its {} products is a Linux instance on shared tenancy or an EBS volume with an on-demand price{region}{}",
            gathered.products,
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

impl Kept {
    fn name(&self) -> String {
        match self {
            Kept::Instance { id, .. } => id.clone(),
            Kept::Volume { api_name, .. } => format!("EBS {api_name}"),
        }
    }

    /// The product kept, if it is one priced here: a Linux instance on shared tenancy with no
    /// pre-installed software, in use (not a capacity reservation), or an EBS volume; in
    /// `filter`'s region.
    fn of(product: &Product, filter: &Filter) -> Option<Kept> {
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
            _ => None,
        }
    }
}

/// `8 GiB` (and `0.5 GiB`, `1,024 GiB`) as GiB.
fn gib(text: &str) -> Option<f64> {
    let number = text.trim().strip_suffix("GiB")?.trim().replace(',', "");
    super::decimal(&number)
}

/// The offer file's top level.
struct Offer<'a> {
    filter: &'a Filter,
    gathered: &'a mut Gathered,
}

impl<'de> DeserializeSeed<'de> for Offer<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Offer<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AWS Price List offer file (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "offerCode" => self.gathered.offer_code = Some(map.next_value()?),
                "publicationDate" => self.gathered.publication = Some(map.next_value()?),
                "products" => {
                    map.next_value_seed(Products {
                        filter: self.filter,
                        gathered: self.gathered,
                    })?;
                    self.gathered.products_read = true;
                }
                "terms" => {
                    if !self.gathered.products_read {
                        return Err(A::Error::custom(
                            "`terms` come before `products`: AWS writes products first, and a file in another order cannot be read in bounded memory",
                        ));
                    }
                    map.next_value_seed(Terms {
                        gathered: self.gathered,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `products`: each read, kept when priced here.
struct Products<'a> {
    filter: &'a Filter,
    gathered: &'a mut Gathered,
}

impl<'de> DeserializeSeed<'de> for Products<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Products<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`products`, an object of products by SKU")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = map.next_key::<String>()? {
            let product: Product = map.next_value()?;
            self.gathered.products += 1;
            if let Some(kept) = Kept::of(&product, self.filter) {
                self.gathered.kept.insert(sku, kept);
            }
        }
        Ok(())
    }
}

/// `terms`: only `OnDemand`, and in it only the kept products' terms are read.
struct Terms<'a> {
    gathered: &'a mut Gathered,
}

impl<'de> DeserializeSeed<'de> for Terms<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Terms<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`terms`, an object of term kinds")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(kind) = map.next_key::<String>()? {
            if kind == "OnDemand" {
                map.next_value_seed(OnDemand {
                    gathered: self.gathered,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// `terms.OnDemand`: by SKU, each product's terms by `<sku>.<offerTermCode>`.
struct OnDemand<'a> {
    gathered: &'a mut Gathered,
}

impl<'de> DeserializeSeed<'de> for OnDemand<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OnDemand<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`terms.OnDemand`, an object of terms by SKU")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(sku) = map.next_key::<String>()? {
            if !self.gathered.kept.contains_key(&sku) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let terms: BTreeMap<String, Term> = map.next_value()?;
            let on_demand = terms.values().find(|t| t.code == ON_DEMAND).and_then(|t| {
                // The first tier (`beginRange` 0) is the price of the first unit.
                t.dimensions
                    .values()
                    .filter(|d| d.begin.as_deref().is_none_or(|b| b == "0"))
                    .find_map(|d| {
                        let usd = super::decimal(d.price.get("USD")?)?;
                        Some((usd, d.unit.clone()))
                    })
            });
            match on_demand {
                Some(price) => {
                    self.gathered.priced.insert(sku, price);
                }
                None => {
                    let codes = terms.values().map(|t| t.code.clone()).collect();
                    self.gathered.unpriced.insert(sku, codes);
                }
            }
        }
        Ok(())
    }
}
