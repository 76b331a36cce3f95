//! What a rooms scenario's protocol measures beside the rooms' own figures: Socket.IO's
//! connect steps and acks, SSE's publish requests, events and reconnects.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error_counts::ErrorCounts;
use crate::histogram::Summary;

/// A Socket.IO scenario's own figures. Its sockets' `connect` runs from the scheduled time to
/// the room joined; these are its steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SocketIoFigures {
    /// From a socket's scheduled connect to the Engine.IO open packet (the WebSocket upgrade
    /// included).
    pub engine_open: Summary,
    /// From the open packet to the namespace's answer `40{"sid":…}`.
    pub namespace_connect: Summary,
    /// From the namespace connected to every join sent (and acknowledged, with `join_ack`).
    pub joined: Summary,
    /// Sockets the namespace refused (`connect_error`), by the server's message.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rejections: BTreeMap<String, u64>,
    /// Messages sent asking an acknowledgement (`socket_io.ack`).
    pub acks_asked: u64,
    /// Acknowledgements received.
    pub acks_received: u64,
    /// From a message's intended send time to its acknowledgement.
    pub ack: Summary,
    /// Pongs sent in answer to the server's pings (Engine.IO `2` → `3`).
    pub pongs_sent: u64,
}

/// An SSE scenario's own figures: the requests that published its messages, the events its
/// streams parsed, and the streams opened again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SseFigures {
    /// Publish requests answered 2xx.
    pub published: u64,
    /// Publish requests that failed, by why (a message not published is expected all the
    /// same, and shows as lost).
    pub publish_errors: ErrorCounts,
    /// From a message's intended send time to its publish request's 2xx answer, over the
    /// publishes answered so (the failed ones are in `publish_errors`).
    pub publish: Summary,
    /// Events the streams parsed (data events; comments and empty events are not events).
    pub events: u64,
    /// Streams the server ended or broke that were opened again (`sse.reconnect`), with the
    /// last event's id as `Last-Event-ID`.
    pub reconnects: u64,
    /// Of those, the reopenings that sent a `Last-Event-ID`.
    pub resumed: u64,
}
