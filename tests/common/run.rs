//! Running `headroom run` from a test: a results folder per test, a lock on the machine for
//! runs whose timing another test's load would disturb, reading results against the schema,
//! and finding what a run left behind.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::root;

pub use headroom_test_support::harness::{
    clean, free_port, fresh_out, leftovers, out, shared, wait_until, whole,
};
pub use headroom_test_support::results::{
    rooms_in, scenario, service, slo, steady_series, typed, typed_runs, typed_runs_mut,
};

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

/// `headroom ARGS` beside the other tests. Their load is other work on the machine, the
/// suite's own: a run is not run again for it (issue 41's reruns are tested with the machine
/// whole), and a search judges each first try as it is.
pub fn headroom(args: &[&str], envs: &[(&str, String)]) -> Output {
    let _machine = shared();
    let mut envs = envs.to_vec();
    envs.push(beside_other_tests());
    headroom_unlocked(args, &envs)
}

/// What a run beside the other tests is told: keep every first try.
pub fn beside_other_tests() -> (&'static str, String) {
    ("HEADROOM_COMPETED_RERUNS", "0".to_owned())
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

/// Starts `headroom run tests/fixtures/run/FIXTURE.toml --out OUT` in the background (stderr
/// kept) and returns once its target, found by `marker` in /proc, is running. The caller holds
/// a share of the machine (`shared()`) until it ends.
pub fn start_in_background(fixture: &str, out: &Path, marker: &str) -> std::process::Child {
    let (key, value) = beside_other_tests();
    let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            &format!("tests/fixtures/run/{fixture}.toml"),
            "--no-page",
            "--out",
        ])
        .arg(out)
        .env(key, value)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn headroom");
    let running = wait_until(Duration::from_secs(30), || !leftovers(marker).is_empty());
    assert!(running, "no target with {marker} started within 30 s");
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

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A demo target started by a test (its own process group), on a free port, answering: the
/// child and the port.
pub fn start_demo_target(marker: &str) -> (std::process::Child, u16) {
    start_demo_target_with(marker, &[])
}

/// [`start_demo_target`] with more of the demo target's flags (`--exit-after 2s`).
pub fn start_demo_target_with(marker: &str, extra: &[&str]) -> (std::process::Child, u16) {
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
        .args(extra)
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

/// What `scripts/SCRIPT install` installs (PostgreSQL, Prometheus): the path it printed, or the
/// script's reason when it could not be had here, for the test to say it skipped and why.
pub fn installed_by(script: &str) -> Result<String, String> {
    let output = Command::new(format!("scripts/{script}"))
        .arg("install")
        .current_dir(root())
        .output()
        .map_err(|e| format!("scripts/{script} could not run: {e}"))?;
    if output.status.success() {
        let said = String::from_utf8_lossy(&output.stdout);
        Ok(said.lines().last().unwrap_or_default().trim().to_owned())
    } else {
        Err(stderr(&output).trim().to_owned())
    }
}
