//! The run's timeline: ramp-up, hold, drain, steady state, ramp-down, as one socket sees it.

use super::{REGISTRATION_GRACE, Stage, Timeline};
use crate::live::{Gauges, RoomsGauges};
use crate::results::{ErrorCounts, Window};
use headroom_matrix::resolved::RoomsScenario;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

impl Timeline<'_> {
    /// Ramp-up, hold, drain and ramp-down; returns when the hold started (seconds from the
    /// epoch), how long it lasted, and its part of the run's hold on the run's clock. The
    /// sockets open, it says it is at its load, and sends over the run's hold, which starts
    /// when every scenario of the run is at its load.
    pub(super) async fn drive(
        mut self,
        ramp_up: Duration,
        hold: Duration,
        ramp_down: Duration,
        scenario: &RoomsScenario,
    ) -> (f64, f64, Option<crate::results::Interval>) {
        let shared = self.shared;
        let epoch = shared.epoch;
        // The ramp-up, then every socket settled (bounded by the last connect's timeout).
        let settle_by =
            epoch + shared.connect_over + shared.connect_timeout + Duration::from_secs(1);
        if !self.wait_until(epoch + ramp_up).await {
            return self.abort(0.0);
        }
        if !self.settle(settle_by).await {
            return self.abort(0.0);
        }
        let Some(start) = self.meet_segments(scenario).await else {
            return self.abort(0.0);
        };
        // At its load: the run's hold starts once every scenario is, for the same `hold`.
        self.member.at_load(start);
        let run_hold = Arc::clone(self.member.hold());
        let mut cancel = self.cancel.clone();
        let window = tokio::select! {
            window = run_hold.decided() => window,
            _ = cancel.wait_for(|cancelled| *cancelled) => return self.abort(0.0),
        };
        let (start, end) = window.map_or((start, start + hold), |w| (w.start, w.end));
        let hold_started = (start - epoch).as_secs_f64();
        if !self.wait_until(start).await {
            return self.abort(hold_started);
        }
        let _ = self.stage.send(Stage::Hold { start, end });
        let ended = self.wait_until(end).await;
        let held = run_hold.seconds(&(start..Instant::now().min(end)));
        let held = Some(crate::results::Interval {
            from_s: held.0,
            to_s: held.1,
        });
        if !ended {
            let (started, _, _) = self.abort(hold_started);
            return (started, 0.0, held);
        }
        let _ = self.stage.send(Stage::Drain);
        let hold_s = (Instant::now() - start).as_secs_f64();
        let drain_until = Instant::now() + scenario.deadline.as_std();
        while shared.tracker.outstanding() > 0 && Instant::now() < drain_until {
            if !self
                .wait_until(Instant::now() + Duration::from_millis(20))
                .await
            {
                let (started, _, _) = self.abort(hold_started);
                return (started, hold_s, held);
            }
        }
        // Held: the runner measures the steady state with every socket open, then releases.
        self.handover.arrive();
        let mut release = self.handover.release_watch();
        let mut cancel = self.cancel.clone();
        tokio::select! {
            _ = release.wait_for(|released| *released) => {}
            _ = cancel.wait_for(|cancelled| *cancelled) => {
                let (started, _, _) = self.abort(hold_started);
                return (started, hold_s, held);
            }
        }
        let _ = self.stage.send(Stage::Close {
            start: Instant::now(),
            over: ramp_down,
        });
        self.wait_until(Instant::now() + ramp_down).await;
        self.take_window();
        (hold_started, hold_s, held)
    }

    /// Waits until every socket is open or failed, at most until `settle_by`; false when
    /// cancelled.
    async fn settle(&mut self, settle_by: Instant) -> bool {
        let shared = self.shared;
        while shared.counts.settled.load(Ordering::Acquire) < u64::from(shared.sockets)
            && Instant::now() < settle_by
        {
            let notified = shared.settled.notified();
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = self.cancel.changed() => if *self.cancel.borrow() { return false },
            }
        }
        true
    }

    /// When this scenario is at its load: after a grace for the last sockets to register and,
    /// in a segmented run, when every segment's sockets are open (their holds start
    /// together). `None` when cancelled or a segment never came (the run fails at its next
    /// meeting, naming it).
    async fn meet_segments(&mut self, scenario: &RoomsScenario) -> Option<Instant> {
        let start = Instant::now() + REGISTRATION_GRACE;
        let Some(meetings) = self.meetings.clone() else {
            return Some(start);
        };
        let open = crate::barrier::Stage::Open(scenario.name.clone());
        let mut cancel = self.cancel.clone();
        let met = tokio::select! {
            met = meetings.barrier.meet(&meetings.run, open) => met,
            _ = cancel.wait_for(|cancelled| *cancelled) => return None,
        };
        match met {
            Ok(Some(announced)) => Some(start.max(announced.at)),
            Ok(None) => Some(start),
            Err(_) => None,
        }
    }

    pub(super) fn abort(
        &mut self,
        hold_started: f64,
    ) -> (f64, f64, Option<crate::results::Interval>) {
        let _ = self.stage.send(Stage::Abort);
        self.take_window();
        (hold_started, 0.0, None)
    }

    /// Sleeps until `at`, taking a window every second; false when cancelled.
    pub(super) async fn wait_until(&mut self, at: Instant) -> bool {
        loop {
            let now = Instant::now();
            if now >= at {
                return true;
            }
            let elapsed = (now - self.shared.epoch).as_secs();
            let next_window = self.shared.epoch + Duration::from_secs(elapsed + 1);
            tokio::select! {
                _ = tokio::time::sleep_until(at.min(next_window)) => {
                    if Instant::now() >= next_window {
                        self.take_window();
                    }
                }
                _ = self.cancel.changed() => {
                    if *self.cancel.borrow() {
                        return false;
                    }
                }
            }
        }
    }

    pub(super) fn take_window(&mut self) {
        let taken = self.shared.tracker.take_window();
        let t_s = (Instant::now() - self.shared.epoch)
            .as_secs()
            .saturating_sub(1);
        let window = &taken.seen;
        if !window.is_empty() {
            self.shared
                .live
                .window_p95_us
                .store(window.value_at_quantile(0.95), Ordering::Relaxed);
        }
        let window = Window::of(t_s, window, window.len(), &ErrorCounts::default());
        let counts = &self.shared.counts;
        let closed = counts.closed_by_server.load(Ordering::Relaxed)
            + counts.closed_by_us.load(Ordering::Relaxed);
        let gauges = Gauges {
            connections: counts.opened.load(Ordering::Relaxed).saturating_sub(closed),
            dropped: 0,
            lag_max_ms: None,
            rooms: Some(RoomsGauges {
                expected: taken.expected,
                delivered: taken.delivered,
                seen_by_all_completed_p95_ms: (!taken.seen_by_all.is_empty())
                    .then(|| taken.seen_by_all.value_at_quantile(0.95) as f64 / 1000.0),
            }),
        };
        self.shared
            .live
            .closed(self.scenario, std::slice::from_ref(&window), &gauges);
        self.windows.push(window);
    }
}
