//! The notes API with its PostgreSQL database as a stack, `--quick` end to end (skipped, said,
//! where PostgreSQL is not installed).

use super::*;

/// PostgreSQL from the project's own script (`scripts/postgres.sh install`); `None` with the
/// script's reason when it could not be installed here.
fn postgres_installed() -> Result<(), String> {
    let output = Command::new("scripts/postgres.sh")
        .arg("install")
        .current_dir(root())
        .output()
        .map_err(|e| format!("scripts/postgres.sh could not run: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(stderr(&output).trim().to_owned())
    }
}

/// Issue 19: the notes API and its PostgreSQL database as a stack, `--quick` end to end: both
/// started, each held to its limits and sampled apart, the data tier seeded before every
/// load and emptied after, the database's client connections counted during the load (the
/// API's pool of 10, every reading), and the page shows each service's memory and CPU.
#[test]
fn notes_api_postgres_runs_quick_end_to_end() {
    if let Err(why) = postgres_installed() {
        common::say(&format!("skipped: PostgreSQL not installed ({why})"));
        return;
    }
    // Its services run in half a CPU each and its checks are counts, limits and words (the
    // tier's slower reads are 4 s against 3 ms): it runs beside the other examples.
    let results = run_example_quick_beside_others("notes-api-postgres", &[]);
    let out = out("notes-api-postgres");
    let phases = results["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2);
    for run in runs(&results) {
        each_service_held_sampled_and_stepped(run);
    }
    // The tier is in the table before the load: 100,000 notes read slower than 1,000.
    let tier = &phases[0]["points"];
    let p50 =
        |k: usize| common::number(&tier[k]["runs"][0]["scenarios"]["browse"]["latency"]["p50_ms"]);
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
fn each_service_held_sampled_and_stepped(run: &Value) {
    for (name, cpus, memory) in [("db", 0.5, 512u64 << 20), ("api", 0.5, 256 << 20)] {
        let service = &run["services"][name];
        assert!(
            common::number(&service["ready_after_s"]) > 0.0,
            "{name}: {service}"
        );
        let limits = &service["limits"];
        assert_eq!(limits["status"], "applied", "{name}: {limits}");
        assert_eq!(common::number(&limits["cpus"]), cpus, "{name}");
        assert_eq!(limits["memory_bytes"].as_u64(), Some(memory), "{name}");
        let process = &service["process"];
        assert!(
            process["samples"].as_array().is_some_and(|s| s.len() >= 4),
            "{name}"
        );
        assert!(
            common::number(&process["steady"]["rss_bytes"]) > 4e6,
            "{name}: {process}"
        );
        assert!(
            process["hold_cpu_cores"].as_f64().is_some(),
            "{name}: {process}"
        );
        assert_eq!(service["stopped"]["killed"], false, "{name}: {service}");
    }
    // The database is a tree: the server, its background workers and a backend per
    // connection of the pool; the API is one process.
    assert!(run["services"]["db"]["process"]["steady"]["processes"].as_u64() >= Some(12));
    assert_eq!(run["services"]["api"]["process"]["steady"]["processes"], 1);
    assert_eq!(run["services"]["db"]["stopped"]["signal"], "INT");
    // The pool: 10 client connections at every reading during the load, none more.
    let readings = run["series_samples"]["pg_connections"]
        .as_array()
        .expect("readings");
    assert!(readings.len() >= 2, "{readings:?}");
    // Read while the load ran: none after its last second of traffic (the windows are
    // whole seconds; a reading may start in the last one).
    let last_second = ["browse", "write"]
        .iter()
        .flat_map(|s| {
            run["scenarios"][s]["windows"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .map(|w| common::number(&w["t_s"]))
        .fold(0.0, f64::max);
    for reading in readings {
        assert_eq!(reading["value"], 10.0, "{readings:?}");
        let t = common::number(&reading["t_s"]);
        assert!(t <= last_second + 1.0, "{reading} after {last_second}");
    }
    assert_eq!(run["metrics"]["steady"]["pg_connections"], 10.0);
    let steps: Vec<(&str, &str)> = run["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or(""),
                s["when"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(steps, [("seed", "setup"), ("clean-up", "teardown")]);
    assert_eq!(run["steps"][0]["exit"]["code"], 0);
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
    let plan: Value = serde_json::from_slice(&plan.stdout).expect("plan json");
    let placed = plan["placement"]["services"].as_array().expect("services");
    let services: Vec<&str> = placed
        .iter()
        .map(|s| s["service"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(services, ["api", "db"], "{}", plan["placement"]);
    let months: f64 = placed
        .iter()
        .map(|s| common::number(&s["instance"]["usd_month"]))
        .sum();
    assert!((common::number(&plan["placement"]["per_month"]) - months).abs() < 1e-9);
    let least = placed
        .iter()
        .filter_map(|s| s["instance"]["planned_units"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(plan["placement"]["planned_units"].as_f64(), Some(least));
}
