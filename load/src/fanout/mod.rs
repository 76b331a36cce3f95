//! Fan-out bookkeeping for rooms scenarios: the stamp a message carries, and what became of
//! every message sent.
//!
//! A sender takes a message id from the [`Tracker`] and writes it, with the intended send time,
//! into the message (the stamp). Every receiving peer reads the stamp back and reports a
//! receipt. The tracker keeps, per message, how many recipients it expects, how many got it, how
//! many on time, and the largest latency so far; the receipt that completes a message gives its
//! "seen by everyone" time. Per-message state is a few atomics in an append-only arena, so the
//! receive path takes no lock; latencies are batched per socket ([`Batch`]) and flushed into
//! one of a few sharded histograms.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use hdrhistogram::Histogram;
use tokio::time::Instant;

use crate::http::histogram;
use crate::results::MessageCounts;

mod members;
mod stamp;

use members::{Masks, Presence};
pub use members::{Member, Seen};
pub use stamp::{BINARY_STAMP_LEN, Stamp, StampFinder, TEXT_MARK};

/// Per-message state: who sent it, how many should get it, how many did.
#[derive(Default)]
struct Slot {
    /// The sending socket plus one (0: the slot is not in use yet).
    sender: AtomicU32,
    /// The sender's room.
    room: AtomicU32,
    /// The message's number in its room: a socket's [`Seen`] is by it.
    seq: AtomicU32,
    expected: AtomicU32,
    /// Everything a receipt changes, in one word so a receipt is one compare-and-swap: the
    /// recipients so far (low 20 bits), those on time (next 20), and the largest latency so far
    /// as a [`LatencyCode`] (high 24).
    state: AtomicU64,
}

/// Recipients one message may have: the 20 bits the count takes in [`Slot::state`].
pub const MAX_RECIPIENTS: u32 = (1 << 20) - 1;
const COUNT_MASK: u64 = (1 << 20) - 1;

/// A latency in 24 bits that keeps order: the top 24 bits of its `f32` form, rounded up, so the
/// maximum of codes is the code of the maximum, and a decoded code is never below the latency
/// it came from (within 0.01 % above it).
struct LatencyCode;

impl LatencyCode {
    fn encode(micros: u64) -> u64 {
        // `as f32` rounds to the nearest; step up when that was below.
        let mut bits = (micros as f32).to_bits();
        if (f32::from_bits(bits) as u64) < micros {
            bits += 1;
        }
        (u64::from(bits) + 0xff) >> 8
    }

    fn decode(code: u64) -> u64 {
        f32::from_bits((code << 8) as u32) as u64
    }
}

const CHUNK: usize = 1024;

/// What a receipt meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receipt {
    /// A recipient got the message, this long after its intended send.
    Delivered {
        /// Its latency, in microseconds.
        latency_us: u64,
        /// Whether it arrived within the deadline.
        on_time: bool,
        /// The receipt completed the message: everyone expected has it, after this long.
        seen_by_all_us: Option<u64>,
    },
    /// The sender's own message, echoed back: not a delivery.
    OwnEcho,
    /// A copy at a socket outside the sender's room: not a delivery, a fault of the server.
    Misrouted,
    /// A second (or later) copy at one recipient: not a delivery, a fault of the server.
    Duplicate,
    /// A first copy at a peer of the room that was not open when it was sent (a history
    /// sent on joining, a replay): not a delivery, and not expected.
    Unexpected,
    /// A stamp no sender of this run wrote.
    Unknown,
}

/// The histograms receipts are flushed into; sharded so sockets on different threads rarely
/// meet on one lock.
pub struct Recorded {
    /// Seen latencies of the windows already taken.
    pub seen: Histogram<u64>,
    /// Seen by everyone: one value per message that reached all its recipients.
    pub seen_by_all: Histogram<u64>,
    /// The seen latencies since the last window was taken: each latency is recorded once,
    /// here, and moves into `seen` when its window is taken.
    pub window: Histogram<u64>,
    /// The seen-by-everyone latencies since the last window was taken (also in
    /// `seen_by_all`): the live view's.
    pub all_window: Histogram<u64>,
}

/// One second of deliveries, taken.
pub struct TakenWindow {
    /// Its seen latencies.
    pub seen: Histogram<u64>,
    /// Its seen-by-everyone latencies.
    pub seen_by_all: Histogram<u64>,
    /// Deliveries seen so far, this second's included.
    pub delivered: u64,
    /// Deliveries expected so far: every message sent, once per recipient.
    pub expected: u64,
}

/// Every message of one rooms scenario run.
pub struct Tracker {
    epoch: Instant,
    deadline_us: u64,
    chunks: Box<[OnceLock<Box<[Slot]>>]>,
    next_id: AtomicU64,
    /// Messages whose recipients have not all reported yet.
    outstanding: AtomicU64,
    /// Deliveries expected so far.
    expected: AtomicU64,
    shards: Box<[Mutex<Recorded>]>,
    /// Which peers of each room are open now.
    presence: Presence,
    /// Which peers each message is expected at.
    masks: Masks,
    /// Messages sent in each room so far: the next one's number in it.
    room_messages: Box<[AtomicU32]>,
}

