//! `[target] limits` carried out: checked against this machine before the first point, a
//! cgroup per run in the shape of the point's limits, and with `pin` the generator kept on the
//! cores the target is not pinned to.

use headroom_matrix::resolved::Limits;
use headroom_matrix::{MatrixPhase, Point};
use headroom_results::{AppliedLimits, RunLimits};

use crate::cgroup::{self, Cgroup, Counters, Hierarchy, Shape};

/// What a run under `--ignore-limits` says: its figures are the machine's, not the limits'.
pub const LIMITS_IGNORED: &str = "[target] limits were ignored (--ignore-limits): the target ran with the whole machine's CPUs and memory, not the instance size the limits describe";

/// How this run carries out the limits of its points.
#[derive(Debug)]
pub(crate) enum Emulation {
    /// No point sets limits.
    Unlimited,
    /// `--ignore-limits`: every target runs with the whole machine, and the results say so.
    Ignored,
    /// A cgroup per run, in `hierarchy`; `cores` are the CPUs this process may run on.
    Cgroups {
        hierarchy: Hierarchy,
        cores: Vec<usize>,
    },
}

/// One run's cgroup and what it means for the generator.
pub(crate) struct RunShape {
    pub shape: Shape,
    /// The cores left to the generator beside the target.
    pub cores_left: f64,
    /// With `pin`: the cores the generator keeps to while the target runs.
    pub generator_cores: Option<Vec<usize>>,
}

/// The limits of the points about to run checked against this machine, and the hierarchy their
/// cgroups go in (stale ones of dead runs removed); or why they cannot be carried out, with the
/// fix.
pub(crate) fn prepare(phases: &[&MatrixPhase], ignore: bool) -> Result<Emulation, String> {
    // The target's limits, and every service's.
    let limited: Vec<(&MatrixPhase, &Point, &Limits)> = phases
        .iter()
        .flat_map(|phase| phase.points.iter().map(move |point| (*phase, point)))
        .flat_map(|(phase, point)| {
            let target = &point.target;
            let own = target.limits.as_ref().filter(|_| target.command.is_some());
            let services = target.services.iter().filter_map(|s| s.limits.as_ref());
            own.into_iter()
                .chain(services)
                .map(move |limits| (phase, point, limits))
        })
        .collect();
    if limited.is_empty() {
        return Ok(Emulation::Unlimited);
    }
    if ignore {
        return Ok(Emulation::Ignored);
    }
    let cores = allowed_cores();
    let available = <procfs::Meminfo as procfs::Current>::current()
        .ok()
        .and_then(|m| m.mem_available)
        .unwrap_or(u64::MAX);
    for (phase, point, limits) in &limited {
        let place = format!(
            "phase `{}` point {}{}",
            phase.name,
            point.index + 1,
            at_words(point)
                .map(|at| format!(" ({at})"))
                .unwrap_or_default()
        );
        if let Some(scaled) = &phase.scales
            && scaled.cores as usize >= cores.len()
        {
            return Err(format!(
                "phase `{}` pins the server to {} whole cores and this machine has {}: the load generator would have none. The ceiling phase `{}` itself measures this machine's {} cores; list counts under {} in `[plan] scale_cores`, or run on a machine with more cores",
                phase.name,
                scaled.cores,
                cores.len(),
                scaled.of_phase,
                cores.len(),
                cores.len()
            ));
        }
        if let Some(cpus) = limits.cpus
            && cpus > cores.len() as f64
        {
            return Err(format!(
                "{place} asks for `cpus = {cpus}` and this machine has {} cores: an instance larger than the machine cannot be emulated. Lower `cpus`, run on a machine with more cores, or pass --ignore-limits to run unlimited and say so",
                cores.len()
            ));
        }
        if let Some(memory) = limits.memory
            && memory.bytes() > available
        {
            return Err(format!(
                "{place} asks for `memory = \"{memory}\"` and this machine has {:.1} GiB available: the limit would never be reached. Lower `memory`, free memory, or pass --ignore-limits to run unlimited and say so",
                available as f64 / f64::from(1u32 << 30)
            ));
        }
    }
    let hierarchy = cgroup::detect()?;
    if limited.iter().any(|(_, _, limits)| limits.pin) && !hierarchy.can_pin() {
        return Err(format!(
            "`pin = true` needs the cpuset controller, and {} has none: remove `pin`, or pass --ignore-limits",
            hierarchy.describe()
        ));
    }
    hierarchy.clean_stale();
    Ok(Emulation::Cgroups { hierarchy, cores })
}

/// The point's variables in words (`rooms = 256`), `None` at a point with none.
pub(crate) fn at_words(point: &Point) -> Option<String> {
    let label = headroom_spec::vars::point_label(&point.at);
    (!label.is_empty()).then_some(label)
}

/// The CPUs this process may run on (its affinity), in order.
fn allowed_cores() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|cpu| set.is_set(*cpu))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

impl Emulation {
    /// How the limits are carried out, in words; `None` when no point sets any.
    pub(crate) fn describe(&self) -> Option<String> {
        match self {
            Emulation::Unlimited => None,
            Emulation::Ignored => Some(LIMITS_IGNORED.to_owned()),
            Emulation::Cgroups { hierarchy, .. } => Some(format!(
                "limits: a cgroup per run, in {}",
                hierarchy.describe()
            )),
        }
    }

