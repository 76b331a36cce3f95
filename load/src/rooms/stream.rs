//! An SSE peer's tasks: its stream, opened at its scheduled time, read event by event, opened
//! again when the server drops it and the spec asks; and, for a sender, its publisher, which
//! `POST`s the room's messages at their intended times.

use super::deadlines::{Deadlines, reload_due};
use super::peer::{Opening, closed, connect, connection, wait_for_abort};
use super::topology::Gaps;
use super::{Drop, Ended, Inbox, OpenFailure, SendSchedule, Shared, Socket, Stage};
use crate::fanout::Stamp;
use crate::fill::per_socket;
use crate::sse::body::BodyEnd;
use crate::sse::{Plan, Refused, Stream};
use headroom_results::histogram::micros;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The shortest wait before a dropped stream is opened again.
const MIN_RETRY: Duration = Duration::from_millis(10);

impl Inbox<'_> {
    /// One event's data off a stream: its stamp matched to the message it was sent with.
    fn on_event(&mut self, data: &[u8]) {
        self.received += 1;
        let stamp = self.finder.find(data);
        self.receive(stamp);
    }
}

/// Peer `socket`'s stream from its scheduled open to its close; a sender's publisher beside it
/// while it is open.
pub(super) async fn subscriber(
    shared: Arc<Shared>,
    socket: Socket,
    mut stages: watch::Receiver<Stage>,
) {
    let Some(plan) = shared.sse.as_ref() else {
        return;
    };
    let share = f64::from(socket.index) / f64::from(shared.scheduled_over.max(1));
    let scheduled = shared.epoch + shared.connect_over.mul_f64(share);
    let opening = || -> Opening<'_, _> { Box::pin(open(&shared, plan, socket, None)) };
    let Some(mut stream) = connect(&shared, socket, scheduled, &mut stages, opening).await else {
        return;
    };
    let publisher = socket.sends.map(|schedule| {
        tokio::spawn(publish(
            Arc::clone(&shared),
            socket,
            schedule,
            stages.clone(),
        ))
    });
    let mut inbox = Inbox::new(&shared.tracker, socket.member(), false);
    // The stream's own deadlines: its page reloads and its close (its sends are the
    // publisher's).
    let quiet = Socket {
        sends: None,
        ..socket
    };
    let mut at = Deadlines::new(&shared, quiet);
    let timer = tokio::time::sleep_until(at.far);
    tokio::pin!(timer);
    let mut stage = Some(*stages.borrow_and_update());
    let ended = loop {
        if let Some(current) = stage.take()
            && let Some(ended) = at.enter(current, &shared, quiet, share)
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
            filled = stream.body.fill() => {
                let drop = match read_more(&mut inbox, filled, &mut stream, plan) {
                    None => continue,
                    // Cut by headroom: reopening would read the same event again.
                    Some(Ended::TooLarge) => break Ended::TooLarge,
                    Some(Ended::ByServer(drop)) => drop,
                    Some(Ended::ByUs) => break Ended::ByUs,
                };
                let closing = !matches!(*stages.borrow(), Stage::Connecting | Stage::Hold { .. } | Stage::Drain);
                if !plan.reconnect || closing {
                    break Ended::ByServer(drop);
                }
                let retry = stream.parser.retry().unwrap_or(crate::sse::DEFAULT_RETRY);
                let last_event_id = String::from_utf8_lossy(stream.parser.last_event_id()).into_owned();
                match reopen(&shared, plan, socket, &mut stages, retry, &last_event_id).await {
                    Some(reopened) => stream = reopened,
                    None => break Ended::ByServer(drop),
                }
            }
            () = &mut timer => {
                let now = Instant::now();
                if now >= at.close_at {
                    break Ended::ByUs;
                }
                if now >= at.next_reload {
                    reload_due(&shared, socket, &mut at);
                }
            }
        }
    };
    if let Some(publisher) = publisher {
        publisher.abort();
    }
    closed(&shared, socket, ended, inbox);
}

