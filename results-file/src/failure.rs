//! Why a run failed, by name.

use crate::process::Exit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
        /// The last lines it wrote (stderr and stdout, as they came).
        stderr_tail: Vec<String>,
    },
    /// The readiness check did not pass in time.
    NeverReady {
        /// Seconds waited.
        waited_s: f64,
        /// The readiness check that did not pass (`GET /healthz`).
        check: String,
        /// The last lines it wrote (stderr and stdout, as they came).
        stderr_tail: Vec<String>,
    },
    /// The kernel killed the target for going over its `[target] limits` memory.
    OutOfMemory {
        /// The memory limit, in bytes.
        limit_bytes: u64,
        /// The point, as its swept variables (`rooms = 256`).
        at: String,
        /// The last lines it wrote (stderr and stdout, as they came).
        stderr_tail: Vec<String>,
    },
    /// The target exited during the point.
    Died {
        /// Its exit status or signal.
        exit: Exit,
        /// The last lines it wrote (stderr and stdout, as they came).
        stderr_tail: Vec<String>,
    },
    /// An external server (`url` with `pid_file`) exited while the load ran: what was measured
    /// before is kept, the rest of the load could not connect.
    ExternalExited {
        /// The pid its `pid_file` named.
        pid: i32,
        /// Seconds from the start of the load to when it was found gone.
        after_s: f64,
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
    /// The scenarios' loads were not there together for the run's hold (a scenario stopped
    /// before it ended, or never held its load in it): its figures would judge one load on
    /// a server that did not carry the others. Not judged.
    NotTogether {
        /// What each scenario held of the hold, in words.
        why: String,
    },
    /// A closed-model scenario's users sent far less than they would have at their think time
    /// and the median answer: requests stuck in the server held them, which its latency
    /// figures (of the answers that came) do not show. The server did not carry the load.
    UsersStuck {
        /// The scenario.
        scenario: String,
        /// The figures, in words.
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
    /// A service of the stack failed (`[target.services.NAME]`): it could not start, was
    /// never ready, died or ran out of memory, as `failure` says.
    Service {
        /// The service, by name.
        service: String,
        /// What happened to it (`exited_early`, `never_ready`, `died`, `out_of_memory`,
        /// `spawn_failed`), with its last log lines.
        failure: Box<Failure>,
    },
    /// A setup or teardown step did not finish with exit status 0 in its time.
    Step {
        /// The step's name.
        step: String,
        /// `setup` or `teardown`.
        when: String,
        /// How it ended; `null` when it was killed at its timeout.
        exit: Option<Exit>,
        /// Seconds it ran.
        seconds: f64,
        /// The last lines it wrote (stdout and stderr).
        output_tail: Vec<String>,
    },
    /// A `[measure]` series' command did not give a number.
    Series {
        /// The series.
        series: String,
        /// What the command did instead: its output, or its exit.
        message: String,
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
            Failure::ExternalExited { .. } => "external_exited",
            Failure::Load { .. } => "load",
            Failure::NothingMeasured { .. } => "nothing_measured",
            Failure::NotTogether { .. } => "not_together",
            Failure::UsersStuck { .. } => "users_stuck",
            Failure::MetricsMissing { .. } => "metrics_missing",
            Failure::ProcessUnread { .. } => "process_unread",
            Failure::Interrupted => "interrupted",
            Failure::Barrier { .. } => "barrier",
            Failure::Service { .. } => "service",
            Failure::Step { .. } => "step",
            Failure::Series { .. } => "series",
        }
    }

    /// What went wrong, in words.
    pub fn describe(&self) -> String {
        self.describe_as("the target")
    }

    /// The last lines of output the failure carries (a process's stderr, a step's output).
    pub fn output_tail(&self) -> &[String] {
        match self {
            Failure::ExitedEarly { stderr_tail, .. }
            | Failure::NeverReady { stderr_tail, .. }
            | Failure::OutOfMemory { stderr_tail, .. }
            | Failure::Died { stderr_tail, .. } => stderr_tail,
            Failure::Step { output_tail, .. } => output_tail,
            Failure::Service { failure, .. } => failure.output_tail(),
            _ => &[],
        }
    }

    /// What went wrong, in words, with `subject` for the process it happened to.
    fn describe_as(&self, subject: &str) -> String {
        match self {
            Failure::Service { service, failure } => {
                failure.describe_as(&format!("service `{service}`"))
            }
            Failure::Step {
                step,
                when,
                exit,
                seconds,
                ..
            } => match exit {
                Some(exit) => format!("{when} step `{step}` failed after {seconds:.1}s ({exit})"),
                None => format!("{when} step `{step}` did not finish in its {seconds:.0}s timeout"),
            },
            Failure::Series { series, message } => {
                format!("series `{series}`: {message}")
            }
            Failure::SpawnFailed { message }
            | Failure::Load { message }
            | Failure::Barrier { message, .. } => message.clone(),
            Failure::ExitedEarly { exit, .. } => {
                format!("{subject} exited before it was ready ({exit})")
            }
            Failure::NeverReady {
                waited_s, check, ..
            } => {
                format!("{subject} was not ready after {waited_s:.1}s (waiting for {check})")
            }
            Failure::OutOfMemory {
                limit_bytes, at, ..
            } => {
                let limit = headroom_spec::Size::from_bytes(*limit_bytes);
                let whose = if subject == "the target" {
                    String::new()
                } else {
                    format!("{subject} ")
                };
                if at.is_empty() {
                    format!("{whose}killed by the {limit} memory limit")
                } else {
                    format!("{whose}killed by the {limit} memory limit at point {at}")
                }
            }
            Failure::Died { exit, .. } => format!("{subject} died during the point ({exit})"),
            Failure::ExternalExited { pid, after_s } => format!(
                "the server (pid {pid}) exited {after_s:.1} s into the load; the rest of the load could not connect"
            ),
            Failure::NothingMeasured { scenario, why } => {
                format!("scenario `{scenario}` measured nothing: {why}")
            }
            Failure::UsersStuck { scenario, why } => format!("users stuck in `{scenario}`: {why}"),
            Failure::NotTogether { why } => {
                format!("not judged: the loads were not there together ({why})")
            }
            Failure::MetricsMissing { series, why } => {
                format!("no scrape held {}: {why}", series.join(", "))
            }
            Failure::ProcessUnread { why } => {
                format!("{subject}'s memory and CPU were not read at steady state: {why}")
            }
            Failure::Interrupted => "interrupted".to_owned(),
        }
    }
}
