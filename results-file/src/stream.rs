//! One line of a live stream (`run --stream json-lines=PATH`): a second of a running scenario
//! as its results will hold it, or a reading of the server, each with the labels that tell
//! runs, points and segments apart (`schemas/stream-line.schema.json`). Prometheus remote
//! write carries the same figures under the same labels.

use std::collections::BTreeMap;

use headroom_spec::VarValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ProcessSample, Window};

/// The version of a stream line's shape (schemas/stream-line.schema.json); docs/contracts.md
/// says what each version added.
pub const STREAM_LINE_FORMAT: u32 = 1;

/// Which run a line belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunLabels {
    /// The version of the line's shape ([`STREAM_LINE_FORMAT`]); a reader refuses another.
    pub format: u32,
    /// The invocation of `headroom run` (`--run-id`, else the bench and its start time): every
    /// line of one invocation has it, and its results file records it.
    pub run_id: String,
    /// The spec's `[bench] name`.
    pub bench: String,
    /// The phase.
    pub phase: String,
    /// The point's place in its phase, from 0.
    pub point: usize,
    /// The values of the phase's swept variables at the point.
    pub at: BTreeMap<String, VarValue>,
    /// The repeat, from 1.
    pub repeat: u32,
    /// `INDEX/COUNT` of a segmented run (`run --segment`); absent for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
}

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum StreamLine {
    /// A second of a scenario closed.
    Second(StreamSecond),
    /// The server was read.
    Server(StreamServer),
}

/// A second of a running scenario: the window its results hold (`t_s` from the scenario's
/// start), in order; an empty second comes with the next one that had a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamSecond {
    /// Whose second.
    #[serde(flatten)]
    pub labels: RunLabels,
    /// The scenario.
    pub scenario: String,
    /// What the second's `requests` count: `http`, the requests that ended in it; `rooms`,
    /// the deliveries seen in it (its latencies are theirs), not the messages sent that the
    /// scenario's `requests` total counts.
    pub kind: SecondKind,
    /// When the second ended, Unix milliseconds (the load's start plus `t_s + 1` seconds).
    pub unix_ms: u64,
    /// The second, as the results file holds it.
    #[serde(flatten)]
    pub window: Window,
}

/// What a second of a scenario counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecondKind {
    /// An HTTP scenario's second: requests that ended in it.
    Http,
    /// A rooms scenario's second: deliveries seen in it.
    Rooms,
}

/// A reading of the server (the target's process group, a stack's service, or a stack's sum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamServer {
    /// Whose reading.
    #[serde(flatten)]
    pub labels: RunLabels,
    /// The service of a stack; absent: the target, or a stack's sum of every service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// When it was read, Unix milliseconds.
    pub unix_ms: u64,
    /// The reading, as the results file holds it.
    #[serde(flatten)]
    pub sample: ProcessSample,
}
