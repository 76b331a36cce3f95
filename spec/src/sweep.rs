//! What a phase does with one variable (`[[phase]] vary`): list its values, step a range, or
//! search for its SLO ceiling.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vars::{Range, RangeError, VarValue};

/// The values a phase gives one variable: a list, a linear or geometric range, or a search
/// for the highest value that passes every SLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Sweep {
    /// The values, in the order they run: `[1, 4, 16, 64]`, `["0.25/s", "1/s"]`.
    List(Vec<VarValue>),
    /// A range of values, stepped.
    Range(Range),
    /// `{ search = { from, to, precision } }`: the values are the probes the search makes.
    Search(crate::search::SearchSweep),
}

impl Sweep {
    /// The values, in order: a list as written, a range stepped out; a search's two ends
    /// (`from`, `to`), the values it is checked at before it runs.
    pub fn values(&self) -> Result<Vec<VarValue>, RangeError> {
        match self {
            Sweep::List(values) => Ok(values.clone()),
            Sweep::Range(range) => range.values(),
            Sweep::Search(sweep) => sweep
                .search
                .ends()
                .map(|_| vec![sweep.search.from.clone(), sweep.search.to.clone()]),
        }
    }

    /// The search, when the sweep is one.
    pub fn search(&self) -> Option<&crate::search::Search> {
        match self {
            Sweep::Search(sweep) => Some(&sweep.search),
            Sweep::List(_) | Sweep::Range(_) => None,
        }
    }
}
