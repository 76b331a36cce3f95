//! Issue 42: every signal ends every wait at once. One Ctrl-C while headroom waits for a
//! target's readiness (up to ten minutes) or for a setup step (a ten-minute migration) ends
//! the run within seconds with 130: the results written, the target and the step's process
//! group gone, the lock removed.

use headroom_results::Failure;

use super::*;

/// Starts `fixture` in the background, waits until `marker` runs, sends one Ctrl-C: the run
/// ends within 10 s with 130, its one run interrupted, nothing left of `left`.
fn one_ctrl_c_ends_the_wait(fixture: &str, marker: &str, left: &[&str]) {
    let _machine = shared();
    let out = fresh_out(fixture);
    let child = start_in_background(fixture, &out, marker);
    std::thread::sleep(Duration::from_secs(1));
    let sent = std::time::Instant::now();
    send("INT", &child);
    let output = child.wait_with_output().expect("wait");
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}: {}",
        sent.elapsed(),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("interrupted again"),
        "one signal was enough: {}",
        stderr(&output)
    );
    let results = typed(&read_results(&out));
    let run = typed_runs(&results)[0];
    assert!(
        matches!(run.failure, Some(Failure::Interrupted)),
        "{:?}",
        run.failure
    );
    for marker in left {
        wait_until(Duration::from_secs(5), || leftovers(marker).is_empty());
        assert!(leftovers(marker).is_empty(), "{:?}", leftovers(marker));
    }
    assert!(!out.with_file_name("results.json.lock").exists());
    clean(fixture);
}

#[test]
fn one_ctrl_c_ends_a_wait_for_readiness() {
    one_ctrl_c_ends_the_wait("waits-ready", "1063B", &["1063B"]);
}

#[test]
fn one_ctrl_c_stops_a_setup_step() {
    // The step's shell is what runs by then: wait for it, not only the target.
    one_ctrl_c_ends_the_wait("waits-step", "1064S", &["1064B", "1064S"]);
}

/// Issue 57: a second signal during a teardown step ends headroom (130) and the step's whole
/// process group: the child the step's shell started is not left running under pid 1.
#[test]
fn a_second_signal_ends_a_teardown_step_and_its_children() {
    let _machine = shared();
    let fixture = "waits-teardown";
    let out = fresh_out(fixture);
    let child = start_in_background(fixture, &out, "1065T");
    send("INT", &child);
    // The first signal lets the teardown run on.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !leftovers("1065T").is_empty(),
        "the first signal stopped the teardown"
    );
    let sent = std::time::Instant::now();
    send("INT", &child);
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "interrupted again (Ctrl-C): not waiting; the target and any step in flight are killed"
        ),
        "{}",
        stderr(&output)
    );
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    for marker in ["1065T", "1078B"] {
        wait_until(Duration::from_secs(5), || leftovers(marker).is_empty());
        assert!(
            leftovers(marker).is_empty(),
            "{marker}: {:?}",
            leftovers(marker)
        );
    }
    assert!(!out.with_file_name("results.json.lock").exists());
    clean(fixture);
}

/// Issue 57: a live run holds its results file by identity (a lock its process holds), not
/// by its binary's name: a run of headroom installed as `hr` is refused to a second run on
/// the same `--out`, which names it; once it ends, the file is free.
#[test]
fn a_renamed_binary_s_live_run_keeps_its_lock() {
    let _machine = shared();
    let fixture = "waits-ready";
    let out = fresh_out("renamed-lock");
    let folder = std::env::temp_dir().join(format!("headroom-hr-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("a folder");
    let hr = folder.join("hr");
    std::fs::copy(env!("CARGO_BIN_EXE_headroom"), &hr).expect("the binary as hr");
    let spec = format!("tests/fixtures/run/{fixture}.toml");
    let first = std::process::Command::new(&hr)
        .args(["run", &spec, "--no-page", "--out"])
        .arg(&out)
        .current_dir(common::root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hr run");
    assert!(
        wait_until(Duration::from_secs(30), || !leftovers("1063B").is_empty()),
        "hr's target never started"
    );
    let out_arg = out.display().to_string();
    let second = headroom_unlocked(&["run", &spec, "--no-page", "--out", &out_arg], &[]);
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!(
            "another run is writing {out_arg}: pid {} (`hr`) holds its lock",
            first.id()
        )),
        "{}",
        stderr(&second)
    );
    send("INT", &first);
    let ended = first.wait_with_output().expect("wait");
    assert_eq!(ended.status.code(), Some(130), "{}", stderr(&ended));
    assert!(!out.with_file_name("results.json.lock").exists());
    wait_until(Duration::from_secs(5), || leftovers("1063B").is_empty());
    let _ = std::fs::remove_dir_all(&folder);
    clean("renamed-lock");
}
