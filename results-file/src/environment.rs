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

/// What the machine's CPUs did over a run's hold besides the target and this headroom: the
/// share another process or the hypervisor took, which a server's figures silently pay for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MachineCpu {
    /// Cores other processes used: the machine's user and system time (/proc/stat) less the
    /// target's (its services' on a stack) and this headroom's own.
    pub others_cores: f64,
    /// Cores the hypervisor gave to others while this machine's vCPUs wanted to run (`steal`
    /// in /proc/stat).
    pub stolen_cores: f64,
    /// Other processes' cores from which the run competed: an eighth of the machine's cores,
    /// at least [`Self::OTHERS_NOTABLE`] (0.25 in files written before it was scaled).
    #[serde(default = "others_notable")]
    pub notable_others_cores: f64,
}

fn others_notable() -> f64 {
    MachineCpu::OTHERS_NOTABLE
}

impl Default for MachineCpu {
    fn default() -> Self {
        MachineCpu {
            others_cores: 0.0,
            stolen_cores: 0.0,
            notable_others_cores: Self::OTHERS_NOTABLE,
        }
    }
}

impl MachineCpu {
    /// Other processes' cores from which a run competed, on a machine of up to two cores.
    pub const OTHERS_NOTABLE: f64 = 0.25;
    /// Stolen cores from which a run's figures carry a caveat.
    pub const STOLEN_NOTABLE: f64 = 0.1;

    /// The other processes' cores from which a run on a machine of `cores` competed: an
    /// eighth of them, at least [`Self::OTHERS_NOTABLE`] (0.25 of 2 cores, 1 of 8).
    pub fn notable_on(cores: usize) -> f64 {
        (cores as f64 / 8.0).max(Self::OTHERS_NOTABLE)
    }

    /// Whether other work on the machine took enough of it to say so beside the figures, and
    /// to run the run again (or judge nothing on it).
    pub fn competed(&self) -> bool {
        self.others_cores >= self.notable_others_cores || self.stolen_cores >= Self::STOLEN_NOTABLE
    }

    /// Whether other processes (not the hypervisor, whose steal is the VM's lot, not a
    /// neighbour that ends) took enough of the machine for the run to be run again, and a
    /// verdict resting on it withheld.
    pub fn others_competed(&self) -> bool {
        self.others_cores >= self.notable_others_cores
    }

    /// `other processes used 0.93 cores` / `the hypervisor took 0.21 cores`, both when both.
    pub fn describe(&self) -> String {
        let mut said = Vec::new();
        if self.others_cores >= self.notable_others_cores {
            said.push(format!(
                "other processes used {:.2} cores",
                self.others_cores
            ));
        }
        if self.stolen_cores >= Self::STOLEN_NOTABLE {
            said.push(format!(
                "the hypervisor took {:.2} cores",
                self.stolen_cores
            ));
        }
        said.join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Other work is said from 0.25 cores of other processes or 0.1 stolen, each by name.
    #[test]
    fn other_work_is_said_from_its_thresholds() {
        let quiet = MachineCpu {
            others_cores: 0.24,
            stolen_cores: 0.09,
            ..MachineCpu::default()
        };
        assert!(!quiet.competed());
        let busy = MachineCpu {
            others_cores: 0.93,
            ..quiet
        };
        assert!(busy.competed());
        assert_eq!(busy.describe(), "other processes used 0.93 cores");
        let stolen = MachineCpu {
            stolen_cores: 0.21,
            ..busy
        };
        assert_eq!(
            stolen.describe(),
            "other processes used 0.93 cores and the hypervisor took 0.21 cores"
        );
    }
}
