//! The event stream format, read as EventSource reads it (WHATWG HTML, "Server-sent events",
//! §9.2.6): lines ended by CR, LF or CRLF (a CRLF may straddle two chunks), one leading BOM
//! dropped, comments (`:` lines) as keep-alives, `data:` appended line by line, `event:`, `id:`
//! (one holding a NULL ignored), `retry:` (digits only), an event dispatched at an empty line.
//! Bytes, not text: a stamp is ASCII, and nothing is decoded or copied per line.
//!
//! Not the `eventsource-stream` crate: 0.2.3 panics on a stream that starts with a BOM (it
//! slices the 3-byte character at byte 1; the fix, its PR #10, has waited since 2026-01),
//! drops the `retry:` of an event without data, and copies its buffer at every line.

use std::time::Duration;

/// An event larger than this (or a line that never ends) breaks the stream: the generator's
/// memory stays bounded whatever a server writes.
pub(crate) const MAX_EVENT: usize = 8 << 20;

/// A buffer grown past this by a large event is shrunk back after it: an idle stream keeps
/// little.
const KEPT: usize = 4096;

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One event as dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event<'a> {
    /// Its type: `message` unless `event:` said.
    pub(crate) kind: &'a [u8],
    /// Its data lines, joined by LF.
    pub(crate) data: &'a [u8],
    /// The stream's last event id when it was dispatched.
    pub(crate) id: &'a [u8],
}

/// A stream over this many bytes without an end of event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge;

/// An event stream's parser, fed the body's chunks as they come.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    /// The bytes of the line being read.
    line: Vec<u8>,
    data: Vec<u8>,
    kind: Vec<u8>,
    /// The last event id buffer: kept across events, as the spec says.
    id: Vec<u8>,
    /// The id of the last event dispatched (or of the last empty line): `Last-Event-ID`.
    last_event_id: Vec<u8>,
    retry: Option<Duration>,
    /// The last byte was a CR: an LF right after it ends nothing more.
    after_cr: bool,
    /// Bytes of the stream seen so far, up to the BOM's length: only a leading BOM is dropped.
    started: usize,
    /// Comment lines read (a server's keep-alives).
    pub(crate) comments: u64,
}

impl Parser {
    /// Reads `chunk`, handing every event it completes to `dispatch`.
    pub(crate) fn feed(
        &mut self,
        mut chunk: &[u8],
        mut dispatch: impl FnMut(Event<'_>),
    ) -> Result<(), TooLarge> {
        chunk = self.past_the_bom(chunk);
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\r', b'\n', chunk) {
                Some(end) => {
                    self.line.extend_from_slice(&chunk[..end]);
                    self.after_cr = chunk[end] == b'\r';
                    chunk = &chunk[end + 1..];
                    self.end_line(&mut dispatch);
                }
                None => {
                    self.line.extend_from_slice(chunk);
                    chunk = &[];
                }
            }
            if self.line.len() + self.data.len() > MAX_EVENT {
                return Err(TooLarge);
            }
        }
        Ok(())
    }

    /// The id a reopened stream resumes after (`Last-Event-ID`); empty when there is none.
    pub(crate) fn last_event_id(&self) -> &[u8] {
        &self.last_event_id
    }

    /// The reconnection time the server asked for, if it did.
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// `chunk` without what it holds of a leading BOM (which may come a byte at a time).
    fn past_the_bom<'c>(&mut self, chunk: &'c [u8]) -> &'c [u8] {
        let mut chunk = chunk;
        while self.started < BOM.len() && !chunk.is_empty() {
            if chunk[0] == BOM[self.started] {
                self.started += 1;
                chunk = &chunk[1..];
            } else {
                // Not a BOM after all: what was taken for one is the line's start.
                self.line.extend_from_slice(&BOM[..self.started]);
                self.started = BOM.len();
            }
        }
        chunk
    }

    fn end_line(&mut self, dispatch: &mut impl FnMut(Event<'_>)) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(dispatch);
        } else if line[0] == b':' {
            self.comments += 1;
        } else {
            let (field, value) = match memchr::memchr(b':', &line) {
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (&line[..], &[][..]),
            };
            self.field(field, value);
        }
        // The line's buffer is kept for the next line.
        self.line = line;
        self.line.clear();
        self.line.shrink_to(KEPT);
    }

    fn field(&mut self, field: &[u8], value: &[u8]) {
        match field {
            b"event" => {
                self.kind.clear();
                self.kind.extend_from_slice(value);
            }
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if !value.contains(&0) => {
                self.id.clear();
                self.id.extend_from_slice(value);
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let millis = std::str::from_utf8(value)
                    .ok()
                    .and_then(|digits| digits.parse::<u64>().ok());
                if let Some(millis) = millis {
                    self.retry = Some(Duration::from_millis(millis));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, dispatch: &mut impl FnMut(Event<'_>)) {
        self.last_event_id.clear();
        self.last_event_id.extend_from_slice(&self.id);
        if self.data.is_empty() {
            self.kind.clear();
            return;
        }
        if self.data.last() == Some(&b'\n') {
            self.data.pop();
        }
        let kind = if self.kind.is_empty() {
            &b"message"[..]
        } else {
            &self.kind
        };
        dispatch(Event {
            kind,
            data: &self.data,
            id: &self.last_event_id,
        });
        self.data.clear();
        self.data.shrink_to(KEPT);
        self.kind.clear();
    }
}
