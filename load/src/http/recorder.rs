//! What one load thread measured: its own histograms and counts, so the hot path takes no
//! lock and sends nothing; the threads' parts are merged exactly at the end (HDR histograms
//! add). The per-second windows are merged as each closes, so the live p95 is every thread's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use tokio::time::Instant;

use super::histogram;
use crate::live::{Gauges, Live};
use crate::results::HistogramKey;
use crate::results::{
    Connections, RequestCounts, RequestResult, ScenarioResult, TlsFigures, Window,
    histogram_summary, serialize_histogram,
};
use crate::web::ErrorKind;
use std::time::Duration;

/// One request's moments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Times {
    /// When it should have started (open model), or when the user's connection was ready
    /// (closed model): latency runs from here.
    pub(super) intended: Instant,
    /// When the generator handed it over: `released - intended` is the generator's own lag.
    pub(super) released: Instant,
    /// When a connection was ready to send it on: `sent - released` is connection wait.
    pub(super) sent: Instant,
    /// The last byte of the answer, or the moment it failed.
    pub(super) done: Instant,
}

/// One thread's figures while it runs.
pub(super) struct Recorder {
    start: Instant,
    /// The run's hold: a request counts in the figures when its intended start falls in it.
    hold: Arc<crate::hold::RunHold>,
    part: Part,
    window: Histogram<u64>,
    window_index: u64,
    /// The window's requests and errors by why (`ok` and `dropped` unused).
    window_counts: RequestCounts,
    /// The window's longest schedule lag, in microseconds.
    window_lag_us: u64,
    windows: Arc<Windows>,
    live: Arc<Live>,
}

/// One thread's figures at the end.
pub(super) struct Part {
    /// Latency of the answers that met `expect`: a failed request has no latency to count.
    latency: Histogram<u64>,
    /// Latency of the answers that came back and did not meet `expect` (a status not
    /// expected, a failed check), kept apart so they never pass for the server's speed.
    unexpected: Histogram<u64>,
    /// Each request of the scenario measured apart, by its index in the spec's list; empty
    /// for a scenario of one request (its figures are the scenario's).
    by_request: Vec<ByRequest>,
    lag: Histogram<u64>,
    connection_wait: Histogram<u64>,
    hold: RequestCounts,
    outside_hold: RequestCounts,
    /// The expected answers' latency of the requests intended outside the hold.
    outside_latency: Histogram<u64>,
    connections_opened: u64,
    queued_at_limit: u64,
    /// TLS handshakes of the connections opened (none on `http://`).
    tls_handshake: Histogram<u64>,
}

/// One request of a scenario, over the hold: its latency and its counts.
struct ByRequest {
    latency: Histogram<u64>,
    counts: RequestCounts,
    /// Its requests intended outside the hold.
    outside: RequestCounts,
}

impl Part {
    /// No figures yet; `requests` measured apart (0 for a scenario of one request).
    fn empty(requests: usize) -> Part {
        Part {
            latency: histogram(),
            unexpected: histogram(),
            by_request: (0..requests)
                .map(|_| ByRequest {
                    latency: histogram(),
                    counts: RequestCounts::default(),
                    outside: RequestCounts::default(),
                })
                .collect(),
            lag: histogram(),
            connection_wait: histogram(),
            hold: RequestCounts::default(),
            outside_hold: RequestCounts::default(),
            outside_latency: histogram(),
            connections_opened: 0,
            queued_at_limit: 0,
            tls_handshake: histogram(),
        }
    }
}

impl Recorder {
    /// A request counts in the figures when its intended start falls in the run's `hold`,
    /// and in the counts outside it otherwise; the windows cover the whole run. `requests`
    /// are measured apart as well (0: the scenario has one request).
    pub(super) fn new(
        start: Instant,
        hold: Arc<crate::hold::RunHold>,
        requests: usize,
        windows: Arc<Windows>,
        live: Arc<Live>,
    ) -> Recorder {
        Recorder {
            start,
            hold,
            part: Part::empty(requests),
            window: histogram(),
            window_index: 0,
            window_counts: RequestCounts::default(),
            window_lag_us: 0,
            windows,
            live,
        }
    }

