//! Issue 42: an external server (`url` with `pid_file`) is the process that serves the target:
//! the pid and its descendants, never its process group. Started in the background of the
//! script that runs headroom (the usual CI pattern, one process group for both), it is measured
//! alone; a stale pid file naming another process is refused, naming it and what listens on the
//! port; a pid file that is a FIFO or a device is refused at once; a server that exits during
//! the load fails the run saying so, what was measured before kept.

use headroom_results::Failure;

use super::*;

/// `sh -c 'server & echo $! > PID; headroom run …; kill $!'`: the server and headroom in the
/// shell's process group. The server holds 8,000 notes of 10,060 bytes (80.5 MB) at start,
/// a memory known before the run; the run measures it, one process, not the shell's group.
#[test]
fn a_server_started_in_the_background_of_headrooms_script_is_measured_alone() {
    let _machine = shared();
    let out = fresh_out("external-background");
    let dir = out.parent().expect("a folder").to_path_buf();
    std::fs::create_dir_all(&dir).expect("a folder");
    let pid_file = dir.join("server.pid");
    let port = free_port();
    let bin = env!("CARGO_BIN_EXE_headroom");
    let script = format!(
        "'{bin}' demo-target --port {port} --seed-notes 8000 --note-size 10060B >/dev/null 2>&1 & \
         echo $! > '{pid}'; \
         '{bin}' run tests/fixtures/run/external-background.toml --no-page --out '{out}'; code=$?; \
         kill $!; wait; exit $code",
        pid = pid_file.display(),
        out = out.display(),
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .current_dir(root())
        .env("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())
        .env("HEADROOM_TEST_PID_FILE", pid_file.display().to_string())
        .env("HEADROOM_COMPETED_RERUNS", "0")
        .output()
        .expect("sh");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&read_results(&out));
    for run in typed_runs(&results) {
        assert!(run.failure.is_none(), "{:?}", run.failure);
        let steady = run.process.steady.expect("read at the steady state");
        // The server alone: one process, its 80.5 MB of notes and its runtime; the group
        // would add the shell and headroom itself (and was refused for holding headroom).
        assert_eq!(steady.processes, 1, "{steady:?}");
        let mib = steady.rss_bytes as f64 / 1_048_576.0;
        assert!((77.0..160.0).contains(&mib), "{mib:.1} MiB: {steady:?}");
        assert!(
            run.notes
                .iter()
                .any(|note| note.contains("was sampled with its descendants: 1 process ")),
            "{:?}",
            run.notes
        );
    }
    assert!(leftovers("10060B").is_empty(), "{:?}", leftovers("10060B"));
    clean("external-background");
}

/// `headroom run` of the `external` fixture into the test's own results (`name`), loading
/// the server on `port` with `pid_file`: its output and results.
fn run_external(name: &str, port: u16, pid_file: &std::path::Path) -> (Output, Value) {
    let _machine = shared();
    run_external_unlocked(name, port, pid_file)
}

/// `run_external` by a test that holds its share of the machine already.
fn run_external_unlocked(name: &str, port: u16, pid_file: &std::path::Path) -> (Output, Value) {
    let out = out(name);
    let out_arg = out.display().to_string();
    let mut envs = vec![
        ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
        ("HEADROOM_TEST_PID_FILE", pid_file.display().to_string()),
    ];
    envs.push(beside_other_tests());
    let output = headroom_unlocked(
        &[
            "run",
            "tests/fixtures/run/external.toml",
            "--no-page",
            "--out",
            &out_arg,
        ],
        &envs,
    );
    (output, read_results(&out))
}

/// A pid file left from an earlier server, naming a live process of someone else's (a shell
/// with a password among its arguments): every run is refused, the message naming that
/// process and the server that listens on the port by their programs alone, so no argument
/// of anyone's process reaches the results (issue 57).
#[test]
fn a_stale_pid_file_naming_another_process_is_refused_by_name() {
    let (mut server, port) = start_demo_target("1060B");
    let mut sleep = Command::new("sh")
        .args(["-c", "sleep 60", "--password=hr-secret-pw-42"])
        .spawn()
        .expect("sh");
    let pid_file = fresh_out("external-stale").with_file_name("stale.pid");
    std::fs::create_dir_all(pid_file.parent().expect("a folder")).expect("a folder");
    std::fs::write(&pid_file, format!("{}\n", sleep.id())).expect("pid file");
    let (output, results) = run_external("external-stale", port, &pid_file);
    let _ = sleep.kill();
    let _ = sleep.wait();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::Load { message }) = &run.failure else {
        panic!("refused: {:?}", run.failure);
    };
    let sleeping = format!(
        "names pid {} (`sh`), which does not listen on port {port}",
        sleep.id()
    );
    let serving = format!("pid {} (`headroom`) does", server.id());
    assert!(
        message.contains(&sleeping)
            && message.contains(&serving)
            && message.contains("a pid file left from an earlier server?"),
        "{message}"
    );
    let written = std::fs::read_to_string(out("external-stale")).expect("the results");
    for text in [message.as_str(), written.as_str(), &stderr(&output)] {
        assert!(
            !text.contains("hr-secret-pw-42"),
            "an argument leaked: {text}"
        );
        assert!(
            !text.contains("demo-target --port"),
            "an argument leaked: {text}"
        );
    }
    assert!(
        run.scenarios.values().all(|s| s.requests == 0),
        "no load is sent to a refused run"
    );
    assert!(leftovers("1060B").is_empty());
    clean("external-stale");
}

