//! One rooms scenario run: its sockets placed, opened, held through the timeline and summed up.

use super::peer::peer;
use super::result::result;
use super::topology::{resolve, topology};
use super::{
    CLOSE_TIMEOUT, Counters, ReloadPlan, Reloads, Shared, Socket, Stage, Template, Timeline,
    socket_config,
};
use crate::fanout::Tracker;
use crate::fill::per_socket;
use crate::handover::ScenarioHandover;
use crate::http::histogram;
use crate::live::Live;
use crate::results::ScenarioResult;
use headroom_matrix::resolved::{Messages, Protocol, RoomsScenario};
use headroom_spec::scenario::{Arrivals, StampForm};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// Runs one rooms scenario through its timeline (or until `cancel` turns true).
pub async fn run(
    scenario: &RoomsScenario,
    reach: &crate::reach::Reach,
    cancel: watch::Receiver<bool>,
    live: Arc<Live>,
    handover: ScenarioHandover,
    member: crate::hold::Member,
) -> Result<ScenarioResult, String> {
    let fill = |text: &str| crate::fill::fill(text, reach.port, &reach.headroom_bin);
    let (sizes, mut sockets) = topology(scenario)?;
    // A segment opens the sockets of its rooms only, each at the instant one machine would:
    // a room never spans segments, so seen-by-everyone stays on one clock.
    let scheduled_over = sockets.len() as u32;
    sockets.retain(|s| reach.segment.owns(u64::from(s.room)));
    let wire = wire(scenario, &fill)?;
    let sending = scenario.send.as_ref().filter(|_| !scenario.idle);
    let (address, tls, sse) = endpoints(scenario, reach, &wire.url, sending.is_some()).await?;
    let (ramp_up, hold, ramp_down) = stage_times(scenario);
    let connect_over = scenario.connect_over.map_or(ramp_up, |over| over.as_std());
    let capacity = tracker_capacity(&sockets, hold);
    let reload = reload_plan(scenario, reach).await?;
    let sources = crate::source::Sources::optional(
        reach.source_addresses.as_ref(),
        &[address],
        sockets.len() as u64,
    )?;
    // The segments' announced start: every share's sockets on one schedule.
    if let Some(at) = reach.start_at {
        tokio::time::sleep_until(at).await;
    }
    let epoch = Instant::now();
    let shared = Arc::new(Shared {
        seed: crate::stripe::derive_seed(reach.seed, &scenario.name),
        url: wire.url,
        tls,
        sources,
        handshakes: Mutex::new(histogram()),
        join: scenario.join.as_deref().map(fill).transpose()?,
        socket_io: wire.socket_io,
        sse,
        socket_config: socket_config(wire.template.as_ref().map(|t| t.size)),
        template: wire.template,
        stamp_form: sending.map_or(StampForm::Json, |s| s.stamp),
        connect_timeout: scenario.connect_timeout.as_std(),
        connect_over,
        ping_every: scenario.ping.every.map(|d| d.as_std()),
        reload,
        sockets: sockets.len() as u32,
        scheduled_over,
        segment: reach.segment,
        epoch,
        tracker: Tracker::new(epoch, scenario.deadline.as_std(), capacity, &sizes),
        counts: Counters::default(),
        settled: Notify::new(),
        connect: Mutex::new(histogram()),
        lag: Mutex::new(histogram()),
        reloads: Mutex::new(Reloads::none()),
        reloads_in_flight: AtomicU64::new(0),
        live,
    });
    let (stage, stages) = watch::channel(Stage::Connecting);
    let peers = sockets
        .iter()
        .map(|&socket| socket_task(Arc::clone(&shared), socket, address, stages.clone()))
        .collect::<tokio::task::JoinSet<()>>();
    let mut windows = Vec::new();
    let timeline = Timeline {
        shared: &shared,
        stage: &stage,
        cancel,
        windows: &mut windows,
        scenario: &scenario.name,
        handover,
        member,
        meetings: reach.meetings.clone(),
    };
    let (hold_started, hold_s, held) = timeline.drive(ramp_up, hold, ramp_down, scenario).await;
    wind_down(peers, &shared, ramp_down, scenario.deadline.as_std()).await;
    let mut result = result(&shared, &sizes, hold_started, hold_s, windows);
    result.held = held;
    Ok(result)
}

/// A socket's task: a WebSocket peer, or an SSE stream.
async fn socket_task(
    shared: Arc<Shared>,
    socket: Socket,
    address: SocketAddr,
    stages: watch::Receiver<Stage>,
) {
    if shared.sse.is_some() {
        super::stream::subscriber(shared, socket, stages).await;
    } else {
        peer(shared, socket, address, stages).await;
    }
}

/// Where the sockets connect, checked before any opens: the WebSocket address and its TLS;
/// for SSE, the plan with the stream's and the publish requests' endpoints (TLS included).
async fn endpoints(
    scenario: &RoomsScenario,
    reach: &crate::reach::Reach,
    url: &str,
    sending: bool,
) -> Result<
    (
        SocketAddr,
        Option<crate::tls::TlsTo>,
        Option<crate::sse::Plan>,
    ),
    String,
