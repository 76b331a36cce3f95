//! `[[phase]]` (a named sweep) and `[measure]` (what is sampled at every point).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sweep::Sweep;
use crate::units::Duration;
use crate::vars::VarValue;

/// A named sweep: the variables it varies, how often each point repeats, what it measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Names the phase in results, pages, log files and `headroom run --phase NAME`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9._-]*$"), length(max = 64))]
    pub name: String,
    /// What the phase asks, for the capacity page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The swept variables. Several variables give every combination, the last name in
    /// alphabetical order changing fastest. None: the phase has one point. A search
    /// (`{ search = {…} }`) is the phase's only variable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vary: BTreeMap<String, Sweep>,
    /// Variables fixed for this phase (overriding `[vars]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, VarValue>,
    /// Runs of every point, each with a fresh server; min / median / max come from these.
    #[serde(default = "default_repeats")]
    #[schemars(range(min = 1, max = 100))]
    pub repeats: u32,
    /// The pause between two runs, so the machine settles.
    #[serde(default = "default_cooldown")]
    pub cooldown: Duration,
    /// The hold of every scenario in this phase, overriding the scenarios' own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Duration>,
    /// The scenarios that run in this phase; all by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenarios: Option<Vec<String>>,
    /// What a failed point does to the rest of the phase.
    #[serde(default)]
    pub on_failure: OnFailure,
    /// The order of the runs when points repeat: every point once, then every point again
    /// (`interleaved`), or every repeat of a point before the next (`grouped`).
    #[serde(default)]
    pub order: RunOrder,
    /// Overrides `[measure]` for this phase, key by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
}

fn default_repeats() -> u32 {
    3
}

fn default_cooldown() -> Duration {
    Duration::from_secs(2)
}

/// What a phase does after a point's run fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnFailure {
    /// Record the failure and go on with the next point.
    #[default]
    Continue,
    /// Stop the phase at the first failed point (a crash past the ceiling says enough).
    Stop,
}

/// The order of a phase's runs when its points repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunOrder {
    /// In rounds, A B C A B C …: every point once, then every point again. A drift of a
    /// shared machine (another job, a warmer CPU) falls on every point alike, so points compare.
    #[default]
    Interleaved,
    /// A A A B B B C C C: every repeat of a point before the next point (for a server whose
    /// first runs warm a cache the next point must not inherit, say).
    Grouped,
}

/// What is measured at every point. Every key is optional; defaults are in [`MeasureDefaults`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// How often the server's process tree is sampled for RSS and CPU (500ms by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_every: Option<Duration>,
    /// The steady-state reading taken after the load ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    /// Series picked from the server's metrics, by name and labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
}

/// After the load ends: wait `settle`, take `scrapes` scrapes `every` apart, reduce them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteadyState {
    /// The wait after the load ends, so queues drain and allocators settle.
    #[serde(default = "default_settle")]
    pub settle: Duration,
    /// How many scrapes of the metrics (and samples of the process) are reduced.
    #[serde(default = "default_scrapes")]
    #[schemars(range(min = 1, max = 1000))]
    pub scrapes: u32,
    /// The time between two scrapes.
    #[serde(default = "default_scrape_every")]
    pub every: Duration,
    /// How the scrapes become one value.
    #[serde(default)]
    pub reduce: Reducer,
}

fn default_settle() -> Duration {
    Duration::from_secs(3)
}

fn default_scrapes() -> u32 {
    3
}

fn default_scrape_every() -> Duration {
    Duration::from_millis(400)
}

impl Default for SteadyState {
    fn default() -> Self {
        SteadyState {
            settle: default_settle(),
            scrapes: default_scrapes(),
            every: default_scrape_every(),
            reduce: Reducer::default(),
        }
    }
}

/// How the steady state's scrapes become one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Reducer {
    /// The middle scrape: one allocation burst cannot move it.
    #[default]
    Median,
    /// The mean of the scrapes.
    Mean,
    /// The smallest scrape.
    Min,
    /// The largest scrape.
    Max,
    /// The last scrape.
    Last,
}

