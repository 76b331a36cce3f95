//! Who is in which room, and which of a room's peers each message is for: a bit per peer.
//!
//! [`Presence`] holds, per room, a bit for every peer whose socket is open now. When a message
//! is sent, its room's bits are copied beside it (the peers it is expected at, the sender left
//! out: [`Masks`]), and it takes its number in its room; each socket keeps a bit for each
//! message of its room it got ([`Seen`], its own, no atomics). A copy at a socket of
//! another room is misrouted, a second copy at one peer a duplicate, and a first copy at a
//! peer that was not open when it was sent is unexpected: none of them is a delivery, so
//! deliveries never exceed what was sent. They cost two bits per expected delivery.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A socket of a rooms scenario: its index among the run's sockets, its room, and its place
/// in the room (0 to the room's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The socket's index.
    pub socket: u32,
    /// Its room.
    pub room: u32,
    /// Its place in the room.
    pub peer: u32,
}

/// The words a room of `size` peers takes: a bit each.
pub(super) fn words_for(size: u32) -> usize {
    (size as usize).div_ceil(64).max(1)
}

/// One room's open peers.
struct Room {
    open: AtomicU32,
    bits: Box<[AtomicU64]>,
}

/// Which peers of each room are open now.
pub(super) struct Presence {
    rooms: Box<[Room]>,
}

impl Presence {
    /// Rooms of `sizes` peers, none open.
    pub(super) fn new(sizes: &[u32]) -> Presence {
        Presence {
            rooms: sizes
                .iter()
                .map(|&size| Room {
                    open: AtomicU32::new(0),
                    bits: (0..words_for(size)).map(|_| AtomicU64::new(0)).collect(),
                })
                .collect(),
        }
    }

    fn bit(&self, member: Member) -> Option<(&Room, &AtomicU64, u64)> {
        let room = self.rooms.get(member.room as usize)?;
        let word = room.bits.get(member.peer as usize / 64)?;
        Some((room, word, 1 << (member.peer % 64)))
    }

