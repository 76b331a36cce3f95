use super::*;

/// A fresh folder under the system's temporary folder, standing in for a cgroup.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "headroom-cgroup-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn a_cgroup_path_is_found_under_its_mount() {
    let mount = Path::new("/sys/fs/cgroup/memory");
    assert_eq!(
        v1::under_mount(mount, "/", "/process_api/abc"),
        PathBuf::from("/sys/fs/cgroup/memory/process_api/abc")
    );
    assert_eq!(v1::under_mount(mount, "/", "/"), mount);
    // In a container the mount's root is the container's own cgroup.
    assert_eq!(v1::under_mount(mount, "/docker/abc", "/docker/abc"), mount);
    assert_eq!(
        v1::under_mount(mount, "/docker/abc", "/docker/abc/inner"),
        PathBuf::from("/sys/fs/cgroup/memory/inner")
    );
}

#[test]
fn a_quota_is_cpus_times_the_period_and_at_least_a_millisecond() {
    assert_eq!(quota_us(0.5), 50_000);
    assert_eq!(quota_us(2.0), 200_000);
    assert_eq!(quota_us(0.25), 25_000);
    assert_eq!(quota_us(0.001), 1_000);
}

#[test]
fn keyed_files_are_read_by_key() {
    let stat = "nr_periods 120\nnr_throttled 40\nthrottled_time 2500000000\n";
    assert_eq!(keyed(stat, "nr_periods"), Some(120));
    assert_eq!(keyed(stat, "nr_throttled"), Some(40));
    assert_eq!(keyed(stat, "throttled"), None);
}

/// The v2 backend's files, written to a folder standing in for the unified hierarchy (this
/// machine's may not have the controllers): the quota, the limit, no swap, the pinned cores.
#[test]
fn the_v2_backend_writes_cpu_max_memory_max_and_no_swap() {
    let parent = scratch("v2");
    std::fs::write(parent.join("cgroup.subtree_control"), "").expect("written");
    let shape = Shape {
        cpus: Some(0.5),
        memory_bytes: Some(256 << 20),
        cpuset: Some("1".to_owned()),
    };
    // A real cgroup has memory.swap.max where swap is accounted: make it there beforehand.
    let dir = parent.join("headroom-1-2-3");
    std::fs::create_dir(&dir).expect("made");
    std::fs::write(dir.join("memory.swap.max"), "max").expect("written");
    std::fs::remove_dir_all(&dir).expect("removed");
    let cgroup = v2::create(&parent, "headroom-1-2-3", &shape).expect("created");
    assert_eq!(
        text(&parent, "cgroup.subtree_control"),
        "+cpu +memory +cpuset"
    );
    assert_eq!(text(&dir, "cpu.max"), "50000 100000");
    assert_eq!(text(&dir, "memory.max"), "268435456");
    assert_eq!(text(&dir, "cpuset.cpus"), "1");
    // No swap file in a plain folder: swap stays as the kernel has it, and says so.
    assert!(!cgroup.swap_off());
    assert_eq!(cgroup.version(), CgroupVersion::V2);
    std::mem::forget(cgroup); // a plain folder is not emptied by rmdir: removed below
    std::fs::write(
        dir.join("cpu.stat"),
        "usage_usec 1\nnr_periods 50\nnr_throttled 20\nthrottled_usec 1500000\n",
    )
    .expect("written");
    std::fs::write(dir.join("memory.peak"), "104857600\n").expect("written");
    std::fs::write(
        dir.join("memory.events"),
        "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
    )
    .expect("written");
    assert_eq!(
        v2::counters(&dir),
        Counters {
            cpu_periods: 50,
            throttled_periods: 20,
            throttled_s: 1.5,
            memory_peak_bytes: Some(100 << 20),
            oom_kills: 1,
        }
    );
    std::fs::remove_dir_all(&parent).expect("removed");
}