impl Reducer {
    /// Its name in a spec (`median`).
    pub fn as_str(self) -> &'static str {
        match self {
            Reducer::Median => "median",
            Reducer::Mean => "mean",
            Reducer::Min => "min",
            Reducer::Max => "max",
            Reducer::Last => "last",
        }
    }

    /// The values reduced to one: median (the middle, or the mean of the two middles), mean,
    /// min, max or last (in the order given). `None` for no values.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(match self {
            Reducer::Median => {
                let n = sorted.len();
                if n % 2 == 1 {
                    sorted[n / 2]
                } else {
                    (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
                }
            }
            Reducer::Mean => sorted.iter().sum::<f64>() / sorted.len() as f64,
            Reducer::Min => sorted[0],
            Reducer::Max => sorted[sorted.len() - 1],
            Reducer::Last => values[values.len() - 1],
        })
    }
}

#[cfg(test)]
mod reducer_tests {
    use super::Reducer;

    #[test]
    fn reducers() {
        let values = [3.0, 1.0, 2.0, 10.0];
        assert_eq!(Reducer::Median.of(&values), Some(2.5));
        assert_eq!(Reducer::Median.of(&values[..3]), Some(2.0));
        assert_eq!(Reducer::Mean.of(&values), Some(4.0));
        assert_eq!(Reducer::Min.of(&values), Some(1.0));
        assert_eq!(Reducer::Last.of(&values), Some(10.0));
        assert_eq!(Reducer::Max.of(&[]), None);
    }
}

/// The pattern a series' name matches (the schema's), for the compiler's diagnostic.
pub const SERIES_NAME_PATTERN: &str = r"^[a-z][a-z0-9_]*$";

/// A series picked from the server's Prometheus metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// The name the series goes by in results, SLOs and `[capacity] memory`: lower-case
    /// letters, digits and `_`, as a variable's.
    #[schemars(regex(pattern = SERIES_NAME_PATTERN), length(max = 64))]
    pub name: String,
    /// The metric name: `suite_memory_split`, read from the target's `metrics` at the steady
    /// state. Exactly one of `metric` and `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// A command whose output is one number, run `every` while the load runs (a SQL count
    /// through `psql -Atc`, a queue's depth), its readings reduced like scrapes. Placeholders:
    /// `{port}`, `{port.NAME}`, `{headroom}`, `{env:NAME}`, variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    /// How often the command runs during the load (`sample_every` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Duration>,
    /// Labels the sample must carry: `{ segment = "heap" }`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// What the values are; taken from the metric's name (`_bytes`, `_seconds`) by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<SeriesUnit>,
    /// Which way is better, for `headroom compare` (`"lower"` for a cache's misses, `"higher"`
    /// for its hits); a series without it is not compared, and the comparison says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
}

/// Which way of a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    /// Less is better (memory, misses, a queue's depth).
    Lower,
    /// More is better (hits, messages delivered).
    Higher,
}

/// What a `[measure]` series counts, when its name does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SeriesUnit {
    /// Bytes (a memory gauge).
    Bytes,
    /// Seconds.
    Seconds,
    /// A plain count.
    Count,
}

impl Series {
    /// The unit as given, or as the metric's name says.
    pub fn effective_unit(&self) -> SeriesUnit {
        let metric = self.metric.as_deref().unwrap_or_default();
        self.unit.unwrap_or(if metric.ends_with("_bytes") {
            SeriesUnit::Bytes
        } else if metric.ends_with("_seconds") {
            SeriesUnit::Seconds
        } else {
            SeriesUnit::Count
        })
    }
}

/// The values `[measure]` takes when a spec leaves a key out.
pub struct MeasureDefaults;

impl MeasureDefaults {
    /// How often the server's process is read during the load.
    pub const SAMPLE_EVERY: Duration = Duration::from_millis(500);
}