    /// `member`'s socket opened.
    pub(super) fn enter(&self, member: Member) {
        if let Some((room, word, bit)) = self.bit(member) {
            word.fetch_or(bit, Ordering::AcqRel);
            room.open.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// `member`'s socket closed.
    pub(super) fn leave(&self, member: Member) {
        if let Some((room, word, bit)) = self.bit(member) {
            word.fetch_and(!bit, Ordering::AcqRel);
            room.open.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// How many peers of `room` are open now.
    pub(super) fn open_in(&self, room: u32) -> u32 {
        self.rooms
            .get(room as usize)
            .map_or(0, |r| r.open.load(Ordering::Acquire))
    }

    /// `room`'s open peers now, a bit each.
    fn words(&self, room: u32) -> &[AtomicU64] {
        self.rooms.get(room as usize).map_or(&[], |r| &r.bits)
    }
}

/// Each message's expected peers, a bit each, copied from the room's open peers when it is
/// sent (and never written again), `stride` words a message (the largest room's), in chunks of
/// `per_chunk` messages made when the first of them is sent.
pub(super) struct Masks {
    stride: usize,
    per_chunk: usize,
    expected: Box<[OnceLock<Box<[AtomicU64]>>]>,
}

/// The bytes a chunk of masks takes at most: big rooms take fewer messages a chunk, so the
/// first message of a 100,000-peer room does not make room for a thousand.
const CHUNK_BYTES: usize = 256 * 1024;

impl Masks {
    /// Room for `capacity` messages, at most `per_chunk` a chunk, in rooms of at most
    /// `largest` peers.
    pub(super) fn new(capacity: u64, per_chunk: usize, largest: u32) -> Masks {
        let stride = words_for(largest);
        let per_chunk = per_chunk.min(CHUNK_BYTES / (8 * stride)).max(1);
        let chunks = usize::try_from(capacity)
            .unwrap_or(usize::MAX)
            .div_ceil(per_chunk)
            .max(1);
        Masks {
            stride,
            per_chunk,
            expected: (0..chunks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Message `id`'s expected bits.
    fn of(&self, id: u64) -> Option<&[AtomicU64]> {
        let id = usize::try_from(id).ok()?;
        let (chunk, at) = (id / self.per_chunk, id % self.per_chunk);
        self.expected
            .get(chunk)?
            .get()?
            .get(at * self.stride..(at + 1) * self.stride)
    }

    /// Message `id` from `sender`, expected at the peers of its room open now (`presence`)
    /// but the sender: how many they are.
    pub(super) fn expect(&self, id: u64, sender: Member, presence: &Presence) -> Option<u32> {
        let chunk = usize::try_from(id).ok()? / self.per_chunk;
        self.expected.get(chunk)?.get_or_init(|| {
            (0..self.per_chunk * self.stride)
                .map(|_| AtomicU64::new(0))
                .collect()
        });
        let expected = self.of(id)?;
        let mut count = 0;
        for (k, (word, open)) in expected.iter().zip(presence.words(sender.room)).enumerate() {
            let mut bits = open.load(Ordering::Acquire);
            if k == sender.peer as usize / 64 {
                bits &= !(1 << (sender.peer % 64));
            }
            word.store(bits, Ordering::Relaxed);
            count += bits.count_ones();
        }
        Some(count)
    }

    /// Whether message `id` was expected at `receiver`, a peer of its room; `None` for a
    /// message not sent yet or a peer past the room.
    pub(super) fn expected(&self, id: u64, receiver: Member) -> Option<bool> {
        let word = self.of(id)?.get(receiver.peer as usize / 64)?;
        Some(word.load(Ordering::Relaxed) & (1 << (receiver.peer % 64)) != 0)
    }
}

/// The messages of its room one socket got, by their number in the room (a bit each): owned
/// by the socket's own task, so a second copy is told with no atomic at all. It grows with
/// the room's messages, a bit each.
#[derive(Debug, Default)]
pub struct Seen {
    words: Vec<u64>,
}

impl Seen {
    /// Whether message `seq` of the room is new to this socket (it is marked seen now).
    pub(super) fn first(&mut self, seq: u32) -> bool {
        let at = seq as usize / 64;
        if at >= self.words.len() {
            self.words.resize(at + 1, 0);
        }
        let bit = 1 << (seq % 64);
        let new = self.words[at] & bit == 0;
        self.words[at] |= bit;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(socket: u32, room: u32, peer: u32) -> Member {
        Member { socket, room, peer }
    }

    /// A message is expected at the room's open peers but its sender, and a socket's second
    /// copy of one is told by the socket's own set; a peer that opened after the send was not
    /// expected.
    #[test]
    fn copies_are_told_apart_by_peer() {
        let presence = Presence::new(&[70, 2]);
        for peer in [0, 1, 65] {
            presence.enter(member(peer, 0, peer));
        }
        assert_eq!(presence.open_in(0), 3);
        let masks = Masks::new(10, 4, 70);
        assert_eq!(masks.expect(0, member(0, 0, 0), &presence), Some(2));
        assert_eq!(masks.expected(0, member(1, 0, 1)), Some(true));
        assert_eq!(masks.expected(0, member(65, 0, 65)), Some(true));
        assert_eq!(
            masks.expected(0, member(0, 0, 0)),
            Some(false),
            "the sender"
        );
        presence.enter(member(9, 0, 9));
        assert_eq!(
            masks.expected(0, member(9, 0, 9)),
            Some(false),
            "opened after"
        );
        presence.leave(member(1, 0, 1));
        assert_eq!(presence.open_in(0), 3);
        assert_eq!(masks.expect(5, member(0, 0, 0), &presence), Some(2));
        assert_eq!(masks.expected(5, member(1, 0, 1)), Some(false));
        // A message not sent yet has no bits; one past the capacity neither.
        assert_eq!(masks.expected(9, member(1, 0, 1)), None);
        assert_eq!(masks.expect(40, member(0, 0, 0), &presence), None);
        let mut seen = Seen::default();
        assert!(seen.first(0));
        assert!(!seen.first(0));
        assert!(seen.first(200));
        assert!(!seen.first(200));
        assert!(seen.first(1));
    }

    /// A big room's chunk holds fewer messages: its first message makes room for a few, not
    /// a thousand.
    #[test]
    fn a_big_room_takes_small_chunks() {
        let masks = Masks::new(100_000, 1024, 200_000);
        assert!(masks.per_chunk * masks.stride * 8 <= CHUNK_BYTES);
        assert!(masks.per_chunk >= 1);
    }
}
