//! One socket's task: open, send what is due, read and stamp-match frames, ping, close.

use super::deadlines::{Deadlines, reload_due};
use super::{
    BURST, CLOSE_TIMEOUT, Drop, Ended, Inbox, OpenFailure, SendSchedule, Shared, Socket, Stage,
};
use crate::fanout::{Batch, Member, Receipt, Seen, Stamp, StampFinder, Tracker};
use crate::fill::per_socket;
use crate::socket_io::{HandshakeFailure, Heartbeat, Incoming, Seat};
use crate::tls::Transport;
use futures_util::{FutureExt, SinkExt, Stream, StreamExt};
use headroom_results::histogram::micros;
use headroom_spec::scenario::StampForm;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{WebSocketStream, tungstenite};

impl<'a> Inbox<'a> {
    /// An inbox for one socket's frames.
    pub fn new(tracker: &'a Tracker, member: Member, binary_stamps: bool) -> Inbox<'a> {
        Inbox {
            tracker,
            member,
            seen: Seen::default(),
            binary_stamps,
            finder: StampFinder::default(),
            batch: Batch::default(),
            own_echoes: 0,
            unstamped: 0,
            misrouted: 0,
            duplicates: 0,
            unexpected: 0,
            pings: 0,
            socket_io: None,
            received: 0,
            now_us: None,
            in_burst: 0,
        }
    }

    /// The inbox of a Socket.IO socket connected to `namespace`: pings owed pongs, packets
    /// told apart, acks timed.
    pub(super) fn speaking_socket_io(mut self, namespace: &str) -> Inbox<'a> {
        self.socket_io = Some(crate::socket_io::Session::new(namespace));
        self
    }

    /// Messages taken off the socket so far, of every kind.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// One message off the socket; `Some` when it ended the socket.
    pub fn on_message(&mut self, message: Result<Message, WsError>) -> Option<Ended> {
        let message = match message {
            Ok(message) => message,
            Err(WsError::Capacity(_)) => return Some(Ended::TooLarge),
            Err(_) => return Some(Ended::ByServer(Drop::Reset)),
        };
        self.received += 1;
        if let (Some(session), Message::Text(text)) = (self.socket_io.as_mut(), &message) {
            let tracker = self.tracker;
            let event = session.on_text(text, || tracker.micros_since_epoch(Instant::now()));
            match session.ended {
                Some(Incoming::Disconnect) => return Some(Ended::ByServer(Drop::Disconnected)),
                Some(_) => return Some(Ended::ByServer(Drop::Closed)),
                None if !event => return None,
                None => {}
            }
        }
        let stamp = match &message {
            Message::Text(text) => self.finder.find(text.as_bytes()),
            Message::Binary(bytes) if self.binary_stamps => Stamp::from_binary(bytes),
            Message::Binary(bytes) => self.finder.find(bytes),
            Message::Ping(_) => {
                // tungstenite queues the pong and sends it with the next read or write.
                self.pings += 1;
                return None;
            }
            Message::Pong(_) | Message::Frame(_) => return None,
            Message::Close(_) => return Some(Ended::ByServer(Drop::Closed)),
        };
        self.receive(stamp);
        None
    }

    /// A message's stamp, if it had one, matched to the message it was sent with.
    pub(super) fn receive(&mut self, stamp: Option<Stamp>) {
        let Some(stamp) = stamp else {
            self.unstamped += 1;
            return;
        };
        self.in_burst += 1;
        if self.in_burst > BURST {
            self.in_burst = 1;
            self.now_us = None;
        }
        let tracker = self.tracker;
        let now = *self
            .now_us
            .get_or_insert_with(|| tracker.micros_since_epoch(Instant::now()));
        match self
            .tracker
            .receipt(self.member, &mut self.seen, stamp, now)
        {
            Receipt::Unknown => self.unstamped += 1,
            Receipt::OwnEcho => self.own_echoes += 1,
            Receipt::Misrouted => self.misrouted += 1,
            Receipt::Duplicate => self.duplicates += 1,
            Receipt::Unexpected => self.unexpected += 1,
            delivered => self.batch.push(self.tracker, self.member.socket, delivered),
        }
    }

