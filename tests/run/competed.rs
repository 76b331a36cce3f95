//! Other work on the machine: read over the hold and said, a run it competed with run again
//! (issue 41), and nothing called on the runs that competed all the same.

use std::io::{BufRead, BufReader};

use super::*;

/// A shell spinning on one core, for at most 60 s (`timeout`), ended when dropped: `timeout`
/// is sent TERM, which it passes to the shell (a KILL would leave the shell spinning).
pub(super) struct BusyLoop(std::process::Child);

impl BusyLoop {
    pub(super) fn start() -> BusyLoop {
        let child = Command::new("timeout")
            .args(["60", "sh", "-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("a busy loop");
        BusyLoop(child)
    }
}

impl Drop for BusyLoop {
    fn drop(&mut self) {
        send("TERM", &self.0);
        let _ = self.0.wait();
    }
}

/// `headroom ARGS` (the machine not locked: the caller holds it), each line of its stderr
/// handed to `on_line` as it comes; its exit code and all it said.
pub(super) fn headroom_watched(args: &[&str], mut on_line: impl FnMut(&str)) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn headroom");
    let mut said = String::new();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            on_line(&line);
            said.push_str(&line);
            said.push('\n');
        }
    }
    let status = child.wait().expect("headroom ends");
    (status.code().unwrap_or(-1), said)
}

/// One run of the `competed` fixture (200/s for 4 s), `extra` flags added, `on_line` seeing
/// its stderr: its one kept run and what it said.
fn competed_run(
    label: &str,
    extra: &[&str],
    on_line: impl FnMut(&str),
) -> (headroom_results::RunResult, String) {
    let out = fresh_out("competed");
    let out_arg = out.display().to_string();
    let mut args = vec![
        "run",
        "tests/fixtures/run/competed.toml",
        "--no-page",
        "--out",
        &out_arg,
    ];
    args.extend(extra);
    let (code, said) = headroom_watched(&args, on_line);
    assert_eq!(code, 0, "{label}: {said}");
    let results = typed(&read_results(&out));
    let runs = typed_runs(&results);
    assert_eq!(runs.len(), 1, "{label}: one run kept");
    let run = runs[0].clone();
    let machine = run
        .machine_cpu
        .unwrap_or_else(|| panic!("{label}: the machine's CPU was read"));
    common::say(&format!(
        "{label}: other processes {:.2} cores, stolen {:.2}",
        machine.others_cores, machine.stolen_cores
    ));
    (run, said)
}

/// Other work on the machine over the hold is read and said, and a run it competed with is
/// run again: beside a busy loop of one core that ends when the run is run again, the try kept
/// is the quiet one (under the threshold, 0.25 cores on two) and says why it is a second try;
/// beside one that lasts, the try kept after the last rerun reads about one core of other
/// processes and says so on its line (with the hypervisor's steal beside it where that was
/// notable too: 0.17 cores on a CI machine).
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_run_that_other_work_competed_with_is_run_again() {
    let _machine = whole();
    // Busy for the first try only: it is run again, and the quiet try is the one judged.
    let mut busy_loop = Some(BusyLoop::start());
    let (rerun, said) = competed_run("busy, then quiet", &[], |line| {
        if line.contains("run again: ") {
            busy_loop = None;
        }
    });
    drop(busy_loop);
    assert_eq!(said.matches("run again: ").count(), 1, "{said}");
    assert!(
        said.contains("  run again: other processes used "),
        "{said}"
    );
    let machine = rerun.machine_cpu.expect("read");
    // Other processes, not the hypervisor: its steal is the VM's lot (0.15 cores once here).
    assert!(
        !machine.others_competed(),
        "the try kept competed: {machine:?}"
    );
    assert!(machine.others_cores < 0.25, "{machine:?}");
    assert_eq!(said.matches("other processes used").count(), 1, "{said}");
    assert!(
        rerun.notes.iter().any(|note| note.starts_with(
            "run again after 1 try that other work competed with (other processes used "
        )),
        "{:?}",
        rerun.notes
    );
    // Busy throughout, one rerun allowed: the second try is kept, competed, and said.
    let busy_loop = BusyLoop::start();
    let (busy, said) = competed_run("busy throughout", &["--competed-reruns", "1"], |_| ());
    drop(busy_loop);
    assert_eq!(said.matches("run again: ").count(), 1, "{said}");
    let machine = busy.machine_cpu.expect("read");
    assert!(machine.others_competed(), "{machine:?}");
    assert!((0.7..1.3).contains(&machine.others_cores), "{machine:?}");
    assert!(
        said.contains(&format!(
            "({} over the hold: the server had less of the machine than a quiet one gives)",
            machine.describe()
        )),
        "{said}"
    );
    assert!(leftovers("1056B").is_empty());
    clean("competed");
}
