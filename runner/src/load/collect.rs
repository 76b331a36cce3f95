//! The collector: one task that owns the histograms and the per-second windows, fed by the
//! request tasks (the hot path takes no lock).

use super::*;

/// Owns the histograms and the per-window series; returns them when every sender is gone.
/// A request counts in the figures when its intended start falls in `measured` (the hold), and
/// in `ramps` otherwise; the per-second windows cover the whole run.
pub(super) async fn collect(
    mut inbox: mpsc::UnboundedReceiver<Sample>,
    start: Instant,
    measured: std::ops::Range<Instant>,
    live: Arc<Live>,
) -> ScenarioResult {
    let mut latency = histogram();
    let mut lag = histogram();
    let mut connection_wait = histogram();
    let mut window = histogram();
    let mut window_index = 0u64;
    let mut window_errors = 0u64;
    let mut windows = Vec::new();
    let mut hold = RampCounts::default();
    let mut ramps = RampCounts::default();
    let micros = headroom_results::histogram::micros;
    while let Some(sample) = inbox.recv().await {
        let (at, failed) = match sample {
            Sample::Dropped { intended } => {
                let counts = if measured.contains(&intended) {
                    &mut hold
                } else {
                    &mut ramps
                };
                counts.dropped += 1;
                (intended, false)
            }
            Sample::Done {
                intended,
                released,
                sent,
                done,
                outcome,
            } => {
                live.requests.fetch_add(1, Ordering::Relaxed);
                let counts = if measured.contains(&intended) {
                    let _ = latency.record(micros(done - intended));
                    let _ = lag.record(micros(released.saturating_duration_since(intended)));
                    let waited = sent.saturating_duration_since(released);
                    let _ = connection_wait.record(micros(waited));
                    &mut hold
                } else {
                    &mut ramps
                };
                let _ = window.record(micros(done - intended));
                if outcome.is_err() {
                    live.errors.fetch_add(1, Ordering::Relaxed);
                }
                counts.count(outcome);
                (done, outcome.is_err())
            }
        };
        let index = ((at - start).as_secs_f64() / WINDOW.as_secs_f64()) as u64;
        while index > window_index {
            if !window.is_empty() {
                live.window_p95_us
                    .store(window.value_at_quantile(0.95), Ordering::Relaxed);
            }
            windows.push(Window::of(window_index, &window, window_errors));
            window.reset();
            window_errors = 0;
            window_index += 1;
        }
        if failed {
            window_errors += 1;
        }
    }
    if !window.is_empty() || window_errors > 0 {
        windows.push(Window::of(window_index, &window, window_errors));
    }
    ScenarioResult {
        kind: "http".to_owned(),
        skipped: None,
        requests: hold.requests,
        ok: hold.ok,
        dropped: hold.dropped,
        errors: hold.errors,
        duration_s: 0.0,
        rate: 0.0,
        latency: histogram_summary(&latency),
        schedule_lag: histogram_summary(&lag),
        connection_wait: histogram_summary(&connection_wait),
        histograms: [
            ("latency".to_owned(), serialize_histogram(&latency)),
            ("schedule_lag".to_owned(), serialize_histogram(&lag)),
            (
                "connection_wait".to_owned(),
                serialize_histogram(&connection_wait),
            ),
        ]
        .into_iter()
        .collect(),
        windows,
        ramps: Some(ramps),
        rooms: None,
    }
}

impl Counted for RampCounts {
    fn count(&mut self, outcome: Result<(), Failed>) {
        self.requests += 1;
        match outcome {
            Ok(()) => self.ok += 1,
            Err(Failed::Kind(ErrorKind::Connect)) => self.errors.connect += 1,
            Err(Failed::Kind(ErrorKind::Timeout)) => self.errors.timeout += 1,
            Err(Failed::Kind(ErrorKind::Protocol)) => self.errors.protocol += 1,
            Err(Failed::Status) => self.errors.status += 1,
        }
    }
}

/// Counts one request's outcome: a request, and an answer or an error by its kind.
trait Counted {
    fn count(&mut self, outcome: Result<(), Failed>);
}
