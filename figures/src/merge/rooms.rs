//! The segments' rooms figures: sockets and messages summed, Socket.IO's steps and acks
//! merged, every distribution from the merged histograms.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use headroom_results::{
    ConnectFailures, Drops, HistogramKey, MessageCounts, ReloadResult, RoomsResult, ScenarioResult,
    SocketCounts, SocketIoFigures, SseFigures,
};

use super::sums::{add_errors, summary};

pub(super) fn merge_rooms(
    shares: &[&ScenarioResult],
    histograms: &BTreeMap<HistogramKey, Histogram<u64>>,
) -> Option<RoomsResult> {
    let all: Vec<&RoomsResult> = shares.iter().filter_map(|s| s.rooms.as_ref()).collect();
    let first = *all.first()?;
    let sum = |f: &dyn Fn(&RoomsResult) -> u64| all.iter().map(|r| f(r)).sum::<u64>();
    let reloads: Vec<&ReloadResult> = all.iter().filter_map(|r| r.reload.as_ref()).collect();
    Some(RoomsResult {
        rooms: sum(&|r| r.rooms),
        peers: sum(&|r| r.peers),
        sockets: SocketCounts {
            planned: sum(&|r| r.sockets.planned),
            opened: sum(&|r| r.sockets.opened),
            failed: ConnectFailures {
                refused: sum(&|r| r.sockets.failed.refused),
                status: sum(&|r| r.sockets.failed.status),
                timeout: sum(&|r| r.sockets.failed.timeout),
                other: sum(&|r| r.sockets.failed.other),
                ports: sum(&|r| r.sockets.failed.ports),
                rejected: sum(&|r| r.sockets.failed.rejected),
                handshake: sum(&|r| r.sockets.failed.handshake),
                protocol: sum(&|r| r.sockets.failed.protocol),
                too_large: sum(&|r| r.sockets.failed.too_large),
            },
            closed_by_server: sum(&|r| r.sockets.closed_by_server),
            dropped: Drops {
                closed: sum(&|r| r.sockets.dropped.closed),
                reset: sum(&|r| r.sockets.dropped.reset),
                ping_timeout: sum(&|r| r.sockets.dropped.ping_timeout),
                disconnected: sum(&|r| r.sockets.dropped.disconnected),
                too_large: sum(&|r| r.sockets.dropped.too_large),
            },
            closed_by_us: sum(&|r| r.sockets.closed_by_us),
            pings_sent: sum(&|r| r.sockets.pings_sent),
            pings_received: sum(&|r| r.sockets.pings_received),
        },
        connect: summary(histograms, HistogramKey::Connect),
        hold_started_s: all.iter().map(|r| r.hold_started_s).fold(0.0, f64::max),
        hold_s: all.iter().map(|r| r.hold_s).fold(first.hold_s, f64::min),
        messages: MessageCounts {
            sent: sum(&|r| r.messages.sent),
            skipped: sum(&|r| r.messages.skipped),
            expected: sum(&|r| r.messages.expected),
            delivered: sum(&|r| r.messages.delivered),
            on_time: sum(&|r| r.messages.on_time),
            late: sum(&|r| r.messages.late),
            reached_all: sum(&|r| r.messages.reached_all),
            reached_all_on_time: sum(&|r| r.messages.reached_all_on_time),
            incomplete: sum(&|r| r.messages.incomplete),
            own_echoes: sum(&|r| r.messages.own_echoes),
            unstamped: sum(&|r| r.messages.unstamped),
            misrouted: sum(&|r| r.messages.misrouted),
            duplicates: sum(&|r| r.messages.duplicates),
            unexpected: sum(&|r| r.messages.unexpected),
        },
        seen: summary(histograms, HistogramKey::Seen),
        seen_by_all: summary(histograms, HistogramKey::SeenByAll),
        reload: (!reloads.is_empty()).then(|| ReloadResult {
            requests: reloads.iter().map(|r| r.requests).sum(),
            ok: reloads.iter().map(|r| r.ok).sum(),
            errors: add_errors(reloads.iter().map(|r| &r.errors)),
            latency: summary(histograms, HistogramKey::Reload),
        }),
        socket_io: merge_socket_io(&all, histograms),
        sse: merge_sse(&all, histograms),
    })
}

/// The segments' SSE figures: counts summed, errors added, the publish histogram merged.
fn merge_sse(
    all: &[&RoomsResult],
    histograms: &BTreeMap<HistogramKey, Histogram<u64>>,
) -> Option<SseFigures> {
    let shares: Vec<&SseFigures> = all.iter().filter_map(|r| r.sse.as_ref()).collect();
    if shares.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&SseFigures) -> u64| shares.iter().map(|s| f(s)).sum::<u64>();
    Some(SseFigures {
        published: sum(&|s| s.published),
        publish_errors: add_errors(shares.iter().map(|s| &s.publish_errors)),
        publish: summary(histograms, HistogramKey::Publish),
        events: sum(&|s| s.events),
        reconnects: sum(&|s| s.reconnects),
        resumed: sum(&|s| s.resumed),
    })
}

/// The segments' Socket.IO figures: counts summed, messages' counts added, histograms merged.
fn merge_socket_io(
    all: &[&RoomsResult],
    histograms: &BTreeMap<HistogramKey, Histogram<u64>>,
) -> Option<SocketIoFigures> {
    let shares: Vec<&SocketIoFigures> = all.iter().filter_map(|r| r.socket_io.as_ref()).collect();
    if shares.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&SocketIoFigures) -> u64| shares.iter().map(|s| f(s)).sum::<u64>();
    let mut rejections = BTreeMap::new();
    for (message, sockets) in shares.iter().flat_map(|s| &s.rejections) {
        *rejections.entry(message.clone()).or_default() += sockets;
    }
    Some(SocketIoFigures {
        engine_open: summary(histograms, HistogramKey::EngineOpen),
        namespace_connect: summary(histograms, HistogramKey::NamespaceConnect),
        joined: summary(histograms, HistogramKey::Joined),
        rejections,
        acks_asked: sum(&|s| s.acks_asked),
        acks_received: sum(&|s| s.acks_received),
        ack: summary(histograms, HistogramKey::Ack),
        pongs_sent: sum(&|s| s.pongs_sent),
    })
}
