//! The run's hold: the one window in which every scenario of a run is at its load, so every
//! figure a verdict reads (HTTP latency and rates, rooms' deliveries, the server's CPU) is
//! taken over the same seconds.
//!
//! Each scenario is a [`Member`]: it says when it is at its load ([`Member::at_load`]: an
//! HTTP scenario when its ramp-up ends, rooms once every socket opened), or leaves (dropped
//! unsaid: it failed before its load). Once every member has said or left, the hold starts at
//! the latest of those instants and lasts the stated hold. A scenario at its load earlier
//! keeps it (an HTTP scenario holds its peak) until the hold ends; figures from before or
//! after it are counted apart.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// Not decided yet, in the atomics below.
const UNDECIDED: u64 = u64::MAX;

/// The run's hold, shared by its scenarios.
pub struct RunHold {
    /// The run's clock: its load's start, from which every interval is told in seconds.
    epoch: Instant,
    /// How long the hold lasts once every scenario is at its load.
    length: Duration,
    /// Members that have neither said nor left, and the latest instant said so far.
    state: Mutex<Pending>,
    /// The hold's ends in microseconds from `epoch`, once decided ([`UNDECIDED`] before): read
    /// on the load threads' hot path without a lock.
    start_us: AtomicU64,
    end_us: AtomicU64,
    /// Turns `Some` when decided: the hold, or `None` when every member left.
    decided: watch::Sender<Option<Option<Range<Instant>>>>,
}

struct Pending {
    members: usize,
    latest: Option<Instant>,
}

/// One scenario's part in the run's hold. Dropped without [`Member::at_load`], it leaves: the
/// hold is decided by the others.
pub struct Member {
    hold: Arc<RunHold>,
    said: bool,
}

impl RunHold {
    /// A hold of `length` for `members` scenarios, on the clock that starts at `epoch`; the
    /// members to hand to each scenario.
    pub fn new(epoch: Instant, length: Duration, count: usize) -> (Arc<RunHold>, Vec<Member>) {
        let (decided, _) = watch::channel(None);
        let hold = Arc::new(RunHold {
            epoch,
            length,
            state: Mutex::new(Pending {
                members: count,
                latest: None,
            }),
            start_us: AtomicU64::new(UNDECIDED),
            end_us: AtomicU64::new(UNDECIDED),
            decided,
        });
        let members = (0..count)
            .map(|_| Member {
                hold: Arc::clone(&hold),
                said: false,
            })
            .collect();
        if count == 0 {
            hold.decide(None);
        }
        (hold, members)
    }

    /// A scenario's hold on its own (a run of one scenario, or a test): its one member.
    pub fn alone(length: Duration) -> Member {
        let (_, mut members) = RunHold::new(Instant::now(), length, 1);
        members
            .pop()
            .unwrap_or_else(|| unreachable!("one member was made"))
    }

    /// The run's clock.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// The stated hold.
    pub fn length(&self) -> Duration {
        self.length
    }

    /// The hold, once decided; `None` before, or when every scenario left.
    pub fn window(&self) -> Option<Range<Instant>> {
        let (start, end) = (
            self.start_us.load(Ordering::Acquire),
            self.end_us.load(Ordering::Acquire),
        );
        (start != UNDECIDED && end != UNDECIDED).then(|| {
            self.epoch + Duration::from_micros(start)..self.epoch + Duration::from_micros(end)
        })
    }

    /// Whether `at` falls in the hold: false before it is decided (every member says an
    /// instant no earlier than when it says it, so nothing that happened before the decision
    /// can lie inside the hold).
    pub fn contains(&self, at: Instant) -> bool {
        let start = self.start_us.load(Ordering::Acquire);
        if start == UNDECIDED {
            return false;
        }
        let micros = at.saturating_duration_since(self.epoch).as_micros();
        let micros = u64::try_from(micros).unwrap_or(u64::MAX);
        micros >= start && micros < self.end_us.load(Ordering::Acquire)
    }

    /// Waits until the hold is decided: the hold, or `None` when every member left.
    pub async fn decided(&self) -> Option<Range<Instant>> {
        let mut watch = self.decided.subscribe();
        match watch.wait_for(Option::is_some).await {
            Ok(decided) => decided.clone().flatten(),
            // The sender lives as long as `self`.
            Err(_) => None,
        }
    }

