//! The machine a run happened on, so a result can be read in its context.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The machine the runs ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// The CPU's model name, from /proc/cpuinfo (empty when it names none).
    pub cpu_model: String,
    /// Logical cores the machine has; absent when they could not be read (never 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_cores: Option<usize>,
    /// The machine's memory, in bytes; absent when /proc/meminfo could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// The headroom that ran.
    pub headroom_version: String,
    /// The git revision of the target's working directory, when it is a checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_revision: Option<String>,
}

/// The 1-minute load average seen during a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadAverage {
    /// The lowest seen.
    pub min: f64,
    /// The highest seen.
    pub max: f64,
}

impl LoadAverage {
    /// Takes a reading into the range; `first` starts it.
    pub fn observe(&mut self, value: f64, first: bool) {
        if first {
            *self = LoadAverage {
                min: value,
                max: value,
            };
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
    }
}