    /// A message, then every message already buffered, then the batch flushed: what the socket
    /// does each time it wakes up to read.
    pub fn on_ready<S>(
        &mut self,
        first: Option<Result<Message, WsError>>,
        stream: &mut S,
    ) -> Option<Ended>
    where
        S: Stream<Item = Result<Message, WsError>> + Unpin,
    {
        self.now_us = None;
        self.in_burst = 0;
        let mut next = first;
        let ended = loop {
            match next {
                None => break Some(Ended::ByServer(Drop::Reset)),
                Some(message) => {
                    if let Some(ended) = self.on_message(message) {
                        break Some(ended);
                    }
                }
            }
            match stream.next().now_or_never() {
                Some(message) => next = message,
                None => break None,
            }
        };
        self.batch.flush(self.tracker, self.member.socket);
        ended
    }
}

/// A socket that did not open, counted and settled.
fn failed_to_open(shared: &Shared, counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
    shared.live.errors.fetch_add(1, Ordering::Relaxed);
    shared.counts.settled.fetch_add(1, Ordering::Release);
    shared.settled.notify_one();
}

/// A socket's open step, boxed.
pub(super) type Opening<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, OpenFailure>> + Send + 'a>>;

/// Opens the socket at its scheduled time by `open` (a WebSocket's handshake, an SSE stream's
/// request, boxed so its state is not kept in the socket's task); `None` when the run aborted
/// first or it failed to open (counted either way).
pub(super) async fn connect<'a, T>(
    shared: &'a Shared,
    socket: Socket,
    scheduled: Instant,
    stages: &mut watch::Receiver<Stage>,
    open: impl FnOnce() -> Opening<'a, T>,
) -> Option<T> {
    let counts = &shared.counts;
    tokio::select! {
        _ = tokio::time::sleep_until(scheduled) => {}
        _ = wait_for_abort(stages) => {
            counts.settled.fetch_add(1, Ordering::Release);
            shared.settled.notify_one();
            return None;
        }
    }
    // Made only now: thousands of sockets wait for their turn, and a handshake's state is large.
    let opened = tokio::time::timeout(shared.connect_timeout, open()).await;
    let opened = match opened {
        Ok(Ok(opened)) => opened,
        Ok(Err(failure)) => {
            let counter = match failure {
                OpenFailure::Refused => &counts.refused,
                OpenFailure::Rejected(message) => {
                    if let Some(plan) = &shared.socket_io {
                        plan.figures.rejected(&message);
                    }
                    &counts.rejected
                }
                OpenFailure::Status => &counts.status,
                OpenFailure::Handshake => &counts.handshake,
                OpenFailure::Protocol => &counts.protocol,
                OpenFailure::TooLarge => &counts.too_large,
                OpenFailure::Ports => &counts.ports,
                OpenFailure::Other => &counts.other,
            };
            failed_to_open(shared, counter);
            return None;
        }
        Err(_) => {
            failed_to_open(shared, &counts.timeout);
            return None;
        }
    };
    if let Ok(mut connect) = shared.connect.lock() {
        let _ = connect.record(micros(scheduled.elapsed()));
    }
    shared.tracker.enter(socket.member());
    counts.opened.fetch_add(1, Ordering::Relaxed);
    counts.settled.fetch_add(1, Ordering::Release);
    shared.settled.notify_one();
    Some(opened)
}

