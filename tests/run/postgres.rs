//! The notes API with its PostgreSQL database as a stack, `--quick` end to end (skipped, said,
//! where PostgreSQL is not installed).
//! Results are read through their types.

use headroom_results::{Exit, RunLimits, RunResult};

use super::*;

/// Issue 19: the notes API and its PostgreSQL database as a stack, `--quick` end to end: both
/// started, each held to its limits and sampled apart, the data tier seeded before every
/// load and emptied after, the database's client connections counted during the load (the
/// API's pool of 10, every reading), and the page shows each service's memory and CPU.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn notes_api_postgres_runs_quick_end_to_end() {
    if let Err(why) = installed_by("postgres.sh") {
        common::say(&format!("skipped: PostgreSQL not installed ({why})"));
        return;
    }
    // Its services run in half a CPU each and its checks are counts, limits and words (the
    // tier's slower reads are 4 s against 3 ms); like every example, it has the machine whole.
    let results = typed(&run_example_quick("notes-api-postgres", &[]));
    let out = out("notes-api-postgres");
    assert_eq!(results.phases.len(), 2);
    for run in typed_runs(&results) {
        each_service_held_sampled_and_stepped(run);
    }
    // The tier is in the table before the load: 100,000 notes read slower than 1,000.
    let tier = &results.phases[0].points;
    let p50 = |k: usize| {
        tier[k].runs[0]
            .scenarios
            .get("browse")
            .map_or(0.0, |browse| browse.latency.p50_ms)
    };
    assert!(p50(2) > p50(0), "{} vs {}", p50(2), p50(0));
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    for words in [
        "**The stack.** `db`, then `api` (after `db`)",
        "| point | api: memory | api: CPU | db: memory | db: CPU |",
        "`db` ran in 0.5 CPU, 512MiB memory",
        "`pg_connections` every 2s",
        "### Priced apart",
        "| `api` | c7g.medium |",
        "| `db` | r7g.medium |",
    ] {
        assert!(page.contains(words), "{words}\n{page}");
    }
    the_stack_is_priced_apart(&out);
    // Every cluster's folder went with its server, and no server is left.
    let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_owned());
    let folders: Vec<String> = std::fs::read_dir(tmp)
        .expect("the temporary folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("headroom-pg."))
        .collect();
    assert!(folders.is_empty(), "{folders:?}");
    let servers: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("headroom-pg."))
        .collect();
    assert!(servers.is_empty(), "{servers:?}");
    clean("notes-api-postgres");
}

/// One run of the stack: each service held to its limits, sampled apart and stopped; the
/// database's pool of 10 connections at every reading during the load; the tier seeded
/// before the load and emptied after.
fn each_service_held_sampled_and_stepped(run: &RunResult) {
    for (name, cpus, memory) in [("db", 0.5, 512u64 << 20), ("api", 0.5, 256 << 20)] {
        let service = run.services.get(name).expect("the service");
        assert!(service.ready_after_s > Some(0.0), "{name}: {service:?}");
        let Some(RunLimits::Applied(limits)) = &service.limits else {
            panic!("{name}: limits applied: {:?}", service.limits);
        };
        assert_eq!(limits.cpus, Some(cpus), "{name}");
        assert_eq!(limits.memory_bytes, Some(memory), "{name}");
        let process = &service.process;
        assert!(process.samples.len() >= 4, "{name}");
        let steady = process.steady.expect("read at the steady state");
        assert!(steady.rss_bytes > 4_000_000, "{name}: {steady:?}");
        assert!(process.hold_cpu_cores.is_some(), "{name}: {process:?}");
        let stopped = service.stopped.as_ref().expect("stopped");
        assert!(!stopped.killed, "{name}: {stopped:?}");
    }
    // The database is a tree: the server, its background workers and a backend per
    // connection of the pool; the API is one process.
    let processes = |name: &str| {
        run.services
            .get(name)
            .and_then(|s| s.process.steady)
            .map(|steady| steady.processes)
    };
    assert!(processes("db") >= Some(12), "{:?}", processes("db"));
    assert_eq!(processes("api"), Some(1));
    let db_stopped = run.services.get("db").and_then(|s| s.stopped.as_ref());
    assert_eq!(db_stopped.map(|s| s.signal.as_str()), Some("INT"));
    // The pool: 10 client connections at every reading during the load, none more.
    let readings = run.series_samples.get("pg_connections").expect("readings");
    assert!(readings.len() >= 2, "{readings:?}");
    // Read while the load ran: none after its last second of traffic (the windows are
    // whole seconds; a reading may start in the last one).
    let last_second = ["browse", "write"]
        .iter()
        .filter_map(|s| run.scenarios.get(*s))
        .flat_map(|scenario| scenario.windows.iter())
        .map(|w| w.t_s as f64)
        .fold(0.0, f64::max);
    for reading in readings {
        assert_eq!(reading.value, 10.0, "{readings:?}");
        assert!(
            reading.t_s <= last_second + 1.0,
            "{reading:?} after {last_second}"
        );
    }
    assert_eq!(run.metrics.steady.get("pg_connections"), Some(&10.0));
    let steps: Vec<(&str, &str)> = run
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.when.as_str()))
        .collect();
    assert_eq!(steps, [("seed", "setup"), ("clean-up", "teardown")]);
    assert_eq!(run.steps[0].exit, Some(Exit::Code(0)));
}

/// The stack priced apart: each service on its instance with its own fits, the stack's units
/// the fewer of theirs, a month both instances.
fn the_stack_is_priced_apart(out: &Path) {
    let out_arg = out.display().to_string();
    let plan = headroom(
        &[
            "plan",
            "examples/notes-api-postgres.toml",
            "--results",
            &out_arg,
            "--json",
        ],
        &[],
    );
    let plan: headroom_pricing::plan::PlanReport =
        common::contract("plan.schema.json", &String::from_utf8_lossy(&plan.stdout));
    let placement = plan.placement.expect("the stack placed");
    let placed = &placement.services;
    let services: Vec<&str> = placed.iter().map(|s| s.service.as_str()).collect();
    assert_eq!(services, ["api", "db"], "{placement:?}");
    let months: f64 = placed.iter().map(|s| s.instance.usd_month).sum();
    assert!((placement.per_month - months).abs() < 1e-9);
    let least = placed
        .iter()
        .filter_map(|s| s.instance.planned_units)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(placement.planned_units, Some(least));
}
