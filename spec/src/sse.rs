//! A Server-Sent Events rooms scenario: each peer a `GET` event stream at the scenario's `url`,
//! each message an HTTP `POST` of the template to the publish URL.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How an SSE scenario's streams are opened and its messages published. A sender is a peer
/// that publishes, as a browser client posts and listens: its own copy comes back on its
/// stream as an echo, not a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sse {
    /// Where a sender publishes its room's messages: each is `POST`ed here, the template as
    /// the body. `{room}` and `{peer}` are filled per sender:
    /// `"http://127.0.0.1:{port}/pub/{room}"`.
    pub publish: String,
    /// Headers of the publish request, with placeholders (`content-type` is
    /// `application/json` unless given).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub publish_headers: BTreeMap<String, String>,
    /// Headers of each stream's `GET`, with placeholders, beside `Accept: text/event-stream`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A stream the server ends or breaks before the run closes it is opened again, as
    /// EventSource does: after the server's `retry` (1 s until it gives one), with the last
    /// event's id as `Last-Event-ID`. Counted (`sse.reconnects`); the peer stays in its room,
    /// so what it missed is lost unless the server replays it.
    #[serde(default)]
    pub reconnect: bool,
}
