//! Azure's Retail Prices API (`https://prices.azure.com/api/retail/prices`): its pages of
//! items, read into `[[azure_vm]]` rows for one region. A virtual machine size has many items
//! (Windows, Spot, Low Priority, other regions); the one priced is the Linux pay-as-you-go
//! hour: `serviceName` "Virtual Machines", `type` "Consumption", `unitOfMeasure` "1 Hour",
//! a `productName` without "Windows" and a `skuName` without "Spot" or "Low Priority". The
//! items carry no cores or memory: they come from the region's sizes as Azure lists them
//! (`az vm list-sizes --location REGION`, or the REST API's `vmSizes`), said in
//! `spec_source`; a size not listed there is left out, and said.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use serde::Deserialize;

use super::checks::{self, Priced};
use super::{Import, ImportError, ImportedTable, InstanceRow, Provenance};

/// One page of the API's answer.
#[derive(Deserialize)]
struct Page {
    #[serde(rename = "Items")]
    items: Vec<Item>,
    /// The next page's address; `null` on the last.
    #[serde(rename = "NextPageLink", default)]
    next: Option<String>,
}

/// An item of a page; only what the import reads.
#[derive(Deserialize)]
struct Item {
    #[serde(rename = "currencyCode")]
    currency: String,
    #[serde(rename = "retailPrice")]
    retail_price: f64,
    #[serde(rename = "armRegionName")]
    region: String,
    #[serde(rename = "armSkuName", default)]
    arm_sku: String,
    #[serde(rename = "skuName", default)]
    sku_name: String,
    #[serde(rename = "productName", default)]
    product: String,
    #[serde(rename = "serviceName", default)]
    service: String,
    #[serde(rename = "unitOfMeasure", default)]
    unit: String,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(rename = "effectiveStartDate", default)]
    effective_start: String,
    #[serde(rename = "effectiveEndDate", default)]
    effective_end: Option<String>,
}

/// A virtual machine size as Azure lists a region's: `az vm list-sizes` writes `memoryInMb`,
/// the REST API `memoryInMB`.
#[derive(Debug, Clone, Deserialize)]
pub struct Size {
    /// `Standard_B1s`.
    pub name: String,
    /// The vCPUs (for a constrained-vCPU size, the vCPUs of quota it takes).
    #[serde(rename = "numberOfCores")]
    pub cores: u32,
    /// Memory in MiB.
    #[serde(rename = "memoryInMb", alias = "memoryInMB")]
    pub memory_mib: f64,
}

/// A region's sizes, by name (case does not matter), and where they were read.
#[derive(Debug, Clone, Default)]
pub struct Sizes {
    by_name: BTreeMap<String, Size>,
    /// The file, its SHA-256.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SizesFile {
    /// `az vm list-sizes`: an array.
    List(Vec<Size>),
    /// The REST API: `{"value": [...]}`.
    Answer { value: Vec<Size> },
}

impl Sizes {
    /// Reads `az vm list-sizes --location REGION` (an array) or the REST API's `vmSizes`
    /// answer (`{"value": [...]}`) from `reader`, named `file`.
    pub fn read(reader: impl Read, file: &str) -> Result<Sizes, ImportError> {
        let (bytes, sha256) = super::read_whole(reader, file)?;
        let sizes = match serde_json::from_slice::<SizesFile>(&bytes) {
            Ok(SizesFile::List(sizes) | SizesFile::Answer { value: sizes }) => sizes,
            Err(error) if error.is_syntax() || error.is_eof() => return Err(error.into()),
            Err(_) => {
                return Err(ImportError::Format(
                    "not a list of Azure virtual machine sizes: give what `az vm list-sizes --location REGION` prints (each size with `name`, `numberOfCores` and `memoryInMb`)".to_owned(),
                ));
            }
        };
        let mut implausible = Vec::new();
        for size in &sizes {
            let named = super::name(&size.name).map(|_| ());
            let cores = checks::plausible_size(f64::from(size.cores), "vCPUs", checks::MOST_VCPUS);
            let memory =
                checks::plausible_size(size.memory_mib / 1024.0, "GiB of memory", checks::MOST_GIB);
            if let Err(why) = named.and(cores).and(memory) {
                implausible.push(format!("size `{}`: {why}", super::shown(&size.name)));
            }
        }
        if !implausible.is_empty() {
            return Err(ImportError::Implausible(implausible));
        }
        Ok(Sizes {
            by_name: sizes
                .into_iter()
                .map(|size| (size.name.to_ascii_lowercase(), size))
                .collect(),
            source: format!("{file}, sha256 {sha256}"),
        })
    }

