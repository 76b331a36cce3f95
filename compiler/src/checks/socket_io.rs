//! A rooms scenario's protocol: the Socket.IO and SSE tables only with their protocol, and
//! what Socket.IO carries (JSON joins, auth and messages; a server URL, not a path). SSE's own
//! checks are in `sse.rs`.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use headroom_spec::RoomsScenario;
use headroom_spec::placeholder::{self, builtin};
use headroom_spec::scenario::{RoomsProtocol, StampForm};

impl Checker<'_> {
    pub(super) fn rooms_protocol(&mut self, base: &str, rooms: &RoomsScenario) {
        let tables = [
            (
                "socket_io",
                rooms.socket_io.is_some(),
                RoomsProtocol::SocketIo,
            ),
            ("sse", rooms.sse.is_some(), RoomsProtocol::Sse),
        ];
        for (table, given, needs) in tables {
            if given && rooms.protocol != needs {
                let at = format!("{base}/{table}");
                self.push(
                    Diagnostic::new(
                        Code::ConflictingSettings,
                        format!("`{table}` needs `protocol = \"{}\"`", needs.as_str()),
                    )
                    .at(&at, self.key_span(&at))
                    .label(match rooms.protocol {
                        RoomsProtocol::WebSocket => "this scenario speaks raw WebSocket",
                        RoomsProtocol::SocketIo => "this scenario speaks Socket.IO",
                        RoomsProtocol::Sse => "this scenario speaks Server-Sent Events",
                    })
                    .hint(format!(
                        "add `protocol = \"{}\"` to the scenario, or remove `{table}`",
                        needs.as_str()
                    )),
                );
            }
        }
        match rooms.protocol {
            RoomsProtocol::WebSocket => {}
            RoomsProtocol::SocketIo => self.socket_io(base, rooms),
            RoomsProtocol::Sse => self.sse(base, rooms),
        }
    }

    fn socket_io(&mut self, base: &str, rooms: &RoomsScenario) {
        if rooms.join.is_some() {
            let at = format!("{base}/join");
            self.push(
                Diagnostic::new(Code::SocketIo, "`join` is a raw WebSocket message; a Socket.IO scenario joins by events")
                    .at(&at, self.key_span(&at))
                    .label("not a Socket.IO packet")
                    .hint("write the join as an event: `socket_io = { joins = ['[\"join\", \"room-{room}\"]'] }`"),
            );
        }
        if let Some(send) = &rooms.send
            && send.stamp == StampForm::BinaryPrefix
        {
            let at = format!("{base}/send/stamp");
            self.push(
                Diagnostic::new(Code::SocketIo, "a Socket.IO message carries its stamp as text")
                    .at(&at, self.value_span(&at))
                    .label("binary events are not sent")
                    .hint("remove `stamp = \"binary-prefix\"`: the stamp goes at `{stamp}` in the event's JSON"),
            );
        }
        self.socket_io_url(&format!("{base}/url"), &rooms.url);
        let written = rooms.socket_io.clone().unwrap_or_default();
        let table = format!("{base}/socket_io");
        for (key, value) in [("path", &written.path), ("namespace", &written.namespace)] {
            if !value.starts_with('/') {
                let at = format!("{table}/{key}");
                self.push(
                    Diagnostic::new(Code::SocketIo, format!("`{key}` starts with `/`"))
                        .at(&at, self.value_span(&at))
                        .label(format!("`{value}` has no leading `/`"))
                        .hint(format!("write `\"/{}\"`", value.trim_start_matches('/'))),
                );
            }
        }
        let mut context: Vec<&str> = builtin::EVERYWHERE.to_vec();
        context.extend_from_slice(builtin::IN_ROOMS);
        if let Some(auth) = &written.auth {
            let at = format!("{table}/auth");
            self.string(&at, auth, &context, "a rooms scenario");
            let parsed = serde_json::from_str::<serde_json::Value>(&sample(auth));
            if !parsed.as_ref().is_ok_and(serde_json::Value::is_object) {
                self.push(
                    Diagnostic::new(Code::SocketIo, "`auth` is not a JSON object")
                        .at(&at, self.value_span(&at))
                        .label(why_not_json(&parsed, "an object"))
                        .hint("write the namespace's auth payload as a JSON object: `auth = '{\"token\": \"t-{peer}\"}'`"),
                );
            }
        }
        for (i, join) in written.joins.iter().enumerate() {
            let at = format!("{table}/joins/{i}");
            self.string(&at, join, &context, "a rooms scenario");
            let parsed = serde_json::from_str::<serde_json::Value>(&sample(join));
            let led_by_name = parsed.as_ref().is_ok_and(|value| {
                value
                    .as_array()
                    .and_then(|items| items.first())
                    .is_some_and(serde_json::Value::is_string)
            });
            if !led_by_name {
                self.push(
                    Diagnostic::new(Code::SocketIo, "a join is not an event: a JSON array led by the event's name")
                        .at(&at, self.value_span(&at))
                        .label(why_not_json(&parsed, "an array led by a string"))
                        .hint("write `'[\"join\", \"room-{room}\"]'`: the event's name, then its arguments"),
                );
            }
        }
        if let Some(send) = &rooms.send {
            let at = format!("{base}/send/template");
            if serde_json::from_str::<serde_json::Value>(&sample(&send.template)).is_err() {
                self.push(
                    Diagnostic::new(Code::SocketIo, "a Socket.IO message template is not one JSON value")
                        .at(&at, self.value_span(&at))
                        .label(format!("sent as the argument of `42[\"{}\", …]`", written.event))
                        .hint("write the event's argument as JSON, the stamp inside a string: `'{\"stamp\":\"{stamp}\",\"text\":\"{payload}\"}'`"),
                );
            }
        }
    }

    /// A Socket.IO scenario's `url` is the server: its scheme and authority, no path.
    fn socket_io_url(&mut self, at: &str, url: &str) {
        let Some((scheme, rest)) = url.split_once("://") else {
            return;
        };
        let known = ["http", "https", "ws", "wss"].contains(&scheme);
        let path = rest.find(['/', '?']).map_or("", |start| &rest[start..]);
        let path = path.split('?').next().unwrap_or_default();
        if !known || !(path.is_empty() || path == "/") {
            self.push(
                Diagnostic::new(Code::SocketIo, "a Socket.IO scenario's `url` is the server, not a path on it")
                    .at(at, self.value_span(at))
                    .label(if known { "has a path" } else { "not http://, https://, ws:// or wss://" })
                    .hint("write `url = \"http://127.0.0.1:{port}\"`; the Engine.IO path is `socket_io.path` (\"/socket.io/\" by default)"),
            );
        }
    }
}

/// `text` with every placeholder replaced by `1`: a number bare, a digit in a string, so the
/// JSON it makes at any point parses the same.
fn sample(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for found in placeholder::scan(text).into_iter().flatten() {
        out.push_str(&text[last..found.range.start]);
        out.push('1');
        last = found.range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Under the caret: the parser's complaint, or what the value should have been.
fn why_not_json(parsed: &Result<serde_json::Value, serde_json::Error>, wanted: &str) -> String {
    match parsed {
        Err(error) => format!("not JSON: {error}"),
        Ok(_) => format!("JSON, but not {wanted}"),
    }
}

#[cfg(test)]
mod tests {
    use super::sample;

    #[test]
    fn placeholders_sample_as_one_in_and_out_of_strings() {
        assert_eq!(
            sample(r#"["join", "room-{room}", {peer}]"#),
            r#"["join", "room-1", 1]"#
        );
        assert_eq!(sample(r#"{"token": "{env:TOKEN}"}"#), r#"{"token": "1"}"#);
    }
}
