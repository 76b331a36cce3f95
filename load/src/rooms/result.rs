//! What a rooms run measured, from its counters and histograms.

use super::Shared;
use crate::http::histogram;
use crate::results::{
    ConnectFailures, Drops, ErrorCounts, HistogramKey, MessageCounts, ReloadResult, RoomsResult,
    ScenarioResult, SocketCounts, SocketIoFigures, SseFigures, Window, histogram_summary,
    serialize_histogram,
};
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) fn result(
    shared: &Shared,
    sizes: &[u32],
    hold_started_s: f64,
    hold_s: f64,
    windows: Vec<Window>,
) -> ScenarioResult {
    let c = &shared.counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let counts = shared.tracker.counts();
    let (seen, all) = shared.tracker.histograms();
    let connect = shared
        .connect
        .lock()
        .map(|h| h.clone())
        .unwrap_or_else(|_| histogram());
    let lag = shared
        .lag
        .lock()
        .map(|h| h.clone())
        .unwrap_or_else(|_| histogram());
    let sockets = socket_counts(shared);
    let mut histograms = std::collections::BTreeMap::new();
    histograms.insert(HistogramKey::Seen, serialize_histogram(&seen));
    histograms.insert(HistogramKey::SeenByAll, serialize_histogram(&all));
    histograms.insert(HistogramKey::Connect, serialize_histogram(&connect));
    histograms.insert(HistogramKey::ScheduleLag, serialize_histogram(&lag));
    let reload = reload_figures(shared, &mut histograms);
    let socket_io = socket_io_figures(shared, &mut histograms);
    let sse = sse_figures(shared, &mut histograms);
    let tls = tls_figures(shared, &mut histograms);
    let duration_s = shared.epoch.elapsed().as_secs_f64();
    ScenarioResult {
        kind: "rooms".to_owned(),
        skipped: None,
        requests: counts.sent,
        ok: counts.sent,
        dropped: load(&c.skipped),
        errors: open_errors(&sockets.failed),
        duration_s,
        rate: if hold_s > 0.0 {
            counts.sent as f64 / hold_s
        } else {
            0.0
        },
        latency: histogram_summary(&seen),
        unexpected_latency: None,
        schedule_lag: histogram_summary(&lag),
        connection_wait: Default::default(),
        histograms,
        windows,
        // Rooms send only in the hold: nothing of a ramp is in the figures.
        outside_hold: None,
        // The caller's, from the timeline.
        held: None,
        users: None,
        connections: None,
        by_request: Default::default(),
        rooms: Some(RoomsResult {
            rooms: (0..sizes.len() as u64)
                .filter(|&room| shared.segment.owns(room))
                .count() as u64,
            peers: u64::from(shared.sockets),
            sockets,
            connect: histogram_summary(&connect),
            hold_started_s,
            hold_s,
            messages: MessageCounts {
                skipped: load(&c.skipped),
                own_echoes: load(&c.own_echoes),
                unstamped: load(&c.unstamped),
                misrouted: load(&c.misrouted),
                duplicates: load(&c.duplicates),
                unexpected: load(&c.unexpected),
                ..counts
            },
            seen: histogram_summary(&seen),
            seen_by_all: histogram_summary(&all),
            reload,
            socket_io,
            sse,
        }),
        tls,
        source_addresses: shared.sources.as_ref().map(crate::source::Sources::used),
    }
}

/// The sockets that did not open, as a scenario's errors.
fn open_errors(failed: &ConnectFailures) -> ErrorCounts {
    ErrorCounts {
        connect: failed.refused
            + failed.other
            + failed.ports
            + failed.rejected
            + failed.handshake
            + failed.protocol
            + failed.too_large,
        timeout: failed.timeout,
        status: failed.status,
        protocol: 0,
        check: 0,
        statuses: Default::default(),
    }
}