> {
    if let Protocol::Sse(written) = &scenario.protocol {
        let fill = |text: &str| crate::fill::fill(text, reach.port, &reach.headroom_bin);
        // `{port}` and `{env:NAME}` filled here; `{room}` and `{peer}` by each peer.
        let mut sse = written.clone();
        for value in sse
            .headers
            .values_mut()
            .chain(sse.publish_headers.values_mut())
        {
            *value = fill(value)?;
        }
        let publish = sending.then(|| fill(&sse.publish)).transpose()?;
        let plan = crate::sse::Plan::new(&sse, url, publish.as_deref(), scenario, reach).await?;
        return Ok((plan.stream.address, None, Some(plan)));
    }
    let (address, secure) = resolve(&per_socket(url, 0, 0), &scenario.url, &reach.allowed).await?;
    let tls = match secure {
        Some(authority) => Some(wss(reach, address, &authority, url, scenario).await?),
        None => None,
    };
    Ok((address, tls, None))
}

/// What goes on the wire: the socket URL, the Socket.IO session's plan and the message.
struct Wire {
    url: String,
    socket_io: Option<crate::socket_io::Plan>,
    template: Option<Template>,
}

/// The scenario's socket URL and message, its point's values filled by `fill`; for Socket.IO,
/// the Engine.IO URL and the message as an event packet. An SSE message is the template as
/// written: the publish request's body.
fn wire(
    scenario: &RoomsScenario,
    fill: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Wire, String> {
    let session = match &scenario.protocol {
        Protocol::SocketIo(session) => Some(session),
        Protocol::WebSocket | Protocol::Sse(_) => None,
    };
    let url = match session {
        Some(session) => crate::socket_io::engine_url(&fill(&scenario.url)?, &session.path)?,
        None => fill(&scenario.url)?,
    };
    let socket_io = session
        .map(|session| crate::socket_io::Plan::new(session, fill))
        .transpose()?;
    let sending = scenario.send.as_ref().filter(|_| !scenario.idle);
    let template = sending
        .map(|send| {
            fill(&send.template).map(|filled| match (session, &socket_io) {
                (Some(session), Some(plan)) => {
                    let (prefix, body) = plan.message(&session.event, &filled);
                    Template::socket_io(&prefix, plan.ack, &body, send.size.bytes() as usize)
                }
                _ => template(send, &filled),
            })
        })
        .transpose()?;
    Ok(Wire {
        url,
        socket_io,
        template,
    })
}

/// The scenario's ramp-up, hold (none when it measures the whole run) and ramp-down.
fn stage_times(scenario: &RoomsScenario) -> (Duration, Duration, Duration) {
    let stages = &scenario.stages;
    let hold = stages.hold.map_or(Duration::ZERO, |hold| hold.as_std());
    (stages.ramp_up.as_std(), hold, stages.ramp_down.as_std())
}

/// The message a scenario sends, its point's values filled in `filled`.
fn template(send: &Messages, filled: &str) -> Template {
    Template::parse(
        filled,
        send.size.bytes() as usize,
        send.stamp == StampForm::BinaryPrefix,
    )
}

/// Waits for the peers to close (each by its close time plus the close timeout; stragglers
/// are cut) and for the reloads in flight, at most `deadline` more.
async fn wind_down(
    mut peers: tokio::task::JoinSet<()>,
    shared: &Shared,
    ramp_down: Duration,
    deadline: Duration,
) {
    let cutoff = Instant::now() + ramp_down + CLOSE_TIMEOUT * 2;
    while let Ok(Some(_)) = tokio::time::timeout_at(cutoff, peers.join_next()).await {}
    peers.abort_all();
    let deadline = Instant::now() + deadline;
    while shared.reloads_in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Where and how often a rooms scenario reloads its page, checked before any socket opens.
pub(super) async fn reload_plan(
    scenario: &RoomsScenario,
    reach: &crate::reach::Reach,
) -> Result<Option<ReloadPlan>, String> {
    let allowed = &reach.allowed;
    let fill = |text: &str| crate::fill::fill(text, reach.port, &reach.headroom_bin);
    Ok(match &scenario.reload {
        Some(reload) => {
            let url = fill(&reload.url)?;
            let (authority, _) = crate::web::parse_url(&per_socket(&url, 0, 0))
                .ok_or_else(|| {
                    format!("reload `{url}` is not an http:// URL the runner can load: write it as http://127.0.0.1:{{port}}/…")
                })?;
            // Resolved and checked once here: a wrong host fails the run now, not every
            // reload, and every reload goes to this address.
            let address = crate::web::resolve(&authority, &url, &reload.url, allowed).await?;
            Some(ReloadPlan {
                url,
                authority,
                address,
                mean: reload.every.as_secs_f64().max(1e-3),
                poisson: reload.arrivals == Arrivals::Poisson,
                timeout: scenario.deadline.as_std(),
            })
        }
        None => None,
    })
}

/// Messages the tracker makes room for: every message needs a slot; the budget is the
/// expected count with room for Poisson.
pub(super) fn tracker_capacity(sockets: &[Socket], hold: Duration) -> u64 {
    let expected_sends: f64 = sockets
        .iter()
        .filter_map(|s| s.sends)
        .map(|plan| plan.rate * hold.as_secs_f64())
        .sum();
    (expected_sends * 1.5 + 10.0 * expected_sends.sqrt()) as u64
        + sockets.iter().filter(|s| s.sends.is_some()).count() as u64
        + 1024
}

/// TLS for `wss://` sockets, checked before any opens (`Trust::session_to`).
pub(super) async fn wss(
    reach: &crate::reach::Reach,
    address: SocketAddr,
    authority: &str,
    url: &str,
    scenario: &RoomsScenario,
) -> Result<crate::tls::TlsTo, String> {
    let timeout = scenario.connect_timeout.as_std();
    let alpn = crate::tls::ALPN_HTTP1;
    reach
        .trust
        .session_to(alpn, address, authority, url, timeout)
        .await
}