pub(super) async fn peer(
    shared: Arc<Shared>,
    socket: Socket,
    address: SocketAddr,
    mut stages: watch::Receiver<Stage>,
) {
    let counts = &shared.counts;
    // The scheduled connect time: sockets spread evenly over `connect_over`.
    let share = f64::from(socket.index) / f64::from(shared.scheduled_over.max(1));
    let scheduled = shared.epoch + shared.connect_over.mul_f64(share);
    // Boxed: the handshake's state is large and only needed while connecting; inline, every
    // open socket's task would keep its room (the socket bench saw 10.4 KiB, not 6.5).
    let opening = || -> Opening<'_, _> { Box::pin(open(&shared, socket, address, scheduled)) };
    let Some((mut ws, heartbeat)) = connect(&shared, socket, scheduled, &mut stages, opening).await
    else {
        return;
    };
    let mut inbox = Inbox::new(
        &shared.tracker,
        socket.member(),
        shared.stamp_form == StampForm::BinaryPrefix,
    );
    if let Some(plan) = &shared.socket_io {
        inbox = inbox.speaking_socket_io(&plan.namespace_of(seat(socket)));
    }
    let mut at = Deadlines::new(&shared, socket);
    if let Some(heartbeat) = heartbeat {
        at.ping_deadline = Instant::now() + heartbeat.patience();
    }
    let far = at.far;
    let mut seq = 0u64;
    let timer = tokio::time::sleep_until(far);
    tokio::pin!(timer);
    // The stage may have moved on while this socket was connecting.
    let mut stage = Some(*stages.borrow_and_update());
    let ended = loop {
        if let Some(current) = stage.take()
            && let Some(ended) = at.enter(current, &shared, socket, share)
        {
            break ended;
        }
        let due = at.due();
        if timer.deadline() != due {
            timer.as_mut().reset(due);
        }
        tokio::select! {
            biased;
            changed = stages.changed() => {
                if changed.is_err() {
                    break Ended::ByUs;
                }
                stage = Some(*stages.borrow_and_update());
            }
            message = ws.next() => {
                let read = Box::pin(read_ready(&mut inbox, message, &mut ws, heartbeat, &mut at, &shared));
                if let Some(ended) = read.await {
                    break ended;
                }
            }
            () = &mut timer => {
                let now = Instant::now();
                if now >= at.ping_deadline {
                    break Ended::ByServer(Drop::PingTimeout);
                }
                if now >= at.close_at {
                    let _ = tokio::time::timeout(CLOSE_TIMEOUT, Box::pin(ws.close(None))).await;
                    break Ended::ByUs;
                }
                if now >= at.next_send
                    && let Some(plan) = socket.sends
                    && Box::pin(send_due(&shared, socket, plan, &mut ws, &mut at, &mut seq, inbox.socket_io.as_mut())).await.is_err()
                {
                    break Ended::ByServer(Drop::Reset);
                }
                if now >= at.next_ping {
                    if Box::pin(ws.send(Message::Ping(Vec::new().into()))).await.is_err() {
                        break Ended::ByServer(Drop::Reset);
                    }
                    counts.pings_sent.fetch_add(1, Ordering::Relaxed);
                    at.next_ping = shared.ping_every.map_or(far, |every| now + every);
                }
                if now >= at.next_reload {
                    reload_due(&shared, socket, &mut at);
                }
            }
        }
    };
    closed(&shared, socket, ended, inbox);
}

