//! The instance shape a run's target ran in: the cgroup limits applied, and what the kernel
//! counted against them (throttling, the memory peak, OOM kills), or that they were ignored.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a run's `[target] limits` were carried out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunLimits {
    /// The target ran in a cgroup made for this run with these limits.
    Applied(AppliedLimits),
    /// `--ignore-limits`: the target ran with the whole machine's CPUs and memory.
    Ignored,
}

/// Which cgroup hierarchy held the run's cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    /// cgroup v1: a hierarchy per controller (`cpu`, `cpuset`, `memory`).
    V1,
    /// cgroup v2: the unified hierarchy.
    V2,
}

impl CgroupVersion {
    /// `cgroup v1` or `cgroup v2`, as the table and the page write it.
    pub fn name(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "cgroup v1",
            CgroupVersion::V2 => "cgroup v2",
        }
    }
}

/// The limits one run's target ran under, and the kernel's counters read back after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppliedLimits {
    /// The hierarchy the cgroup was made in.
    pub cgroup: CgroupVersion,
    /// The CPU quota, in CPUs (a quota of `cpus` × the period in every period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// The cores the target was pinned to (`cpuset.cpus`, `"1"` or `"2-3"`), with `pin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_cpus: Option<String>,
    /// The memory limit, in bytes; above it the kernel kills the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Whether swap was shut off for the target (memory + swap limited to the memory limit);
    /// false where the kernel has no swap accounting.
    pub swap_off: bool,
    /// CPU periods (100 ms each) in which the target was runnable.
    pub cpu_periods: u64,
    /// Periods in which the target used its whole quota and was stopped until the next.
    pub throttled_periods: u64,
    /// Seconds the target spent stopped by its quota.
    pub throttled_s: f64,
    /// The most memory the cgroup held at once, in bytes (page cache included); absent where
    /// the kernel does not count it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<u64>,
    /// Processes of the target the kernel killed for going over the memory limit.
    pub oom_kills: u64,
}

impl AppliedLimits {
    /// The shape in words: `0.5 CPU, 2GiB memory, no swap (cgroup v1, pinned to cores 1)`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(cpus) = self.cpus {
            parts.push(format!("{cpus} CPU"));
        }
        if let Some(bytes) = self.memory_bytes {
            let swap = if self.swap_off { ", no swap" } else { "" };
            parts.push(format!(
                "{} memory{swap}",
                headroom_spec::Size::from_bytes(bytes)
            ));
        }
        let pinned = self
            .pinned_cpus
            .as_ref()
            .map_or(String::new(), |cpus| format!(", pinned to cores {cpus}"));
        if parts.is_empty() {
            parts.push("no CPU or memory limit".to_owned());
        }
        format!("{} ({}{pinned})", parts.join(", "), self.cgroup.name())
    }

    /// The share of CPU periods the quota stopped the target in, 0 to 1; `None` when it never
    /// ran a whole period.
    pub fn throttled_share(&self) -> Option<f64> {
        (self.cpu_periods > 0).then(|| self.throttled_periods as f64 / self.cpu_periods as f64)
    }
}
