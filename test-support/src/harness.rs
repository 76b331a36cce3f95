//! The harness of a test that runs headroom: a results folder of its own, the machine shared
//! with the other tests (or taken whole), waiting with a limit, the processes a run left
//! behind, and the one place a test prints.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// The results path of the test `test`: a folder of its own under the temporary directory.
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

/// What `scripts/test end-to-end` sets to `end-to-end` while it runs that layer's tests.
pub const LAYER: &str = "HEADROOM_TEST_LAYER";

/// Whether this test process runs the end-to-end layer (`scripts/test end-to-end`), where
/// tests take the whole machine in turn, rather than the fast layer (`cargo test`).
pub fn in_the_end_to_end_layer() -> bool {
    std::env::var(LAYER).is_ok_and(|layer| layer == "end-to-end")
}

/// The machine, shared by the tests of one binary that load it, and taken whole by a test
/// whose known answer another test's load would disturb (a CPU figure, a generator's timing).
static MACHINE: RwLock<()> = RwLock::new(());

/// A share of the machine, held while a test's load runs.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(PoisonError::into_inner)
}

/// The whole machine, held until dropped: no other test of this binary loads it, and the work
/// in the background (`in_background`) is stopped meanwhile.
pub struct Whole {
    _machine: RwLockWriteGuard<'static, ()>,
}

/// The whole machine: no other test of this binary loads it meanwhile, and work in the
/// background is stopped until the test lets go.
///
/// Only the end-to-end layer takes it: in the fast layer (`cargo test`), which runs its tests
/// side by side, a test asking for the whole machine fails, saying where it belongs.
pub fn whole() -> Whole {
    assert!(
        in_the_end_to_end_layer(),
        "this test takes the whole machine, so it belongs to the end-to-end layer: mark it \
         `#[ignore = \"end-to-end layer: scripts/test end-to-end\"]` (docs/testing.md); \
         `scripts/test end-to-end` runs that layer (it sets {LAYER}=end-to-end)"
    );
    let machine = MACHINE.write().unwrap_or_else(PoisonError::into_inner);
    signal_background("-STOP");
    Whole { _machine: machine }
}

impl Drop for Whole {
    fn drop(&mut self) {
        signal_background("-CONT");
    }
}

/// Process groups of work that runs beside the tests (a release build): it takes the CPU the
/// tests sharing the machine leave idle, and none while a test has the machine whole.
static BACKGROUND: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn signal_background(signal: &str) {
    let groups = BACKGROUND
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for group in groups {
        let _ = Command::new("kill")
            .args([signal, "--", &format!("-{group}")])
            .status();
    }
}

/// Runs `command` in the background of the tests, to its end: at the lowest priority (run it
/// under `nice -n 19`), in a process group of its own that is stopped while any test has the
/// whole machine (`whole`) and continued after. Takes no share of the machine: a test that
/// takes it whole never waits for this.
pub fn in_background(mut command: Command) -> std::io::Result<Output> {
    command.process_group(0);
    let child = command.spawn()?;
    let group = child.id();
    BACKGROUND
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(group);
    // A test that took the machine whole before this was listed: stopped at once, continued
    // when that test lets go.
    if MACHINE.try_read().is_err() {
        let _ = Command::new("kill")
            .args(["-STOP", "--", &format!("-{group}")])
            .status();
    }
    let output = child.wait_with_output();
    BACKGROUND
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|g| *g != group);
    output
}

/// Polls `done` every 100 ms until it holds or `limit` passes; whether it held.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Demo targets of one test still alive, found by `marker` in their command line: what a run
/// that should have stopped its target left behind.
pub fn leftovers(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
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

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("a free loopback port: {e}"))
}

/// The number at `value`, failing the test when there is none: comparing `as_f64()` Options
/// would let `None <= None` pass.
#[track_caller]
pub fn number(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("expected a number, found {value}"))
}

/// What a test says beside its verdict, on stderr: that it skipped and why (never a silent
/// pass), or a figure it measured. The one place a test prints. Written to the stream itself,
/// not through `eprintln!`, which the test harness captures and shows only for a test that
/// failed: a skip must be in the log of a run that passed.
pub fn say(text: &str) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    // A test whose stderr is gone has no one to tell.
    let _ = writeln!(stderr, "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_says_whether_it_held_and_gives_up_at_its_limit() {
        let mut polls = 0;
        assert!(wait_until(Duration::from_secs(5), || {
            polls += 1;
            polls == 3
        }));
        assert_eq!(polls, 3);
        let started = Instant::now();
        assert!(!wait_until(Duration::from_millis(250), || false));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    }

    #[test]
    fn a_test_has_a_results_folder_of_its_own() {
        let path = fresh_out("harness-unit");
        assert!(path.ends_with("results.json"));
        let dir = path.parent().expect("a folder");
        assert!(dir.to_string_lossy().contains("harness-unit"));
        std::fs::create_dir_all(dir).expect("made");
        clean("harness-unit");
        assert!(!dir.exists());
    }
}