    fn get(&self, name: &str) -> Option<&Size> {
        self.by_name.get(&name.to_ascii_lowercase())
    }
}

/// What to read of the pages.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The region priced (`eastus`, `westeurope`), as `armRegionName` writes it.
    pub region: String,
    /// The region's sizes, for the cores and memory the items do not carry.
    pub sizes: Option<&'a Sizes>,
    /// The day of import: the pages carry no publication date.
    pub today: String,
}

/// Why an item is not a Linux pay-as-you-go hour of a virtual machine.
fn not_priced_here(item: &Item) -> Option<&'static str> {
    let spot = |name: &str| name.contains("Spot") || name.contains("Low Priority");
    if item.service != "Virtual Machines" || item.arm_sku.is_empty() {
        Some("not a virtual machine")
    } else if item.kind != "Consumption" || item.unit != "1 Hour" {
        Some("reserved or savings-plan terms")
    } else if item.product.contains("Windows") {
        Some("Windows")
    } else if spot(&item.sku_name) {
        Some("Spot or Low Priority")
    } else {
        None
    }
}

/// Reads the API's pages (`pages`: each read and its name, in the order the API gave them,
/// following `NextPageLink`) into the rows of `options.region`. Each page is read whole, at
/// most [`super::MAX_WHOLE_FILE_BYTES`], and only the region's items are kept; the last page's
/// `NextPageLink` must be null (a set cut short is refused).
pub fn import<R: Read>(pages: Vec<(R, String)>, options: &Options) -> Result<Import, ImportError> {
    super::name(&options.region).map_err(|why| ImportError::Format(format!("the region {why}")))?;
    let mut in_region = Vec::new();
    let mut regions = BTreeSet::new();
    let mut digests = Vec::new();
    let names: Vec<String> = pages.iter().map(|(_, name)| name.clone()).collect();
    let count = pages.len();
    for (at, (reader, name)) in pages.into_iter().enumerate() {
        let (bytes, sha256) = super::read_whole(reader, &name)?;
        digests.push(sha256);
        let page: Page = serde_json::from_slice(&bytes).map_err(|e| {
            if e.is_syntax() || e.is_eof() {
                in_page(&name, ImportError::from(e))
            } else {
                ImportError::Format(format!(
                    "{name}: not a page of Azure's Retail Prices API (`Items`, each with `currencyCode`, `retailPrice`, `armRegionName`…): {e}"
                ))
            }
        })?;
        // Pages of several queries may be given one set after another (a query per size);
        // the set the last page ends must end there.
        if let (Some(next), true) = (&page.next, at + 1 == count) {
            return Err(ImportError::Format(format!(
                "{name} is the last page given, but its `NextPageLink` names another (`{}`): the set is cut short. Give every page, following `NextPageLink` until it is null",
                super::shown(next)
            )));
        }
        for item in page.items {
            if item.region.eq_ignore_ascii_case(&options.region) {
                in_region.push(item);
            } else if regions.len() < 100 {
                regions.insert(super::shown(&item.region));
            }
        }
    }
    let provenance = Provenance {
        provider: "azure".to_owned(),
        what: format!(
            "Azure Retail Prices API at {}, Linux pay-as-you-go",
            options.region
        ),
        file: names.join(", "),
        published: None,
        sha256: if digests.len() == 1 {
            digests.remove(0)
        } else {
            // Several pages: the digest of their digests, in order, so the same pages give it.
            crate::sha256_hex(digests.join("\n").as_bytes())
        },
    };
    rows(in_region, &regions, provenance, options)
}

/// `error` said to be in the page `name`.
fn in_page(name: &str, error: ImportError) -> ImportError {
    match error {
        ImportError::Json {
            message,
            line,
            column,
        } => ImportError::JsonIn {
            file: name.to_owned(),
            message,
            line,
            column,
        },
        other => other,
    }
}

/// The region's items, refused where there are none (`regions`: the others the pages
/// price) or they are not in dollars.
fn of_region<'i>(
    in_region: &'i [Item],
    regions: &BTreeSet<String>,
    options: &Options,
) -> Result<Vec<&'i Item>, ImportError> {
    if in_region.is_empty() {
        return Err(ImportError::NothingMatched(format!(
            "no item is priced in `{}`; the pages price {}",
            options.region,
            if regions.is_empty() {
                "nothing".to_owned()
            } else {
                regions.iter().cloned().collect::<Vec<_>>().join(", ")
            }
        )));
    }
    if let Some(other) = in_region.iter().find(|i| i.currency != "USD") {
        return Err(ImportError::Format(format!(
            "its prices are in {}: headroom prices Azure in US dollars (ask the API without `currencyCode`, or with `currencyCode='USD'`)",
            super::shown(&other.currency)
        )));
    }
    Ok(in_region.iter().collect())
}

