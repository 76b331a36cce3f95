//! Placeholders inside strings: `{port}`, `{rooms}`, `{env:TOKEN}`, `{port.db}`.
//!
//! Only `{` followed by a lower-case name (or `env:` and a variable name) and `}` is a
//! placeholder; every other brace is text, so JSON message templates need no escaping.

use std::ops::Range;

/// Placeholders the runner fills, and where they may appear.
pub mod builtin {
    /// The loopback port the runner picked for the target (command, env, URLs).
    pub const PORT: &str = "port";
    /// The path of the running `headroom` binary, to start the built-in demo target.
    pub const HEADROOM: &str = "headroom";
    /// The room index, from 0 (room scenarios: url, join, message, reload url).
    pub const ROOM: &str = "room";
    /// The peer index inside its room, from 0 (room scenarios).
    pub const PEER: &str = "peer";
    /// A message's sequence number (message templates).
    pub const SEQ: &str = "seq";
    /// The correlation id and send time the runner reads back on receipt (message templates).
    pub const STAMP: &str = "stamp";
    /// Filler that brings the message to its `size` (message templates).
    pub const PAYLOAD: &str = "payload";

    /// Marks a context where `{port.NAME}` (a stack service's port) is filled: the target's
    /// strings and series commands. Not a name of its own.
    pub const SERVICE_PORTS: &str = "port.";
    /// Names valid in every string of the target and the scenarios.
    pub const EVERYWHERE: &[&str] = &[PORT, HEADROOM];
    /// Names valid in a room scenario's URL, join message and reload URL.
    pub const IN_ROOMS: &[&str] = &[ROOM, PEER];
    /// Names valid in a message template.
    pub const IN_MESSAGES: &[&str] = &[ROOM, PEER, SEQ, STAMP, PAYLOAD];
    /// Every built-in name: a `[vars]` entry may not take one.
    pub const ALL: &[&str] = &[PORT, HEADROOM, ROOM, PEER, SEQ, STAMP, PAYLOAD];
}

/// What a placeholder names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderName<'a> {
    /// `{rooms}`: a spec variable or a built-in.
    Name(&'a str),
    /// `{env:TOKEN}`: an environment variable of the machine that runs the bench.
    Env(&'a str),
    /// `{row.email}`: a column of the scenario's data file, in the row the request takes.
    Row(&'a str),
    /// `{capture.token}`: a value a virtual user captured from an earlier answer.
    Capture(&'a str),
    /// `{port.db}`: the port of a service of the stack.
    Port(&'a str),
}

/// One placeholder found in a string, with its byte range (braces included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder<'a> {
    /// What is inside the braces.
    pub name: PlaceholderName<'a>,
    /// Where it is, braces included.
    pub range: Range<usize>,
}

/// Something in a string that looks like a placeholder but is not closed: `{port/rooms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unclosed {
    /// Where it is, from the open brace to the end of the string.
    pub range: Range<usize>,
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_lowercase()
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'
}

fn is_env_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A column of a data file: names as CSV headers write them (`email`, `user_id`, `Zip-Code`).
fn is_column_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The prefixes of the two dotted forms: `{row.column}` and `{capture.name}`.
const ROW: &str = "row.";
const CAPTURE: &str = "capture.";
const PORT_OF: &str = "port.";

/// Finds the placeholders of `text`, in order.
pub fn scan(text: &str) -> Vec<Result<Placeholder<'_>, Unclosed>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        let start = i;
        let body = start + 1;
        let (is_env, name_start) = if text[body..].starts_with("env:") {
            (true, body + 4)
        } else {
            (false, body)
        };
        // `{row.column}`, `{capture.name}`.
        let dotted = [ROW, CAPTURE, PORT_OF]
            .into_iter()
            .find(|prefix| text[body..].starts_with(prefix));
        if let Some(prefix) = dotted {
            let name_start = body + prefix.len();
            let mut end = name_start;
            while end < bytes.len() && is_column_char(bytes[end]) {
                end += 1;
            }
            if end > name_start && end < bytes.len() && bytes[end] == b'}' {
                let name = &text[name_start..end];
                found.push(Ok(Placeholder {
                    name: match prefix {
                        ROW => PlaceholderName::Row(name),
                        CAPTURE => PlaceholderName::Capture(name),
                        _ => PlaceholderName::Port(name),
                    },
                    range: start..end + 1,
                }));
            } else {
                found.push(Err(Unclosed { range: start..end }));
            }
            i = end.max(body);
            continue;
        }
        let mut end = name_start;
        if is_env {
            while end < bytes.len() && is_env_char(bytes[end]) {
                end += 1;
            }
        } else if end < bytes.len() && is_name_start(bytes[end]) {
            while end < bytes.len() && is_name_char(bytes[end]) {
                end += 1;
            }
        }
        if end == name_start {
            // `{"`, `{ `, `{}`: text, not a placeholder (unless `{env:` was written).
            if is_env {
                found.push(Err(Unclosed { range: start..end }));
            }
            i = body;
            continue;
        }
        if end < bytes.len() && bytes[end] == b'}' {
            let name = &text[name_start..end];
            found.push(Ok(Placeholder {
                name: if is_env {
                    PlaceholderName::Env(name)
                } else {
                    PlaceholderName::Name(name)
                },
                range: start..end + 1,
            }));
            i = end + 1;
        } else {
            found.push(Err(Unclosed { range: start..end }));
            i = end;
        }
    }
    found
}

