//! How the target ended: its exit, and what stopping it took.

use serde::{Deserialize, Serialize};

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it (9: SIGKILL, 15: SIGTERM).
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit status {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
        }
    }
}

/// What stopping a target took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stopped {
    /// The signal sent first (`TERM` unless the spec says otherwise).
    pub signal: String,
    /// Whether the grace period ran out and the group got SIGKILL.
    pub killed: bool,
    /// How it ended; `null` when that could not be read.
    pub exit: Option<Exit>,
}
