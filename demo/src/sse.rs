//! Server-Sent Events rooms: `GET /sse/{room}` is a stream of the room's messages, `POST
//! /sse/{room}` publishes its body to every stream of the room, as nchan's subscriber and
//! publisher endpoints do. Each event carries the room's message number as its id; a stream
//! opened with `Last-Event-ID` first gets what it missed of the room's last messages. Each
//! event written costs `--frame-cpu`, as a WebSocket frame does.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::broadcast;

use crate::App;

/// Messages a room keeps for streams that resume.
const REPLAY: usize = 1024;

/// Messages a stream may fall behind by; past that it misses them, as a slow reader of a
/// broadcast does.
const BACKLOG: usize = 4096;

/// The reconnection time the streams ask for (`retry:`).
const RETRY: Duration = Duration::from_millis(100);

/// A published message.
#[derive(Clone)]
struct Published {
    id: u64,
    data: Arc<str>,
}

struct Channel {
    sender: broadcast::Sender<Published>,
    next_id: u64,
    recent: VecDeque<Published>,
}

impl Channel {
    fn new() -> Channel {
        Channel {
            sender: broadcast::channel(BACKLOG).0,
            next_id: 1,
            recent: VecDeque::new(),
        }
    }
}

/// The rooms' channels, by room.
#[derive(Default)]
pub struct Channels {
    open: Mutex<HashMap<String, Channel>>,
}

impl Channels {
    /// A new stream of `room`, and what it missed after message `after`.
    fn subscribe(
        &self,
        room: &str,
        after: Option<u64>,
    ) -> Option<(broadcast::Receiver<Published>, Vec<Published>)> {
        let mut open = self.open.lock().ok()?;
        let channel = open.entry(room.to_owned()).or_insert_with(Channel::new);
        let missed = after.map_or_else(Vec::new, |after| {
            channel
                .recent
                .iter()
                .filter(|m| m.id > after)
                .cloned()
                .collect()
        });
        Some((channel.sender.subscribe(), missed))
    }

    /// Publishes `data` to `room`: its id and the streams it went to.
    fn publish(&self, room: &str, data: Arc<str>) -> Option<(u64, usize)> {
        let mut open = self.open.lock().ok()?;
        let channel = open.entry(room.to_owned()).or_insert_with(Channel::new);
        let message = Published {
            id: channel.next_id,
            data,
        };
        channel.next_id += 1;
        channel.recent.push_back(message.clone());
        if channel.recent.len() > REPLAY {
            channel.recent.pop_front();
        }
        let streams = channel.sender.send(message.clone()).unwrap_or(0);
        Some((message.id, streams))
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new().route("/sse/{room}", get(subscribe).post(publish))
}

type Events = BoxStream<'static, Result<Event, Infallible>>;

async fn subscribe(
    State(app): State<Arc<App>>,
    Path(room): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<axum::response::sse::KeepAliveStream<Events>>, axum::http::StatusCode> {
    let after = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let (receiver, missed) = app
        .channels
        .subscribe(&room, after)
        .ok_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR)?;
    app.metrics.sockets_opened.fetch_add(1, Ordering::Relaxed);
    let live = stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(message) => return Some((message, receiver)),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let frame_cpu = app.options.frame_cpu.as_std();
    let sent = Arc::clone(&app);
    let events = stream::iter(missed).chain(live).map(move |message| {
        // Writing the event for this stream costs CPU, as a WebSocket frame does.
        if !frame_cpu.is_zero() {
            crate::busy_cpu(frame_cpu);
        }
        sent.metrics.sent.fetch_add(1, Ordering::Relaxed);
        Ok(Event::default()
            .id(message.id.to_string())
            .data(&*message.data))
    });
    // A first event with no data: the reconnection time, which EventSource reads all the same.
    let first = stream::once(async { Ok(Event::default().retry(RETRY)) });
    let events: Events = match app.options.sse_end_after {
        Some(after) => first
            .chain(events)
            .take_until(tokio::time::sleep(after.as_std()))
            .boxed(),
        None => first.chain(events).boxed(),
    };
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

async fn publish(
    State(app): State<Arc<App>>,
    Path(room): Path<String>,
    body: String,
) -> Result<axum::Json<serde_json::Value>, axum::http::StatusCode> {
    app.metrics
        .messages_received
        .fetch_add(1, Ordering::Relaxed);
    let (id, streams) = app
        .channels
        .publish(&room, Arc::from(body))
        .ok_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR)?;
    Ok(axum::Json(
        serde_json::json!({ "id": id, "streams": streams }),
    ))
}