    /// The request at `request` in the scenario's list, sent (or tried) and ended as `outcome`.
    /// Its latency counts only where an answer came back: an expected one in `latency`, an
    /// unexpected one (status, check) in `unexpected`; a request that got no answer (connect,
    /// timeout, protocol) is an error with no latency at all.
    pub(super) fn done(&mut self, times: Times, request: usize, outcome: Result<(), Failed>) {
        let micros = headroom_results::histogram::micros;
        self.live.requests.fetch_add(1, Ordering::Relaxed);
        let latency = micros(times.done.saturating_duration_since(times.intended));
        let answered = answered(outcome);
        let lag = times.released.saturating_duration_since(times.intended);
        let part = &mut self.part;
        let counts = if self.hold.contains(times.intended) {
            let apart_from_errors = match answered {
                Some(true) => Some(&mut part.latency),
                Some(false) => Some(&mut part.unexpected),
                None => None,
            };
            if let Some(histogram) = apart_from_errors {
                let _ = histogram.record(latency);
            }
            let _ = part.lag.record(micros(lag));
            let waited = times.sent.saturating_duration_since(times.released);
            let _ = part.connection_wait.record(micros(waited));
            if let Some(apart) = part.by_request.get_mut(request) {
                if answered == Some(true) {
                    let _ = apart.latency.record(latency);
                }
                apart.counts.count(outcome);
            }
            &mut part.hold
        } else {
            if answered == Some(true) {
                let _ = part.outside_latency.record(latency);
            }
            if let Some(apart) = part.by_request.get_mut(request) {
                apart.outside.count(outcome);
            }
            &mut part.outside_hold
        };
        counts.count(outcome);
        self.roll_to(times.done);
        self.window_counts.count(outcome);
        self.window_lag_us = self.window_lag_us.max(micros(lag));
        if answered == Some(true) {
            let _ = self.window.record(latency);
        }
        if outcome.is_err() {
            self.live.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A start skipped because `max_in_flight` requests were outstanding.
    pub(super) fn dropped(&mut self, intended: Instant) {
        self.windows.dropped.fetch_add(1, Ordering::Relaxed);
        if self.hold.contains(intended) {
            self.part.hold.dropped += 1;
        } else {
            self.part.outside_hold.dropped += 1;
        }
        self.roll_to(intended);
    }

    /// A connection was opened.
    pub(super) fn connected(&mut self) {
        self.windows.connections.fetch_add(1, Ordering::Relaxed);
        self.part.connections_opened += 1;
    }

    /// A TLS handshake took `took`.
    pub(super) fn handshake(&mut self, took: std::time::Duration) {
        let _ = self
            .part
            .tls_handshake
            .record(u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1));
    }

    /// An arrival that waited in line because every one of `max_connections` was busy.
    pub(super) fn queued_at_limit(&mut self) {
        self.part.queued_at_limit += 1;
    }

    /// This thread's part of the window it closes.
    fn closing(&self) -> ThreadWindow<'_> {
        ThreadWindow {
            latencies: &self.window,
            counts: &self.window_counts,
            lag_us: self.window_lag_us,
        }
    }

    /// Closes every window before the one `at` falls in.
    fn roll_to(&mut self, at: Instant) {
        let index =
            (at.saturating_duration_since(self.start).as_secs_f64() / WINDOW.as_secs_f64()) as u64;
        while index > self.window_index {
            self.windows
                .add(self.window_index, self.closing(), &self.live);
            self.window.reset();
            self.window_counts = RequestCounts::default();
            self.window_lag_us = 0;
            self.window_index += 1;
        }
    }

    /// The thread's figures; its last window goes to the merge.
    pub(super) fn finish(self) -> Part {
        self.windows
            .add(self.window_index, self.closing(), &self.live);
        self.part
    }
}

/// The per-second windows of every thread, merged as they close; each one handed to the live
/// view as it closes, in order, exactly as the results will hold it.
pub(super) struct Windows {
    threads: usize,
    /// The scenario's name, for the live view.
    scenario: String,
    state: Mutex<WindowState>,
    /// Connections opened so far, every thread's.
    connections: AtomicU64,
    /// Starts dropped at `max_in_flight` so far, every thread's.
    dropped: AtomicU64,
}

/// One thread's part of a window: its expected answers' latencies, its requests and errors
/// by why, its longest schedule lag.
pub(super) struct ThreadWindow<'a> {
    latencies: &'a Histogram<u64>,
    counts: &'a RequestCounts,
    lag_us: u64,
}

/// A window some thread has not closed yet: the parts so far, and how many threads closed it.
struct OpenWindow {
    latencies: Histogram<u64>,
    counts: RequestCounts,
    lag_us: u64,
    from: usize,
}

#[derive(Default)]
struct WindowState {
    /// Windows some thread has not closed yet, by index.
    open: BTreeMap<u64, OpenWindow>,
    closed: Vec<Window>,
    /// How many of `closed` the live view has: an empty second waits for a later one with
    /// a request, since the results drop the empty seconds at the end.
    handed: usize,
    /// The longest lag of the last window closed, in microseconds.
    lag_us: u64,
}

