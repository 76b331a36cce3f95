//! Why a run failed, by name.

use super::*;

/// Why a run failed, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// The command could not be started (no such program, an unset `{env:…}`).
    SpawnFailed {
        /// What the system said.
        message: String,
    },
    /// The target exited before it was ready.
    ExitedEarly {
        /// Its exit status or signal.
        exit: Exit,
        /// The last lines it wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The readiness check did not pass in time.
    NeverReady {
        /// Seconds waited.
        waited_s: f64,
        /// The readiness check that did not pass (`GET /healthz`).
        check: String,
        /// The last lines it wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The kernel killed the target for going over its `[target] limits` memory.
    OutOfMemory {
        /// The memory limit, in bytes.
        limit_bytes: u64,
        /// The point, as its swept variables (`rooms = 256`).
        at: String,
        /// The last lines it wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The target exited during the point.
    Died {
        /// Its exit status or signal.
        exit: Exit,
        /// The last lines it wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The load could not run (a URL the runner cannot load).
    Load {
        /// Why the load could not run.
        message: String,
    },
    /// A scenario that had load to send measured nothing: no request completed, or none of
    /// its sockets opened. Its SLOs would all be unmeasured; the run is not a pass.
    NothingMeasured {
        /// The scenario.
        scenario: String,
        /// What did not happen, in words.
        why: String,
    },
    /// Series the spec declares in `[measure]` were in no scrape of the steady state: the
    /// figures the page fits were not measured.
    MetricsMissing {
        /// The series never found.
        series: Vec<String>,
        /// Why, in words: the scrapes that failed and how, or that the metrics held no such
        /// series.
        why: String,
    },
    /// The target's process group could not be read at steady state: its memory and CPU
    /// there were not measured.
    ProcessUnread {
        /// Why the last reading failed.
        why: String,
    },
    /// The runner was interrupted (Ctrl-C) during the run.
    Interrupted,
    /// A segmented run's meeting did not happen (`run --segment … --barrier`): a segment
    /// never came, or segment 0 could not be reached.
    Barrier {
        /// The segments that never came, by index; empty when this segment could not reach
        /// segment 0.
        segments: Vec<u64>,
        /// What happened, in words.
        message: String,
    },
}

impl Failure {
    /// Its name in the results file (`never_ready`), written out, not taken from `Debug`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::SpawnFailed { .. } => "spawn_failed",
            Failure::ExitedEarly { .. } => "exited_early",
            Failure::NeverReady { .. } => "never_ready",
            Failure::OutOfMemory { .. } => "out_of_memory",
            Failure::Died { .. } => "died",
            Failure::Load { .. } => "load",
            Failure::NothingMeasured { .. } => "nothing_measured",
            Failure::MetricsMissing { .. } => "metrics_missing",
            Failure::ProcessUnread { .. } => "process_unread",
            Failure::Interrupted => "interrupted",
            Failure::Barrier { .. } => "barrier",
        }
    }

    /// What went wrong, in words.
    pub fn describe(&self) -> String {
        match self {
            Failure::SpawnFailed { message }
            | Failure::Load { message }
            | Failure::Barrier { message, .. } => message.clone(),
            Failure::ExitedEarly { exit, .. } => {
                format!("the target exited before it was ready ({exit})")
            }
            Failure::NeverReady {
                waited_s, check, ..
            } => {
                format!("the target was not ready after {waited_s:.1}s (waiting for {check})")
            }
            Failure::OutOfMemory {
                limit_bytes, at, ..
            } => {
                let limit = headroom_spec::Size::from_bytes(*limit_bytes);
                if at.is_empty() {
                    format!("killed by the {limit} memory limit")
                } else {
                    format!("killed by the {limit} memory limit at point {at}")
                }
            }
            Failure::Died { exit, .. } => format!("the target died during the point ({exit})"),
            Failure::NothingMeasured { scenario, why } => {
                format!("scenario `{scenario}` measured nothing: {why}")
            }
            Failure::MetricsMissing { series, why } => {
                format!("no scrape held {}: {why}", series.join(", "))
            }
            Failure::ProcessUnread { why } => {
                format!("the target's memory and CPU were not read at steady state: {why}")
            }
            Failure::Interrupted => "interrupted".to_owned(),
        }
    }
}
