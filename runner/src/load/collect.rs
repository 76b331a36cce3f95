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
                sent,
                done,
                outcome,
            } => {
                live.requests.fetch_add(1, Ordering::Relaxed);
                let counts = if measured.contains(&intended) {
                    let _ = latency.record(micros(done - intended));
                    let _ = lag.record(micros(sent.saturating_duration_since(intended)));
                    &mut hold
                } else {
                    &mut ramps
                };
                counts.requests += 1;
                let _ = window.record(micros(done - intended));
                match outcome {
                    Ok(()) => counts.ok += 1,
                    Err(failed) => {
                        live.errors.fetch_add(1, Ordering::Relaxed);
                        match failed {
                            Failed::Kind(ErrorKind::Connect) => counts.errors.connect += 1,
                            Failed::Kind(ErrorKind::Timeout) => counts.errors.timeout += 1,
                            Failed::Kind(ErrorKind::Protocol) => counts.errors.protocol += 1,
                            Failed::Status => counts.errors.status += 1,
                        }
                    }
                }
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
        histograms: [
            ("latency".to_owned(), serialize_histogram(&latency)),
            ("schedule_lag".to_owned(), serialize_histogram(&lag)),
        ]
        .into_iter()
        .collect(),
        windows,
        ramps: Some(ramps),
        rooms: None,
    }
}
