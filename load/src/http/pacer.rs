//! Waiting to the microsecond. tokio's timer wakes on millisecond ticks: an arrival due at
//! 10.3 ms would be released at 11 ms, and the open model measures latency from the intended
//! start, so that lateness would land in the server's figures. A timerfd (the kernel's
//! high-resolution timer) registered with the thread's reactor wakes the pacing task on time.
//!
//! A wake costs CPU, more than the request it releases: the thread sleeps, the kernel wakes
//! it, and the answer that follows finds it asleep again (on a 2-core virtual machine, one
//! arrival a wake costs 2-2.5x wrk2's CPU per request at 10-20k/s). Wakes are aligned on a
//! grid: [`FINE`] while arrivals are [`FINE_UNTIL`] apart or more, so none is released more
//! than that late; when they come closer, [`COARSE`], each wake releasing the several due and
//! the answers to them coming back while the thread is still awake (as wrk2 does on its 1 ms
//! timer): CPU per request as wrk2's. The lateness is each request's schedule lag, recorded
//! and counted in its latency (docs/performance.md has the figures).

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

/// The grid wakes are aligned on: the most a wake is late by design.
const FINE: Duration = Duration::from_micros(50);

/// Arrivals closer together than this (over 10,000 a second on one load thread) are released
/// on the [`COARSE`] grid.
const FINE_UNTIL: Duration = Duration::from_micros(100);

/// The grid when arrivals are closer together than [`FINE_UNTIL`].
const COARSE: Duration = Duration::from_micros(500);

/// The grid for arrivals `gap` apart.
fn grid(gap: Duration) -> Duration {
    if gap < FINE_UNTIL { COARSE } else { FINE }
}

/// One thread's precise sleeper; tokio's timer where a timerfd cannot be made.
pub(super) struct Pacer {
    timer: Option<AsyncFd<OwnedFd>>,
    /// The origin of the grid.
    origin: Instant,
}

impl Pacer {
    /// Must be made inside the runtime whose reactor will wake it.
    pub(super) fn new() -> Pacer {
        let timer = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .ok()
        .and_then(|fd| {
            // SAFETY: the AsyncFd owns the timerfd: it stays open, the same descriptor, for
            // as long as the AsyncFd lives.
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok()
        });
        Pacer {
            timer,
            origin: Instant::now(),
        }
    }

    /// Whether waits are precise (a timerfd), or tokio's millisecond ticks.
    #[cfg(test)]
    fn precise(&self) -> bool {
        self.timer.is_some()
    }

    /// Returns at `at`, or up to a tick of the grid after (at once when it has passed).
    /// `gap` is the time between arrivals at the current rate.
    pub(super) async fn until(&self, at: Instant, gap: Duration) {
        let now = Instant::now();
        if at <= now {
            return;
        }
        let Some(timer) = &self.timer else {
            tokio::time::sleep_until(at).await;
            return;
        };
        // Up to the next tick of the grid.
        let tick = grid(gap).as_nanos();
        let since = (at - self.origin).as_nanos();
        let aligned = since.div_ceil(tick) * tick;
        let at = self.origin + Duration::from_nanos(u64::try_from(aligned).unwrap_or(u64::MAX));
        if arm(timer.get_ref(), at - now).is_err() {
            tokio::time::sleep_until(at).await;
            return;
        }
        match timer.readable().await {
            // The expiration is not read: arming the timer again resets its count, and each
            // expiration is a new readiness event. Forgetting this one saves a syscall a wake.
            Ok(mut ready) => ready.clear_ready(),
            Err(_) => tokio::time::sleep_until(at).await,
        }
    }
}

/// Sets the timer to fire once, `after` from now.
fn arm(timer: &OwnedFd, after: Duration) -> rustix::io::Result<()> {
    let after = after.max(Duration::from_nanos(1));
    let spec = Itimerspec {
        it_interval: Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: Timespec {
            tv_sec: i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: after.subsec_nanos().into(),
        },
    };
    timerfd_settime(timer, TimerfdTimerFlags::empty(), &spec).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Up to 10,000 arrivals a second on a thread, each is released within [`FINE`] of its
    /// time; above, several a wake.
    #[test]
    fn the_grid_is_fine_up_to_ten_thousand_a_second() {
        for rate in [1.0, 2_000.0, 9_999.0, 10_000.0] {
            assert_eq!(grid(Duration::from_secs_f64(1.0 / rate)), FINE, "{rate}/s");
        }
        for rate in [10_001.0, 20_000.0, 50_000.0] {
            assert_eq!(
                grid(Duration::from_secs_f64(1.0 / rate)),
                COARSE,
                "{rate}/s"
            );
        }
    }

    /// Waits end closer to their time than tokio's timer ends them (it rounds up to its next
    /// millisecond tick). Both measured here, alternating, medians of many waits: a shared
    /// machine slows both alike.
    #[test]
    fn waits_end_on_time_not_on_the_next_millisecond() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (mut precise, mut ticked) = runtime.block_on(async {
            let pacer = Pacer::new();
            assert!(pacer.precise(), "timerfd is available on Linux");
            let (mut precise, mut ticked) = (Vec::new(), Vec::new());
            for i in 0..200u64 {
                let at = Instant::now() + Duration::from_micros(150 + 7 * (i % 100));
                if i % 2 == 0 {
                    pacer.until(at, Duration::from_millis(1)).await;
                    precise.push(Instant::now().saturating_duration_since(at));
                } else {
                    tokio::time::sleep_until(at).await;
                    ticked.push(Instant::now().saturating_duration_since(at));
                }
            }
            (precise, ticked)
        });
        precise.sort();
        ticked.sort();
        let (precise, ticked) = (precise[precise.len() / 2], ticked[ticked.len() / 2]);
        assert!(
            precise * 2 < ticked,
            "median lateness: timerfd {precise:?}, tokio's timer {ticked:?}"
        );
    }
}