/// Of the region's items, the Linux pay-as-you-go hour of each size (its latest, where several
/// are in force), by size; what was left out into `notes`.
fn priced_here<'i>(
    in_region: Vec<&'i Item>,
    options: &Options,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, &'i Item>, ImportError> {
    let mut left_out: BTreeMap<&str, usize> = BTreeMap::new();
    let mut chosen: BTreeMap<String, &Item> = BTreeMap::new();
    let mut implausible = Vec::new();
    for item in in_region {
        if let Some(why) = not_priced_here(item) {
            *left_out.entry(why).or_default() += 1;
            continue;
        }
        if let Err(why) = super::name(&item.arm_sku) {
            *left_out
                .entry("its `armSkuName` is not a size's name")
                .or_default() += 1;
            if implausible.len() + notes.len() < 100 {
                notes.push(format!("an item's `armSkuName` {why}"));
            }
            continue;
        }
        if let Err(why) = checks::plausible(item.retail_price, Priced::UsdHour) {
            implausible.push(format!("{} in {}: {why}", item.arm_sku, options.region));
            continue;
        }
        if item
            .effective_end
            .as_deref()
            .and_then(super::day_of)
            .is_some_and(|end| end <= options.today)
        {
            *left_out.entry("ended").or_default() += 1;
            continue;
        }
        if super::day_of(&item.effective_start).is_some_and(|start| start > options.today) {
            *left_out.entry("not yet in effect").or_default() += 1;
            continue;
        }
        match chosen.get(&item.arm_sku) {
            Some(kept) if kept.effective_start >= item.effective_start => {
                if kept.retail_price != item.retail_price {
                    notes.push(format!(
                        "{}: also priced ${}/hour from {}; kept ${}/hour from {}",
                        item.arm_sku,
                        item.retail_price,
                        day_or_undated(&item.effective_start),
                        kept.retail_price,
                        day_or_undated(&kept.effective_start)
                    ));
                }
            }
            _ => {
                chosen.insert(item.arm_sku.clone(), item);
            }
        }
    }
    if !implausible.is_empty() {
        return Err(ImportError::Implausible(implausible));
    }
    for (why, count) in &left_out {
        notes.push(format!(
            "{count} {} of {}: {why}",
            if *count == 1 { "item" } else { "items" },
            options.region
        ));
    }
    Ok(chosen)
}

/// The items of the region as rows, one per size (its latest price), and what was left out.
fn rows(
    items: Vec<Item>,
    regions: &BTreeSet<String>,
    provenance: Provenance,
    options: &Options,
) -> Result<Import, ImportError> {
    let mut notes = Vec::new();
    let chosen = priced_here(of_region(&items, regions, options)?, options, &mut notes)?;
    let source = provenance.source();
    let mut table = ImportedTable::default();
    for (sku, item) in chosen {
        let Some(size) = options.sizes.and_then(|sizes| sizes.get(&sku)) else {
            notes.push(format!(
                "{sku}: the prices carry no cores or memory{} (give the region's sizes with --sizes FILE: `az vm list-sizes --location {}`)",
                options
                    .sizes
                    .map_or(String::new(), |s| format!(", nor do the sizes in {}", s.source)),
                options.region
            ));
            continue;
        };
        table.azure_vm.push(InstanceRow {
            id: sku.clone(),
            provider: "azure".to_owned(),
            region: item.region.clone(),
            vcpu: size.cores,
            memory_gib: Some(size.memory_mib / 1024.0),
            usd_per_hour: Some(item.retail_price),
            spec_source: options.sizes.map(|s| s.source.clone()),
            source: format!(
                "{source}; effective from {}",
                day_or_undated(&item.effective_start)
            ),
            as_of: options.today.clone(),
            ..InstanceRow::default()
        });
    }
    if table.rows() == 0 {
        // An empty table is no table (`--prices` refuses it): say why nothing was written.
        return Err(ImportError::NothingMatched(format!(
            "no virtual machine of {} could be priced: {}",
            options.region,
            notes.join("; ")
        )));
    }
    Ok(Import {
        provenance,
        table,
        notes,
    })
}

/// `2025-10-01` of `2025-10-01T00:00:00Z`, or the text as it is.
fn day_or_undated(timestamp: &str) -> String {
    super::day_of(timestamp).unwrap_or_else(|| format!("\"{}\"", super::shown(timestamp)))
}