/// A socket closed: what its inbox holds flushed, its room one socket emptier, how it ended
/// and what it received counted.
pub(super) fn closed(shared: &Shared, socket: Socket, ended: Ended, mut inbox: Inbox<'_>) {
    let counts = &shared.counts;
    inbox.batch.flush(&shared.tracker, socket.index);
    shared.tracker.leave(socket.member());
    match ended {
        Ended::ByServer(drop) => {
            counts.closed_by_server.fetch_add(1, Ordering::Relaxed);
            let kind = match drop {
                Drop::Closed => &counts.dropped_closed,
                Drop::Reset => &counts.dropped_reset,
                Drop::PingTimeout => &counts.dropped_ping_timeout,
                Drop::Disconnected => &counts.dropped_disconnected,
            };
            kind.fetch_add(1, Ordering::Relaxed)
        }
        Ended::ByUs => counts.closed_by_us.fetch_add(1, Ordering::Relaxed),
        Ended::TooLarge => counts.cut_too_large.fetch_add(1, Ordering::Relaxed),
    };
    if let (Some(session), Some(plan)) = (inbox.socket_io.as_mut(), &shared.socket_io) {
        plan.figures.record_acks(session);
    }
    counts
        .own_echoes
        .fetch_add(inbox.own_echoes, Ordering::Relaxed);
    counts
        .unstamped
        .fetch_add(inbox.unstamped, Ordering::Relaxed);
    counts
        .misrouted
        .fetch_add(inbox.misrouted, Ordering::Relaxed);
    counts
        .duplicates
        .fetch_add(inbox.duplicates, Ordering::Relaxed);
    counts
        .unexpected
        .fetch_add(inbox.unexpected, Ordering::Relaxed);
    counts
        .pings_received
        .fetch_add(inbox.pings, Ordering::Relaxed);
}

pub(super) async fn wait_for_abort(stages: &mut watch::Receiver<Stage>) {
    loop {
        if *stages.borrow_and_update() == Stage::Abort || stages.changed().await.is_err() {
            return;
        }
    }
}

pub(super) async fn open(
    shared: &Shared,
    socket: Socket,
    address: SocketAddr,
    scheduled: Instant,
) -> Result<(WebSocketStream<Transport>, Option<Heartbeat>), OpenFailure> {
    let stream = connection(shared, socket, address, shared.tls.as_ref()).await?;
    let url = per_socket(&shared.url, socket.room, socket.peer);
    let (mut ws, _) =
        tokio_tungstenite::client_async_with_config(url, stream, Some(shared.socket_config))
            .await
            .map_err(|e| match e {
                tungstenite::Error::Http(_) => OpenFailure::Status,
                // The answer was 101 but not a WebSocket server's: the accept key, the
                // upgrade headers.
                tungstenite::Error::Protocol(_) => OpenFailure::Handshake,
                tungstenite::Error::Capacity(_) => OpenFailure::TooLarge,
                _ => OpenFailure::Other,
            })?;
    if let Some(join) = &shared.join {
        let join = per_socket(join, socket.room, socket.peer);
        ws.send(Message::Text(join.into()))
            .await
            .map_err(|_| OpenFailure::Other)?;
    }
    let heartbeat = match &shared.socket_io {
        Some(plan) => Some(
            crate::socket_io::handshake(&mut ws, plan, seat(socket), scheduled)
                .await
                .map_err(|failure| match failure {
                    HandshakeFailure::Rejected(message) => OpenFailure::Rejected(message),
                    HandshakeFailure::Malformed => OpenFailure::Protocol,
                    HandshakeFailure::TooLarge => OpenFailure::TooLarge,
                    HandshakeFailure::Broken => OpenFailure::Other,
                })?,
        ),
        None => None,
    };
    Ok((ws, heartbeat))
}

/// Socket `socket`'s connection to `address` (from its source address, TLS when `tls` says),
/// its TLS handshake timed; a failure told apart as a socket's open failures are.
pub(super) async fn connection(
    shared: &Shared,
    socket: Socket,
    address: SocketAddr,
    tls: Option<&crate::tls::TlsTo>,
) -> Result<Transport, OpenFailure> {
    let origin = crate::tls::Origin {
        sources: shared.sources.as_ref(),
        client: u64::from(socket.index),
    };
    let (stream, handshake) = Transport::open(address, origin, tls).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            OpenFailure::Refused
        } else if crate::source::out_of_ports(&e) {
            OpenFailure::Ports
        } else {
            OpenFailure::Other
        }
    })?;
    if let Some(took) = handshake
        && let Ok(mut handshakes) = shared.handshakes.lock()
    {
        let _ = handshakes.record(micros(took).max(1));
    }
    Ok(stream)
}

/// Where a socket sits, as a Socket.IO session fills it.
fn seat(socket: Socket) -> Seat {
    Seat {
        room: socket.room,
        peer: socket.peer,
    }
}

