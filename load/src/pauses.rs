//! The machine's pauses, seen by the generator: a thread of its own sleeps a millisecond at a
//! time and counts every wake-up late by more than [`PAUSE_MS`] (jHiccup's method). A shared VM
//! stops all its threads now and then for a few milliseconds; the load threads then lag their
//! schedule though the generator was idle. Such lag is the machine's, not the generator's
//! saturation: the runner tells the two apart with these counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A wake-up later than this is a pause.
pub const PAUSE_MS: f64 = 2.0;

/// How long the meter sleeps between looks.
const TICK: Duration = Duration::from_millis(1);

/// The pauses seen while the meter ran.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pauses {
    /// Wake-ups late by more than [`PAUSE_MS`].
    pub count: u64,
    /// The latest wake-up's delay, in milliseconds (0 without a pause).
    pub longest_ms: f64,
}

impl Pauses {
    /// Counts one wake-up `late_ms` late.
    fn saw(&mut self, late_ms: f64) {
        if late_ms > PAUSE_MS {
            self.count += 1;
            self.longest_ms = self.longest_ms.max(late_ms);
        }
    }
}

/// A running pause meter; [`PauseMeter::stop`] ends it and gives its count. Dropped, it stops.
pub struct PauseMeter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Pauses>>,
}

impl PauseMeter {
    /// Starts the meter on a thread of its own.
    pub fn start() -> PauseMeter {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("pause-meter".to_owned())
                .spawn(move || meter(&stop))
                .ok()
        };
        PauseMeter { stop, thread }
    }

    /// Stops the meter: the pauses it saw, or `None` when its thread could not run.
    pub fn stop(mut self) -> Option<Pauses> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|thread| thread.join().ok())
    }
}

impl Drop for PauseMeter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn meter(stop: &AtomicBool) -> Pauses {
    let mut pauses = Pauses::default();
    while !stop.load(Ordering::Relaxed) {
        let asleep = Instant::now();
        std::thread::sleep(TICK);
        let late = asleep.elapsed().saturating_sub(TICK);
        pauses.saw(late.as_secs_f64() * 1000.0);
    }
    pauses
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wake_ups_late_past_the_threshold_are_pauses() {
        let mut pauses = Pauses::default();
        for late in [0.1, 1.9, 2.0, 2.5, 21.0, 4.0] {
            pauses.saw(late);
        }
        assert_eq!(pauses.count, 3);
        assert_eq!(pauses.longest_ms, 21.0);
    }

    /// The meter ends when told and gives what it saw; the stopped process it exists for is
    /// an end-to-end test (`a_generator_paused_by_the_machine_is_not_generator_bound`).
    #[test]
    fn the_meter_stops_when_told_and_reports_what_it_saw() {
        let meter = PauseMeter::start();
        std::thread::sleep(Duration::from_millis(50));
        let pauses = meter.stop().expect("the meter ran");
        // A shared machine may pause now and then even here: none of them near a second.
        assert!(pauses.longest_ms < 1_000.0, "{pauses:?}");
    }
}