impl Windows {
    pub(super) fn new(threads: usize, scenario: &str) -> Windows {
        Windows {
            threads,
            scenario: scenario.to_owned(),
            state: Mutex::new(WindowState::default()),
            connections: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// The gauges now, with `lag_us` the longest lag of the last second.
    fn gauges(&self, lag_us: u64) -> Gauges {
        Gauges {
            connections: self.connections.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            lag_max_ms: Some(lag_us as f64 / 1000.0),
            rooms: None,
        }
    }

    /// Adds one thread's part of the window at `index`.
    fn add(&self, index: u64, part: ThreadWindow<'_>, live: &Live) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let open = state.open.entry(index).or_insert_with(|| OpenWindow {
            latencies: histogram(),
            counts: RequestCounts::default(),
            lag_us: 0,
            from: 0,
        });
        let _ = open.latencies.add(part.latencies);
        add_counts(&mut open.counts, part.counts);
        open.lag_us = open.lag_us.max(part.lag_us);
        open.from += 1;
        if open.from >= self.threads
            && let Some(open) = state.open.remove(&index)
        {
            if !open.latencies.is_empty() {
                live.window_p95_us
                    .store(open.latencies.value_at_quantile(0.95), Ordering::Relaxed);
            }
            let closed = Window::of(
                index,
                &open.latencies,
                open.counts.requests,
                &open.counts.errors,
            );
            let said = closed.requests > 0 || closed.errors > 0;
            state.closed.push(closed);
            state.lag_us = open.lag_us;
            if said {
                let from = state.handed;
                live.closed(
                    &self.scenario,
                    &state.closed[from..],
                    &self.gauges(open.lag_us),
                );
                state.handed = state.closed.len();
            }
        }
    }

    /// Every window in order, from the first second to the last with a request or an error;
    /// those the live view did not have yet go to it.
    pub(super) fn finish(&self, live: &Live) -> Vec<Window> {
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let state = std::mem::take(&mut *state);
        let mut windows = state.closed;
        let mut lag_us = state.lag_us;
        for (index, open) in state.open {
            lag_us = open.lag_us;
            windows.push(Window::of(
                index,
                &open.latencies,
                open.counts.requests,
                &open.counts.errors,
            ));
        }
        windows.sort_by_key(|window| window.t_s);
        while windows
            .last()
            .is_some_and(|last| last.requests == 0 && last.errors == 0)
        {
            windows.pop();
        }
        if let Some(rest) = windows.get(state.handed..) {
            live.closed(&self.scenario, rest, &self.gauges(lag_us));
        }
        windows
    }
}

/// The threads' parts as one scenario's result (duration and rate are the caller's);
/// `names` are the scenario's requests' names, in order: each named one measured apart gets
/// its figures (`by_request`).
pub(super) fn merge(
    parts: Vec<Part>,
    windows: Vec<Window>,
    names: &[Option<String>],
) -> ScenarioResult {
    let apart = parts.first().map_or(0, |part| part.by_request.len());
    let mut all = Part::empty(apart);
    for part in &parts {
        all.add(part);
    }
    let tls = (!all.tls_handshake.is_empty()).then(|| TlsFigures {
        handshakes: all.tls_handshake.len(),
        handshake: histogram_summary(&all.tls_handshake),
    });
    let by_request = by_request(&all, names);
    ScenarioResult {
        kind: "http".to_owned(),
        skipped: None,
        requests: all.hold.requests,
        ok: all.hold.ok,
        dropped: all.hold.dropped,
        errors: all.hold.errors.clone(),
        duration_s: 0.0,
        rate: 0.0,
        latency: histogram_summary(&all.latency),
        unexpected_latency: unexpected_summary(&all.unexpected),
        schedule_lag: histogram_summary(&all.lag),
        connection_wait: histogram_summary(&all.connection_wait),
        histograms: histograms(&all),
        windows,
        outside_hold: Some(RequestCounts {
            latency: (!all.outside_latency.is_empty())
                .then(|| histogram_summary(&all.outside_latency)),
            ..all.outside_hold
        }),
        // The scenario's, which knows when it held its peak.
        held: None,
        // The scenario's, which knows its users.
        users: None,
        connections: Some(Connections {
            opened: all.connections_opened,
            queued_at_limit: all.queued_at_limit,
        }),
        by_request,
        rooms: None,
        tls,
        // Set by the scenario, which holds its source addresses.
        source_addresses: None,
    }
}

