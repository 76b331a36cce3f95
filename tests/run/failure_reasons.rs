//! Issue 57: realtime sockets that fail are told by their cause, not "other": a wrong
//! Sec-WebSocket-Accept, a malformed Engine.IO open packet, a frame over the bound while a
//! Socket.IO session opens; and a frame or SSE event over the bound once open is said to be
//! headroom's cut, not a drop by the server.

use headroom_test_support::hostile::{self, Upgrade};

use super::*;

#[test]
fn each_failed_socket_is_counted_by_its_cause() {
    let _machine = shared();
    let accept = hostile::upgrading(Upgrade::WrongAcceptKey);
    let engine = hostile::upgrading(Upgrade::MalformedEngineIoOpen);
    let large = hostile::upgrading(Upgrade::OversizedFrame);
    let event = hostile::upgrading(Upgrade::OversizedEvent);
    let (output, results) = run_fixture_with(
        headroom_unlocked,
        "hostile-upgrades",
        &["--no-page"],
        &[
            ("HEADROOM_TEST_ACCEPT_PORT", accept.port().to_string()),
            ("HEADROOM_TEST_ENGINE_PORT", engine.port().to_string()),
            ("HEADROOM_TEST_LARGE_PORT", large.port().to_string()),
            ("HEADROOM_TEST_EVENT_PORT", event.port().to_string()),
        ],
    );
    drop((accept, engine, large, event));
    let results = typed(&results);
    let run = typed_runs(&results)[0];
    let failed = |name: &str| rooms_in(run, name).sockets.failed.clone();
    let accept = failed("accept");
    assert_eq!((accept.handshake, accept.other), (4, 0), "{accept:?}");
    let engine = failed("engine");
    assert_eq!((engine.protocol, engine.other), (4, 0), "{engine:?}");
    let opening = failed("opening");
    assert_eq!((opening.too_large, opening.other), (4, 0), "{opening:?}");
    // Open, then cut by headroom: not the server's drop.
    for name in ["open", "feed"] {
        let sockets = &rooms_in(run, name).sockets;
        assert_eq!(sockets.opened, 4, "{name}: {sockets:?}");
        assert_eq!(sockets.dropped.too_large, 4, "{name}: {sockets:?}");
        assert_eq!(sockets.closed_by_server, 0, "{name}: {sockets:?}");
        assert_eq!(sockets.dropped.reset, 0, "{name}: {sockets:?}");
    }
    // Said by cause: the run's failure (the first scenario that opened nothing) and each
    // scenario's failures in words.
    let Some(headroom_results::Failure::NothingMeasured { scenario, why }) = &run.failure else {
        panic!("nothing measured: {:?}", run.failure);
    };
    assert_eq!(scenario, "accept");
    assert_eq!(
        why,
        "none of its 4 sockets opened (4 answered the upgrade as no WebSocket server does (a wrong Sec-WebSocket-Accept, or no Upgrade header))"
    );
    assert!(
        stderr(&output).contains(why.as_str()),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        engine.describe().as_deref(),
        Some(
            "4 opened a Socket.IO session that is not the protocol's (a malformed Engine.IO open packet)"
        )
    );
    assert_eq!(
        opening.describe().as_deref(),
        Some("4 sent a frame over headroom's bound")
    );
    for name in ["open", "feed"] {
        assert_eq!(rooms_in(run, name).drops(), None, "not the server's drops");
    }
    assert!(leftovers("1066B").is_empty());
    clean("hostile-upgrades");
}
