//! Issue 57: servers that deliver what was not sent to them. A Socket.IO chat that sends every
//! message to every socket, and an SSE hub that sends each event to every stream of every
//! room, twice: each message counts once at the peer that should have it ("8 of 8
//! delivered"), every other copy is counted as misrouted or duplicate, and the run fails for
//! it (`run --check` exits 2), spec SLOs or not.

use headroom_results::{MessageCounts, RoomsResult};

use super::*;

/// The counts of 2 rooms of 2, each peer sending 2 messages: 8 messages, each expected at
/// its room's other peer.
fn eight_of_eight(rooms: &RoomsResult) -> &MessageCounts {
    let messages = &rooms.messages;
    assert_eq!(rooms.sockets.opened, 4, "{:?}", rooms.sockets);
    assert_eq!(messages.sent, 8, "{messages:?}");
    assert_eq!(messages.expected, 8, "{messages:?}");
    assert_eq!(messages.delivered, 8, "{messages:?}");
    assert_eq!(messages.reached_all, 8, "{messages:?}");
    assert_eq!(messages.unexpected, 0, "{messages:?}");
    messages
}

/// The run failed for the faults alone: the spec's own SLO passed, each fault is a failed
/// verdict of its own, and `--check` exits 2.
fn failed_for(output: &Output, run: &headroom_results::RunResult, faults: &[(&str, f64)]) {
    assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
    assert_eq!(slo(run, "delivered").pass, Some(true), "{:?}", run.slo);
    for (name, count) in faults {
        let verdict = slo(run, name);
        assert_eq!(verdict.pass, Some(false), "{verdict:?}");
        assert_eq!(verdict.value, Some(*count), "{verdict:?}");
        assert_eq!(verdict.expression, format!("{name} == 0"));
    }
    assert_eq!(run.slo.len(), 1 + faults.len(), "{:?}", run.slo);
}

#[test]
fn a_socket_io_server_that_sends_to_every_socket_fails_on_its_misrouted_copies() {
    if let Err(why) = installed_by("socketio.sh") {
        common::say(&format!(
            "skipped the leaking Socket.IO server's test: {why}"
        ));
        return;
    }
    let (output, results) = run_fixture("leaky-socketio", &["--check", "--no-page"], &[]);
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let messages = eight_of_eight(rooms_in(run, "chat"));
    // Each message goes to all 4 sockets: the peer it is for, the sender's own echo, and the
    // other room's 2 sockets.
    assert_eq!(messages.misrouted, 16, "{messages:?}");
    assert_eq!(messages.duplicates, 0, "{messages:?}");
    assert_eq!(messages.own_echoes, 8, "{messages:?}");
    // headroom's counts add up to what the server says it wrote.
    let steady = &run.metrics.steady;
    assert_eq!(steady.get("frames_sent"), Some(&32.0), "{steady:?}");
    failed_for(&output, run, &[("chat.misrouted", 16.0)]);
    assert!(
        stderr(&output)
            .contains("8 of 8 frames delivered, 16 misrouted (outside the sender's room)"),
        "{}",
        stderr(&output)
    );
    clean("leaky-socketio");
}

#[test]
fn an_sse_hub_that_sends_twice_to_every_stream_fails_on_both_faults() {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        common::say("skipped the twice-over SSE hub's test: Node.js is not installed");
        return;
    }
    let (output, results) = run_fixture("sse-twice", &["--check", "--no-page"], &[]);
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let messages = eight_of_eight(rooms_in(run, "feed"));
    // Each message, twice to each of 4 streams: the peer it is for (its second copy a
    // duplicate), the sender's stream (two echoes), the other room's 2 streams (4 misrouted).
    assert_eq!(messages.duplicates, 8, "{messages:?}");
    assert_eq!(messages.misrouted, 32, "{messages:?}");
    assert_eq!(messages.own_echoes, 16, "{messages:?}");
    let steady = &run.metrics.steady;
    assert_eq!(steady.get("written"), Some(&64.0), "{steady:?}");
    failed_for(
        &output,
        run,
        &[("feed.misrouted", 32.0), ("feed.duplicates", 8.0)],
    );
    clean("sse-twice");
}
