//! The server's process tree from /proc: every process of its process group, so workers it
//! forks count too.

use procfs::process::all_processes;

/// RSS and CPU time of a process group at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    pub rss_bytes: u64,
    /// user + system, in seconds.
    pub cpu_s: f64,
    pub processes: u32,
}

/// The group's RSS and CPU time now, or why it could not be read: /proc not listed (a process
/// out of file descriptors cannot open it), or no process of the group found. A reading that
/// failed is not a reading of 0 bytes.
pub fn read_group(group: i32) -> Result<Reading, String> {
    let page = procfs::page_size();
    let ticks = procfs::ticks_per_second() as f64;
    let mut reading = Reading::default();
    let processes = all_processes().map_err(|e| format!("cannot list /proc: {e}"))?;
    for process in processes.flatten() {
        let Ok(stat) = process.stat() else { continue };
        if stat.pgrp != group {
            continue;
        }
        reading.rss_bytes += stat.rss * page;
        reading.cpu_s += (stat.utime + stat.stime) as f64 / ticks;
        reading.processes += 1;
    }
    if reading.processes == 0 {
        return Err(format!("no process of group {group} in /proc"));
    }
    Ok(reading)
}

/// This process's CPU time (user + system) in seconds: the generator's own cost.
pub fn own_cpu_s() -> f64 {
    procfs::process::Process::myself()
        .and_then(|p| p.stat())
        .map_or(0.0, |s| {
            (s.utime + s.stime) as f64 / procfs::ticks_per_second() as f64
        })
}