#[test]
fn the_v1_backend_reads_throttling_the_peak_and_oom_kills() {
    let cpu = scratch("v1-cpu");
    let memory = scratch("v1-memory");
    std::fs::write(
        cpu.join("cpu.stat"),
        "nr_periods 10\nnr_throttled 4\nthrottled_time 250000000\nnr_bursts 0\n",
    )
    .expect("written");
    std::fs::write(
        memory.join("memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    )
    .expect("written");
    std::fs::write(memory.join("memory.max_usage_in_bytes"), "2097152\n").expect("written");
    assert_eq!(
        v1::counters(&[cpu.clone(), memory.clone()]),
        Counters {
            cpu_periods: 10,
            throttled_periods: 4,
            throttled_s: 0.25,
            memory_peak_bytes: Some(2 << 20),
            oom_kills: 2,
        }
    );
    std::fs::remove_dir_all(&cpu).expect("removed");
    std::fs::remove_dir_all(&memory).expect("removed");
}

#[test]
fn a_cgroup_is_stale_when_its_owner_is_gone_or_its_pid_was_reused() {
    let live = format!("{PREFIX}{}-7", owner_tag());
    assert!(!is_stale(&live));
    // The pid is alive, its start time is not this one: a reused pid.
    assert!(is_stale(&format!("{PREFIX}{}-1-7", std::process::id())));
    // No such process (pids stop well below this).
    assert!(is_stale(&format!("{PREFIX}2147483000-5-1")));
    // Not headroom's.
    assert!(!is_stale("docker-abc"));
    assert!(!is_stale("headroom-notes"));
}

/// The CPU a process tree used over `seconds`, from /proc (not the cgroup's own counter).
fn cores_used(pid: i32, seconds: f64) -> f64 {
    let before = crate::sample::read_group(crate::sample::ServerProcesses::Group(pid))
        .expect("readable")
        .cpu_s;
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let after = crate::sample::read_group(crate::sample::ServerProcesses::Group(pid))
        .expect("readable")
        .cpu_s;
    (after - before) / seconds
}

/// Two busy loops in a cgroup of `shape`: the cores they used (from /proc) and the counters.
fn burn_in(hierarchy: &Hierarchy, shape: &Shape) -> (f64, Counters, Vec<PathBuf>) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let mut cgroup = hierarchy
        .create(&run_name(900), shape)
        .expect("a cgroup this test may make");
    let files = cgroup.join_files().expect("cgroup.procs opens");
    let fds: Vec<_> = files.iter().map(|f| f.as_raw_fd()).collect();
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", "while :; do :; done & while :; do :; done"])
        .process_group(0);
    // SAFETY: `join` only writes to open files.
    unsafe {
        command.pre_exec(move || join(&fds));
    }
    let mut child = command.spawn().expect("sh starts");
    drop(files);
    std::thread::sleep(Duration::from_millis(300));
    let cores = cores_used(child.id() as i32, 2.0);
    let counters = cgroup.counters();
    let dirs = cgroup.dirs().to_vec();
    if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.wait();
    cgroup.remove().expect("removed");
    (cores, counters, dirs)
}

/// The backend `find` picks on this machine, tried; or why it cannot be tested here, printed
/// (a skip says so, never a silent pass).
#[allow(clippy::print_stderr)]
fn backend(version: CgroupVersion) -> Option<Hierarchy> {
    let myself = procfs::process::Process::myself().ok()?;
    let (mounts, groups) = (myself.mountinfo().ok()?, myself.cgroups().ok()?);
    let found = match version {
        CgroupVersion::V1 => v1::find(&mounts, &groups),
        CgroupVersion::V2 => v2::find(&mounts, &groups),
    };
    match found.and_then(|h| h.try_writing().map(|()| h)) {
        Ok(hierarchy) => Some(hierarchy),
        Err(why) => {
            eprintln!(
                "skipped: {} is not usable on this machine: {why}",
                version.name()
            );
            None
        }
    }
}

fn burns_half_a_cpu(version: CgroupVersion) {
    let Some(hierarchy) = backend(version) else {
        return;
    };
    let host = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shape = Shape {
        cpus: Some(0.5),
        memory_bytes: Some(64 << 20),
        cpuset: None,
    };
    let (cores, counters, dirs) = burn_in(&hierarchy, &shape);
    assert!(
        (0.45..=0.55).contains(&cores),
        "{cores} cores under a 0.5 quota"
    );
    assert!(counters.throttled_periods > 0, "{counters:?}");
    assert!(counters.throttled_s > 0.5, "{counters:?}");
    assert!(dirs.iter().all(|d| !d.exists()), "{dirs:?} left behind");
    if host >= 2 && hierarchy.can_pin() {
        // Pinned to one core, two loops share it.
        let pinned = Shape {
            cpus: None,
            memory_bytes: None,
            cpuset: Some((host - 1).to_string()),
        };
        let (cores, _, _) = burn_in(&hierarchy, &pinned);
        assert!(
            (0.9..=1.05).contains(&cores),
            "{cores} cores pinned to one core"
        );
    }
}

#[test]
fn the_v1_backend_holds_a_busy_process_to_its_quota() {
    burns_half_a_cpu(CgroupVersion::V1);
}

#[test]
fn the_v2_backend_holds_a_busy_process_to_its_quota() {
    burns_half_a_cpu(CgroupVersion::V2);
}

/// Where no cgroup can be written (an unprivileged container; here, hierarchies "mounted" on
/// /proc, where nothing can be made), detection says why for each backend and what to do.
#[test]
fn no_writable_cgroup_is_refused_with_the_reason_and_the_fix() {
    use procfs::FromRead;
    let mountinfo = "30 25 0:26 / /proc/sys type cgroup2 rw - cgroup2 cgroup2 rw\n\
                     31 25 0:27 / /proc/sys/kernel type cgroup rw - cgroup cgroup rw,cpu,cpuacct\n\
                     32 25 0:28 / /proc/sys/vm type cgroup rw - cgroup cgroup rw,memory\n";
    let cgroup = "0::/\n4:cpu,cpuacct:/\n3:memory:/\n";
    let mounts = procfs::process::MountInfos::from_read(mountinfo.as_bytes()).expect("mountinfo");
    let groups = procfs::ProcessCGroups::from_read(cgroup.as_bytes()).expect("cgroups");
    let why = detect_in(&mounts, &groups).expect_err("nothing writable");
    assert!(
        why.starts_with("no cgroup this process may write, so `[target] limits` cannot be applied: cgroup v2 at /proc/sys has the controllers [], not cpu and memory"),
        "{why}"
    );
    assert!(
        why.contains("cgroup v1 (cpu: /proc/sys/kernel, memory: /proc/sys/vm"),
        "{why}"
    );
    assert!(why.contains("or pass --ignore-limits"), "{why}");
}
