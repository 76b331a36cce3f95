//! WebSocket rooms: every message a peer sends goes to the room's other peers. A room holds a
//! document of `--room-state` bytes while anyone is in it. With a save window, edits reach the
//! others only after the room is saved and a rebuild pass of synchronous CPU work has run, one
//! pass at a time: past some number of rooms the passes no longer fit the window.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::App;

struct Room {
    /// The room's document: written once so every page is resident.
    document: Vec<u8>,
    peers: HashMap<u64, mpsc::UnboundedSender<Message>>,
    /// Edits waiting for the room's next save.
    pending: Vec<(u64, Message)>,
    save_scheduled: bool,
    /// Broadcasts meant for the room's first peer (`--drop-to-one-peer`), counted to drop an
    /// exact share of them.
    to_first_peer: u64,
}

#[derive(Default)]
pub struct Rooms {
    open: Mutex<HashMap<String, Room>>,
    next_peer: AtomicU64,
    broadcasts: AtomicU64,
    /// One rebuild pass at a time, as one worker does it.
    worker: tokio::sync::Mutex<()>,
}

impl Rooms {
    pub fn counts(&self) -> (usize, usize, u64) {
        self.open.lock().map_or((0, 0, 0), |open| {
            let peers = open.values().map(|r| r.peers.len()).sum();
            let bytes = open.values().map(|r| r.document.len() as u64).sum();
            (open.len(), peers, bytes)
        })
    }

    fn join(&self, room: &str, size: u64, sender: mpsc::UnboundedSender<Message>) -> u64 {
        let id = self.next_peer.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut open) = self.open.lock() {
            let entry = open.entry(room.to_owned()).or_insert_with(|| Room {
                document: (0..size).map(|i| (i % 251) as u8).collect(),
                peers: HashMap::new(),
                pending: Vec::new(),
                save_scheduled: false,
                to_first_peer: 0,
            });
            entry.peers.insert(id, sender);
        }
        id
    }

    fn leave(&self, room: &str, peer: u64) {
        if let Ok(mut open) = self.open.lock() {
            let empty = open.get_mut(room).is_some_and(|r| {
                r.peers.remove(&peer);
                r.peers.is_empty()
            });
            if empty {
                open.remove(room);
            }
        }
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/rooms/{room}", get(socket))
        .route("/channels/{room}", get(socket))
        .route("/pads/{room}", get(socket))
        .route("/channels/{room}/page", get(page))
        .route("/api/ws", get(person_socket))
}

async fn socket(
    upgrade: WebSocketUpgrade,
    State(app): State<Arc<App>>,
    Path(room): Path<String>,
) -> Response {
    upgrade.on_upgrade(move |socket| peer(app, room, socket))
}

#[derive(Deserialize)]
struct Person {
    person: Option<String>,
}

/// `/api/ws?person=N`: every socket of one person is a room of its own.
async fn person_socket(
    upgrade: WebSocketUpgrade,
    State(app): State<Arc<App>>,
    Query(person): Query<Person>,
) -> Response {
    let room = format!("person-{}", person.person.unwrap_or_default());
    upgrade.on_upgrade(move |socket| peer(app, room, socket))
}

/// A channel page, as a reload fetches it.
async fn page(
    State(app): State<Arc<App>>,
    Path(room): Path<String>,
) -> axum::Json<serde_json::Value> {
    app.metrics.request("page");
    let peers = app
        .rooms
        .open
        .lock()
        .map_or(0, |open| open.get(&room).map_or(0, |r| r.peers.len()));
    axum::Json(serde_json::json!({ "room": room, "peers": peers }))
}

