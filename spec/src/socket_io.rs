//! A rooms scenario's protocol: raw WebSocket, Socket.IO v4 with its session (`socket_io`), or
//! Server-Sent Events streams with their publish requests (`sse`, in [`crate::sse`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a rooms scenario's sockets speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum RoomsProtocol {
    /// Raw WebSocket: the template is the frame, `join` a text frame.
    #[default]
    #[serde(rename = "websocket")]
    WebSocket,
    /// Socket.IO v4 over WebSocket (Engine.IO v4, Socket.IO protocol v5).
    #[serde(rename = "socket.io")]
    SocketIo,
    /// Server-Sent Events: every peer a `GET` stream (`text/event-stream`), every message an
    /// HTTP request to the publish URL.
    #[serde(rename = "sse")]
    Sse,
}

impl RoomsProtocol {
    /// Its name in a spec (`socket.io`).
    pub fn as_str(self) -> &'static str {
        match self {
            RoomsProtocol::WebSocket => "websocket",
            RoomsProtocol::SocketIo => "socket.io",
            RoomsProtocol::Sse => "sse",
        }
    }

    /// The default: raw WebSocket.
    pub fn is_websocket(&self) -> bool {
        *self == RoomsProtocol::WebSocket
    }
}

/// A Socket.IO scenario's session: the Engine.IO path, the namespace it connects (with its
/// auth), the events that join its room, and the event its messages are sent as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SocketIo {
    /// The Engine.IO path on the server (`/socket.io/`, the servers' default).
    #[serde(default = "default_engine_io_path")]
    pub path: String,
    /// The namespace connected (`/` by default; `/chat`).
    #[serde(default = "root_namespace")]
    pub namespace: String,
    /// The namespace connect's auth payload, a JSON object (`{"token":"t-{peer}"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// Events sent once connected, each a JSON array of the event's name and arguments:
    /// `['["join", "room-{room}"]']`. Rooms are server-side: an event is how a client joins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joins: Vec<String>,
    /// Wait for the server's acknowledgement of every join before the socket counts as open.
    #[serde(default)]
    pub join_ack: bool,
    /// The event each message is sent as: `42["<event>", <template>]`.
    #[serde(default = "default_event")]
    pub event: String,
    /// Ask an acknowledgement of every message (`421["event", …]` answered by `431[…]`) and
    /// time it: the `ack` figure.
    #[serde(default)]
    pub ack: bool,
}

impl Default for SocketIo {
    fn default() -> Self {
        SocketIo {
            path: default_engine_io_path(),
            namespace: root_namespace(),
            auth: None,
            joins: Vec::new(),
            join_ack: false,
            event: default_event(),
            ack: false,
        }
    }
}

fn default_engine_io_path() -> String {
    "/socket.io/".to_owned()
}

fn root_namespace() -> String {
    "/".to_owned()
}

fn default_event() -> String {
    "message".to_owned()
}