/// The sockets planned, opened, failed by kind and closed, and the pings.
fn socket_counts(shared: &Shared) -> SocketCounts {
    let c = &shared.counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    SocketCounts {
        planned: u64::from(shared.sockets),
        opened: load(&c.opened),
        failed: ConnectFailures {
            refused: load(&c.refused),
            status: load(&c.status),
            timeout: load(&c.timeout),
            other: load(&c.other),
            ports: load(&c.ports),
            rejected: load(&c.rejected),
            handshake: load(&c.handshake),
            protocol: load(&c.protocol),
            too_large: load(&c.too_large),
        },
        closed_by_server: load(&c.closed_by_server),
        dropped: Drops {
            closed: load(&c.dropped_closed),
            reset: load(&c.dropped_reset),
            ping_timeout: load(&c.dropped_ping_timeout),
            disconnected: load(&c.dropped_disconnected),
            too_large: load(&c.cut_too_large),
        },
        closed_by_us: load(&c.closed_by_us),
        pings_sent: load(&c.pings_sent),
        pings_received: load(&c.pings_received),
    }
}

/// A Socket.IO run's connect steps and acks, their histograms into `histograms`.
fn socket_io_figures(
    shared: &Shared,
    histograms: &mut std::collections::BTreeMap<HistogramKey, String>,
) -> Option<SocketIoFigures> {
    let figures = &shared.socket_io.as_ref()?.figures;
    let mut summary = |key, histogram: &std::sync::Mutex<hdrhistogram::Histogram<u64>>| {
        let histogram = histogram
            .lock()
            .map(|h| h.clone())
            .unwrap_or_else(|_| histogram_new());
        histograms.insert(key, serialize_histogram(&histogram));
        histogram_summary(&histogram)
    };
    Some(SocketIoFigures {
        engine_open: summary(HistogramKey::EngineOpen, &figures.open),
        namespace_connect: summary(HistogramKey::NamespaceConnect, &figures.namespace),
        joined: summary(HistogramKey::Joined, &figures.joined),
        ack: summary(HistogramKey::Ack, &figures.ack),
        rejections: figures
            .rejections
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default(),
        acks_asked: figures.acks_asked.load(Ordering::Relaxed),
        acks_received: figures.acks_received.load(Ordering::Relaxed),
        pongs_sent: shared.counts.pongs_sent.load(Ordering::Relaxed),
    })
}

/// An SSE run's publish requests, events and reconnects, the publish histogram into
/// `histograms`.
fn sse_figures(
    shared: &Shared,
    histograms: &mut std::collections::BTreeMap<HistogramKey, String>,
) -> Option<SseFigures> {
    let figures = &shared.sse.as_ref()?.figures;
    let publish = figures
        .publish
        .lock()
        .map(|h| h.clone())
        .unwrap_or_else(|_| histogram_new());
    histograms.insert(HistogramKey::Publish, serialize_histogram(&publish));
    Some(SseFigures {
        published: figures.published.load(Ordering::Relaxed),
        publish_errors: figures
            .publish_errors
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default(),
        publish: histogram_summary(&publish),
        events: figures.events.load(Ordering::Relaxed),
        reconnects: figures.reconnects.load(Ordering::Relaxed),
        resumed: figures.resumed.load(Ordering::Relaxed),
    })
}

fn histogram_new() -> hdrhistogram::Histogram<u64> {
    histogram()
}

/// The page reloads made (`reload = {…}`), their histogram into `histograms`.
fn reload_figures(
    shared: &Shared,
    histograms: &mut std::collections::BTreeMap<HistogramKey, String>,
) -> Option<ReloadResult> {
    shared.reload.as_ref()?;
    let reloads = shared.reloads.lock().ok()?;
    histograms.insert(HistogramKey::Reload, serialize_histogram(&reloads.latency));
    Some(ReloadResult {
        requests: reloads.latency.len(),
        ok: reloads.ok,
        errors: reloads.errors.clone(),
        latency: histogram_summary(&reloads.latency),
    })
}

/// The TLS handshakes of the sockets opened (`wss://`), their histogram into `histograms`.
fn tls_figures(
    shared: &Shared,
    histograms: &mut std::collections::BTreeMap<HistogramKey, String>,
) -> Option<crate::results::TlsFigures> {
    let handshakes = shared.handshakes.lock().ok()?;
    if handshakes.is_empty() {
        return None;
    }
    histograms.insert(HistogramKey::TlsHandshake, serialize_histogram(&handshakes));
    Some(crate::results::TlsFigures {
        handshakes: handshakes.len(),
        handshake: histogram_summary(&handshakes),
    })
}