impl Part {
    /// Adds another thread's part to this one: histograms add, counts sum.
    fn add(&mut self, part: &Part) {
        let _ = self.latency.add(&part.latency);
        let _ = self.unexpected.add(&part.unexpected);
        for (into, from) in self.by_request.iter_mut().zip(&part.by_request) {
            let _ = into.latency.add(&from.latency);
            add_counts(&mut into.counts, &from.counts);
            add_counts(&mut into.outside, &from.outside);
        }
        let _ = self.lag.add(&part.lag);
        let _ = self.connection_wait.add(&part.connection_wait);
        add_counts(&mut self.hold, &part.hold);
        add_counts(&mut self.outside_hold, &part.outside_hold);
        let _ = self.outside_latency.add(&part.outside_latency);
        self.connections_opened += part.connections_opened;
        self.queued_at_limit += part.queued_at_limit;
        let _ = self.tls_handshake.add(&part.tls_handshake);
    }
}

/// The merged part's histograms, serialized: latency, schedule lag and connection wait
/// always; unexpected answers, TLS handshakes and the latency outside the hold when any.
fn histograms(all: &Part) -> BTreeMap<HistogramKey, String> {
    [
        (HistogramKey::Latency, serialize_histogram(&all.latency)),
        (HistogramKey::ScheduleLag, serialize_histogram(&all.lag)),
        (
            HistogramKey::ConnectionWait,
            serialize_histogram(&all.connection_wait),
        ),
    ]
    .into_iter()
    .chain(
        [
            (HistogramKey::UnexpectedLatency, &all.unexpected),
            (HistogramKey::TlsHandshake, &all.tls_handshake),
            (HistogramKey::OutsideHoldLatency, &all.outside_latency),
        ]
        .into_iter()
        .filter(|(_, histogram)| !histogram.is_empty())
        .map(|(key, histogram)| (key, serialize_histogram(histogram))),
    )
    .collect()
}

/// The figures of each named request measured apart, by its name.
fn by_request(all: &Part, names: &[Option<String>]) -> BTreeMap<String, RequestResult> {
    all.by_request
        .iter()
        .zip(names)
        .filter_map(|(one, name)| {
            let name = name.as_ref()?;
            let figures = RequestResult {
                requests: one.counts.requests,
                ok: one.counts.ok,
                errors: one.counts.errors.clone(),
                latency: histogram_summary(&one.latency),
                histogram: serialize_histogram(&one.latency),
                outside_hold: Some(one.outside.clone()),
            };
            Some((name.clone(), figures))
        })
        .collect()
}

/// The unexpected answers' latency, when there were any.
fn unexpected_summary(h: &Histogram<u64>) -> Option<crate::results::Summary> {
    (!h.is_empty()).then(|| histogram_summary(h))
}

/// Whether an answer came back and met `expect` (`Some(true)`), came back and did not
/// (`Some(false)`: a status not expected, a failed check), or never came (`None`).
fn answered(outcome: Result<(), Failed>) -> Option<bool> {
    match outcome {
        Ok(()) => Some(true),
        Err(Failed::Status(_) | Failed::Check) => Some(false),
        Err(Failed::Kind(_)) => None,
    }
}

fn add_counts(into: &mut RequestCounts, from: &RequestCounts) {
    into.requests += from.requests;
    into.ok += from.ok;
    into.dropped += from.dropped;
    into.errors.add(&from.errors);
}

impl Counted for RequestCounts {
    fn count(&mut self, outcome: Result<(), Failed>) {
        self.requests += 1;
        match outcome {
            Ok(()) => self.ok += 1,
            Err(Failed::Kind(ErrorKind::Connect)) => self.errors.connect += 1,
            Err(Failed::Kind(ErrorKind::Timeout)) => self.errors.timeout += 1,
            Err(Failed::Kind(ErrorKind::Protocol)) => self.errors.protocol += 1,
            Err(Failed::Status(code)) => self.errors.unexpected(code),
            Err(Failed::Check) => self.errors.check += 1,
        }
    }
}

/// Counts one request's outcome: a request, and an answer or an error by its kind.
trait Counted {
    fn count(&mut self, outcome: Result<(), Failed>);
}
/// The length of one window of the per-window series.
pub(super) const WINDOW: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy)]
pub(super) enum Failed {
    Kind(ErrorKind),
    /// An answer whose status the request did not expect: the status.
    Status(u16),
    /// The status was expected; a check of the answer failed.
    Check,
}
