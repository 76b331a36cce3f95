//! The server's process tree from /proc: every process of its process group, so workers it
//! forks count too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use procfs::process::all_processes;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::environment::{LoadAverage, load_average};

use crate::results::ProcessSample;

/// The processes that are one server, sampled together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProcesses {
    /// A server headroom started: the process group it made, and every process descended from
    /// its leader (a server that puts its workers in sessions of their own, as PostgreSQL's
    /// backends do, is read whole).
    Group(i32),
    /// An external server: the pid its `pid_file` names and that pid's descendants, never its
    /// process group (a script that starts the server in the background and then headroom
    /// puts the two in one group).
    Descendants(i32),
}

/// RSS and CPU time of a server's processes at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    /// One process's RSS; of several, the sum of their PSS, shared pages counted once.
    pub rss_bytes: u64,
    /// user + system, in seconds.
    pub cpu_s: f64,
    pub processes: u32,
}

/// The group's RSS and CPU time now, or why it could not be read: /proc not listed (a process
/// out of file descriptors cannot open it), or no process of the group found. A reading that
/// failed is not a reading of 0 bytes. The group is the process group `group` and every
/// process descended from its leader: a server that puts its workers in sessions of their own
/// (PostgreSQL's backends call `setsid`) is read whole.
pub fn read_group(group: ServerProcesses) -> Result<Reading, String> {
    let page = procfs::page_size();
    let ticks = procfs::ticks_per_second() as f64;
    let mut reading = Reading::default();
    let stats = tree(group)?;
    // Of several processes, each one's share of the pages they share (PSS): a database's
    // shared buffers, mapped by every backend, count once, not once per backend. A process
    // gone before its share was read counts its RSS.
    let several = stats.len() > 1;
    for stat in &stats {
        let rss = stat.rss * page;
        reading.rss_bytes += if several {
            pss_bytes(stat.pid).unwrap_or(rss)
        } else {
            rss
        };
        reading.cpu_s += (stat.utime + stat.stime) as f64 / ticks;
        reading.processes += 1;
    }
    if reading.processes == 0 {
        return Err(match group {
            ServerProcesses::Group(group) => format!("no process of group {group} in /proc"),
            ServerProcesses::Descendants(pid) => format!("process {pid} is not in /proc"),
        });
    }
    Ok(reading)
}

