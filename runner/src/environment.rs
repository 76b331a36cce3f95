//! The machine a run happens on, read from /proc so a result can be read in its context.

use std::path::Path;

pub use headroom_results::environment::{Environment, LoadAverage};

/// The 1-minute load average, from /proc/loadavg.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This machine, the headroom that runs, and the target's revision when `target_dir` is a
/// checkout.
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
    let memory_bytes = meminfo().map(|m| m.mem_total);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    Environment {
        cpu_model,
        logical_cores: std::thread::available_parallelism().ok().map(|n| n.get()),
        memory_bytes,
        kernel,
        headroom_version: headroom_version.to_owned(),
        target_revision: revision(target_dir),
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

/// /proc/meminfo (its figures in bytes), when it can be read.
pub(crate) fn meminfo() -> Option<procfs::Meminfo> {
    use procfs::Current;
    procfs::Meminfo::current().ok()
}
