//! An SSE rooms scenario: streams and publish requests over http:// or https://, headers that
//! are HTTP headers, no WebSocket setting, and a publish URL wherever a message is sent.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use headroom_spec::RoomsScenario;
use headroom_spec::placeholder::builtin;
use headroom_spec::scenario::StampForm;

impl Checker<'_> {
    pub(super) fn sse(&mut self, base: &str, rooms: &RoomsScenario) {
        self.sse_url(&format!("{base}/url"), &rooms.url, "`url`");
        let websocket_only = [
            (
                "join",
                rooms.join.is_some(),
                "`join` is a WebSocket message; an SSE stream sends nothing",
                "a stream's room is its URL: put `{room}` in `url`",
            ),
            (
                "ping",
                rooms.ping.every.is_some(),
                "`ping` is a WebSocket ping; an SSE stream has none to send",
                "remove `ping`: a server keeps its streams alive with comments, which are read",
            ),
        ];
        for (key, given, message, hint) in websocket_only {
            if given {
                let at = format!("{base}/{key}");
                self.push(
                    Diagnostic::new(Code::Sse, message)
                        .at(&at, self.key_span(&at))
                        .label("not sent over Server-Sent Events")
                        .hint(hint),
                );
            }
        }
        if let Some(send) = &rooms.send
            && send.stamp == StampForm::BinaryPrefix
        {
            let at = format!("{base}/send/stamp");
            self.push(
                Diagnostic::new(Code::Sse, "an SSE event carries its stamp as text")
                    .at(&at, self.value_span(&at))
                    .label("events are text")
                    .hint("remove `stamp = \"binary-prefix\"`: the stamp goes at `{stamp}` in the template"),
            );
        }
        let sending = rooms.send.is_some() && !rooms.idle;
        let Some(sse) = &rooms.sse else {
            if sending {
                self.push(
                    Diagnostic::new(Code::MissingSetting, "an SSE scenario that sends needs `sse.publish`")
                        .at(base, self.key_span(base))
                        .label("where are its messages published?")
                        .hint("add `sse = { publish = \"http://127.0.0.1:{port}/pub/{room}\" }`: each message is POSTed there"),
                );
            }
            return;
        };
        let mut context: Vec<&str> = builtin::EVERYWHERE.to_vec();
        context.extend_from_slice(builtin::IN_ROOMS);
        let table = format!("{base}/sse");
        let publish = format!("{table}/publish");
        self.string(&publish, &sse.publish, &context, "a rooms scenario");
        self.host(&publish, &sse.publish);
        self.sse_url(&publish, &sse.publish, "`sse.publish`");
        for (key, headers) in [
            ("headers", &sse.headers),
            ("publish_headers", &sse.publish_headers),
        ] {
            for (name, value) in headers {
                let at = format!("{table}/{key}/{name}");
                self.string(&at, value, &context, "a rooms scenario");
                if !is_token(name) {
                    self.push(
                        Diagnostic::new(Code::Sse, format!("`{name}` is not an HTTP header name"))
                            .at(&at, self.key_span(&at))
                            .label("a header name is letters, digits and `!#$%&'*+-.^_`|~`")
                            .hint("write the header's name as it goes on the wire: `authorization`, `x-api-key`"),
                    );
                }
            }
        }
    }

    /// A stream or publish URL (`key`) is http:// or https://.
    fn sse_url(&mut self, at: &str, url: &str, key: &str) {
        let scheme = url.split_once("://").map(|(scheme, _)| scheme);
        if !matches!(scheme, Some("http" | "https")) {
            self.push(
                Diagnostic::new(
                    Code::Sse,
                    format!("an SSE scenario's {key} is not an http:// or https:// URL"),
                )
                .at(at, self.value_span(at))
                .label(match scheme {
                    Some(scheme) => format!("`{scheme}://`"),
                    None => "no scheme".to_owned(),
                })
                .hint("write it as `http://127.0.0.1:{port}/…`"),
            );
        }
    }
}

/// An HTTP token (RFC 9110 §5.6.2): what a header's name is made of.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::is_token;

    #[test]
    fn header_names_are_tokens() {
        assert!(is_token("x-api-key"));
        assert!(is_token("Last-Event-ID"));
        assert!(!is_token("x api"));
        assert!(!is_token("x:y"));
        assert!(!is_token(""));
    }
}