/// What a socket does when it wakes up to read: every message taken, and for Socket.IO, the
/// server's pings answered and the next one awaited. `Some` when the socket ended.
async fn read_ready(
    inbox: &mut Inbox<'_>,
    message: Option<Result<Message, WsError>>,
    ws: &mut WebSocketStream<Transport>,
    heartbeat: Option<Heartbeat>,
    at: &mut Deadlines,
    shared: &Shared,
) -> Option<Ended> {
    if let Some(ended) = inbox.on_ready(message, ws) {
        return Some(ended);
    }
    if let (Some(session), Some(heartbeat)) = (inbox.socket_io.as_mut(), heartbeat) {
        at.ping_deadline = session.last_ping + heartbeat.patience();
        if answer_pings(session, ws, shared).await.is_err() {
            return Some(Ended::ByServer(Drop::Reset));
        }
    }
    None
}

/// Answers every ping the last read saw, and records the acks it timed.
async fn answer_pings(
    session: &mut crate::socket_io::Session,
    ws: &mut WebSocketStream<Transport>,
    shared: &Shared,
) -> Result<(), WsError> {
    if let Some(plan) = &shared.socket_io
        && !session.acked.is_empty()
    {
        plan.figures.record_acks(session);
    }
    if session.pongs_due == 0 {
        return Ok(());
    }
    for _ in 0..session.pongs_due {
        ws.feed(Message::Text("3".into())).await?;
    }
    let pings = u64::from(session.pongs_due);
    // A Socket.IO server's pings are Engine.IO's: counted as the server's pings, as a raw
    // WebSocket's are, and as the pongs that answered them.
    shared
        .counts
        .pings_received
        .fetch_add(pings, Ordering::Relaxed);
    shared.counts.pongs_sent.fetch_add(pings, Ordering::Relaxed);
    session.pongs_due = 0;
    ws.flush().await
}

/// Sends every message due by now (a blocked socket catches up: the stamps keep the intended
/// times, so the delay is in the latencies), then schedules the next.
async fn send_due(
    shared: &Shared,
    socket: Socket,
    plan: SendSchedule,
    ws: &mut WebSocketStream<Transport>,
    at: &mut Deadlines,
    seq: &mut u64,
    mut session: Option<&mut crate::socket_io::Session>,
) -> Result<(), ()> {
    let far = Instant::now() + Duration::from_secs(86_400 * 365);
    let Some(template) = &shared.template else {
        at.next_send = far;
        return Ok(());
    };
    while at.next_send <= Instant::now() && at.next_send < at.hold_end {
        let intended = at.next_send;
        // Expected at the room's open peers other than the sender.
        match shared.tracker.open(socket.member()) {
            Some(id) => {
                let stamp = Stamp {
                    id,
                    sent_us: shared.tracker.micros_since_epoch(intended),
                };
                let message = template.render(socket.room, socket.peer, *seq, stamp);
                if let Some(session) = session.as_deref_mut()
                    && let Some(plan) = shared.socket_io.as_ref().filter(|plan| plan.ack)
                {
                    session.asked(id, stamp.sent_us);
                    plan.figures.acks_asked.fetch_add(1, Ordering::Relaxed);
                }
                let sent = Instant::now();
                ws.feed(message).await.map_err(|_| ())?;
                if let Ok(mut lag) = shared.lag.lock() {
                    let _ = lag.record(micros(sent.saturating_duration_since(intended)));
                }
                shared.live.requests.fetch_add(1, Ordering::Relaxed);
                *seq += 1;
            }
            None => {
                shared.counts.skipped.fetch_add(1, Ordering::Relaxed);
            }
        }
        at.next_send = plan.next(intended, &mut at.gaps);
    }
    ws.flush().await.map_err(|_| ())?;
    if at.next_send >= at.hold_end {
        at.next_send = far;
    }
    Ok(())
}