/// Replaces every placeholder that `lookup` knows; the others stay as written, for a later
/// stage to fill (the compiler fills variables, the runner fills `{port}` and `{room}`).
pub fn fill(text: &str, mut lookup: impl FnMut(PlaceholderName<'_>) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for placeholder in scan(text).into_iter().flatten() {
        if let Some(value) = lookup(placeholder.name) {
            out.push_str(&text[last..placeholder.range.start]);
            out.push_str(&value);
            last = placeholder.range.end;
        }
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_names_and_env_and_leaves_json_alone() {
        let text = r#"{"room":"{room}","token":"{env:TOKEN}"}"#;
        let found: Vec<_> = scan(text).into_iter().map(|p| p.map(|p| p.name)).collect();
        assert_eq!(
            found,
            [
                Ok(PlaceholderName::Name("room")),
                Ok(PlaceholderName::Env("TOKEN"))
            ]
        );
    }

    #[test]
    fn finds_rows_and_captures() {
        let text = "/users/{row.user-id}?t={capture.token}&p={page}&db={port.db}";
        let found: Vec<_> = scan(text).into_iter().map(|p| p.map(|p| p.name)).collect();
        assert_eq!(
            found,
            [
                Ok(PlaceholderName::Row("user-id")),
                Ok(PlaceholderName::Capture("token")),
                Ok(PlaceholderName::Name("page")),
                Ok(PlaceholderName::Port("db"))
            ]
        );
        // `{row}` alone is a name; `{row.}` opens and never closes a column.
        assert_eq!(
            scan("{row}")
                .into_iter()
                .map(|p| p.map(|p| p.name))
                .collect::<Vec<_>>(),
            [Ok(PlaceholderName::Name("row"))]
        );
        assert!(scan("{row.}")[0].is_err());
    }

    #[test]
    fn reports_unclosed_placeholders() {
        let found = scan("ws://127.0.0.1:{port/rooms");
        assert_eq!(found, [Err(Unclosed { range: 15..20 })]);
    }

    #[test]
    fn fill_replaces_known_and_keeps_the_rest() {
        let filled = fill("http://127.0.0.1:{port}/r/{rooms}", |name| match name {
            PlaceholderName::Name("rooms") => Some("16".into()),
            _ => None,
        });
        assert_eq!(filled, "http://127.0.0.1:{port}/r/16");
    }
}
