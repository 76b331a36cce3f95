//! Running `headroom run` from a test: a results folder per test, a lock on the machine for
//! runs whose timing another test's load would disturb, reading results against the schema,
//! and finding what a run left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::root;

/// The results path of a test: a folder of its own.
pub fn out(test: &str) -> PathBuf {
    std::env::temp_dir()
        .join(format!("headroom-test-{}-{test}", std::process::id()))
        .join("results.json")
}

/// Removes a test's results once it passed; a failing test keeps them for a look.
pub fn clean(test: &str) {
    if let Some(dir) = out(test).parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The results path of a test, emptied for a new run.
pub fn fresh_out(test: &str) -> PathBuf {
    let out = out(test);
    if let Some(dir) = out.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
    out
}

/// The machine, shared by the tests that run headroom, and taken whole by a test that
/// measures how much CPU a target gets (another test's load would take from it).
pub static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A share of the machine, held while headroom runs.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    MACHINE
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The whole machine: no other test runs headroom meanwhile.
pub fn whole() -> std::sync::RwLockWriteGuard<'static, ()> {
    MACHINE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `headroom ARGS` with the machine to itself: for runs whose known answer is a CPU figure,
/// which another test's load would take from.
pub fn headroom_alone(args: &[&str]) -> Output {
    let _machine = whole();
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run headroom")
}

pub fn headroom(args: &[&str], envs: &[(&str, String)]) -> Output {
    let _machine = shared();
    headroom_unlocked(args, envs)
}

/// `headroom` with the whole machine: for a run that loads a core itself (CPU per request),
/// or whose generator's timing a neighbour's load would disturb.
pub fn headroom_whole(args: &[&str], envs: &[(&str, String)]) -> Output {
    let _machine = whole();
    headroom_unlocked(args, envs)
}

pub fn headroom_unlocked(args: &[&str], envs: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_headroom"));
    command.args(args).current_dir(root());
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().expect("run headroom")
}

pub fn run_fixture(name: &str, extra: &[&str], envs: &[(&str, String)]) -> (Output, Value) {
    run_fixture_with(headroom, name, extra, envs)
}

/// `run_fixture` with the whole machine (`headroom_whole`).
pub fn run_fixture_alone(name: &str, extra: &[&str]) -> (Output, Value) {
    run_fixture_with(headroom_whole, name, extra, &[])
}

/// A way to run headroom: sharing the machine (`headroom`) or with all of it.
pub type Runner = fn(&[&str], &[(&str, String)]) -> Output;

pub fn run_fixture_with(
    run: Runner,
    name: &str,
    extra: &[&str],
    envs: &[(&str, String)],
) -> (Output, Value) {
    let out = fresh_out(name);
    let spec = format!("tests/fixtures/run/{name}.toml");
    let out_arg = out.display().to_string();
    let mut args = vec!["run", spec.as_str(), "--out", out_arg.as_str()];
    args.extend(extra);
    let output = run(&args, envs);
    let results = read_results(&out);
    (output, results)
}

/// Reads a results file and checks it against the committed schema.
pub fn read_results(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no results at {}: {e}", path.display()));
    let results: Value = serde_json::from_str(&text).expect("results json");
    super::assert_matches_schema("results.schema.json", &results);
    results
}

/// Target processes of one test still alive (found by the marker in their command line).
pub fn leftovers(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains("demo-target") && cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Starts `headroom run tests/fixtures/run/FIXTURE.toml --out OUT` in the background (stderr
/// kept) and returns once its target, found by `marker` in /proc, is running. The caller holds
/// a share of the machine (`shared()`) until it ends.
pub fn start_in_background(fixture: &str, out: &Path, marker: &str) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            &format!("tests/fixtures/run/{fixture}.toml"),
            "--no-page",
            "--out",
        ])
        .arg(out)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn headroom");
    wait_until(Duration::from_secs(30), || !leftovers(marker).is_empty());
    child
}

/// Sends `signal` (`INT`, `KILL`…) to a process.
pub fn send(signal: &str, child: &std::process::Child) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{signal}");
}

/// Polls `done` every 100 ms until it holds or `limit` passes (the caller asserts after).
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !done() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn runs(results: &Value) -> Vec<&Value> {
    results["phases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|phase| phase["points"].as_array().into_iter().flatten())
        .flat_map(|point| point["runs"].as_array().into_iter().flatten())
        .collect()
}

/// Every request an HTTP scenario completed, the hold's and the ramps' (the server counts both).
pub fn answered(scenario: &Value) -> f64 {
    super::number(&scenario["requests"]) + super::number(&scenario["ramps"]["requests"])
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A demo target started by a test (its own process group), on a free port, answering: the
/// child and the port.
pub fn start_demo_target(marker: &str) -> (std::process::Child, u16) {
    use std::os::unix::process::CommandExt;
    let port = free_port();
    let server = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "demo-target",
            "--port",
            &port.to_string(),
            "--note-size",
            marker,
        ])
        .process_group(0)
        .stdout(Stdio::null())
        .spawn()
        .expect("start the demo target");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

/// The results as their types, the way a test reads them (never by key): a field renamed in
/// `headroom-results` fails to compile here.
pub fn typed(results: &Value) -> headroom_results::Results {
    headroom_results::Results::from_json(&results.to_string())
        .unwrap_or_else(|e| panic!("results that read as their types: {e}"))
}

/// Every run of every point of every phase, typed, in the file's order.
pub fn typed_runs(results: &headroom_results::Results) -> Vec<&headroom_results::RunResult> {
    results
        .phases
        .iter()
        .flat_map(|phase| phase.points.iter())
        .flat_map(|point| point.runs.iter())
        .collect()
}

/// The verdict of the SLO named `name` in `run`.
pub fn slo<'a>(
    run: &'a headroom_results::RunResult,
    name: &str,
) -> &'a headroom_results::SloVerdict {
    run.slo
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no verdict {name}: {:?}", run.slo))
}

/// A rooms scenario's result in `run`.
pub fn rooms_in<'a>(
    run: &'a headroom_results::RunResult,
    scenario: &str,
) -> &'a headroom_results::RoomsResult {
    run.scenarios
        .get(scenario)
        .and_then(|s| s.rooms.as_ref())
        .unwrap_or_else(|| panic!("no rooms scenario {scenario}"))
}