    /// The run's shape: the quota, the memory, and with `pin` the last whole cores for the
    /// target (as many as `cpus` rounded up) and the others for the generator.
    pub(crate) fn shape(&self, limits: &Limits) -> Option<RunShape> {
        let Emulation::Cgroups { cores, .. } = self else {
            return None;
        };
        let host = cores.len() as f64;
        let mut run = RunShape {
            shape: Shape {
                cpus: limits.cpus,
                memory_bytes: limits.memory.map(|m| m.bytes()),
                cpuset: None,
            },
            // A target with no CPU limit takes no core from the generator's count: it is
            // limited in memory alone, and the generator has the machine (issue 42).
            cores_left: limits.cpus.map_or(host, |cpus| (host - cpus).max(0.0)),
            generator_cores: None,
        };
        if limits.pin {
            let wanted = limits.cpus.map_or(cores.len(), |c| c.ceil() as usize);
            let split = cores.len().saturating_sub(wanted.max(1));
            let (generator, target) = cores.split_at(split);
            run.shape.cpuset = Some(cpu_list(target));
            run.cores_left = generator.len() as f64;
            run.generator_cores = (!generator.is_empty()).then(|| generator.to_vec());
        }
        Some(run)
    }

    /// Makes the run's cgroup.
    pub(crate) fn create(&self, name: &str, shape: &Shape) -> Result<Cgroup, String> {
        let Emulation::Cgroups { hierarchy, .. } = self else {
            return Err("no cgroup hierarchy was found".to_owned());
        };
        hierarchy.create(name, shape).map_err(|e| {
            format!(
                "cannot make the run's cgroup in {}: {e}",
                hierarchy.describe()
            )
        })
    }

    /// Puts every thread of this process (the generator) on `cores`, or back on all of them.
    pub(crate) fn keep_generator_on(&self, cores: Option<&[usize]>) {
        let Emulation::Cgroups { cores: all, .. } = self else {
            return;
        };
        let mut set = rustix::thread::CpuSet::new();
        for &cpu in cores.unwrap_or(all) {
            set.set(cpu);
        }
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return;
        };
        for task in tasks.flatten() {
            let tid = task.file_name().to_string_lossy().parse::<i32>().ok();
            if let Some(tid) = tid.and_then(rustix::process::Pid::from_raw) {
                let _ = rustix::thread::sched_setaffinity(Some(tid), &set);
            }
        }
    }
}

/// `0-1,3` for cores 0, 1 and 3.
pub(crate) fn cpu_list(cores: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cores.len() {
        let start = cores[i];
        let mut end = start;
        while i + 1 < cores.len() && cores[i + 1] == end + 1 {
            i += 1;
            end = cores[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// What a run's results say about its limits: the shape applied and the kernel's counters.
pub(crate) fn applied(cgroup: &Cgroup, shape: &Shape, counters: &Counters) -> RunLimits {
    RunLimits::Applied(AppliedLimits {
        cgroup: cgroup.version(),
        cpus: shape.cpus,
        pinned_cpus: shape.cpuset.clone(),
        memory_bytes: shape.memory_bytes,
        swap_off: cgroup.swap_off(),
        cpu_periods: counters.cpu_periods,
        throttled_periods: counters.throttled_periods,
        throttled_s: counters.throttled_s,
        memory_peak_bytes: counters.memory_peak_bytes,
        oom_kills: counters.oom_kills,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_list_is_written_in_ranges() {
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[0, 1, 3]), "0-1,3");
        assert_eq!(cpu_list(&[2, 3, 4, 6, 7]), "2-4,6-7");
    }

    fn cgroups(cores: usize) -> Emulation {
        Emulation::Cgroups {
            hierarchy: Hierarchy::V2 {
                parent: "/nowhere".into(),
            },
            cores: (0..cores).collect(),
        }
    }

    fn limits(cpus: f64, pin: bool) -> Limits {
        Limits {
            cpus: Some(cpus),
            memory: None,
            pin,
        }
    }

    /// Pinned, half a CPU takes the last whole core; the generator keeps the others.
    #[test]
    fn a_pinned_target_takes_the_last_whole_cores() {
        let run = cgroups(4).shape(&limits(1.5, true)).expect("a shape");
        assert_eq!(run.shape.cpuset.as_deref(), Some("2-3"));
        assert_eq!(run.shape.cpus, Some(1.5));
        assert_eq!(run.generator_cores, Some(vec![0, 1]));
        assert_eq!(run.cores_left, 2.0);
        let all = cgroups(2).shape(&limits(2.0, true)).expect("a shape");
        assert_eq!(all.shape.cpuset.as_deref(), Some("0-1"));
        assert_eq!(all.generator_cores, None);
        assert_eq!(all.cores_left, 0.0);
    }

    #[test]
    fn an_unpinned_target_leaves_the_generator_the_rest_of_the_cores() {
        let run = cgroups(2).shape(&limits(0.5, false)).expect("a shape");
        assert_eq!(run.shape.cpuset, None);
        assert_eq!(run.cores_left, 1.5);
        assert!(Emulation::Ignored.shape(&limits(0.5, false)).is_none());
    }

    /// Issue 42: a limit of memory alone leaves the generator every core, not none (it was
    /// "0.00 of the 2 cores", every run generator-bound).
    #[test]
    fn a_memory_limit_alone_leaves_the_generator_the_machine() {
        let memory_only = Limits {
            cpus: None,
            memory: Some("512MiB".parse().expect("a size")),
            pin: false,
        };
        let run = cgroups(2).shape(&memory_only).expect("a shape");
        assert_eq!(run.shape.cpus, None);
        assert_eq!(run.cores_left, 2.0);
    }
}