/// A process's proportional set size (`Pss:` of /proc/PID/smaps_rollup): its private pages
/// and its share of each page it shares. `None` when it cannot be read (the process exited).
fn pss_bytes(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = text.lines().find(|line| line.starts_with("Pss:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The processes of `server` (a group and every descendant of its leader, or a pid and its
/// descendants), from one listing of /proc.
pub fn tree(server: ServerProcesses) -> Result<Vec<procfs::process::Stat>, String> {
    let processes = all_processes().map_err(|e| format!("cannot list /proc: {e}"))?;
    let stats: Vec<procfs::process::Stat> = processes
        .flatten()
        .filter_map(|process| process.stat().ok())
        .collect();
    let mut members: std::collections::HashSet<i32> = stats
        .iter()
        .filter(|stat| match server {
            ServerProcesses::Group(group) => stat.pgrp == group || stat.pid == group,
            ServerProcesses::Descendants(pid) => stat.pid == pid,
        })
        .map(|stat| stat.pid)
        .collect();
    // Descendants, a generation a pass: a tree is a few levels deep.
    loop {
        let before = members.len();
        for stat in &stats {
            if members.contains(&stat.ppid) {
                members.insert(stat.pid);
            }
        }
        if members.len() == before {
            break;
        }
    }
    Ok(stats
        .into_iter()
        .filter(|stat| members.contains(&stat.pid))
        .collect())
}

/// The processes of [`tree`] as (pid, start time), to kill later; empty when /proc cannot be
/// read.
pub fn tree_pids(group: i32) -> Vec<(i32, u64)> {
    tree(ServerProcesses::Group(group))
        .map(|stats| {
            stats
                .iter()
                .map(|stat| (stat.pid, stat.starttime))
                .collect()
        })
        .unwrap_or_default()
}

/// This process's CPU time (user + system) in seconds: the generator's own cost.
pub fn own_cpu_s() -> f64 {
    procfs::process::Process::myself()
        .and_then(|p| p.stat())
        .map_or(0.0, |s| {
            (s.utime + s.stime) as f64 / procfs::ticks_per_second() as f64
        })
}

/// The machine's CPU time at one instant, and this process's: what else ran beside the target
/// is read from their differences.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MachineReading {
    /// Seconds from the start of the load.
    pub(crate) t_s: f64,
    /// Every CPU's user, nice and system time, in seconds (interrupts left out: a process's own
    /// time does not count them either, and loopback traffic is mostly interrupts).
    pub(crate) busy_s: f64,
    /// Time the hypervisor ran others while this machine's CPUs wanted to run, in seconds.
    pub(crate) stolen_s: f64,
    /// This process's CPU time (the generator, the sampler, the live view), in seconds.
    pub(crate) own_s: f64,
}

/// The machine's CPU time now, from /proc/stat; `None` where it cannot be read, or where the
/// kernel counts no steal time (before Linux 2.6.11): unknown, not none stolen.
pub(crate) fn read_machine(start: Instant) -> Option<MachineReading> {
    use procfs::CurrentSI;
    let stats = procfs::KernelStats::current().ok()?;
    let ticks = procfs::ticks_per_second() as f64;
    let total = &stats.total;
    Some(MachineReading {
        t_s: start.elapsed().as_secs_f64(),
        busy_s: (total.user + total.nice + total.system) as f64 / ticks,
        stolen_s: total.steal? as f64 / ticks,
        own_s: own_cpu_s(),
    })
}

/// The least of a hold that others' share of the machine is read over: /proc/stat counts in
/// hundredths of a second per CPU, so over a second it reads to a hundredth of a core.
const MACHINE_SPAN_S: f64 = 1.0;

/// What others took of the machine over `window`: the counters read at its edges (between the
/// readings around each edge, as the readings come every half second and a hold need not
/// start or end on one), less the target's cores over the hold (`target_cores`). Where the
/// readings start after the window or end before it, over the part they cover. `None` with
/// less than [`MACHINE_SPAN_S`] of readings inside the window. Others' cores never read below
/// 0 (the ticks of /proc/stat and of a process are counted apart, and round apart).
pub(crate) fn machine_cpu_over(
    readings: &[MachineReading],
    window: (f64, f64),
    target_cores: f64,
) -> Option<crate::results::MachineCpu> {
    use crate::results::MachineCpu;
    let (first, last) = (readings.first()?, readings.last()?);
    let (start, end) = (window.0.max(first.t_s), window.1.min(last.t_s));
    let span = end - start;
    // A hold of exactly a second is one: its edges are sums of floats.
    if span < MACHINE_SPAN_S - 1e-6 {
        return None;
    }
    let (before, after) = (reading_at(readings, start)?, reading_at(readings, end)?);
    let cores = |before: f64, after: f64| (after - before) / span;
    let others =
        cores(before.busy_s, after.busy_s) - cores(before.own_s, after.own_s) - target_cores;
    Some(MachineCpu {
        others_cores: (others.max(0.0) * 100.0).round() / 100.0,
        stolen_cores: (cores(before.stolen_s, after.stolen_s).max(0.0) * 100.0).round() / 100.0,
        notable_others_cores: MachineCpu::notable_on(machine_cpus()),
    })
}

/// The counters at `t_s`, read on the line between the readings around it (they only grow);
/// `None` outside the readings.
fn reading_at(readings: &[MachineReading], t_s: f64) -> Option<MachineReading> {
    let after = readings.iter().position(|r| r.t_s >= t_s)?;
    let next = readings[after];
    let Some(previous) = after.checked_sub(1).map(|i| readings[i]) else {
        return Some(next);
    };
    let share = (t_s - previous.t_s) / (next.t_s - previous.t_s);
    let between = |a: f64, b: f64| a + (b - a) * share;
    Some(MachineReading {
        t_s,
        busy_s: between(previous.busy_s, next.busy_s),
        stolen_s: between(previous.stolen_s, next.stolen_s),
        own_s: between(previous.own_s, next.own_s),
    })
}

/// The CPUs /proc/stat counts (every one of the machine's, whatever this process may use);
/// one where it cannot be read.
fn machine_cpus() -> usize {
    use procfs::CurrentSI;
    procfs::KernelStats::current().map_or(1, |stats| stats.cpu_time.len().max(1))
}

/// Readings of each process group during the load (the failed ones counted, not recorded),
/// the machine's CPU time and the load average. Of a stack (named groups), also their sum at
/// each instant.
pub(crate) async fn sampler(
    groups: Vec<(Option<String>, ServerProcesses)>,
    every: Duration,
    start: Instant,
    fresh: Arc<Fresh>,
    mut stop: watch::Receiver<bool>,
) -> (Sampled, LoadAverage) {
    let mut sampled = Sampled::of(groups);
    sampled.fresh = Some(fresh);
    let mut load = LoadAverage::default();
    let mut first = true;
    loop {
        if let Some(value) = load_average() {
            load.observe(value, first);
            first = false;
        }
        sampled.take(start);
        sampled.machine.extend(read_machine(start));
        tokio::select! {
            _ = tokio::time::sleep(every.max(Duration::from_millis(10))) => {}
            _ = stop.changed() => {
                // The machine once more at the load's end, so that others' share covers a
                // hold to its end, whenever the last reading fell.
                sampled.machine.extend(read_machine(start));
                break;
            }
        }
    }
    (sampled, load)
}

/// Readings of several process groups taken together: each group's, and of a stack their sum.
pub(crate) struct Sampled {
    groups: Vec<(Option<String>, ServerProcesses)>,
    previous: Vec<Option<(Instant, f64)>>,
    /// Each group's readings, by service (`None`: the target).
    pub(crate) readings: Vec<(Option<String>, Readings)>,
    /// Of a stack: the sum of every service's reading at each instant; an instant where one
    /// could not be read is a failed reading.
    pub(crate) total: Option<Readings>,
    /// Where each reading also goes as it is taken, for the live view.
    fresh: Option<Arc<Fresh>>,
    /// The machine's CPU time at each reading.
    pub(crate) machine: Vec<MachineReading>,
}

/// Readings taken since the run's watcher last took them, in order: by service (`None`: the
/// target, or a stack's sum).
#[derive(Default)]
pub(crate) struct Fresh(Mutex<Vec<(Option<String>, ProcessSample)>>);

impl Fresh {
    fn add(&self, service: Option<&String>, sample: &ProcessSample) {
        if let Ok(mut fresh) = self.0.lock() {
            fresh.push((service.cloned(), *sample));
        }
    }

    /// The readings since the last call.
    pub(crate) fn take(&self) -> Vec<(Option<String>, ProcessSample)> {
        self.0
            .lock()
            .map(|mut fresh| std::mem::take(&mut *fresh))
            .unwrap_or_default()
    }
}

impl Sampled {
    pub(crate) fn of(groups: Vec<(Option<String>, ServerProcesses)>) -> Sampled {
        let stack = groups.iter().any(|(name, _)| name.is_some());
        Sampled {
            previous: vec![None; groups.len()],
            readings: groups
                .iter()
                .map(|(name, _)| (name.clone(), Readings::default()))
                .collect(),
            total: stack.then(Readings::default),
            groups,
            fresh: None,
            machine: Vec::new(),
        }
    }

    /// One reading of every group, now.
    pub(crate) fn take(&mut self, start: Instant) {
        let mut sum: Result<ProcessSample, String> = Ok(ProcessSample::default());
        for (k, (_, group)) in self.groups.iter().enumerate() {
            let reading = sample_group(*group, start, &mut self.previous[k]);
            sum = match (sum, &reading) {
                (Ok(total), Ok(one)) => Ok(ProcessSample {
                    t_s: one.t_s,
                    rss_bytes: total.rss_bytes + one.rss_bytes,
                    cpu_pct: match (k, total.cpu_pct, one.cpu_pct) {
                        (0, _, cpu) => cpu,
                        (_, Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    },
                    processes: total.processes + one.processes,
                }),
                (Err(why), _) => Err(why),
                (Ok(_), Err(why)) => Err(why.clone()),
            };
            if let (Some(fresh), Ok(sample)) = (&self.fresh, &reading) {
                fresh.add(self.readings[k].0.as_ref(), sample);
            }
            self.readings[k].1.take(reading);
        }
        if let Some(total) = &mut self.total {
            if let (Some(fresh), Ok(sample)) = (&self.fresh, &sum) {
                fresh.add(None, sample);
            }
            total.take(sum);
        }
    }
}

/// Readings of the process group: those that worked, and how many failed and why.
#[derive(Default)]
pub(crate) struct Readings {
    pub(crate) samples: Vec<ProcessSample>,
    pub(crate) failed: u32,
    pub(crate) error: Option<String>,
}

impl Readings {
    pub(crate) fn take(&mut self, reading: Result<ProcessSample, String>) {
        match reading {
            Ok(sample) => self.samples.push(sample),
            Err(why) => {
                self.failed += 1;
                self.error = Some(why);
            }
        }
    }
}

/// One reading of the process group; CPU is the share of one core since `previous`, the last
/// reading that worked. CPU time that went down (a process of the group exited, taking its
/// time with it) measures nothing: `None`, not a negative share.
pub(crate) fn sample_group(
    group: ServerProcesses,
    start: Instant,
    previous: &mut Option<(Instant, f64)>,
) -> Result<ProcessSample, String> {
    let now = Instant::now();
    let reading = read_group(group)?;
    let cpu_pct = previous
        .map(|(at, cpu)| 100.0 * (reading.cpu_s - cpu) / (now - at).as_secs_f64().max(1e-6))
        .filter(|pct| *pct >= 0.0);
    *previous = Some((now, reading.cpu_s));
    Ok(ProcessSample {
        t_s: (now - start).as_secs_f64(),
        rss_bytes: reading.rss_bytes,
        cpu_pct,
        processes: reading.processes,
    })
}

/// The group's CPU use over `window`, in cores: each sample's CPU (since the one before)
/// weighted by the time it covers, over the samples whose interval lies inside the window.
/// `None` with fewer than two such intervals: one reading is not a rate to plan on.
pub(crate) fn cpu_cores_over(samples: &[ProcessSample], window: (f64, f64)) -> Option<f64> {
    let (start, end) = window;
    let (mut busy, mut covered, mut intervals) = (0.0, 0.0, 0);
    for pair in samples.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let Some(pct) = after.cpu_pct else { continue };
        let span = after.t_s - before.t_s;
        if before.t_s >= start && after.t_s <= end && span > 0.0 {
            busy += pct / 100.0 * span;
            covered += span;
            intervals += 1;
        }
    }
    (intervals >= 2 && covered > 0.0).then(|| busy / covered)
}

#[cfg(test)]
mod tests {

    fn sample(t_s: f64, cpu_pct: Option<f64>) -> ProcessSample {
        ProcessSample {
            t_s,
            cpu_pct,
            ..ProcessSample::default()
        }
    }

    /// The hold's CPU is the busy time over the time covered, from the intervals inside the
    /// hold only: the ramps' (10 %, 90 %) do not count.
    #[test]
    fn the_hold_cpu_is_read_from_the_hold_only() {
        let samples = [
            sample(0.0, None),
            sample(1.0, Some(10.0)),
            sample(2.0, Some(40.0)),
            sample(2.5, Some(60.0)),
            sample(3.0, Some(50.0)),
            sample(4.0, Some(90.0)),
        ];
        // 1 s at 0.4, 0.5 s at 0.6, 0.5 s at 0.5: 0.95 core-seconds over 2 s.
        let cores = cpu_cores_over(&samples, (1.0, 3.0)).expect("three intervals");
        assert!((cores - 0.475).abs() < 1e-9, "{cores}");
        // One interval is not enough to call it a rate.
        assert_eq!(cpu_cores_over(&samples, (2.0, 2.6)), None);
    }

    use super::*;

    /// Others' cores are the machine's busy time less this process's and the target's, over
    /// the readings inside the hold; stolen time is read apart.
    #[test]
    fn what_others_took_is_read_over_the_hold() {
        // Two CPUs: the machine busy 1.5 cores, this process 0.25, stolen 0.1, each second.
        let at = |t_s: f64| MachineReading {
            t_s,
            busy_s: 10.0 + 1.5 * t_s,
            stolen_s: 3.0 + 0.1 * t_s,
            own_s: 2.0 + 0.25 * t_s,
        };
        // The second before the hold (11.5 cores by this count) does not count.
        let mut readings = vec![MachineReading {
            busy_s: 0.0,
            ..at(0.0)
        }];
        readings.extend((1..=6).map(|t| at(f64::from(t))));
        let machine = machine_cpu_over(&readings, (1.0, 5.0), 0.5).expect("four seconds");
        assert_eq!(machine.others_cores, 0.75);
        assert_eq!(machine.stolen_cores, 0.1);
        // A target busier than the machine's count (ticks rounded apart): none, not negative.
        let machine = machine_cpu_over(&readings, (1.0, 5.0), 1.4).expect("four seconds");
        assert_eq!(machine.others_cores, 0.0);
        // A hold that starts and ends between readings (every half second, a 2 s hold from
        // 0.02 s): read at its edges, not only over the readings inside it (1 s of them).
        let half_seconds: Vec<MachineReading> = (0..=6).map(|i| at(f64::from(i) * 0.5)).collect();
        let machine = machine_cpu_over(&half_seconds, (0.02, 2.02), 0.5).expect("two seconds");
        assert_eq!(machine.others_cores, 0.75);
        // Half a second of readings is not a share to report; a second is, to its float sum.
        assert_eq!(machine_cpu_over(&readings, (1.0, 1.5), 0.5), None);
        let hold = (0.1 + 0.2, 0.7 + 0.6);
        assert!(hold.1 - hold.0 < 1.0);
        assert!(machine_cpu_over(&readings, hold, 0.5).is_some());
        let machine = machine_cpu_over(&readings, (1.0, 2.0), 0.5).expect("one second");
        assert_eq!(machine.others_cores, 0.75);
        // Readings that end inside the window: over the part they cover.
        let machine = machine_cpu_over(&readings, (2.0, 9.0), 0.5).expect("four seconds");
        assert_eq!(machine.others_cores, 0.75);
        assert_eq!(machine_cpu_over(&[], (1.0, 5.0), 0.5), None);
        // This machine's own /proc/stat reads, and moves forward.
        let start = Instant::now();
        let first = read_machine(start).expect("/proc/stat");
        std::thread::sleep(Duration::from_millis(20));
        let second = read_machine(start).expect("/proc/stat");
        assert!(
            second.t_s > first.t_s && second.busy_s >= first.busy_s,
            "{first:?} {second:?}"
        );
    }

    /// A process group that cannot be read (here: none has this number) gives no sample, not
    /// a sample of 0 bytes and 0 processes; the failure is counted with its reason.
    #[test]
    fn an_unread_group_is_no_sample() {
        let mut previous = None;
        let mut readings = Readings::default();
        readings.take(sample_group(
            ServerProcesses::Group(i32::MAX),
            Instant::now(),
            &mut previous,
        ));
        assert!(readings.samples.is_empty());
        assert_eq!(readings.failed, 1);
        assert_eq!(
            readings.error.as_deref(),
            Some(format!("no process of group {} in /proc", i32::MAX).as_str())
        );
        assert_eq!(previous, None);
        // This test's own group reads: at least one process, and some memory.
        let own = rustix::process::getpgrp().as_raw_nonzero().get();
        let sample = sample_group(ServerProcesses::Group(own), Instant::now(), &mut previous)
            .expect("own group");
        assert!(sample.processes >= 1 && sample.rss_bytes > 0, "{sample:?}");
        assert_eq!(sample.cpu_pct, None);
    }

    /// An external server is its pid and that pid's descendants, never its process group: a
    /// child started here, in this test's group, reads as itself alone; this process's tree
    /// holds the child.
    #[test]
    fn an_external_server_is_its_pid_and_descendants_not_its_group() {
        let own = i32::try_from(std::process::id()).expect("a pid");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let child_pid = i32::try_from(child.id()).expect("a pid");
        let of_child = tree(ServerProcesses::Descendants(child_pid)).expect("/proc");
        let pids: Vec<i32> = of_child.iter().map(|stat| stat.pid).collect();
        assert_eq!(pids, vec![child_pid], "the child alone, not its group");
        let of_own = tree(ServerProcesses::Descendants(own)).expect("/proc");
        assert!(of_own.iter().any(|stat| stat.pid == child_pid));
        assert!(of_own.iter().any(|stat| stat.pid == own));
        let _ = child.kill();
        let _ = child.wait();
        let gone = sample_group(
            ServerProcesses::Descendants(child_pid),
            Instant::now(),
            &mut None,
        );
        assert_eq!(
            gone.expect_err("an exited pid is no sample"),
            format!("process {child_pid} is not in /proc")
        );
    }
}
