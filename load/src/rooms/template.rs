//! A message template: the text a peer sends, with the stamp and placeholders filled in.

use super::{Piece, Template};
use crate::fanout::Stamp;
use headroom_spec::placeholder;
use headroom_spec::placeholder::{PlaceholderName, builtin};
use tokio_tungstenite::tungstenite::Message;

impl Template {
    /// `text` with `{port}`, `{headroom}` and `{env:…}` already filled.
    pub(super) fn parse(text: &str, size: usize, binary: bool) -> Template {
        let mut pieces = Vec::new();
        let mut last = 0;
        for found in placeholder::scan(text).into_iter().flatten() {
            let piece = match found.name {
                PlaceholderName::Name(builtin::ROOM) => Piece::Room,
                PlaceholderName::Name(builtin::PEER) => Piece::Peer,
                PlaceholderName::Name(builtin::SEQ) => Piece::Seq,
                PlaceholderName::Name(builtin::STAMP) => Piece::Stamp,
                PlaceholderName::Name(builtin::PAYLOAD) => Piece::Payload,
                _ => continue,
            };
            if found.range.start > last {
                pieces.push(Piece::Text(text[last..found.range.start].to_owned()));
            }
            pieces.push(piece);
            last = found.range.end;
        }
        if last < text.len() {
            pieces.push(Piece::Text(text[last..].to_owned()));
        }
        Template {
            pieces,
            size,
            binary,
        }
    }

    /// A Socket.IO message: `prefix` (`42/chat,`), the message's id as its ack id when `ack`,
    /// then `body` (`["event",{…}]`).
    pub(crate) fn socket_io(prefix: &str, ack: bool, body: &str, size: usize) -> Template {
        let mut template = Template::parse(prefix, size, false);
        if ack {
            template.pieces.push(Piece::Id);
        }
        template
            .pieces
            .extend(Template::parse(body, size, false).pieces);
        template
    }

    /// The message for one send: `{payload}` fills it to `size` (the binary stamp included).
    pub fn render(&self, room: u32, peer: u32, seq: u64, stamp: Stamp) -> Message {
        let text = self.render_text(room, peer, seq, stamp);
        if self.binary {
            let mut bytes = Vec::with_capacity(crate::fanout::BINARY_STAMP_LEN + text.len());
            bytes.extend_from_slice(&stamp.binary());
            bytes.extend_from_slice(text.as_bytes());
            Message::Binary(bytes.into())
        } else {
            Message::Text(text.into())
        }
    }

    /// The message's text (after the binary stamp, when it has one).
    pub fn render_text(&self, room: u32, peer: u32, seq: u64, stamp: Stamp) -> String {
        use std::fmt::Write;
        let stamp_len = if self.binary {
            crate::fanout::BINARY_STAMP_LEN
        } else {
            0
        };
        let mut text = String::with_capacity(self.size.max(64));
        let mut payload_at = None;
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => text.push_str(t),
                Piece::Room => {
                    let _ = write!(text, "{room}");
                }
                Piece::Peer => {
                    let _ = write!(text, "{peer}");
                }
                Piece::Seq => {
                    let _ = write!(text, "{seq}");
                }
                Piece::Id => {
                    let _ = write!(text, "{}", stamp.id);
                }
                Piece::Stamp if !self.binary => stamp.write_text(&mut text),
                Piece::Stamp => {}
                Piece::Payload => {
                    if payload_at.is_none() {
                        payload_at = Some(text.len());
                    }
                }
            }
        }
        if let Some(at) = payload_at {
            let fill = self.size.saturating_sub(text.len() + stamp_len);
            text.insert_str(at, &"x".repeat(fill));
        }
        text
    }
}
