//! What every load thread of an HTTP scenario starts from, and its share of the load.

use super::client::Client;
use super::h2;
use super::schedule::Schedule;
use crate::hold::RunHold;
use headroom_matrix::resolved::HttpScenario;
use headroom_spec::Rate;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long past its own hold a scenario holds its peak at most, waiting for the others to
/// arrive at their load (sockets still opening, a segment late at its meeting): past it, it
/// ramps down and the run says its loads were not there together.
pub(super) const WAIT_FOR_OTHERS: Duration = Duration::from_secs(600);

/// One load thread's share of a scenario: thread `index` of `threads`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Share {
    pub(super) index: usize,
    pub(super) threads: usize,
}

impl Share {
    /// This thread's part of `total` (users, connections), the remainder going to the first
    /// threads; never below one.
    pub(super) fn of(self, total: u64) -> u64 {
        let threads = self.threads as u64;
        (total / threads + u64::from((self.index as u64) < total % threads)).max(1)
    }
}

/// What every load thread of a scenario starts from.
pub(super) struct Job {
    pub(super) scenario: Arc<HttpScenario>,
    pub(super) client: Arc<Client>,
    /// The thread's HTTP/2 connections.
    pub(super) streams: Arc<h2::Streams>,
    pub(super) schedule: Schedule,
    pub(super) start: Instant,
    /// The run's hold, which sets how long this scenario holds its peak.
    pub(super) hold: Arc<RunHold>,
    pub(super) cancel: watch::Receiver<bool>,
    /// The run's share this process sends (`--segment`).
    pub(super) segment: crate::stripe::Segment,
    /// The seed of the run's Poisson arrivals: every segment draws the same.
    pub(super) seed: u64,
    /// The seed of the weighted request mix: arrival `k` (a user's `k`th pick) takes the
    /// request its `k`th draw names.
    pub(super) mix_seed: u64,
    /// The seed of virtual users' think times and starts: user `u`'s `k`th draw.
    pub(super) think_seed: u64,
}

impl Job {
    /// The scenario's stages as they run: its hold lasts until the run's hold ends, once that
    /// is decided; until then it holds its peak (at most `WAIT_FOR_OTHERS` past its own).
    pub(super) fn schedule_now(&self) -> Schedule {
        let peak_from = self.start + Duration::from_secs_f64(self.schedule.ramp_up);
        let waiting = self.schedule.hold + WAIT_FOR_OTHERS.as_secs_f64();
        let hold = self.hold.window().map_or(waiting, |window| {
            window
                .end
                .saturating_duration_since(peak_from)
                .as_secs_f64()
                .min(waiting)
        });
        Schedule {
            hold,
            ..self.schedule
        }
    }

    /// When this scenario's load ends, as far as it is known now.
    pub(super) fn end_now(&self) -> Instant {
        self.start + self.schedule_now().total()
    }
}

pub(super) fn per_second(rate: Option<&Rate>) -> f64 {
    rate.map_or(0.0, |r| r.as_per_second())
}
