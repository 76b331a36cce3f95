//! The stamp a message carries: its id and intended send time, as text (`hr1.<id>.<µs>`,
//! found anywhere in a frame) or as a 16-byte binary prefix.

use std::sync::LazyLock;

use memchr::memmem;

/// What a text stamp starts with: `hr1.<id hex>.<µs hex>`. Letters, digits and dots only, so
/// it survives JSON, URLs and any server that passes text through.
pub const TEXT_MARK: &[u8] = b"hr1.";
/// The length of a binary stamp: the message id and the intended send time, little-endian u64s.
pub const BINARY_STAMP_LEN: usize = 16;

/// A message's identity and intended send time, as it travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The message's id in the tracker.
    pub id: u64,
    /// Microseconds from the tracker's epoch.
    pub sent_us: u64,
}

impl Stamp {
    /// Appends the text form to `out`.
    pub fn write_text(self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "hr1.{:x}.{:x}", self.id, self.sent_us);
    }

    /// The 16-byte binary form: the id and the send time, little-endian.
    pub fn binary(self) -> [u8; BINARY_STAMP_LEN] {
        let mut out = [0u8; BINARY_STAMP_LEN];
        out[..8].copy_from_slice(&self.id.to_le_bytes());
        out[8..].copy_from_slice(&self.sent_us.to_le_bytes());
        out
    }

    /// A stamp from a binary frame's first 16 bytes.
    pub fn from_binary(bytes: &[u8]) -> Option<Stamp> {
        let id = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let sent_us = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
        Some(Stamp { id, sent_us })
    }
}

/// The search for [`TEXT_MARK`], built once for every socket.
static MARK_FINDER: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(TEXT_MARK));

/// Finds the text stamp anywhere in a received message. Messages of one room share a
/// template, so the stamp is looked for first where the last one was.
#[derive(Default)]
pub struct StampFinder {
    last: usize,
}

impl StampFinder {
    /// The first text stamp in a frame.
    pub fn find(&mut self, text: &[u8]) -> Option<Stamp> {
        let at = if text
            .get(self.last..)
            .is_some_and(|rest| rest.starts_with(TEXT_MARK))
        {
            self.last
        } else {
            let at = MARK_FINDER.find(text)?;
            self.last = at;
            at
        };
        let start = at + TEXT_MARK.len();
        let (id, used) = hex(&text[start..])?;
        let rest = &text[start + used..];
        if rest.first() != Some(&b'.') {
            return None;
        }
        let (sent_us, _) = hex(&rest[1..])?;
        Some(Stamp { id, sent_us })
    }
}

/// A lower-case hex number at the start of `bytes`, and how many bytes it took.
fn hex(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let mut used = 0;
    for &b in bytes.iter().take(16) {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => break,
        };
        value = (value << 4) | u64::from(digit);
        used += 1;
    }
    (used > 0).then_some((value, used))
}
