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

mod stamp;

pub use stamp::{BINARY_STAMP_LEN, Stamp, StampFinder, TEXT_MARK};

/// Per-message state: who sent it, how many should get it, how many did.
#[derive(Default)]
struct Slot {
    /// The sending socket plus one (0: the slot is not in use yet).
    sender: AtomicU32,
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
}

impl Tracker {
    /// Room for `capacity` messages; memory is taken as messages are sent, a chunk at a time.
    pub fn new(epoch: Instant, deadline: std::time::Duration, capacity: u64) -> Tracker {
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
        }
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

    /// A new message from socket `sender`, expected at `expected` recipients. `None` when the
    /// run's capacity is used up (the caller counts the send as skipped).
    pub fn open(&self, sender: u32, expected: u32) -> Option<u64> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let index = usize::try_from(id).ok()?;
        let chunk = self
            .chunks
            .get(index / CHUNK)?
            .get_or_init(|| (0..CHUNK).map(|_| Slot::default()).collect());
        let slot = &chunk[index % CHUNK];
        slot.expected.store(expected, Ordering::Relaxed);
        if expected > 0 {
            self.outstanding.fetch_add(1, Ordering::Relaxed);
            self.expected
                .fetch_add(u64::from(expected), Ordering::Relaxed);
        }
        // Release: a receipt that reads the sender also sees `expected`.
        slot.sender.store(sender + 1, Ordering::Release);
        Some(id)
    }

    /// Socket `receiver` got the message stamped `stamp` at `now`.
    pub fn receipt(&self, receiver: u32, stamp: Stamp, now_us: u64) -> Receipt {
        // An id past the last message finds no chunk, or a slot with no sender yet: no need to
        // read `next_id`, a line every sender writes.
        let Some(slot) = self.slot(stamp.id) else {
            return Receipt::Unknown;
        };
        let sender = slot.sender.load(Ordering::Acquire);
        if sender == 0 {
            return Receipt::Unknown;
        }
        if sender == receiver + 1 {
            return Receipt::OwnEcho;
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
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn text_stamps_are_found_anywhere_and_survive_json() {
        let stamp = Stamp {
            id: 0x1234,
            sent_us: 98_765_432,
        };
        let mut text = String::from(r#"{"room":3,"stamp":""#);
        stamp.write_text(&mut text);
        assert!(text.ends_with("hr1.1234.5e30a78"), "{text}");
        text.push_str(r#"","payload":"xxxx"}"#);
        let mut finder = StampFinder::default();
        assert_eq!(finder.find(text.as_bytes()), Some(stamp));
        // Found again where it was, and still found when it moves.
        assert_eq!(finder.find(text.as_bytes()), Some(stamp));
        assert_eq!(finder.find(format!("..{text}").as_bytes()), Some(stamp));
        assert_eq!(finder.find(b"hr1.zz.1"), None);
        assert_eq!(finder.find(b"hr1.12"), None);
        assert_eq!(finder.find(b"no stamp here"), None);
        let zero = Stamp { id: 0, sent_us: 0 };
        let mut short = String::new();
        zero.write_text(&mut short);
        assert_eq!(short, "hr1.0.0");
        assert_eq!(finder.find(short.as_bytes()), Some(zero));
    }

    #[test]
    fn binary_stamps_round_trip() {
        let stamp = Stamp {
            id: u64::MAX - 3,
            sent_us: 7,
        };
        assert_eq!(Stamp::from_binary(&stamp.binary()), Some(stamp));
        assert_eq!(Stamp::from_binary(&[1, 2, 3]), None);
    }

    #[test]
    fn a_message_is_seen_by_all_when_its_last_recipient_reports() {
        let tracker = Tracker::new(Instant::now(), Duration::from_secs(1), 10);
        let id = tracker.open(0, 3).expect("capacity");
        let stamp = Stamp { id, sent_us: 100 };
        assert_eq!(tracker.receipt(0, stamp, 150), Receipt::OwnEcho);
        assert_eq!(
            tracker.receipt(1, stamp, 400),
            Receipt::Delivered {
                latency_us: 300,
                on_time: true,
                seen_by_all_us: None
            }
        );
        // A late recipient that arrives before a faster one still sets the maximum.
        let late = tracker.receipt(2, stamp, 2_000_100);
        assert_eq!(
            late,
            Receipt::Delivered {
                latency_us: 2_000_000,
                on_time: false,
                seen_by_all_us: None
            }
        );
        assert_eq!(tracker.outstanding(), 1);
        assert_eq!(
            tracker.receipt(3, stamp, 500),
            Receipt::Delivered {
                latency_us: 400,
                on_time: true,
                seen_by_all_us: Some(2_000_000)
            }
        );
        assert_eq!(tracker.outstanding(), 0);
        assert_eq!(
            tracker.receipt(1, Stamp { id: 99, sent_us: 0 }, 1),
            Receipt::Unknown
        );
        let counts = tracker.counts();
        assert_eq!(
            counts,
            MessageCounts {
                sent: 1,
                expected: 3,
                delivered: 3,
                on_time: 2,
                late: 1,
                reached_all: 1,
                ..MessageCounts::default()
            }
        );
    }

    #[test]
    fn latency_codes_keep_order_and_never_round_down() {
        let mut previous = 0;
        for micros in [
            0u64,
            1,
            2,
            999,
            1_000,
            123_456,
            2_000_000,
            16_777_217,
            3_600_000_000,
        ] {
            let code = LatencyCode::encode(micros);
            assert!(code >= previous, "{micros}");
            previous = code;
            let back = LatencyCode::decode(code);
            assert!(back >= micros, "{micros} → {back}");
            assert!(
                back as f64 <= micros as f64 * 1.0001 + 1.0,
                "{micros} → {back}"
            );
        }
    }

    #[test]
    fn capacity_bounds_the_messages() {
        let tracker = Tracker::new(Instant::now(), Duration::from_secs(1), 1);
        // Capacity is whole chunks: the first chunk's worth, then none.
        for _ in 0..CHUNK {
            assert!(tracker.open(0, 1).is_some());
        }
        assert_eq!(tracker.open(0, 1), None);
    }

    #[test]
    fn seen_by_all_is_never_below_any_recipient_under_concurrency() {
        let tracker =
            std::sync::Arc::new(Tracker::new(Instant::now(), Duration::from_secs(10), 4096));
        let recipients = 8u32;
        let ids: Vec<u64> = (0..2000)
            .map(|_| tracker.open(0, recipients).expect("capacity"))
            .collect();
        let threads: Vec<_> = (1..=recipients)
            .map(|receiver| {
                let (tracker, ids) = (std::sync::Arc::clone(&tracker), ids.clone());
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    for (k, &id) in ids.iter().enumerate() {
                        let now = 1_000 + (k as u64 * 7 + u64::from(receiver) * 131) % 5_000;
                        let receipt = tracker.receipt(receiver, Stamp { id, sent_us: 0 }, now);
                        mine.push((id, receipt));
                    }
                    mine
                })
            })
            .collect();
        let mut latest = std::collections::HashMap::<u64, u64>::new();
        let mut all = std::collections::HashMap::<u64, u64>::new();
        for thread in threads {
            for (id, receipt) in thread.join().expect("thread") {
                if let Receipt::Delivered {
                    latency_us,
                    seen_by_all_us,
                    ..
                } = receipt
                {
                    let entry = latest.entry(id).or_default();
                    *entry = (*entry).max(latency_us);
                    if let Some(value) = seen_by_all_us {
                        assert!(all.insert(id, value).is_none(), "completed twice");
                    }
                }
            }
        }
        assert_eq!(all.len(), ids.len());
        for (id, value) in all {
            assert!(
                value >= latest[&id],
                "message {id}: {value} < {}",
                latest[&id]
            );
            assert_eq!(value, latest[&id]);
        }
        assert_eq!(tracker.outstanding(), 0);
        // Every message expected at 8 recipients, each one delivered.
        let taken = tracker.take_window();
        assert_eq!(taken.expected, 2000 * 8);
    }

    #[test]
    fn batches_reach_the_histograms() {
        let tracker = Tracker::new(Instant::now(), Duration::from_secs(1), 100);
        let mut batch = Batch::default();
        for k in 0..100u64 {
            let receipt = Receipt::Delivered {
                latency_us: 1_000 + k,
                on_time: true,
                seen_by_all_us: (k % 10 == 0).then_some(5_000),
            };
            batch.push(&tracker, 3, receipt);
        }
        batch.flush(&tracker, 3);
        let (seen, all) = tracker.histograms();
        assert_eq!(seen.len(), 100);
        assert_eq!(all.len(), 10);
        let first = tracker.take_window();
        assert_eq!((first.seen.len(), first.delivered), (100, 100));
        assert_eq!(first.seen_by_all.len(), 10);
        let second = tracker.take_window();
        assert_eq!((second.seen.len(), second.delivered), (0, 100));
        assert_eq!(second.seen_by_all.len(), 0);
        // Taking a window moves its latencies into the total, never twice.
        assert_eq!(tracker.histograms().0.len(), 100);
    }
}
