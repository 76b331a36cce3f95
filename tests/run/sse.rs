//! Server-Sent Events rooms: against the demo target, whose streams end every 1.5 s and are
//! reopened with `Last-Event-ID` (every message delivered all the same, the events counted
//! equal to the server's), and against nchan's EventSource endpoints on nginx (100 rooms of
//! 20, reach 100 %). Results are read through their types.

use super::*;

#[test]
fn sse_rooms_reopen_dropped_streams_and_deliver_every_message() {
    let (output, results) = run_fixture("sse", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let rooms = rooms_in(run, "feed");
    let sockets = &rooms.sockets;
    assert_eq!(sockets.opened, 200, "{sockets:?}");
    assert_eq!(
        sockets.failed.status + sockets.failed.other,
        0,
        "{sockets:?}"
    );
    assert_eq!(
        sockets.closed_by_server + sockets.closed_by_us,
        200,
        "{sockets:?}"
    );
    // One message a second from each of 200 peers over a 3 s hold (Poisson: ±5 σ).
    let messages = &rooms.messages;
    let sent = messages.sent;
    assert!((480..=720).contains(&sent), "{messages:?}");
    // Expected at the 9 other peers of the sender's room; the sender's own copy is an echo.
    assert_eq!(messages.expected, sent * 9, "{messages:?}");
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    assert_eq!(messages.own_echoes, sent, "{messages:?}");
    assert_eq!(messages.unstamped, 0, "{messages:?}");
    let sse = rooms.sse.as_ref().expect("SSE figures");
    assert_eq!(sse.published, sent, "{sse:?}");
    assert_eq!(sse.publish_errors.total(), 0, "{sse:?}");
    assert_eq!(sse.publish.count, sent, "{sse:?}");
    // Every stream ended 1.5 s after it opened, within a run of about 5 s: each reopened at
    // least once, most after an event, so with the id they resumed after.
    assert!(sse.reconnects >= 200, "{sse:?}");
    assert!(sse.resumed > 0 && sse.resumed <= sse.reconnects, "{sse:?}");
    // Each stream's page reloaded beside it about once a second over the 3 s hold (Poisson).
    let reload = rooms.reload.as_ref().expect("the reloads");
    assert!((300..=900).contains(&reload.requests), "{reload:?}");
    assert_eq!(reload.ok, reload.requests, "{reload:?}");
    // Every event the server wrote was read: its count is the streams' (replays included).
    let steady = &run.metrics.steady;
    assert_eq!(steady.get("events_sent"), Some(&(sse.events as f64)));
    assert_eq!(steady.get("published"), Some(&(sent as f64)));
    for name in ["seen", "delivered", "sockets"] {
        assert_eq!(slo(run, name).pass, Some(true), "{:?}", slo(run, name));
    }
    assert!(leftovers("1072B").is_empty());
    clean("sse");
}

/// Issue 45: nchan's EventSource subscriber and publisher endpoints (Debian's
/// libnginx-mod-nchan): 100 rooms of 20 streams, peer 0 of each publishing twice a second for
/// a 5 s hold: every message seen by every other stream of its room, reach 100 %.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn nchan_delivers_every_published_message_to_every_subscriber() {
    if let Err(why) = installed_by("nchan.sh") {
        common::say(&format!("skipped nchan's SSE test: {why}"));
        return;
    }
    let (output, results) = run_fixture("sse-nchan", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let rooms = rooms_in(run, "feed");
    let sockets = &rooms.sockets;
    assert_eq!(sockets.opened, 2000, "{sockets:?}");
    assert_eq!(sockets.closed_by_server, 0, "{sockets:?}");
    // Two messages a second per room, evenly spaced, over 5 s: 10 per room.
    let messages = &rooms.messages;
    assert_eq!(messages.sent, 1000, "{messages:?}");
    assert_eq!(messages.expected, 1000 * 19, "{messages:?}");
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    assert_eq!(messages.reached_all, messages.sent, "{messages:?}");
    assert_eq!(messages.own_echoes, messages.sent, "{messages:?}");
    let sse = rooms.sse.as_ref().expect("SSE figures");
    assert_eq!(sse.published, 1000, "{sse:?}");
    // nchan's events: every message at all 20 streams of its room, the publisher's included.
    assert_eq!(sse.events, 1000 * 20, "{sse:?}");
    assert!(rooms.seen_by_all.count == 1000 && rooms.seen_by_all.p95_ms > 0.0);
    for name in ["delivered", "reach", "sockets", "closed"] {
        assert_eq!(slo(run, name).pass, Some(true), "{:?}", slo(run, name));
    }
    assert!(
        std::process::Command::new("pgrep")
            .args(["-f", "headroom-nchan"])
            .output()
            .is_ok_and(|o| o.stdout.is_empty()),
        "nginx left running"
    );
    clean("sse-nchan");
}