    /// `range` on the run's clock, in seconds.
    pub fn seconds(&self, range: &Range<Instant>) -> (f64, f64) {
        let s = |at: Instant| at.saturating_duration_since(self.epoch).as_secs_f64();
        (s(range.start), s(range.end))
    }

    /// One member said (`Some`) or left (`None`).
    fn settle(&self, at: Option<Instant>) {
        let decided = {
            let Ok(mut pending) = self.state.lock() else {
                return;
            };
            if let Some(at) = at {
                pending.latest = Some(pending.latest.map_or(at, |latest| latest.max(at)));
            }
            pending.members = pending.members.saturating_sub(1);
            (pending.members == 0).then_some(pending.latest)
        };
        if let Some(latest) = decided {
            self.decide(latest);
        }
    }

    /// The hold from `start` (none: every member left), kept in whole microseconds from the
    /// epoch, so `window`, `contains` and `decided` read one and the same.
    fn decide(&self, start: Option<Instant>) {
        let micros = |at: Instant| {
            u64::try_from(at.saturating_duration_since(self.epoch).as_micros())
                .unwrap_or(UNDECIDED - 1)
        };
        if let Some(start) = start {
            self.end_us
                .store(micros(start + self.length), Ordering::Release);
            self.start_us.store(micros(start), Ordering::Release);
        }
        self.decided.send_replace(Some(self.window()));
    }
}

impl Member {
    /// This scenario is at its load from `at` (never earlier than now: what happened before
    /// is not in the hold).
    pub fn at_load(&mut self, at: Instant) {
        if !std::mem::replace(&mut self.said, true) {
            self.hold.settle(Some(at.max(Instant::now())));
        }
    }

    /// The run's hold this member is part of.
    pub fn hold(&self) -> &Arc<RunHold> {
        &self.hold
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if !self.said {
            self.said = true;
            self.hold.settle(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hold starts when the last scenario is at its load and lasts the stated hold; one
    /// that left does not hold it up; a hold of nobody is decided empty.
    #[tokio::test]
    async fn the_hold_starts_when_every_scenario_is_at_its_load() {
        let epoch = Instant::now();
        let (hold, mut members) = RunHold::new(epoch, Duration::from_secs(10), 3);
        let third = members.pop().expect("three");
        let mut second = members.pop().expect("three");
        let mut first = members.pop().expect("three");
        first.at_load(epoch + Duration::from_secs(2));
        assert_eq!(hold.window(), None);
        assert!(!hold.contains(epoch + Duration::from_secs(5)));
        second.at_load(epoch + Duration::from_secs(3));
        assert_eq!(hold.window(), None);
        drop(third);
        let window = hold.window().expect("decided");
        assert_eq!(window.start, epoch + Duration::from_secs(3));
        assert_eq!(window.end, epoch + Duration::from_secs(13));
        assert_eq!(hold.decided().await, Some(window.clone()));
        assert_eq!(hold.seconds(&window), (3.0, 13.0));
        assert!(!hold.contains(epoch + Duration::from_millis(2_999)));
        assert!(hold.contains(epoch + Duration::from_secs(3)));
        assert!(hold.contains(epoch + Duration::from_millis(12_999)));
        assert!(!hold.contains(epoch + Duration::from_secs(13)));
        // Saying twice changes nothing.
        first.at_load(epoch + Duration::from_secs(9));
        assert_eq!(hold.window(), Some(window));
        let (nobody, none) = RunHold::new(epoch, Duration::from_secs(1), 2);
        drop(none);
        assert_eq!(nobody.decided().await, None);
        assert_eq!(nobody.window(), None);
    }

    /// A member cannot start the hold in the past: an instant already gone is now.
    #[tokio::test]
    async fn a_hold_never_starts_before_it_is_decided() {
        let epoch = Instant::now();
        let (hold, mut members) = RunHold::new(epoch, Duration::from_secs(1), 1);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let said_at = Instant::now();
        members[0].at_load(epoch);
        let window = hold.window().expect("decided");
        // Kept in whole microseconds.
        assert!(
            window.start + Duration::from_micros(1) >= said_at,
            "{window:?}"
        );
    }
}
