//! `/metrics` in the Prometheus text format: requests, rooms, peers, messages, memory.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::App;

/// The routes counted, in the order they are shown.
const ROUTES: [&str; 6] = ["list", "get", "create", "page", "login", "me"];

#[derive(Default)]
pub struct Counters {
    requests: [AtomicU64; ROUTES.len()],
    pub messages_received: AtomicU64,
    pub sent: AtomicU64,
    pub dropped: AtomicU64,
    pub sockets_opened: AtomicU64,
    pub closed_idle: AtomicU64,
    pub passes: AtomicU64,
    pub pass_micros: AtomicU64,
    pub stalls: AtomicU64,
    /// Every HTTP request's time in the server (a stall's wait included), /metrics itself
    /// left out: the server's own account of its latency, for tests that check headroom's.
    answered: std::sync::Mutex<Option<hdrhistogram::Histogram<u64>>>,
}

impl Counters {
    /// One HTTP request answered after `held`.
    pub fn answered(&self, held: std::time::Duration) {
        let Ok(mut answered) = self.answered.lock() else {
            return;
        };
        if answered.is_none() {
            // Microseconds up to an hour, three significant digits.
            *answered = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3).ok();
        }
        if let Some(histogram) = answered.as_mut() {
            let micros = u64::try_from(held.as_micros()).unwrap_or(u64::MAX).max(1);
            let _ = histogram.record(micros.min(histogram.high()));
        }
    }

    /// The quantiles of the requests' time in the server, in seconds, with their count and sum.
    fn answered_summary(&self) -> Vec<(&'static str, f64)> {
        let Ok(answered) = self.answered.lock() else {
            return Vec::new();
        };
        let Some(histogram) = answered.as_ref() else {
            return Vec::new();
        };
        let at = |q: f64| histogram.value_at_quantile(q) as f64 / 1e6;
        vec![
            ("{quantile=\"0.5\"}", at(0.5)),
            ("{quantile=\"0.9\"}", at(0.9)),
            ("{quantile=\"0.99\"}", at(0.99)),
        ]
    }

    pub fn request(&self, route: &str) {
        if let Some(i) = ROUTES.iter().position(|r| *r == route) {
            self.requests[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The process's resident set, from /proc (0 where there is no /proc).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// The metrics of one unlabelled value each: name, type, help, value.
fn unlabelled(
    app: &App,
    rooms: usize,
    peers: usize,
) -> [(&'static str, &'static str, &'static str, f64); 11] {
    let c = &app.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    [
        (
            "demo_notes",
            "gauge",
            "Notes stored.",
            app.notes.len() as f64,
        ),
        (
            "demo_rooms_open",
            "gauge",
            "Rooms with at least one peer.",
            rooms as f64,
        ),
        ("demo_peers", "gauge", "Open sockets.", peers as f64),
        (
            "demo_sockets_opened_total",
            "counter",
            "Sockets accepted.",
            load(&c.sockets_opened),
        ),
        (
            "demo_sockets_closed_idle_total",
            "counter",
            "Sockets closed for silence.",
            load(&c.closed_idle),
        ),
        (
            "demo_messages_received_total",
            "counter",
            "Messages received from peers.",
            load(&c.messages_received),
        ),
        (
            "demo_broadcasts_sent_total",
            "counter",
            "Messages sent to peers.",
            load(&c.sent),
        ),
        (
            "demo_broadcasts_dropped_total",
            "counter",
            "Broadcasts dropped on purpose (--drop-broadcasts, --drop-to-one-peer).",
            load(&c.dropped),
        ),
        (
            "demo_rebuild_passes_total",
            "counter",
            "Rebuild passes run.",
            load(&c.passes),
        ),
        (
            "demo_rebuild_seconds_total",
            "counter",
            "Time spent in rebuild passes.",
            load(&c.pass_micros) / 1e6,
        ),
        (
            "demo_stalls_total",
            "counter",
            "Stalls served (--stall-every).",
            load(&c.stalls),
        ),
    ]
}

pub async fn render(State(app): State<Arc<App>>) -> impl IntoResponse {
    let c = &app.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    let (rooms, peers, room_bytes) = app.rooms.counts();
    let mut out = String::new();
    // Values as f64: Prometheus numbers are floats, and Rust prints whole ones without a dot.
    let mut metric = |name: &str, kind: &str, help: &str, samples: &[(&str, f64)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    let requests: Vec<(String, f64)> = ROUTES
        .iter()
        .zip(&c.requests)
        .map(|(route, n)| (format!("{{route=\"{route}\"}}"), load(n)))
        .collect();
    let requests: Vec<(&str, f64)> = requests.iter().map(|(l, n)| (l.as_str(), *n)).collect();
    metric(
        "demo_http_requests_total",
        "counter",
        "HTTP requests by route.",
        &requests,
    );
    for (name, kind, help, value) in unlabelled(&app, rooms, peers) {
        metric(name, kind, help, &[("", value)]);
    }
    metric(
        "demo_memory_bytes",
        "gauge",
        "Memory by what holds it.",
        &[
            ("{segment=\"rss\"}", rss_bytes() as f64),
            ("{segment=\"rooms\"}", room_bytes as f64),
            ("{segment=\"notes\"}", app.notes.bytes() as f64),
        ],
    );
    let answered = c.answered_summary();
    if !answered.is_empty() {
        metric(
            "demo_http_answer_seconds",
            "summary",
            "Time in the server per HTTP request, a stall's wait included (/metrics left out).",
            &answered,
        );
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
