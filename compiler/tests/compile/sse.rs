//! Issue 45: an SSE rooms scenario's keys: each works (into the plan) or is refused with its
//! place.

use super::*;

/// An SSE rooms scenario with `scenario` lines added after its counts.
fn sse_spec(scenario: &str) -> String {
    format!(
        r#"[bench]
name = "feed"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "feed"
kind = "rooms"
protocol = "sse"
url = "http://127.0.0.1:{{port}}/sse/{{room}}"
rooms = 4
peers_per_room = 5
{scenario}
stages = {{ hold = "10s" }}

[[phase]]
name = "load"
"#
    )
}

#[test]
fn an_sse_plan_goes_into_the_matrix_filled() {
    let spec = sse_spec(
        r#"sse = { publish = "http://127.0.0.1:{port}/sse/{room}?from={peer}", publish_headers = { authorization = "Bearer p-{peer}" }, headers = { x-client = "c-{peer}" }, reconnect = true }
send = { rate = "1/s", per = "room", senders = "one-per-room" }"#,
    );
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = serde_json::to_value(compilation.matrix.expect("a plan")).expect("json");
    let sse = &matrix["phases"][0]["points"][0]["scenarios"][0]["protocol"]["sse"];
    // `{port}` is the runner's; `{peer}` and `{room}` each peer's.
    assert_eq!(
        sse["publish"],
        "http://127.0.0.1:{port}/sse/{room}?from={peer}"
    );
    assert_eq!(sse["publish_headers"]["authorization"], "Bearer p-{peer}");
    assert_eq!(sse["headers"]["x-client"], "c-{peer}");
    assert_eq!(sse["reconnect"].as_bool(), Some(true));
}

#[test]
fn what_sse_cannot_carry_is_refused_where_it_is_written() {
    let spec = sse_spec(
        r#"join = "hello"
ping = { every = "10s" }
sse = { publish = "ws://127.0.0.1:{port}/pub/{room}", headers = { "x client" = "1" }, publish_headers = { "a:b" = "2" } }
send = { rate = "1/s", stamp = "binary-prefix" }"#,
    )
    .replace(
        "url = \"http://127.0.0.1:{port}/sse/{room}\"",
        "url = \"ws://127.0.0.1:{port}/sse/{room}\"",
    );
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    for at in [
        "/scenario/0/url",
        "/scenario/0/join",
        "/scenario/0/ping",
        "/scenario/0/send/stamp",
        "/scenario/0/sse/publish",
        "/scenario/0/sse/headers/x client",
        "/scenario/0/sse/publish_headers/a:b",
    ] {
        assert!(found.contains(&("E050", at)), "E050 at {at}: {found:?}");
    }
}

#[test]
fn an_sse_table_without_the_protocol_and_a_sender_without_a_publish_url_are_refused() {
    let spec = sse_spec("idle = true\nsse = { publish = \"http://127.0.0.1:{port}/p\" }")
        .replace("protocol = \"sse\"\n", "");
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert!(found.contains(&("E021", "/scenario/0/sse")), "{found:?}");
    let spec = sse_spec("send = { rate = \"1/s\" }");
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert!(found.contains(&("E022", "/scenario/0")), "{found:?}");
    // Streams that only listen need no publish URL.
    let spec = sse_spec("idle = true");
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
}

#[test]
fn a_publish_url_to_another_host_is_refused() {
    let spec = sse_spec(
        r#"sse = { publish = "http://example.com/pub/{room}" }
send = { rate = "1/s" }"#,
    );
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert!(
        found.iter().any(|(_, at)| *at == "/scenario/0/sse/publish"),
        "{found:?}"
    );
}

/// Issue 57: a template without `{stamp}` sends messages no peer can match to their sends
/// (every delivery would read as lost): refused at `validate`, at the template, for every
/// protocol that carries a text stamp; a binary-prefix stamp needs none.
#[test]
fn a_template_without_a_stamp_is_refused() {
    let spec = sse_spec(
        r#"sse = { publish = "http://127.0.0.1:{port}/sse/{room}" }
send = { rate = "1/s", template = '{"text":"{payload}"}' }"#,
    );
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert!(
        found.contains(&("E022", "/scenario/0/send/template")),
        "{found:?}"
    );
    let websocket = spec
        .replace("protocol = \"sse\"\n", "")
        .replace(
            "url = \"http://127.0.0.1:{port}/sse/{room}\"",
            "url = \"ws://127.0.0.1:{port}/rooms/{room}\"",
        )
        .replace(
            "sse = { publish = \"http://127.0.0.1:{port}/sse/{room}\" }\n",
            "",
        );
    let compiled = compile(&websocket);
    let found = codes_at(&compiled);
    assert!(
        found.contains(&("E022", "/scenario/0/send/template")),
        "{found:?}"
    );
    let binary = websocket.replace(
        "send = { rate = \"1/s\",",
        "send = { rate = \"1/s\", stamp = \"binary-prefix\",",
    );
    let compilation = compile(&binary);
    assert!(
        compilation
            .diagnostics
            .iter()
            .all(|d| !(d.code.as_str() == "E022" && d.message.contains("stamp"))),
        "{:?}",
        compilation.diagnostics
    );
}
