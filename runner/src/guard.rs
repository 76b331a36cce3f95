//! Nothing outlives a run: a guard process beside each started target kills its process group,
//! the processes it left in sessions of their own, and the run's cgroups when headroom dies.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::{Pid, Signal};

/// SIGKILL to each of `pids` (pid, start time) still there: a pid reused by another process
/// since (its start time differs) is left alone.
pub(crate) fn kill_pids(pids: &[(i32, u64)]) {
    for (pid, start) in pids {
        let same = procfs::process::Process::new(*pid)
            .and_then(|process| process.stat())
            .is_ok_and(|stat| stat.starttime == *start);
        if let (true, Some(pid)) = (same, Pid::from_raw(*pid)) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
}

/// Starts `headroom guard-group GROUP PID` beside the target, in a process group of its own
/// (outside the target's, so it is never sampled as the server). The kernel kills the target's
/// direct child when headroom dies (`PR_SET_PDEATHSIG`), but not what that child forked; the
/// guard kills the whole group, and removes the run's cgroup folders. `None` when it cannot
/// start (the run goes on unguarded).
pub(crate) fn spawn_guard(
    headroom_bin: &Path,
    group: Pid,
    cgroup_dirs: &[PathBuf],
) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(headroom_bin)
        .args([
            "guard-group",
            &group.as_raw_nonzero().to_string(),
            &std::process::id().to_string(),
        ])
        .args(cgroup_dirs)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

/// The guard's loop: while `parent` (headroom) lives and the group exists, wait; when headroom
/// is gone (this process was re-parented), SIGKILL the whole group and remove the run's cgroup
/// folders `cgroup_dirs`. Polls every 100 ms, a few microseconds of CPU each time.
pub fn guard_group(group: i32, parent: u32, cgroup_dirs: &[PathBuf]) {
    let Some(leader) = Pid::from_raw(group) else {
        return;
    };
    // The target's processes outside its group (a worker in a session of its own), as last
    // seen: re-read every second, since once the leader dies they can no longer be traced.
    let mut tree = Vec::new();
    for poll in 0u64.. {
        if rustix::process::test_kill_process_group(leader).is_err() {
            // The target is gone; so is headroom when this was re-parented: its cgroup too.
            if std::os::unix::process::parent_id() != parent {
                kill_pids(&tree);
                remove_cgroups(cgroup_dirs);
            }
            return;
        }
        if std::os::unix::process::parent_id() != parent {
            tree.extend(crate::sample::tree_pids(group));
            let _ = rustix::process::kill_process_group(leader, Signal::KILL);
            kill_pids(&tree);
            remove_cgroups(cgroup_dirs);
            return;
        }
        if poll % 10 == 0 {
            tree = crate::sample::tree_pids(group);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Removes the cgroup folders of a run whose headroom is gone.
fn remove_cgroups(dirs: &[PathBuf]) {
    for dir in dirs {
        let _ = crate::cgroup::remove_dir(dir);
    }
}
