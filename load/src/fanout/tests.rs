use super::*;
use std::time::Duration;

/// Peer `peer` of room `room`, its socket numbered `room * 100 + peer`.
fn member(room: u32, peer: u32) -> Member {
    Member {
        socket: room * 100 + peer,
        room,
        peer,
    }
}

/// Each socket's own set of the messages it got, as its inbox keeps it.
#[derive(Default)]
struct Sockets(std::collections::HashMap<u32, Seen>);

impl Sockets {
    fn receipt(&mut self, tracker: &Tracker, receiver: Member, stamp: Stamp, now: u64) -> Receipt {
        let seen = self.0.entry(receiver.socket).or_default();
        tracker.receipt(receiver, seen, stamp, now)
    }
}

/// A tracker for rooms of `sizes` peers, every peer open.
fn tracker_with(capacity: u64, sizes: &[u32]) -> Tracker {
    let tracker = Tracker::new(Instant::now(), Duration::from_secs(1), capacity, sizes);
    for (room, &size) in sizes.iter().enumerate() {
        for peer in 0..size {
            tracker.enter(member(room as u32, peer));
        }
    }
    tracker
}

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
    let tracker = tracker_with(10, &[4]);
    let mut sockets = Sockets::default();
    let id = tracker.open(member(0, 0)).expect("capacity");
    let stamp = Stamp { id, sent_us: 100 };
    assert_eq!(
        sockets.receipt(&tracker, member(0, 0), stamp, 150),
        Receipt::OwnEcho
    );
    assert_eq!(
        sockets.receipt(&tracker, member(0, 1), stamp, 400),
        Receipt::Delivered {
            latency_us: 300,
            on_time: true,
            seen_by_all_us: None
        }
    );
    // A late recipient that arrives before a faster one still sets the maximum.
    let late = sockets.receipt(&tracker, member(0, 2), stamp, 2_000_100);
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
        sockets.receipt(&tracker, member(0, 3), stamp, 500),
        Receipt::Delivered {
            latency_us: 400,
            on_time: true,
            seen_by_all_us: Some(2_000_000)
        }
    );
    assert_eq!(tracker.outstanding(), 0);
    assert_eq!(
        sockets.receipt(&tracker, member(0, 1), Stamp { id: 99, sent_us: 0 }, 1),
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
    let tracker = tracker_with(1, &[2]);
    // Capacity is whole chunks: the first chunk's worth, then none.
    for _ in 0..CHUNK {
        assert!(tracker.open(member(0, 0)).is_some());
    }
    assert_eq!(tracker.open(member(0, 0)), None);
}

#[test]
fn seen_by_all_is_never_below_any_recipient_under_concurrency() {
    let recipients = 8u32;
    let tracker = std::sync::Arc::new(tracker_with(4096, &[recipients + 1]));
    let ids: Vec<u64> = (0..2000)
        .map(|_| tracker.open(member(0, 0)).expect("capacity"))
        .collect();
    let threads: Vec<_> = (1..=recipients)
        .map(|receiver| {
            let (tracker, ids) = (std::sync::Arc::clone(&tracker), ids.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                let mut seen = Seen::default();
                for (k, &id) in ids.iter().enumerate() {
                    let now = 1_000 + (k as u64 * 7 + u64::from(receiver) * 131) % 5_000;
                    let receipt = tracker.receipt(
                        member(0, receiver),
                        &mut seen,
                        Stamp { id, sent_us: 0 },
                        now,
                    );
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
    let tracker = tracker_with(100, &[2]);
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

/// Issue 57: a copy outside the sender's room is misrouted, a second copy at one peer a
/// duplicate, a first copy at a peer that was not open when it was sent unexpected: none is
/// a delivery, so a message's deliveries never exceed its recipients, and it is seen by
/// everyone only when every expected peer got it.
#[test]
fn deliveries_never_exceed_what_was_sent() {
    let tracker = Tracker::new(Instant::now(), Duration::from_secs(1), 10, &[3, 3]);
    let mut sockets = Sockets::default();
    for peer in 0..2 {
        tracker.enter(member(0, peer));
    }
    tracker.enter(member(1, 0));
    let id = tracker.open(member(0, 0)).expect("capacity");
    let stamp = Stamp { id, sent_us: 0 };
    assert_eq!(
        sockets.receipt(&tracker, member(1, 0), stamp, 10),
        Receipt::Misrouted
    );
    // The room's third peer opens after the send: its copy is not one it was sent for.
    tracker.enter(member(0, 2));
    assert_eq!(
        sockets.receipt(&tracker, member(0, 2), stamp, 10),
        Receipt::Unexpected
    );
    assert!(matches!(
        sockets.receipt(&tracker, member(0, 1), stamp, 20),
        Receipt::Delivered {
            seen_by_all_us: Some(20),
            ..
        }
    ));
    assert_eq!(
        sockets.receipt(&tracker, member(0, 1), stamp, 30),
        Receipt::Duplicate
    );
    assert_eq!(
        sockets.receipt(&tracker, member(0, 2), stamp, 30),
        Receipt::Duplicate
    );
    let counts = tracker.counts();
    assert_eq!(
        (
            counts.sent,
            counts.expected,
            counts.delivered,
            counts.reached_all
        ),
        (1, 1, 1, 1)
    );
}
