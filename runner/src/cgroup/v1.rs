//! cgroup v1: a hierarchy per controller. The run's cgroup is a folder of the same name under
//! this process's cgroup in the `cpu`, `memory` and (to pin) `cpuset` hierarchies.

use super::{
    Cgroup, Counters, Hierarchy, PERIOD_US, Shape, keyed, make_dir, number, quota_us, text, write,
};
use headroom_results::CgroupVersion;
use procfs::ProcessCGroups;
use procfs::process::MountInfos;
use std::io;
use std::path::{Path, PathBuf};

/// This process's cgroup folder in each v1 hierarchy headroom uses.
pub(super) fn find(mounts: &MountInfos, groups: &ProcessCGroups) -> Result<Hierarchy, String> {
    let folder = |controller: &str| -> Option<PathBuf> {
        let mount = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.contains_key(controller))?;
        let group = groups
            .0
            .iter()
            .find(|g| g.hierarchy != 0 && g.controllers.iter().any(|c| c == controller))?;
        Some(under_mount(
            &mount.mount_point,
            &mount.root,
            &group.pathname,
        ))
    };
    let missing = |controller: &str| {
        format!("cgroup v1: no `{controller}` hierarchy is mounted for this process")
    };
    Ok(Hierarchy::V1 {
        cpu: folder("cpu").ok_or_else(|| missing("cpu"))?,
        memory: folder("memory").ok_or_else(|| missing("memory"))?,
        cpuset: folder("cpuset"),
    })
}

/// The folder of cgroup `path` in a hierarchy mounted at `mount_point` from its `root`.
pub(super) fn under_mount(mount_point: &Path, root: &str, path: &str) -> PathBuf {
    let inside = path
        .strip_prefix(root.trim_end_matches('/'))
        .unwrap_or(path)
        .trim_start_matches('/');
    if inside.is_empty() {
        mount_point.to_path_buf()
    } else {
        mount_point.join(inside)
    }
}

pub(super) fn create(
    cpu: &Path,
    memory: &Path,
    cpuset: Option<&Path>,
    name: &str,
    shape: &Shape,
) -> io::Result<Cgroup> {
    let mut cgroup = Cgroup {
        version: CgroupVersion::V1,
        dirs: Vec::new(),
        swap_off: false,
        removed: false,
    };
    // Each folder joins `dirs` as soon as it exists: an error removes what was made.
    let cpu_dir = cpu.join(name);
    make_dir(&cpu_dir)?;
    cgroup.dirs.push(cpu_dir.clone());
    write(&cpu_dir, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
    if let Some(cpus) = shape.cpus {
        write(&cpu_dir, "cpu.cfs_quota_us", &quota_us(cpus).to_string())?;
    }
    let memory_dir = memory.join(name);
    make_dir(&memory_dir)?;
    cgroup.dirs.push(memory_dir.clone());
    if let Some(bytes) = shape.memory_bytes {
        write(&memory_dir, "memory.limit_in_bytes", &bytes.to_string())?;
        // memory + swap at the same limit: no swap. Absent without swap accounting.
        if memory_dir.join("memory.memsw.limit_in_bytes").exists() {
            write(
                &memory_dir,
                "memory.memsw.limit_in_bytes",
                &bytes.to_string(),
            )?;
            cgroup.swap_off = true;
        }
    }
    if let Some(cpus) = &shape.cpuset {
        let Some(cpuset) = cpuset else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "`pin` needs the cpuset controller, and no cpuset hierarchy is mounted",
            ));
        };
        let dir = cpuset.join(name);
        make_dir(&dir)?;
        cgroup.dirs.push(dir.clone());
        // A v1 cpuset takes no process until it has memory nodes: the parent's.
        let mems = text(cpuset, "cpuset.mems");
        write(&dir, "cpuset.mems", mems.trim())?;
        write(&dir, "cpuset.cpus", cpus)?;
    }
    Ok(cgroup)
}

/// Throttling from the `cpu` folder, the peak and OOM kills from the `memory` one.
pub(super) fn counters(dirs: &[PathBuf]) -> Counters {
    let mut counters = Counters::default();
    for dir in dirs {
        if dir.join("cpu.stat").exists() {
            let stat = text(dir, "cpu.stat");
            counters.cpu_periods = keyed(&stat, "nr_periods").unwrap_or(0);
            counters.throttled_periods = keyed(&stat, "nr_throttled").unwrap_or(0);
            counters.throttled_s = keyed(&stat, "throttled_time").unwrap_or(0) as f64 / 1e9;
        }
        if dir.join("memory.oom_control").exists() {
            counters.memory_peak_bytes = number(dir, "memory.max_usage_in_bytes");
            counters.oom_kills = keyed(&text(dir, "memory.oom_control"), "oom_kill").unwrap_or(0);
        }
    }
    counters
}