async fn peer(app: Arc<App>, room: String, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (sender, mut outbox) = mpsc::unbounded_channel::<Message>();
    let id = app
        .rooms
        .join(&room, app.options.room_state.bytes(), sender.clone());
    app.metrics.sockets_opened.fetch_add(1, Ordering::Relaxed);
    let frame_cpu = app.options.frame_cpu.as_std();
    let writer = tokio::spawn(async move {
        while let Some(message) = outbox.recv().await {
            let closing = matches!(message, Message::Close(_));
            // Encoding the frame for this peer (TLS, per-recipient serialization) costs CPU.
            if matches!(message, Message::Text(_) | Message::Binary(_)) && !frame_cpu.is_zero() {
                crate::busy_cpu(frame_cpu);
            }
            if sink.send(message).await.is_err() || closing {
                break;
            }
        }
    });
    let pinger = app.options.ping_every.map(|every| {
        let sender = sender.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every.as_std()).await;
                if sender.send(Message::Ping(Vec::new().into())).is_err() {
                    break;
                }
            }
        })
    });
    loop {
        let next = match app.options.idle_close {
            Some(idle) => match tokio::time::timeout(idle.as_std(), stream.next()).await {
                Ok(next) => next,
                Err(_) => {
                    app.metrics.closed_idle.fetch_add(1, Ordering::Relaxed);
                    let _ = sender.send(Message::Close(Some(CloseFrame {
                        code: 1000,
                        reason: "idle".into(),
                    })));
                    break;
                }
            },
            None => stream.next().await,
        };
        match next {
            Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => {
                let _open = app.stall.pass().await;
                received(&app, &room, id, message).await;
            }
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
            // tungstenite answers pings itself; a pong only proves the peer is alive.
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
        }
    }
    app.rooms.leave(&room, id);
    if let Some(pinger) = pinger {
        pinger.abort();
    }
    drop(sender);
    let _ = writer.await;
}

async fn received(app: &Arc<App>, room: &str, from: u64, message: Message) {
    app.metrics
        .messages_received
        .fetch_add(1, Ordering::Relaxed);
    if let Message::Text(text) = &message
        && text.as_str().starts_with("{\"type\":\"join\"")
    {
        return;
    }
    let options = &app.options;
    if options.save_window.as_micros() == 0 && options.rebuild_cpu.as_micros() == 0 {
        broadcast(app, room, from, &message);
        return;
    }
    let schedule = app.rooms.open.lock().is_ok_and(|mut open| {
        open.get_mut(room).is_some_and(|r| {
            r.pending.push((from, message));
            !std::mem::replace(&mut r.save_scheduled, true)
        })
    });
    if schedule {
        let app = Arc::clone(app);
        let room = room.to_owned();
        tokio::spawn(async move { save(app, room).await });
    }
}

/// After the save window, one rebuild pass (on the single worker), then the room's edits go out.
async fn save(app: Arc<App>, room: String) {
    tokio::time::sleep(app.options.save_window.as_std()).await;
    let pass = {
        let _worker = app.rooms.worker.lock().await;
        let (rooms_open, _, _) = app.rooms.counts();
        let work = app.options.rebuild_cpu.as_std()
            + app.options.rebuild_cpu_per_room.as_std() * rooms_open as u32;
        let started = std::time::Instant::now();
        let _ = tokio::task::spawn_blocking(move || crate::busy(work)).await;
        started.elapsed()
    };
    app.metrics.passes.fetch_add(1, Ordering::Relaxed);
    app.metrics
        .pass_micros
        .fetch_add(pass.as_micros() as u64, Ordering::Relaxed);
    let pending = app.rooms.open.lock().map_or_else(
        |_| Vec::new(),
        |mut open| {
            open.get_mut(&room).map_or_else(Vec::new, |r| {
                r.save_scheduled = false;
                std::mem::take(&mut r.pending)
            })
        },
    );
    for (from, message) in pending {
        broadcast(&app, &room, from, &message);
    }
}

/// Whether the `n`th of a run of sends is dropped, for `fraction` of them spread evenly: when
/// the running share crosses a whole message, so exactly `fraction` of them are.
fn dropped(n: u64, fraction: f64) -> bool {
    let n = n as f64;
    ((n + 1.0) * fraction).floor() > (n * fraction).floor()
}

/// Sends to every other peer of the room, dropping the configured shares evenly: of every
/// broadcast (`--drop-broadcasts`), and of those to the room's first peer
/// (`--drop-to-one-peer`).
fn broadcast(app: &App, room: &str, from: u64, message: &Message) {
    let fraction = app.options.drop_broadcasts.fraction();
    let to_one = app.options.drop_to_one_peer.fraction();
    let Ok(mut open) = app.rooms.open.lock() else {
        return;
    };
    let Some(room) = open.get_mut(room) else {
        return;
    };
    let first = room.peers.keys().min().copied();
    let Room {
        peers,
        to_first_peer,
        ..
    } = room;
    for (peer, sender) in peers.iter() {
        if *peer == from {
            continue;
        }
        let n = app.rooms.broadcasts.fetch_add(1, Ordering::Relaxed);
        let mut drop = dropped(n, fraction);
        if Some(*peer) == first && to_one > 0.0 {
            drop |= dropped(*to_first_peer, to_one);
            *to_first_peer += 1;
        }
        if drop {
            app.metrics.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        if sender.send(message.clone()).is_ok() {
            app.metrics.sent.fetch_add(1, Ordering::Relaxed);
        }
    }
}
