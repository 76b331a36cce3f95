//! Issue 45: a Socket.IO rooms scenario's keys: each works (into the plan) or is refused with
//! its place.

use super::*;

/// A Socket.IO rooms scenario with `scenario` lines added after its counts.
fn socket_io_spec(scenario: &str, tail: &str) -> String {
    format!(
        r#"[bench]
name = "sio"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "chat"
kind = "rooms"
url = "http://127.0.0.1:{{port}}"
rooms = 4
peers_per_room = 5
{scenario}
stages = {{ hold = "10s" }}

[[phase]]
name = "load"
{tail}"#
    )
}

#[test]
fn a_socket_io_session_goes_into_the_plan_filled() {
    let spec = socket_io_spec(
        r#"protocol = "socket.io"
socket_io = { path = "/io/", namespace = "/chat", auth = '{"token":"t-{peer}-{port}"}', joins = ['["join", "room-{room}"]'], join_ack = true, event = "say", ack = true }
send = { rate = "1/s", template = '{"s":"{stamp}","p":"{payload}"}' }"#,
        "\n[slo]\nack = \"chat.ack.p95 < 100ms\"\nunacked = \"chat.unacked == 0%\"",
    );
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = serde_json::to_value(compilation.matrix.expect("a plan")).expect("json");
    let session = &matrix["phases"][0]["points"][0]["scenarios"][0]["protocol"]["socket.io"];
    assert_eq!(session["path"], "/io/");
    assert_eq!(session["namespace"], "/chat");
    // `{port}` is the runner's; `{peer}` and `{room}` each socket's.
    assert_eq!(session["auth"], r#"{"token":"t-{peer}-{port}"}"#);
    assert_eq!(session["joins"][0], r#"["join", "room-{room}"]"#);
    assert_eq!(
        (session["join_ack"].as_bool(), session["ack"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(session["event"], "say");
}

#[test]
fn what_socket_io_cannot_carry_is_refused_where_it_is_written() {
    let spec = socket_io_spec(
        r#"protocol = "socket.io"
join = "hello"
socket_io = { path = "io", namespace = "chat", auth = '["t"]', joins = ['{"join": 1}', '["join"'] }
send = { rate = "1/s", stamp = "binary-prefix", template = 'hr {stamp}' }"#,
        "",
    )
    .replace(
        "url = \"http://127.0.0.1:{port}\"",
        "url = \"http://127.0.0.1:{port}/chat\"",
    );
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    for at in [
        "/scenario/0/join",
        "/scenario/0/send/stamp",
        "/scenario/0/url",
        "/scenario/0/socket_io/path",
        "/scenario/0/socket_io/namespace",
        "/scenario/0/socket_io/auth",
        "/scenario/0/socket_io/joins/0",
        "/scenario/0/socket_io/joins/1",
        "/scenario/0/send/template",
    ] {
        assert!(found.contains(&("E049", at)), "E049 at {at}: {found:?}");
    }
}

#[test]
fn a_socket_io_table_without_the_protocol_and_acks_without_asking_are_refused() {
    let spec = socket_io_spec("url2 = 1", "\n[slo]\nack = \"chat.ack.p95 < 100ms\"")
        .replace("url2 = 1", "socket_io = { event = \"chat\" }\nidle = true");
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert!(
        found.contains(&("E021", "/scenario/0/socket_io")),
        "{found:?}"
    );
    // `ack` is a figure of Socket.IO scenarios that ask acks only: named, with how to get it.
    let unknown = compilation
        .diagnostics
        .iter()
        .find(|d| d.code.as_str() == "E015")
        .expect("the ack SLO refused");
    assert!(
        unknown
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("socket_io = { ack = true }")),
        "{unknown:?}"
    );
}
