//! Who is in which room, and which of a room's peers each message is for: a bit per peer.
//!
//! [`Presence`] holds, per room, a bit for every peer whose socket is open now. When a message
//! is sent, its room's bits are copied beside it (the peers it is expected at, the sender left
//! out), with a byte for each peer that got it ([`Masks`]). A copy at a socket of
//! another room is misrouted, a second copy at one peer a duplicate, and a first copy at a
//! peer that was not open when it was sent is unexpected: none of them is a delivery, so
//! deliveries never exceed what was sent. They cost about a byte per expected delivery, taken a
//! chunk at a time as messages are sent.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

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

/// Each message's peers: a bit for each it is expected at (written once, when it is sent) and
/// a byte for each that got it. A peer's copies are all read by its own socket's task, so its
/// byte is read and set with plain atomic loads and stores, no locked instruction; `stride`
/// words and `width` bytes a message (the largest room's), in chunks of `per_chunk` messages
/// made when the first of them is sent.
pub(super) struct Masks {
    stride: usize,
    width: usize,
    per_chunk: usize,
    expected: Box<[OnceLock<Box<[AtomicU64]>>]>,
    received: Box<[OnceLock<Box<[AtomicU8]>>]>,
}

/// What became of one copy of a message at one peer of its room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Copy {
    /// The peer's first copy, and the peer was expected.
    First,
    /// The peer had it already.
    Again,
    /// The peer's first copy, but it was not open when the message was sent.
    Unexpected,
}

impl Masks {
    /// Room for `capacity` messages `per_chunk` at a time, in rooms of at most `largest`
    /// peers.
    pub(super) fn new(capacity: u64, per_chunk: usize, largest: u32) -> Masks {
        let chunks = usize::try_from(capacity)
            .unwrap_or(usize::MAX)
            .div_ceil(per_chunk)
            .max(1);
        Masks {
            stride: words_for(largest),
            width: (largest as usize).max(1),
            per_chunk,
            expected: (0..chunks).map(|_| OnceLock::new()).collect(),
            received: (0..chunks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Message `id`'s expected bits and received bytes.
    fn of(&self, id: u64) -> Option<(&[AtomicU64], &[AtomicU8])> {
        let id = usize::try_from(id).ok()?;
        let (chunk, at) = (id / self.per_chunk, id % self.per_chunk);
        let expected = self.expected.get(chunk)?.get()?;
        let received = self.received.get(chunk)?.get()?;
        Some((
            expected.get(at * self.stride..(at + 1) * self.stride)?,
            received.get(at * self.width..(at + 1) * self.width)?,
        ))
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
        self.received.get(chunk)?.get_or_init(|| {
            (0..self.per_chunk * self.width)
                .map(|_| AtomicU8::new(0))
                .collect()
        });
        let (expected, _) = self.of(id)?;
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

    /// A copy of message `id` at `receiver`, a peer of its room: its first or not, expected
    /// or not. Called from `receiver`'s own task only. `None` for a peer past the room.
    pub(super) fn copy(&self, id: u64, receiver: Member) -> Option<Copy> {
        let (expected, received) = self.of(id)?;
        let seen = received.get(receiver.peer as usize)?;
        if seen.load(Ordering::Relaxed) != 0 {
            return Some(Copy::Again);
        }
        seen.store(1, Ordering::Relaxed);
        let bit = 1 << (receiver.peer % 64);
        Some(
            if expected
                .get(receiver.peer as usize / 64)?
                .load(Ordering::Relaxed)
                & bit
                == 0
            {
                Copy::Unexpected
            } else {
                Copy::First
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(socket: u32, room: u32, peer: u32) -> Member {
        Member { socket, room, peer }
    }

    /// A message is expected at the room's open peers but its sender; each peer's first copy
    /// is its delivery, a second is a copy again, and a peer that opened after the send
    /// gets an unexpected one.
    #[test]
    fn copies_are_told_apart_by_peer() {
        let presence = Presence::new(&[70, 2]);
        for peer in [0, 1, 65] {
            presence.enter(member(peer, 0, peer));
        }
        assert_eq!(presence.open_in(0), 3);
        let masks = Masks::new(10, 4, 70);
        assert_eq!(masks.expect(0, member(0, 0, 0), &presence), Some(2));
        assert_eq!(masks.copy(0, member(1, 0, 1)), Some(Copy::First));
        assert_eq!(masks.copy(0, member(1, 0, 1)), Some(Copy::Again));
        assert_eq!(masks.copy(0, member(65, 0, 65)), Some(Copy::First));
        // Opened after the send.
        presence.enter(member(9, 0, 9));
        assert_eq!(masks.copy(0, member(9, 0, 9)), Some(Copy::Unexpected));
        assert_eq!(masks.copy(0, member(9, 0, 9)), Some(Copy::Again));
        presence.leave(member(1, 0, 1));
        assert_eq!(presence.open_in(0), 3);
        assert_eq!(masks.expect(5, member(0, 0, 0), &presence), Some(2));
        assert_eq!(masks.copy(5, member(1, 0, 1)), Some(Copy::Unexpected));
        // A message not sent yet has no bits; one past the capacity neither.
        assert_eq!(masks.copy(9, member(1, 0, 1)), None);
        assert_eq!(masks.expect(40, member(0, 0, 0), &presence), None);
    }
}
