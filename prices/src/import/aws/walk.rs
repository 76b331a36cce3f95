//! The offer file walked with serde seeds: `products` one at a time, kept when priced here,
//! then `terms.OnDemand` of the kept products only, so the memory held is the kept rows'.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};

use serde::Deserialize;

use super::products::{Filter, Kept, Product, Sorted};

/// Products of a kind priced here that could not be read are each named, up to this many;
/// past it they are counted.
const NAMED_UNREADABLE: usize = 100;

/// AWS's code for the on-demand term, the same for every product.
const ON_DEMAND: &str = "JRTCKXETXF";

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
pub(super) struct Gathered {
    pub(super) offer_code: Option<String>,
    pub(super) publication: Option<String>,
    pub(super) products_read: bool,
    pub(super) products: u64,
    pub(super) kept: BTreeMap<String, Kept>,
    /// Kept products' on-demand prices, US dollars per unit, and the unit.
    pub(super) priced: BTreeMap<String, (f64, String)>,
    /// Kept products with terms but no on-demand USD price: their term codes.
    pub(super) unpriced: BTreeMap<String, Vec<String>>,
    /// Products not priced here, counted by why.
    pub(super) other: BTreeMap<&'static str, u64>,
    /// Products of a kind priced here that could not be read: the first few named with why.
    pub(super) unreadable: Vec<String>,
    /// How many could not be read in all.
    pub(super) unreadable_count: u64,
}

/// The offer file's top level.
pub(super) struct Offer<'a> {
    pub(super) filter: &'a Filter,
    pub(super) gathered: &'a mut Gathered,
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
            match Kept::of(&product, self.filter) {
                Sorted::Kept(kept) => {
                    self.gathered.kept.insert(sku, kept);
                }
                Sorted::Other(why) => *self.gathered.other.entry(why).or_default() += 1,
                Sorted::Unreadable(why) => {
                    self.gathered.unreadable_count += 1;
                    if self.gathered.unreadable.len() < NAMED_UNREADABLE {
                        self.gathered
                            .unreadable
                            .push(format!("sku {}: {why}", crate::import::shown(&sku)));
                    }
                }
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
                        let usd = crate::import::decimal(d.price.get("USD")?)?;
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
