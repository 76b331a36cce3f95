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
