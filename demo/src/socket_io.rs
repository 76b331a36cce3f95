//! Socket.IO rooms, a chat written the way socket.io's documentation shows it: a `join` event
//! puts the socket in a room, a `chat` (or `message`) event goes to the room's other sockets
//! (`socket.to(room).emit`), and either is acknowledged when the client asks. The namespace
//! `/private` refuses every socket whose auth has no `"token": "letmein"`, with the message
//! "Not authorized", as a connect middleware does.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use socketioxide::SocketIo;
use socketioxide::extract::{AckSender, Data, SocketRef};
use socketioxide::handler::ConnectHandler;
use socketioxide::layer::SocketIoLayer;

use crate::App;

/// What a client's connect to `/private` is refused with.
#[derive(Debug)]
struct NotAuthorized;

impl std::fmt::Display for NotAuthorized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Not authorized")
    }
}

impl std::error::Error for NotAuthorized {}

/// The Socket.IO server at `/socket.io/`, its heartbeat as the options say.
pub fn layer(app: &Arc<App>) -> SocketIoLayer {
    let options = &app.options;
    let (layer, io) = SocketIo::builder()
        .ping_interval(options.socket_io_ping_interval.as_std())
        .ping_timeout(options.socket_io_ping_timeout.as_std())
        // A room's burst is queued, not refused: 128 packets (the default) drops fan-out.
        .max_buffer_size(65_536)
        .build_layer();
    // The handlers register before the connect handler returns its future, which socketioxide
    // spawns: an `async` handler would register them only once spawned, after the client has
    // its `40` and may already have sent its join (lost to the race).
    let main = Arc::clone(app);
    io.ns("/", move |socket: SocketRef| {
        on_connect(&socket, &main);
        std::future::ready(())
    });
    let private = Arc::clone(app);
    let connect = move |socket: SocketRef| {
        on_connect(&socket, &private);
        std::future::ready(())
    };
    io.ns("/private", connect.with(authorized));
    layer
}

async fn authorized(Data(auth): Data<Value>) -> Result<(), NotAuthorized> {
    if auth.get("token").and_then(Value::as_str) == Some("letmein") {
        Ok(())
    } else {
        Err(NotAuthorized)
    }
}

fn on_connect(socket: &SocketRef, app: &Arc<App>) {
    if let Some(after) = app.options.socket_io_disconnect_after {
        let socket = socket.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after.as_std()).await;
            let _ = socket.disconnect();
        });
    }
    let joins = Arc::clone(app);
    socket.on(
        "join",
        async move |socket: SocketRef, Data(room): Data<Value>, ack: AckSender| {
            joins
                .metrics
                .messages_received
                .fetch_add(1, Ordering::Relaxed);
            let room = match room {
                Value::String(room) => room,
                other => other.to_string(),
            };
            socket.join(room);
            let _ = ack.send(&"joined");
        },
    );
    // `chat`, and `message` (the event a client sends by default, `socket.send`).
    for event in ["chat", "message"] {
        let chats = Arc::clone(app);
        socket.on(
            event,
            async move |socket: SocketRef, Data(message): Data<Value>, ack: AckSender| {
                chat(&chats, &socket, event, &message).await;
                let _ = ack.send(&"ok");
            },
        );
    }
}

/// A chat message to the other sockets of the sender's rooms, each frame's CPU spent first.
async fn chat(app: &App, socket: &SocketRef, event: &str, message: &Value) {
    app.metrics
        .messages_received
        .fetch_add(1, Ordering::Relaxed);
    let rooms = socket.rooms();
    if rooms.is_empty() {
        return;
    }
    let recipients = socket.to(rooms.clone()).sockets().len() as u64;
    let frame_cpu = app.options.frame_cpu.as_std();
    if !frame_cpu.is_zero() {
        crate::busy_cpu(frame_cpu * recipients as u32);
    }
    if socket.to(rooms).emit(event, message).await.is_ok() {
        app.metrics.sent.fetch_add(recipients, Ordering::Relaxed);
    }
}
