//! cgroup v2: the unified hierarchy. The run's cgroup is a child of this process's cgroup, with
//! the `cpu` and `memory` (and, to pin, `cpuset`) controllers enabled for children.

use super::{
    Cgroup, Counters, Hierarchy, PERIOD_US, Shape, keyed, make_dir, number, quota_us, text, v1,
    write,
};
use headroom_results::CgroupVersion;
use procfs::ProcessCGroups;
use procfs::process::MountInfos;
use std::io;
use std::path::Path;

/// This process's cgroup in the unified hierarchy, when it has the `cpu` and `memory`
/// controllers.
pub(super) fn find(mounts: &MountInfos, groups: &ProcessCGroups) -> Result<Hierarchy, String> {
    let mount = mounts
        .iter()
        .find(|m| m.fs_type == "cgroup2")
        .ok_or("cgroup v2: no unified hierarchy is mounted")?;
    let group = groups
        .0
        .iter()
        .find(|g| g.hierarchy == 0)
        .ok_or("cgroup v2: this process has no cgroup in the unified hierarchy")?;
    let parent = v1::under_mount(&mount.mount_point, &mount.root, &group.pathname);
    let controllers = text(&parent, "cgroup.controllers");
    let has = |name: &str| controllers.split_whitespace().any(|c| c == name);
    if !(has("cpu") && has("memory")) {
        return Err(format!(
            "cgroup v2 at {} has the controllers [{}], not cpu and memory (they are bound to cgroup v1 hierarchies, or not delegated)",
            parent.display(),
            controllers.trim()
        ));
    }
    Ok(Hierarchy::V2 { parent })
}

/// Whether `parent` offers `controller` to its children.
pub(super) fn has_controller(parent: &Path, controller: &str) -> bool {
    text(parent, "cgroup.controllers")
        .split_whitespace()
        .any(|c| c == controller)
}

pub(super) fn create(parent: &Path, name: &str, shape: &Shape) -> io::Result<Cgroup> {
    enable(parent, shape.cpuset.is_some())?;
    let dir = parent.join(name);
    make_dir(&dir)?;
    let mut cgroup = Cgroup {
        version: CgroupVersion::V2,
        dirs: vec![dir.clone()],
        swap_off: false,
        removed: false,
    };
    let quota = shape
        .cpus
        .map_or("max".to_owned(), |cpus| quota_us(cpus).to_string());
    write(&dir, "cpu.max", &format!("{quota} {PERIOD_US}"))?;
    if let Some(bytes) = shape.memory_bytes {
        write(&dir, "memory.max", &bytes.to_string())?;
        // Absent without swap accounting.
        if dir.join("memory.swap.max").exists() {
            write(&dir, "memory.swap.max", "0")?;
            cgroup.swap_off = true;
        }
    }
    if let Some(cpus) = &shape.cpuset {
        write(&dir, "cpuset.cpus", cpus)?;
    }
    Ok(cgroup)
}

/// Enables the controllers a run's cgroup needs in `parent`'s `cgroup.subtree_control`, unless
/// they are on. A cgroup other than the root that holds processes cannot (the kernel's "no
/// internal processes" rule): the error says so.
fn enable(parent: &Path, pin: bool) -> io::Result<()> {
    let enabled = text(parent, "cgroup.subtree_control");
    let wanted: Vec<&str> = ["cpu", "memory"]
        .into_iter()
        .chain(pin.then_some("cpuset"))
        .filter(|c| !enabled.split_whitespace().any(|e| e == *c))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let line: Vec<String> = wanted.iter().map(|c| format!("+{c}")).collect();
    write(parent, "cgroup.subtree_control", &line.join(" ")).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("{e} (a cgroup v2 that holds processes cannot give controllers to children: run headroom in a cgroup of its own, e.g. `systemd-run --user --scope -p Delegate=yes headroom run …`)"),
        )
    })
}

/// Throttling from `cpu.stat`, the peak from `memory.peak`, OOM kills from `memory.events`.
pub(super) fn counters(dir: &Path) -> Counters {
    let stat = text(dir, "cpu.stat");
    Counters {
        cpu_periods: keyed(&stat, "nr_periods").unwrap_or(0),
        throttled_periods: keyed(&stat, "nr_throttled").unwrap_or(0),
        throttled_s: keyed(&stat, "throttled_usec").unwrap_or(0) as f64 / 1e6,
        memory_peak_bytes: number(dir, "memory.peak"),
        oom_kills: keyed(&text(dir, "memory.events"), "oom_kill").unwrap_or(0),
    }
}
