//! The Socket.IO codec on packets as the protocol's documents write them.

use super::*;
use crate::fanout::{Stamp, StampFinder};

#[test]
fn packets_are_told_apart_by_type_and_namespace() {
    assert_eq!(classify("2", "/"), Incoming::Ping);
    assert_eq!(classify("1", "/"), Incoming::Close);
    assert_eq!(classify("6", "/"), Incoming::Other);
    assert_eq!(
        classify(r#"40{"sid":"wZX3oN0bSVIhsaknAAAI"}"#, "/"),
        Incoming::Connected
    );
    assert_eq!(
        classify(r#"40/admin,{"sid":"oSO0OpakMV_3jnilAAAA"}"#, "/admin"),
        Incoming::Connected
    );
    // Another namespace's packets are not this socket's.
    assert_eq!(classify(r#"40/admin,{"sid":"x"}"#, "/"), Incoming::Other);
    assert_eq!(
        classify(r#"42["chat","hr1.1.2"]"#, "/admin"),
        Incoming::Other
    );
    assert_eq!(
        classify(r#"42/admin,["chat",{}]"#, "/admin"),
        Incoming::Event
    );
    assert_eq!(classify("41", "/"), Incoming::Disconnect);
    assert_eq!(classify("41/admin,", "/admin"), Incoming::Disconnect);
    assert_eq!(classify(r#"4312["ok"]"#, "/"), Incoming::Ack(12));
    assert_eq!(
        classify(r#"43/admin,13["ok"]"#, "/admin"),
        Incoming::Ack(13)
    );
    assert_eq!(
        classify(r#"44{"message":"Not authorized"}"#, "/"),
        Incoming::ConnectError("Not authorized".into())
    );
    assert_eq!(
        classify(
            r#"44/admin,{"message":"Not authorized","data":{"reason":"token"}}"#,
            "/admin"
        ),
        Incoming::ConnectError("Not authorized".into())
    );
    // A binary event's placeholder packet is read as nothing.
    assert_eq!(
        classify(r#"451-["hello",{"_placeholder":true,"num":0}]"#, "/"),
        Incoming::Other
    );
}

#[test]
fn the_open_packet_gives_the_heartbeat() {
    let open = r#"0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#;
    let heartbeat = open_packet(open);
    assert_eq!(
        heartbeat,
        Some(Heartbeat {
            interval: Duration::from_secs(25),
            timeout: Duration::from_secs(20),
        })
    );
    assert_eq!(
        heartbeat.map(Heartbeat::patience),
        Some(Duration::from_secs(45))
    );
    assert_eq!(open_packet(r#"0{"sid":"x"}"#), None);
    assert_eq!(open_packet(r#"40{"sid":"x"}"#), None);
}

#[test]
fn the_engine_url_is_the_server_and_the_path() {
    assert_eq!(
        engine_url("http://127.0.0.1:8080", "/socket.io/").as_deref(),
        Ok("ws://127.0.0.1:8080/socket.io/?EIO=4&transport=websocket")
    );
    assert_eq!(
        engine_url("https://[::1]:8443/?token=t-1", "/io/").as_deref(),
        Ok("wss://[::1]:8443/io/?EIO=4&transport=websocket&token=t-1")
    );
    let refused = engine_url("http://127.0.0.1:8080/chat", "/socket.io/");
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("socket_io.path")),
        "{refused:?}"
    );
    assert!(engine_url("ftp://127.0.0.1", "/socket.io/").is_err());
}

fn plan(namespace: &str, auth: Option<&str>, join_ack: bool, ack: bool) -> Plan {
    let fill = |text: &str| crate::fill::fill(text, 8080, std::path::Path::new("headroom"));
    Plan::new(
        &SocketIo {
            namespace: namespace.into(),
            auth: auth.map(str::to_owned),
            joins: vec![
                r#"["join","room-{room}"]"#.into(),
                r#"["hello",{peer}]"#.into(),
            ],
            join_ack,
            ack,
            ..SocketIo::default()
        },
        &fill,
    )
    .expect("a plan")
}

/// Issue 57: `auth` takes `{env:NAME}` (a token from the environment) and `{port}`, as every
/// other string of a scenario does; a variable that is not set fails the plan, naming it.
#[test]
fn auth_fills_the_environment() {
    // SAFETY: set before any thread of this test reads it; the name is this test's own.
    unsafe { std::env::set_var("HEADROOM_TEST_SIO_TOKEN", "s3cret") };
    let filled = plan(
        "/admin",
        Some(r#"{"token":"{env:HEADROOM_TEST_SIO_TOKEN}","port":{port}}"#),
        false,
        false,
    );
    assert_eq!(filled.connect, r#"40/admin,{"token":"s3cret","port":8080}"#);
    let fill = |text: &str| crate::fill::fill(text, 8080, std::path::Path::new("headroom"));
    let unset = Plan::new(
        &SocketIo {
            auth: Some(r#"{"token":"{env:HEADROOM_TEST_NOT_SET_ANYWHERE}"}"#.to_owned()),
            ..SocketIo::default()
        },
        &fill,
    );
    assert!(
        unset
            .err()
            .is_some_and(|e| e.contains("HEADROOM_TEST_NOT_SET_ANYWHERE")),
        "an unset variable is named"
    );
}

#[test]
fn connect_and_joins_are_the_packets_the_protocol_writes() {
    let socket = Seat { room: 3, peer: 1 };
    let main = plan("/", None, false, false);
    assert_eq!(main.connect, "40");
    assert_eq!(main.join(0, socket), r#"42["join","room-3"]"#);
    let admin = plan("/admin", Some(r#"{"token":"123"}"#), true, false);
    assert_eq!(admin.connect, r#"40/admin,{"token":"123"}"#);
    assert_eq!(admin.join(0, socket), r#"42/admin,0["join","room-3"]"#);
    assert_eq!(admin.join(1, socket), r#"42/admin,1["hello",1]"#);
}

#[test]
fn a_message_is_an_event_with_its_id_as_ack_id_and_its_stamp_findable() {
    let acked = plan("/chat", None, false, true);
    let (prefix, body) = acked.message("chat \"1\"", r#"{"stamp":"{stamp}","text":"{payload}"}"#);
    let template = crate::rooms::Template::socket_io(&prefix, true, &body, 80);
    let stamp = Stamp {
        id: 42,
        sent_us: 0x1f,
    };
    let Message::Text(text) = template.render(3, 1, 0, stamp) else {
        panic!("a Socket.IO message is a text frame");
    };
    assert!(
        text.starts_with(r#"42/chat,42["chat \"1\"",{"stamp":"hr1.2a.1f","text":"xx"#),
        "{text}"
    );
    assert_eq!(text.len(), 80, "{text}");
    let event: serde_json::Value = serde_json::from_str(&text[10..]).expect("the event is JSON");
    assert_eq!(event[1]["stamp"], "hr1.2a.1f");
    assert_eq!(classify(&text, "/chat"), Incoming::Event);
    assert_eq!(StampFinder::default().find(text.as_bytes()), Some(stamp));
    let unacked = plan("/", None, false, false);
    let (prefix, body) = unacked.message("chat", r#"{"s":"{stamp}"}"#);
    let Message::Text(text) =
        crate::rooms::Template::socket_io(&prefix, false, &body, 0).render(0, 0, 0, stamp)
    else {
        panic!("text");
    };
    assert_eq!(text.as_str(), r#"42["chat",{"s":"hr1.2a.1f"}]"#);
}

#[test]
fn a_session_answers_pings_times_acks_and_sees_the_end() {
    let mut session = Session::new("/");
    assert!(!session.on_text("2", || 0));
    assert!(!session.on_text("2", || 0));
    assert_eq!(session.pongs_due, 2);
    session.asked(5, 1_000);
    session.asked(6, 2_000);
    assert!(!session.on_text(r#"436[]"#, || 2_500));
    assert!(!session.on_text(r#"435[]"#, || 9_000));
    // An ack no message asked is not timed.
    assert!(!session.on_text(r#"435[]"#, || 9_500));
    assert_eq!(session.acked, vec![500, 8_000]);
    assert!(session.on_text(r#"42["chat","hr1.1.1"]"#, || 0));
    assert_eq!(session.ended, None);
    assert!(!session.on_text("41", || 0));
    assert_eq!(session.ended, Some(Incoming::Disconnect));
}

#[test]
fn refusal_messages_are_kept_word_for_word_and_bounded() {
    let figures = Figures::new();
    for _ in 0..3 {
        figures.rejected("Not authorized");
    }
    // A server that names each socket in its refusal: 16 messages kept, the rest together.
    for i in 0..40 {
        figures.rejected(&format!("socket {i} refused"));
    }
    figures.rejected(&"x".repeat(1000));
    let rejections = figures.rejections.lock().expect("the rejections");
    assert_eq!(rejections.get("Not authorized"), Some(&3));
    assert_eq!(rejections.len(), 17, "{rejections:?}");
    assert_eq!(rejections.get(OTHER_REJECTIONS), Some(&26));
    assert_eq!(rejections.values().sum::<u64>(), 44);
}
