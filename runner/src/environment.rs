//! The machine a run happened on, so a result can be read in its context.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// The CPU's model name, from /proc/cpuinfo (empty when it names none).
    pub cpu_model: String,
    /// Logical cores the machine has.
    pub logical_cores: usize,
    /// The machine's memory, in bytes.
    pub memory_bytes: u64,
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

pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Environment {
    pub fn read(headroom_version: &str, target_dir: &Path) -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| {
                l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
            })
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_else(|| "unknown".to_owned());
        let memory_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_owned();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(0, |kib| kib * 1024);
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| k.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        Environment {
            cpu_model,
            logical_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
            kernel,
            headroom_version: headroom_version.to_owned(),
            target_revision: revision(target_dir),
        }
    }
}

fn revision(dir: &Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
