//! A cgroup per run: the target's CPUs and memory held to an instance's shape, the kernel's
//! counters read back after the run, the cgroup removed.
//!
//! Two backends, one picked by [`detect`]: cgroup v2 (the unified hierarchy, where it has the
//! `cpu` and `memory` controllers: `cpu.max`, `memory.max`, `memory.swap.max`, `cpuset.cpus`)
//! and cgroup v1 (a hierarchy per controller: `cpu.cfs_quota_us`, `memory.limit_in_bytes`,
//! `memory.memsw.limit_in_bytes`, `cpuset.cpus`). The target joins its cgroup between fork and
//! exec (it writes `0`, "this process", to each `cgroup.procs`), so its start-up counts.
//!
//! **Nothing outlives a run:** a [`Cgroup`] removes its directories when dropped (killing what
//! is left in them); the guard process removes them when headroom itself is killed; and every
//! run first removes the cgroups of headroom runs that are gone ([`Hierarchy::clean_stale`]):
//! their names carry the owner's pid and start time.

#[cfg(test)]
mod tests;
mod v1;
mod v2;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use headroom_results::CgroupVersion;

/// The CPU period quotas are counted in: 100 ms, the kernel's default.
pub const PERIOD_US: u64 = 100_000;
/// What every cgroup headroom makes is named after.
const PREFIX: &str = "headroom-";

/// Where this process may make cgroups.
#[derive(Debug, Clone, PartialEq)]
pub enum Hierarchy {
    /// cgroup v1: the folder of this process's cgroup in each controller's hierarchy;
    /// `cpuset` only where that controller is mounted (pinning needs it).
    V1 {
        /// Under the `cpu` controller.
        cpu: PathBuf,
        /// Under the `memory` controller.
        memory: PathBuf,
        /// Under the `cpuset` controller.
        cpuset: Option<PathBuf>,
    },
    /// cgroup v2: the folder new cgroups are made in.
    V2 {
        /// This process's cgroup (or the root) in the unified hierarchy.
        parent: PathBuf,
    },
}

/// The instance shape one run's target gets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// A CPU quota, in CPUs.
    pub cpus: Option<f64>,
    /// A memory limit, in bytes; swap is shut off with it.
    pub memory_bytes: Option<u64>,
    /// Cores to pin to (`"1"`, `"2-3"`).
    pub cpuset: Option<String>,
}

/// What the kernel counted against a cgroup's limits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// Periods in which the cgroup was runnable.
    pub cpu_periods: u64,
    /// Periods it spent its whole quota in.
    pub throttled_periods: u64,
    /// Seconds it was stopped by its quota.
    pub throttled_s: f64,
    /// The most memory it held at once, in bytes.
    pub memory_peak_bytes: Option<u64>,
    /// Its processes the kernel killed for going over the memory limit.
    pub oom_kills: u64,
}

/// One run's cgroup: made with its shape, joined by the target, removed when dropped.
#[derive(Debug)]
pub struct Cgroup {
    version: CgroupVersion,
    /// One folder per hierarchy (v1: cpu, memory and maybe cpuset; v2: one).
    dirs: Vec<PathBuf>,
    swap_off: bool,
    removed: bool,
}

/// Finds the hierarchy this process may make cgroups in, or says why there is none and what to
/// do. v2 where the unified hierarchy has the `cpu` and `memory` controllers, v1 otherwise;
/// either is tried (a cgroup made and removed) before it is picked.
pub fn detect() -> Result<Hierarchy, String> {
    let myself = procfs::process::Process::myself()
        .map_err(|e| format!("cannot read this process in /proc: {e}"))?;
    let mounts = myself
        .mountinfo()
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let groups = myself
        .cgroups()
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    detect_in(&mounts, &groups)
}

/// [`detect`] over a mount table and a cgroup membership, as /proc gives them.
fn detect_in(
    mounts: &procfs::process::MountInfos,
    groups: &procfs::ProcessCGroups,
) -> Result<Hierarchy, String> {
    let mut reasons = Vec::new();
    let candidates = [v2::find(mounts, groups), v1::find(mounts, groups)];
    for candidate in candidates {
        match candidate.and_then(|hierarchy| hierarchy.try_writing().map(|()| hierarchy)) {
            Ok(hierarchy) => return Ok(hierarchy),
            Err(why) => reasons.push(why),
        }
    }
    Err(format!(
        "no cgroup this process may write, so `[target] limits` cannot be applied: {}. Run headroom as root (or, with systemd, under `systemd-run --user --scope -p Delegate=yes`), in a container started with a writable cgroup (`--cgroupns=private` and a writable /sys/fs/cgroup), or pass --ignore-limits to run with the whole machine and say so",
        reasons.join("; ")
    ))
}

impl Hierarchy {
    /// `v1` or `v2`.
    pub fn version(&self) -> CgroupVersion {
        match self {
            Hierarchy::V1 { .. } => CgroupVersion::V1,
            Hierarchy::V2 { .. } => CgroupVersion::V2,
        }
    }

    /// The version and where, in words: `cgroup v1 (cpu: /sys/fs/cgroup/cpu, …)`.
    pub fn describe(&self) -> String {
        match self {
            Hierarchy::V1 {
                cpu,
                memory,
                cpuset,
            } => format!(
                "cgroup v1 (cpu: {}, memory: {}, cpuset: {})",
                cpu.display(),
                memory.display(),
                cpuset
                    .as_deref()
                    .map_or("not mounted".to_owned(), |p| p.display().to_string())
            ),
            Hierarchy::V2 { parent } => format!("cgroup v2 ({})", parent.display()),
        }
    }

