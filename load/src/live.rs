//! What the load tells while it runs: counters for the progress line, and each scenario's
//! seconds as they close, each the window its results will hold plus the gauges of that
//! instant (connections, drops, the generator's lag, a rooms scenario's sockets and
//! deliveries), for the live view and the streams. Nothing here is on a request's path but
//! an atomic add: a second is handed over once, when it closes.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use crate::results::Window;

/// Live figures for progress reports, and each scenario's seconds as they close.
#[derive(Default)]
pub struct Live {
    /// Requests and messages sent so far.
    pub requests: AtomicU64,
    /// Errors so far.
    pub errors: AtomicU64,
    /// The p95 of the last whole window, in microseconds (0 before the first).
    pub window_p95_us: AtomicU64,
    /// Seconds closed since they were last taken, in the order they closed.
    seconds: Mutex<Vec<LiveSecond>>,
}

/// One second of a scenario, closed: the window its results will hold, and the gauges as it
/// closed.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveSecond {
    /// The scenario's name.
    pub scenario: String,
    /// The second.
    pub window: Window,
    /// What the results keep only as totals, read as the second closed.
    pub gauges: Gauges,
}

/// A scenario's figures at one instant that its windows do not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gauges {
    /// HTTP: connections opened so far; rooms: sockets open now.
    pub connections: u64,
    /// HTTP: starts skipped so far because `max_in_flight` requests were outstanding.
    pub dropped: u64,
    /// HTTP: the longest the generator was late handing a request over in the second, in
    /// milliseconds (its schedule lag).
    pub lag_max_ms: Option<f64>,
    /// Rooms: what the second adds.
    pub rooms: Option<RoomsGauges>,
}

/// A rooms scenario's deliveries at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomsGauges {
    /// Deliveries expected so far (each message sent, once per recipient).
    pub expected: u64,
    /// Deliveries seen so far.
    pub delivered: u64,
    /// The p95 of the second's seen-by-everyone latencies of the messages that reached
    /// everyone, in milliseconds (none completed: absent). Not the catalogue's `seen_by_all`,
    /// which counts a message that never reached everyone as never: within a second it is not
    /// yet known which will, so the live views name this one apart.
    pub seen_by_all_completed_p95_ms: Option<f64>,
}

/// Seconds kept for a taker that does not come: an hour of a dozen scenarios.
const SECONDS_KEPT: usize = 50_000;

impl Live {
    /// `windows` of `scenario` closed, in order, with the gauges as the last one closed.
    pub(crate) fn closed(&self, scenario: &str, windows: &[Window], gauges: &Gauges) {
        let Ok(mut seconds) = self.seconds.lock() else {
            return;
        };
        if seconds.len() + windows.len() > SECONDS_KEPT {
            return;
        }
        seconds.extend(windows.iter().map(|window| LiveSecond {
            scenario: scenario.to_owned(),
            window: window.clone(),
            gauges: gauges.clone(),
        }));
    }

    /// The seconds closed since the last call, in the order they closed.
    pub fn take_seconds(&self) -> Vec<LiveSecond> {
        self.seconds
            .lock()
            .map(|mut seconds| std::mem::take(&mut *seconds))
            .unwrap_or_default()
    }
}
