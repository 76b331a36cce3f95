//! WebSocket rooms: every frame delivered on a healthy target, dropped broadcasts, a stalling
//! target's tail, sockets that fail counted by why. Results are read through their types.

use headroom_results::Failure;

use super::*;

#[test]
fn rooms_on_a_healthy_target_deliver_every_frame() {
    let (output, results) = run_fixture("rooms", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let rooms = rooms_in(run, "chat");
    let sockets = &rooms.sockets;
    assert_eq!(sockets.opened, 40, "{sockets:?}");
    // The server closes a socket silent for 1 s and pings every 300 ms: nine peers of ten only
    // receive, so they stayed open because the driver answered the pings.
    assert_eq!(sockets.closed_by_server, 0, "{sockets:?}");
    assert_eq!(sockets.closed_by_us, 40, "{sockets:?}");
    assert!(sockets.pings_received > 40, "{sockets:?}");
    assert!(sockets.pings_sent > 40, "{sockets:?}");
    // 20 messages a second per room, four rooms, a 3 s hold (Poisson: ±5 σ).
    let messages = &rooms.messages;
    let sent = messages.sent;
    assert!((160..=320).contains(&sent), "{messages:?}");
    assert_eq!(messages.expected, sent * 9, "{messages:?}");
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    assert_eq!(messages.reached_all, sent, "{messages:?}");
    assert_eq!(messages.late, 0, "{messages:?}");
    // The server counted every frame it sent, and still held every socket at steady state.
    let steady = &run.metrics.steady;
    assert_eq!(steady.get("broadcasts"), Some(&((sent * 9) as f64)));
    assert_eq!(steady.get("peers"), Some(&40.0), "{steady:?}");
    // Seen by everyone is the last recipient's time: never below a single recipient's.
    let (all, one) = (&rooms.seen_by_all, &rooms.seen);
    assert!(all.p50_ms >= one.p50_ms, "{all:?} {one:?}");
    assert!(all.p95_ms >= one.p95_ms, "{all:?} {one:?}");
    assert!(all.max_ms >= one.max_ms, "{all:?} {one:?}");
    // Reloads: every peer about once a second during the hold, answered by the page route.
    let reload = rooms.reload.as_ref().expect("reloads");
    assert!((60..=200).contains(&reload.requests), "{reload:?}");
    assert_eq!(reload.ok, reload.requests, "{reload:?}");
    assert_eq!(steady.get("page_requests"), Some(&(reload.requests as f64)));
    for name in ["seen", "delivered", "sockets", "closed", "reloads"] {
        assert_eq!(slo(run, name).pass, Some(true), "{:?}", slo(run, name));
    }
    assert!(leftovers("1010B").is_empty());
    clean("rooms");
}

#[test]
fn dropped_broadcasts_show_in_delivered_and_reach() {
    let (output, results) = run_fixture("rooms-drop", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let messages = &rooms_in(run, "chat").messages;
    // 100 messages a second over 3 s, each expected at the 19 other peers of its room.
    assert!((295..=305).contains(&messages.sent), "{messages:?}");
    assert_eq!(messages.expected, messages.sent * 19);
    let delivered = messages.delivered as f64 / messages.expected as f64;
    let reach = messages.on_time as f64 / messages.expected as f64;
    assert!((delivered - 0.99).abs() <= 0.005, "delivered {delivered}");
    assert!((reach - 0.99).abs() <= 0.005, "reach {reach}");
    // What the server says it dropped is what we missed.
    let missed = messages.expected - messages.delivered;
    let steady = &run.metrics.steady;
    assert_eq!(steady.get("dropped"), Some(&(missed as f64)), "{steady:?}");
    assert!(messages.incomplete > 0);
    // A p95 that falls among messages that never reached everyone is "never": a failure with
    // no value, not a fast time.
    let seen = slo(run, "seen");
    assert_eq!((seen.pass, seen.value), (Some(false), None), "{seen:?}");
    assert!(seen.note.as_deref().is_some_and(|n| n.contains("never")));
    assert_eq!(slo(run, "delivered").pass, Some(false));
    assert_eq!(slo(run, "reach").pass, Some(true));
    assert!(leftovers("1011B").is_empty());
    clean("rooms-drop");
}

#[test]
fn a_stalling_target_shows_in_the_delivery_tail() {
    let (output, results) = run_fixture("rooms-stall", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let rooms = rooms_in(run, "typing");
    let messages = &rooms.messages;
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    // 200 ms stalls every second hold the messages that arrive during them.
    let seen = &rooms.seen;
    assert!(seen.p99_ms >= 150.0, "{seen:?}");
    assert!(seen.p50_ms < 100.0, "{seen:?}");
    assert!(rooms.seen_by_all.p99_ms >= 150.0);
    assert_eq!(slo(run, "seen").pass, Some(false));
    assert!(leftovers("1012B").is_empty());
    clean("rooms-stall");
}

#[test]
fn sockets_that_fail_are_counted_by_why() {
    let (output, results) = run_fixture("rooms-failures", &[], &[]);
    // A scenario none of whose sockets opened measured nothing: the run fails, named (issue
    // 12), and its SLOs are still judged on what was measured (every socket failed).
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let Some(Failure::NothingMeasured { scenario, why }) = &run.failure else {
        panic!("nothing measured: {:?}", run.failure);
    };
    assert_eq!(scenario, "missing");
    assert_eq!(
        why,
        "none of its 5 sockets opened (5 answered the upgrade with another status)"
    );
    let missing = &rooms_in(run, "missing").sockets;
    assert_eq!(missing.opened, 0);
    assert_eq!(missing.failed.status, 5, "{missing:?}");
    let refused = &rooms_in(run, "refused").sockets;
    assert_eq!(refused.failed.refused, 5, "{refused:?}");
    let quiet = &rooms_in(run, "quiet").sockets;
    assert_eq!(quiet.opened, 5, "{quiet:?}");
    assert_eq!(quiet.closed_by_server, 5, "{quiet:?}");
    assert_eq!(quiet.closed_by_us, 0, "{quiet:?}");
    for name in ["missing", "refused", "quiet"] {
        let verdict = slo(run, name);
        assert_eq!(
            (verdict.pass, verdict.value),
            (Some(false), Some(1.0)),
            "{verdict:?}"
        );
    }
    assert!(leftovers("1013B").is_empty());
    clean("rooms-failures");
}