impl Tracker {
    /// Room for `capacity` messages in rooms of `sizes` peers; memory is taken as messages are
    /// sent, a chunk at a time.
    pub fn new(
        epoch: Instant,
        deadline: std::time::Duration,
        capacity: u64,
        sizes: &[u32],
    ) -> Tracker {
        let chunks = usize::try_from(capacity)
            .unwrap_or(usize::MAX)
            .div_ceil(CHUNK)
            .max(1);
        let shards = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        Tracker {
            epoch,
            deadline_us: deadline.as_micros() as u64,
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
            next_id: AtomicU64::new(0),
            outstanding: AtomicU64::new(0),
            expected: AtomicU64::new(0),
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Recorded {
                        seen: histogram(),
                        seen_by_all: histogram(),
                        window: histogram(),
                        all_window: histogram(),
                    })
                })
                .collect(),
            presence: Presence::new(sizes),
            room_messages: sizes.iter().map(|_| AtomicU32::new(0)).collect(),
            masks: Masks::new(capacity, CHUNK, sizes.iter().copied().max().unwrap_or(0)),
        }
    }

    /// `member`'s socket is open: messages of its room sent from now are expected at it.
    pub fn enter(&self, member: Member) {
        self.presence.enter(member);
    }

    /// `member`'s socket closed.
    pub fn leave(&self, member: Member) {
        self.presence.leave(member);
    }

    /// How many peers of `room` are open now.
    pub fn open_in(&self, room: u32) -> u32 {
        self.presence.open_in(room)
    }

    /// Microseconds from the run's epoch to `at`, as stamps carry them.
    pub fn micros_since_epoch(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_micros() as u64
    }

    fn slot(&self, id: u64) -> Option<&Slot> {
        let id = usize::try_from(id).ok()?;
        let chunk = self.chunks.get(id / CHUNK)?.get()?;
        chunk.get(id % CHUNK)
    }

    /// A new message from `sender`, expected at the peers of its room open now but the
    /// sender. `None` when the run's capacity is used up (the caller counts the send as
    /// skipped).
    pub fn open(&self, sender: Member) -> Option<u64> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let index = usize::try_from(id).ok()?;
        let chunk = self
            .chunks
            .get(index / CHUNK)?
            .get_or_init(|| (0..CHUNK).map(|_| Slot::default()).collect());
        let slot = &chunk[index % CHUNK];
        let expected = self.masks.expect(id, sender, &self.presence)?;
        let seq = self
            .room_messages
            .get(sender.room as usize)?
            .fetch_add(1, Ordering::Relaxed);
        slot.expected.store(expected, Ordering::Relaxed);
        slot.room.store(sender.room, Ordering::Relaxed);
        slot.seq.store(seq, Ordering::Relaxed);
        if expected > 0 {
            self.outstanding.fetch_add(1, Ordering::Relaxed);
            self.expected
                .fetch_add(u64::from(expected), Ordering::Relaxed);
        }
        // Release: a receipt that reads the sender also sees the room, `expected` and the
        // expected peers.
        slot.sender.store(sender.socket + 1, Ordering::Release);
        Some(id)
    }

    /// `receiver` got the message stamped `stamp` at `now`; `seen` is the messages of its room
    /// it got before.
    pub fn receipt(&self, receiver: Member, seen: &mut Seen, stamp: Stamp, now_us: u64) -> Receipt {
        // An id past the last message finds no chunk, or a slot with no sender yet: no need to
        // read `next_id`, a line every sender writes.
        let Some(slot) = self.slot(stamp.id) else {
            return Receipt::Unknown;
        };
        let sender = slot.sender.load(Ordering::Acquire);
        if sender == 0 {
            return Receipt::Unknown;
        }
        if sender == receiver.socket + 1 {
            return Receipt::OwnEcho;
        }
        if slot.room.load(Ordering::Relaxed) != receiver.room {
            return Receipt::Misrouted;
        }
        if !seen.first(slot.seq.load(Ordering::Relaxed)) {
            return Receipt::Duplicate;
        }
        if self.masks.expected(stamp.id, receiver) != Some(true) {
            return Receipt::Unexpected;
        }
        let latency_us = now_us.saturating_sub(stamp.sent_us);
        let on_time = latency_us <= self.deadline_us;
        // One compare-and-swap: the count, the on-time count and the maximum move together,
        // so whoever completes the message sees every other recipient's latency.
        let code = LatencyCode::encode(latency_us);
        let mut current = slot.state.load(Ordering::Relaxed);
        let seen = loop {
            let seen = (current & COUNT_MASK) + 1;
            let on_time_count = ((current >> 20) & COUNT_MASK) + u64::from(on_time);
            let max = (current >> 40).max(code);
            let next = (max << 40) | (on_time_count << 20) | seen.min(COUNT_MASK);
            match slot.state.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break (seen, max),
                Err(actual) => current = actual,
            }
        };
        let expected = u64::from(slot.expected.load(Ordering::Relaxed));
        let seen_by_all_us = (seen.0 == expected).then(|| {
            self.outstanding.fetch_sub(1, Ordering::Relaxed);
            LatencyCode::decode(seen.1).max(latency_us)
        });
        Receipt::Delivered {
            latency_us,
            on_time,
            seen_by_all_us,
        }
    }

    /// Messages not yet seen by all their recipients.
    pub fn outstanding(&self) -> u64 {
        self.outstanding.load(Ordering::Relaxed)
    }

    /// The latency shard a socket flushes into.
    pub fn shard(&self, socket: u32) -> &Mutex<Recorded> {
        &self.shards[socket as usize % self.shards.len()]
    }

    /// The deliveries since the last call, all shards merged, and the totals so far.
    pub fn take_window(&self) -> TakenWindow {
        let mut taken = TakenWindow {
            seen: histogram(),
            seen_by_all: histogram(),
            delivered: 0,
            expected: self.expected.load(Ordering::Relaxed),
        };
        for shard in self.shards.iter() {
            if let Ok(mut recorded) = shard.lock() {
                let Recorded {
                    seen,
                    window,
                    all_window,
                    ..
                } = &mut *recorded;
                let _ = taken.seen.add(&*window);
                let _ = taken.seen_by_all.add(&*all_window);
                let _ = seen.add(&*window);
                window.reset();
                all_window.reset();
                taken.delivered += seen.len();
            }
        }
        taken
    }

    /// Every shard's histograms merged: (seen, seen by everyone).
    pub fn histograms(&self) -> (Histogram<u64>, Histogram<u64>) {
        let (mut seen, mut all) = (histogram(), histogram());
        for shard in self.shards.iter() {
            if let Ok(recorded) = shard.lock() {
                let _ = seen.add(&recorded.seen);
                let _ = seen.add(&recorded.window);
                let _ = all.add(&recorded.seen_by_all);
            }
        }
        (seen, all)
    }

    /// Sums every message's state; call once the receivers are done. (The counts the tracker
    /// does not see, skipped sends and unstamped frames, are left at zero.)
    pub fn counts(&self) -> MessageCounts {
        let sent = self.next_id.load(Ordering::Relaxed);
        let mut counts = MessageCounts::default();
        for id in 0..sent {
            let Some(slot) = self.slot(id) else { continue };
            if slot.sender.load(Ordering::Acquire) == 0 {
                continue;
            }
            counts.sent += 1;
            let expected = u64::from(slot.expected.load(Ordering::Relaxed));
            let state = slot.state.load(Ordering::Relaxed);
            let (seen, on_time) = (state & COUNT_MASK, (state >> 20) & COUNT_MASK);
            counts.expected += expected;
            counts.delivered += seen;
            counts.on_time += on_time;
            counts.late += seen.saturating_sub(on_time);
            if expected > 0 {
                if seen >= expected {
                    counts.reached_all += 1;
                } else {
                    counts.incomplete += 1;
                }
                if on_time >= expected {
                    counts.reached_all_on_time += 1;
                }
            }
        }
        counts
    }
}