/// A pid file that is a FIFO nobody writes, or a link to /dev/zero: refused at once, named.
#[test]
fn a_pid_file_that_is_a_fifo_or_a_device_is_refused_at_once() {
    let (mut server, port) = start_demo_target("1061B");
    let out = fresh_out("external-fifo");
    let dir = out.parent().expect("a folder").to_path_buf();
    std::fs::create_dir_all(&dir).expect("a folder");
    let fifo = dir.join("server.pid");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let zero = dir.join("zero.pid");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("a link");
    for (file, said) in [
        (&fifo, "is a FIFO, not a pid file"),
        (&zero, "is a device, not a pid file"),
    ] {
        // The clock starts with the run's share of the machine, not before the wait for it.
        let machine = shared();
        let started = std::time::Instant::now();
        let (output, results) = run_external_unlocked("external-fifo", port, file);
        drop(machine);
        assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
        let results = typed(&results);
        let run = typed_runs(&results)[0];
        let Some(Failure::Load { message }) = &run.failure else {
            panic!("refused: {:?}", run.failure);
        };
        assert!(message.contains(said), "{message}");
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(leftovers("1061B").is_empty());
    clean("external-fifo");
}

/// The server exits 4 s after it starts, during the 6 s hold: the run fails naming its pid and
/// when, and what the load measured before is kept.
#[test]
fn an_external_server_that_exits_during_the_load_fails_the_run_saying_so() {
    let (mut server, port) = start_demo_target_with("1062B", &["--exit-after", "4s"]);
    // Not in the run's own folder, which the run starts afresh.
    let pid_file = fresh_out("external-exits-pid").with_file_name("server.pid");
    std::fs::create_dir_all(pid_file.parent().expect("a folder")).expect("a folder");
    std::fs::write(&pid_file, server.id().to_string()).expect("pid file");
    let (output, results) = run_fixture_with(
        headroom,
        "external-exits",
        &["--no-page"],
        &[
            ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
            ("HEADROOM_TEST_PID_FILE", pid_file.display().to_string()),
        ],
    );
    let _ = server.wait();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::ExternalExited { pid, after_s }) = &run.failure else {
        panic!("the server exited: {:?} {}", run.failure, stderr(&output));
    };
    assert_eq!(*pid, i32::try_from(server.id()).expect("a pid"));
    assert!(*after_s > 0.0 && *after_s < 6.0, "{after_s}");
    assert!(
        stderr(&output).contains(&format!("the server (pid {pid}) exited"))
            || String::from_utf8_lossy(&output.stdout)
                .contains(&format!("the server (pid {pid}) exited")),
        "{}",
        stderr(&output)
    );
    // What the load measured before it went is kept: answered requests.
    let api = scenario(run, "api");
    assert!(api.ok > 0, "{api:?}");
    assert!(leftovers("1062B").is_empty());
    clean("external-exits");
    clean("external-exits-pid");
}
