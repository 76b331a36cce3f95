//! What is refused before anything starts: an `--out` headroom must not touch, what is too
//! long or too large, a run past the machine's file limit, a demo target seeded past memory.

use super::*;

/// Issue 12, data loss: `run --out` is checked before anything runs. A file that is not a
/// results file, a folder, a pipe, the spec itself, results of another bench for a `--phase`
/// re-run, and a file another run holds are each refused, named, and left as they were.
/// Another run holding `lock`: a live process holding its `flock` (util-linux's `flock`,
/// become a `sleep`), whatever it is called, with its pid written in it as a run writes its
/// own; returned once it holds it.
fn holding(lock: &Path) -> std::process::Child {
    let holder = std::process::Command::new("flock")
        .arg("--no-fork")
        .arg(lock)
        .args(["sleep", "60"])
        .spawn()
        .expect("flock (util-linux) holding the lock");
    std::fs::write(lock, format!("{}\n", holder.id())).expect("its pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::File::open(lock).is_ok_and(|file| file.try_lock_shared().is_ok()) {
        assert!(
            std::time::Instant::now() < deadline,
            "flock never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    holder
}

#[test]
fn run_refuses_an_out_it_must_not_touch() {
    let dir = "target/headroom-cli-out";
    let root = common::root();
    let _ = std::fs::remove_dir_all(root.join(dir));
    std::fs::create_dir_all(root.join(dir)).expect("scratch");
    let at = |name: &str| format!("{dir}/{name}");
    std::fs::write(root.join(at("notes.txt")), "my notes\n").expect("notes");
    std::fs::copy(
        root.join("examples/relay.toml"),
        root.join(at("relay.toml")),
    )
    .expect("spec");
    std::fs::copy(
        root.join(common::fixtures::RELAY_RESULTS_PATH),
        root.join(at("relay-results.json")),
    )
    .expect("results");
    let lock = root.join(at("busy.json.lock"));
    let mut holder = holding(&lock);
    let mut transcripts = vec![
        transcript(&["run", "examples/relay.toml", "--out", &at("notes.txt")]),
        transcript(&["run", "examples/relay.toml", "--out", dir]),
        transcript(&["run", &at("relay.toml"), "--out", &at("relay.toml")]),
        transcript(&[
            "run",
            "examples/notes-api.toml",
            "--phase",
            "load",
            "--out",
            &at("relay-results.json"),
        ]),
        transcript(&["run", "examples/relay.toml", "--out", &at("busy.json")])
            .replace(&holder.id().to_string(), "PID"),
    ];
    let _ = holder.kill();
    let _ = holder.wait();
    let fifo = root.join(at("pipe"));
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {
            transcripts.push(transcript(&[
                "run",
                "examples/relay.toml",
                "--out",
                &at("pipe"),
            ]));
        }
        _ => common::say("skipped the pipe case: `mkfifo` is not available here"),
    }
    for case in &transcripts {
        assert!(case.contains("exit code: 1\n"), "{case}");
    }
    insta::assert_snapshot!("run-out-refusals", transcripts[..5].join("\n"));
    if let Some(pipe) = transcripts.get(5) {
        assert!(
            pipe.contains("is not a regular file (a device, a pipe or a socket)"),
            "{pipe}"
        );
    }
    // Nothing was touched: the notes, the spec and the other bench's results are as they were.
    assert_eq!(
        std::fs::read_to_string(root.join(at("notes.txt"))).expect("notes"),
        "my notes\n"
    );
    assert_eq!(
        std::fs::read(root.join(at("relay.toml"))).expect("spec"),
        std::fs::read(root.join("examples/relay.toml")).expect("spec")
    );
    assert_eq!(
        std::fs::read(root.join(at("relay-results.json"))).expect("results"),
        std::fs::read(root.join(common::fixtures::RELAY_RESULTS_PATH)).expect("results")
    );
    assert!(!root.join(at("notes.txt.prev")).exists());
    let _ = std::fs::remove_dir_all(root.join(dir));
}

/// Issue 12, bounded: a run estimated over a day needs --yes, and a spec over 1 MiB is not
/// read (nothing runs, nothing is expanded).
#[test]
fn what_is_too_long_or_too_large_is_refused_before_it_starts() {
    let mut transcripts = vec![transcript(&["run", "tests/fixtures/run/day-long.toml"])];
    let dir = common::root().join("target/headroom-cli-large");
    std::fs::create_dir_all(&dir).expect("scratch");
    let mut spec = String::from("[bench]\nname = \"large\"\n# ");
    spec.push_str(&"x".repeat(1024 * 1024));
    std::fs::write(dir.join("large.toml"), spec).expect("write");
    transcripts.push(transcript(&[
        "validate",
        "target/headroom-cli-large/large.toml",
    ]));
    for case in &transcripts {
        assert!(case.contains("exit code: 1\n"), "{case}");
    }
    insta::assert_snapshot!("too-long-or-too-large", transcripts.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 12, bounded at run start: a point holding more sockets than this machine lets a
/// process open files is refused before any target starts, with the limit and the fix; no
/// results file is written. The machine here is a shell whose limit is lowered to 1,024.
#[test]
fn a_run_past_the_machines_file_limit_is_refused_before_it_starts() {
    let dir = common::root().join("target/headroom-cli-file-limit");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let out = dir.join("results.json");
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 1024 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_headroom"),
            "run",
            "tests/fixtures/run/many-sockets.toml",
            "--out",
        ])
        .arg(&out)
        .current_dir(common::root())
        .output()
        .expect("run headroom");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: tests/fixtures/run/many-sockets.toml: phase `one` holds 2,000 sockets open at once (2,064 files with the run's own), and a process here may open 1,024 (`ulimit -Hn`): raise the hard limit (`ulimit -Hn 65536` as root, `LimitNOFILE=` under systemd, `--ulimit nofile=` in Docker) or run fewer sockets; both headroom and the target need one file per socket\n"
    );
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    // `validate` on the same machine says it, as a warning: the spec itself is valid.
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 1024 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_headroom"),
            "validate",
            "tests/fixtures/run/many-sockets.toml",
        ])
        .current_dir(common::root())
        .output()
        .expect("run headroom");
    let (stdout, warning) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{warning}");
    assert_eq!(
        stdout,
        "tests/fixtures/run/many-sockets.toml: valid (1 warning)\n"
    );
    assert_eq!(
        warning,
        format!(
            "warning: `headroom run tests/fixtures/run/many-sockets.toml` would be refused on this machine: {}",
            stderr.trim_start_matches("error: tests/fixtures/run/many-sockets.toml: ")
        )
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "a refused run left {left:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 12: the demo target refuses to seed more notes than the machine can hold (it aborted
/// on allocation); the available memory is this machine's, shown here as N.
#[test]
fn the_demo_target_refuses_to_seed_more_than_memory_holds() {
    let (code, stdout, stderr) = headroom(&["demo-target", "--seed-notes", "10000000000"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    let (before, after) = stderr
        .split_once(" MiB available")
        .expect("the available memory");
    let shown = before
        .rsplit_once(" has ")
        .map(|(head, _)| head)
        .expect("has");
    assert_eq!(
        format!("{shown} has N MiB available{after}"),
        "error: --seed-notes 10000000000 of --note-size 200B take about 3,128,051 MiB, and this machine has N MiB available: seed fewer or smaller notes (at most half the available memory)\n"
    );
}

/// Issue 44: `run --segment` and `headroom k8s` hold a spec to one rule (the runner's
/// `split`): a target each segment would start, steps without a barrier, `--check` on a
/// share and a searched phase are refused before anything starts, each with why and the fix,
/// in the same words on both commands.
#[test]
fn a_run_that_cannot_be_split_is_refused_before_it_starts() {
    let started = "examples/notes-api.toml";
    let (code, _, stderr) = headroom(&["run", started, "--segment", "1/2"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("--segment 1/2: every segment would start a server of its own"),
        "{stderr}"
    );
    let searched = "tests/fixtures/k8s/searched.toml";
    let run = headroom(&[
        "run",
        searched,
        "--segment",
        "1/2",
        "--barrier",
        "127.0.0.1:1",
    ]);
    let out = common::root().join("target/headroom-cli-split");
    let out = out.display().to_string();
    let k8s = headroom(&[
        "k8s",
        searched,
        "--segments",
        "2",
        "--image",
        "h:1",
        "--out",
        &out,
    ]);
    let why = "phase `ceiling` searches its ceiling, and a segment judges no SLO";
    for (code, _, stderr) in [&run, &k8s] {
        assert_eq!(*code, 1, "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(stderr.contains("to run them in segments"), "{stderr}");
    }
    let (code, _, stderr) = headroom(&["run", searched, "--segment", "1/2", "--check"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("a share's SLOs are not judged alone"),
        "{stderr}"
    );
}