/// A socket's latencies waiting to be flushed: the receive path locks a shard once per batch,
/// not once per frame.
#[derive(Default)]
pub struct Batch {
    seen: [u32; Batch::SIZE],
    len: u8,
    all: [u32; Batch::ALL],
    all_len: u8,
}

impl Batch {
    const SIZE: usize = 32;
    const ALL: usize = 4;

    /// Adds a delivery; flushes first when full.
    pub fn push(&mut self, tracker: &Tracker, socket: u32, receipt: Receipt) {
        let Receipt::Delivered {
            latency_us,
            seen_by_all_us,
            ..
        } = receipt
        else {
            return;
        };
        if usize::from(self.len) == Self::SIZE
            || (seen_by_all_us.is_some() && usize::from(self.all_len) == Self::ALL)
        {
            self.flush(tracker, socket);
        }
        self.seen[usize::from(self.len)] = u32::try_from(latency_us).unwrap_or(u32::MAX);
        self.len += 1;
        if let Some(all) = seen_by_all_us {
            self.all[usize::from(self.all_len)] = u32::try_from(all).unwrap_or(u32::MAX);
            self.all_len += 1;
        }
    }

    /// Whether nothing is waiting to be flushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.all_len == 0
    }

    /// Records the batched latencies in the socket's shard and empties the batch.
    pub fn flush(&mut self, tracker: &Tracker, socket: u32) {
        if self.is_empty() {
            return;
        }
        if let Ok(mut recorded) = tracker.shard(socket).lock() {
            for &micros in &self.seen[..usize::from(self.len)] {
                let _ = recorded.window.record(u64::from(micros).max(1));
            }
            for &micros in &self.all[..usize::from(self.all_len)] {
                let _ = recorded.seen_by_all.record(u64::from(micros).max(1));
                let _ = recorded.all_window.record(u64::from(micros).max(1));
            }
        }
        self.len = 0;
        self.all_len = 0;
    }
}

#[cfg(test)]
mod tests;