/// What the stream's last read brought: its events read, their stamps matched, the batch
/// flushed; `Some` when the stream ended (its end: closed by the server; an error or a broken
/// body: reset; an event past the bound: cut by headroom).
fn read_more(
    inbox: &mut Inbox<'_>,
    filled: std::io::Result<bool>,
    stream: &mut Stream,
    plan: &Plan,
) -> Option<Ended> {
    let drop_of = |end: BodyEnd| match end {
        BodyEnd::Ended => Ended::ByServer(Drop::Closed),
        BodyEnd::Broken => Ended::ByServer(Drop::Reset),
    };
    match filled {
        Err(_) => return Some(Ended::ByServer(Drop::Reset)),
        Ok(false) => return Some(drop_of(stream.body.at_close())),
        Ok(true) => {}
    }
    inbox.now_us = None;
    inbox.in_burst = 0;
    let mut events = 0u64;
    let mut too_large = false;
    let Stream { body, parser } = stream;
    let ended = body.decode(&mut |data| {
        let fed = parser.feed(data, |event| {
            events += 1;
            inbox.on_event(event.data);
        });
        too_large |= fed.is_err();
    });
    inbox.batch.flush(inbox.tracker, inbox.member.socket);
    plan.figures.events.fetch_add(events, Ordering::Relaxed);
    if too_large {
        return Some(Ended::TooLarge);
    }
    ended.map(drop_of)
}

/// Opens peer `socket`'s stream, resuming after `last_event_id` when given.
async fn open(
    shared: &Shared,
    plan: &Plan,
    socket: Socket,
    last_event_id: Option<&str>,
) -> Result<Stream, OpenFailure> {
    let address = plan.stream.address;
    let transport = connection(shared, socket, address, plan.stream.tls.as_ref()).await?;
    crate::sse::subscribe(transport, plan, (socket.room, socket.peer), last_event_id)
        .await
        .map_err(|refused| match refused {
            Refused::Status => OpenFailure::Status,
            Refused::Broken => OpenFailure::Other,
        })
}

/// A dropped stream opened again as EventSource does: after `retry`, with the last event's id,
/// again while the connection fails, until the run closes. An answer that is not a stream
/// ends it (EventSource gives up on those too). `None` when it could not be reopened.
async fn reopen(
    shared: &Shared,
    plan: &Plan,
    socket: Socket,
    stages: &mut watch::Receiver<Stage>,
    retry: Duration,
    last_event_id: &str,
) -> Option<Stream> {
    let resume = (!last_event_id.is_empty()).then_some(last_event_id);
    loop {
        // A server that asks `retry: 0` of a stream it refuses is not hammered: 10 ms at least.
        tokio::select! {
            () = tokio::time::sleep(retry.max(MIN_RETRY)) => {}
            () = wait_for_abort(stages) => return None,
        }
        if !matches!(
            *stages.borrow(),
            Stage::Connecting | Stage::Hold { .. } | Stage::Drain
        ) {
            return None;
        }
        let opened = tokio::time::timeout(
            shared.connect_timeout,
            Box::pin(open(shared, plan, socket, resume)),
        )
        .await;
        match opened {
            Ok(Ok(stream)) => {
                plan.figures.reconnects.fetch_add(1, Ordering::Relaxed);
                if resume.is_some() {
                    plan.figures.resumed.fetch_add(1, Ordering::Relaxed);
                }
                return Some(stream);
            }
            Ok(Err(OpenFailure::Status)) => return None,
            Ok(Err(_)) | Err(_) => {}
        }
    }
}