    /// Whether pinning can be carried out here.
    pub fn can_pin(&self) -> bool {
        match self {
            Hierarchy::V1 { cpuset, .. } => cpuset.is_some(),
            Hierarchy::V2 { parent } => v2::has_controller(parent, "cpuset"),
        }
    }

    /// The folders headroom's cgroups are made in.
    fn parents(&self) -> Vec<&Path> {
        match self {
            Hierarchy::V1 {
                cpu,
                memory,
                cpuset,
            } => [
                Some(cpu.as_path()),
                Some(memory.as_path()),
                cpuset.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Hierarchy::V2 { parent } => vec![parent.as_path()],
        }
    }

    /// Makes and removes an empty cgroup: the proof that this hierarchy is writable.
    fn try_writing(&self) -> Result<(), String> {
        let name = format!("{PREFIX}{}-probe", owner_tag());
        match self.create(&name, &Shape::default()) {
            Ok(mut cgroup) => cgroup
                .remove()
                .map_err(|e| format!("{}: cannot remove a cgroup: {e}", self.describe())),
            Err(e) => Err(format!("{}: {e}", self.describe())),
        }
    }

    /// Makes the cgroup `name` with `shape`; what was made is removed again on an error.
    pub fn create(&self, name: &str, shape: &Shape) -> io::Result<Cgroup> {
        match self {
            Hierarchy::V1 {
                cpu,
                memory,
                cpuset,
            } => v1::create(cpu, memory, cpuset.as_deref(), name, shape),
            Hierarchy::V2 { parent } => v2::create(parent, name, shape),
        }
    }

    /// Removes the cgroups of headroom runs that are gone (killed with SIGKILL before their
    /// guard could clean up); their names, removed.
    pub fn clean_stale(&self) -> Vec<String> {
        let mut removed = Vec::new();
        for parent in self.parents() {
            let Ok(entries) = std::fs::read_dir(parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if is_stale(&name) && remove_dir(&entry.path()).is_ok() {
                    removed.push(name);
                }
            }
        }
        removed.sort();
        removed.dedup();
        removed
    }
}

/// `PID-STARTTIME` of this process: what its cgroups' names carry, so a later run can tell a
/// live owner from a pid that was reused.
pub fn owner_tag() -> String {
    let start = procfs::process::Process::myself()
        .and_then(|p| p.stat())
        .map_or(0, |s| s.starttime);
    format!("{}-{start}", std::process::id())
}

/// The name of this process's cgroup for its run number `run`.
pub fn run_name(run: usize) -> String {
    format!("{PREFIX}{}-{run}", owner_tag())
}

/// Whether `name` is a cgroup headroom made whose owner is no longer running.
fn is_stale(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<i32>(), start.parse::<u64>()) else {
        return false;
    };
    match procfs::process::Process::new(pid).and_then(|p| p.stat()) {
        Ok(stat) => stat.starttime != start,
        Err(_) => true,
    }
}

impl Cgroup {
    /// Its hierarchy's version.
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// Its folders, one per hierarchy.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Whether swap is shut off (memory + swap limited to the memory limit).
    pub fn swap_off(&self) -> bool {
        self.swap_off
    }

    /// Each folder's `cgroup.procs`, open for writing: the target writes `0` to each between
    /// fork and exec. Opened here (close-on-exec) because opening allocates.
    pub fn join_files(&self) -> io::Result<Vec<File>> {
        self.dirs
            .iter()
            .map(|dir| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
            })
            .collect()
    }

    /// What the kernel counted: throttling, the memory peak, OOM kills.
    pub fn counters(&self) -> Counters {
        match self.version {
            CgroupVersion::V1 => v1::counters(&self.dirs),
            CgroupVersion::V2 => v2::counters(&self.dirs[0]),
        }
    }

    /// Kills what is left in it and removes its folders.
    pub fn remove(&mut self) -> io::Result<()> {
        if self.removed {
            return Ok(());
        }
        let mut first_error = None;
        for dir in &self.dirs {
            if let Err(e) = remove_dir(dir)
                && first_error.is_none()
            {
                first_error = Some(e);
            }
        }
        self.removed = true;
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Kills every process still in the cgroup folder `dir`, waits for it to empty (2 s at most),
/// and removes it. A folder already gone is removed.
pub fn remove_dir(dir: &Path) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Writes `value` to the control file `file` of `dir`, the file named in the error.
fn write(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    let path = dir.join(file);
    std::fs::write(&path, value).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write {value:?} to {}: {e}", path.display()),
        )
    })
}

/// `key value` lines (`cpu.stat`, `memory.events`, `memory.oom_control`): the value of `key`.
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// A control file's number, when it holds one.
fn number(dir: &Path, file: &str) -> Option<u64> {
    std::fs::read_to_string(dir.join(file))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `dir`'s control file `file`, empty when it cannot be read.
fn text(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_default()
}

/// The quota for `cpus` CPUs in one period, in microseconds (1 ms at least).
fn quota_us(cpus: f64) -> u64 {
    ((cpus * PERIOD_US as f64).round() as u64).max(1_000)
}

/// Makes `dir`, or says which folder could not be made.
fn make_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot make {}: {e}", dir.display())))
}

/// Moves the calling process into each cgroup whose `cgroup.procs` is open as `fds` (`0` is
/// "the writer"). Async-signal-safe (a `write` per file, no allocation): it runs between fork
/// and exec, so the target is in its cgroup before its first instruction.
pub fn join(fds: &[std::os::fd::RawFd]) -> io::Result<()> {
    for &fd in fds {
        // SAFETY: the files are open in the parent for as long as the spawn takes.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        rustix::io::write(fd, b"0")?;
    }
    Ok(())
}
