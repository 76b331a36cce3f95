//! Rooms against the demo target and small worked cases.

#[cfg(test)]
use super::topology::{resolve, topology};
use super::*;
use crate::fanout::Stamp;
use headroom_matrix::resolved::{Messages, RoomsScenario};
use headroom_spec::scenario::Arrivals;
use headroom_spec::scenario::{RatePer, Senders};
use headroom_spec::{Rate, Size};
use tokio_tungstenite::tungstenite::Message;

fn scenario(rooms: u64, per_room: Option<u64>, peers: Option<u64>) -> RoomsScenario {
    RoomsScenario {
        name: "t".into(),
        url: "ws://127.0.0.1:{port}/rooms/{room}".into(),
        protocol: Default::default(),
        rooms,
        peers_per_room: per_room,
        peers,
        join: None,
        idle: false,
        send: None,
        ping: Default::default(),
        reload: None,
        deadline: headroom_spec::Duration::from_secs(30),
        connect_timeout: headroom_spec::Duration::from_secs(10),
        connect_over: None,
        stages: Default::default(),
    }
}

fn send(rate: f64, per: RatePer, senders: Senders) -> Messages {
    Messages {
        rate: Rate::per_second(rate),
        per,
        senders,
        arrivals: Arrivals::Fixed,
        size: Size::from_bytes(100),
        template: "{stamp}".into(),
        stamp: StampForm::Json,
    }
}

#[test]
fn peers_spread_evenly_and_rooms_fill_side_by_side() {
    let (sizes, sockets) = topology(&scenario(3, None, Some(10))).expect("topology");
    assert_eq!(sizes, [4, 3, 3]);
    let first: Vec<(u32, u32)> = sockets.iter().take(4).map(|s| (s.room, s.peer)).collect();
    assert_eq!(first, [(0, 0), (1, 0), (2, 0), (0, 1)]);
    assert_eq!(sockets.len(), 10);
    assert!(
        sockets
            .iter()
            .enumerate()
            .all(|(i, s)| s.index as usize == i)
    );
    let (sizes, _) = topology(&scenario(2, Some(5), None)).expect("topology");
    assert_eq!(sizes, [5, 5]);
}

#[test]
fn rates_split_as_the_spec_says() {
    let total_rate = |s: &RoomsScenario| -> f64 {
        let (_, sockets) = topology(s).expect("topology");
        sockets.iter().filter_map(|s| s.sends).map(|p| p.rate).sum()
    };
    let mut s = scenario(4, Some(5), None);
    s.send = Some(send(2.0, RatePer::Sender, Senders::All));
    assert!((total_rate(&s) - 40.0).abs() < 1e-9);
    s.send = Some(send(2.0, RatePer::Room, Senders::All));
    assert!((total_rate(&s) - 8.0).abs() < 1e-9);
    s.send = Some(send(2.0, RatePer::Scenario, Senders::OnePerRoom));
    assert!((total_rate(&s) - 2.0).abs() < 1e-9);
    let (_, sockets) = topology(&s).expect("topology");
    assert_eq!(sockets.iter().filter(|s| s.sends.is_some()).count(), 4);
    // Fixed arrivals: the senders' first sends spread over one gap, none twice.
    let mut offsets: Vec<f64> = sockets
        .iter()
        .filter_map(|s| s.sends)
        .map(|p| p.offset)
        .collect();
    offsets.sort_by(f64::total_cmp);
    assert_eq!(offsets, [0.0, 0.25, 0.5, 0.75]);
    s.idle = true;
    assert_eq!(total_rate(&s), 0.0);
}

#[test]
fn templates_fill_to_the_size_with_the_stamp_inside() {
    let template = Template::parse(
        r#"{"stamp":"{stamp}","room":{room},"peer":{peer},"seq":{seq},"payload":"{payload}"}"#,
        200,
        false,
    );
    let stamp = Stamp {
        id: 42,
        sent_us: 1_000_000,
    };
    let Message::Text(text) = template.render(3, 7, 9, stamp) else {
        panic!("a text message");
    };
    assert_eq!(text.len(), 200);
    assert!(text.starts_with(r#"{"stamp":"hr1.2a.f4240","room":3,"peer":7,"seq":9,"payload":"xx"#));
    assert_eq!(StampFinder::default().find(text.as_bytes()), Some(stamp));
    let binary = Template::parse("{payload}", 64, true);
    let Message::Binary(bytes) = binary.render(0, 0, 0, stamp) else {
        panic!("a binary message");
    };
    assert_eq!(bytes.len(), 64);
    assert_eq!(Stamp::from_binary(&bytes), Some(stamp));
}

#[tokio::test]
async fn urls_other_than_loopback_ws_or_wss_are_refused_with_the_reason() {
    let allowed = crate::web::Allowed::default();
    let resolve = |url: &'static str| resolve(url, url, &allowed);
    // wss:// is checked like ws://: not loopback, refused before any socket.
    assert!(
        resolve("wss://10.1.2.3/x")
            .await
            .expect_err("wss elsewhere")
            .contains("not loopback")
    );
    assert_eq!(
        resolve("wss://127.0.0.1:9/x").await,
        Ok((
            SocketAddr::from(([127, 0, 0, 1], 9)),
            Some("127.0.0.1:9".to_owned())
        ))
    );
    assert!(
        resolve("http://127.0.0.1:1/")
            .await
            .expect_err("http")
            .contains("ws://")
    );
    assert_eq!(
        resolve("ws://127.0.0.1:9/rooms/1?x=2").await,
        Ok((SocketAddr::from(([127, 0, 0, 1], 9)), None))
    );
}

/// Issue 12: a ws:// host that an environment variable filled in is checked before any
/// connect: a literal private address is refused as data (no lookup, no socket).
#[tokio::test]
async fn a_host_from_the_environment_is_checked_before_any_connect() {
    let allowed = crate::web::Allowed::default();
    let error = resolve(
        "ws://10.0.0.9:8080/rooms/1",
        "ws://{env:CHAT_HOST}/rooms/{room}",
        &allowed,
    )
    .await
    .expect_err("not loopback");
    assert!(
        error.starts_with("load to `10.0.0.9`, from {env:CHAT_HOST} in `ws://{env:CHAT_HOST}/rooms/{room}` is not allowed"),
        "{error}"
    );
}