/// A sender's publisher: from the hold's start, each message `POST`ed at its intended time
/// (late ones as soon as the last answer is in: the stamp keeps the intended time, so the
/// delay is in the latencies), until the hold ends.
async fn publish(
    shared: Arc<Shared>,
    socket: Socket,
    schedule: SendSchedule,
    mut stages: watch::Receiver<Stage>,
) {
    let (Some(plan), Some(template)) = (shared.sse.as_ref(), shared.template.as_ref()) else {
        return;
    };
    let Some(endpoint) = plan.publish.as_ref() else {
        return;
    };
    let (start, end) = loop {
        match *stages.borrow_and_update() {
            Stage::Hold { start, end } => break (start, end),
            Stage::Connecting => {}
            _ => return,
        }
        if stages.changed().await.is_err() {
            return;
        }
    };
    let path = per_socket(&endpoint.path, socket.room, socket.peer);
    // Checked when the plan was made: `{room}` and `{peer}` fill in digits only.
    let Ok(headers) = crate::sse::filled_headers(&plan.publish_headers, socket.room, socket.peer)
    else {
        return;
    };
    let mut gaps = Gaps::of(shared.seed, socket.index);
    let mut next = schedule.first(start, &mut gaps);
    let publisher = Arc::new(crate::sse::Publisher::default());
    let target = Arc::new((path, headers));
    // Each message on its own task: a slow answer never holds the next message back, so the
    // generator's lag is its own. Dropped with this task (the stream closed).
    let mut in_flight = tokio::task::JoinSet::new();
    let mut seq = 0u64;
    while next < end {
        tokio::select! {
            () = tokio::time::sleep_until(next) => {}
            () = wait_for_abort(&mut stages) => return,
        }
        while in_flight.try_join_next().is_some() {}
        let intended = next;
        next = schedule.next(intended, &mut gaps);
        // Expected at the room's open peers other than the sender, whose stream is open.
        let Some(id) = shared.tracker.open(socket.member()) else {
            shared.counts.skipped.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let stamp = Stamp {
            id,
            sent_us: shared.tracker.micros_since_epoch(intended),
        };
        let body = template.render_text(socket.room, socket.peer, seq, stamp);
        seq += 1;
        let sent = Instant::now();
        if let Ok(mut lag) = shared.lag.lock() {
            let _ = lag.record(micros(sent.saturating_duration_since(intended)));
        }
        shared.live.requests.fetch_add(1, Ordering::Relaxed);
        in_flight.spawn(post_one(
            Arc::clone(&shared),
            Arc::clone(&publisher),
            Arc::clone(&target),
            body,
            intended,
        ));
    }
    // The last messages' answers, each bounded by the publish timeout.
    while in_flight.join_next().await.is_some() {}
}

/// Where a sender publishes: its path and headers, filled.
type Target = (
    String,
    Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>,
);

/// One message posted, and its answer recorded.
async fn post_one(
    shared: Arc<Shared>,
    publisher: Arc<crate::sse::Publisher>,
    target: Arc<Target>,
    body: String,
    intended: Instant,
) {
    let Some(plan) = shared.sse.as_ref() else {
        return;
    };
    let Some(endpoint) = plan.publish.as_ref() else {
        return;
    };
    let (path, headers) = &*target;
    let outcome = publisher
        .post(endpoint, path, headers, body, plan.timeout)
        .await;
    published(plan, intended, outcome);
}

/// A publish request's answer recorded: a 2xx's time from the message's intended send (a
/// failure's time is not an answer's: it is counted by why, apart), or why it failed.
fn published(plan: &Plan, intended: Instant, outcome: Result<u16, crate::web::ErrorKind>) {
    use crate::web::ErrorKind;
    let figures = &plan.figures;
    match outcome {
        Ok(status) if (200..300).contains(&status) => {
            if let Ok(mut publish) = figures.publish.lock() {
                let _ = publish.record(micros(intended.elapsed()));
            }
            figures.published.fetch_add(1, Ordering::Relaxed);
        }
        failed => {
            if let Ok(mut errors) = figures.publish_errors.lock() {
                match failed {
                    Ok(status) => errors.unexpected(status),
                    Err(ErrorKind::Connect) => errors.connect += 1,
                    Err(ErrorKind::Timeout) => errors.timeout += 1,
                    Err(ErrorKind::Protocol) => errors.protocol += 1,
                }
            }
        }
    }
}
