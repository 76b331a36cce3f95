//! The results file: one JSON document per spec, versioned, with a committed JSON Schema
//! (`schemas/results.schema.json`). The runner writes it atomically after every run, so a crash
//! loses at most the run in flight; the planner, the page and `compare` read it through these
//! types, never by key.

pub mod environment;
pub mod histogram;
pub mod process;

use std::collections::BTreeMap;
use std::path::Path;

use hdrhistogram::Histogram;
use headroom_compiler::ResolvedPlan;
use headroom_spec::VarValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::environment::{Environment, LoadAverage};
pub use crate::histogram::{deserialize_histogram, histogram_summary, serialize_histogram};
pub use crate::process::{Exit, Stopped};

/// The version of this file's shape; readers refuse other versions.
pub const RESULTS_FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// The version of this file's shape (1); a reader refuses another.
    pub format: u32,
    /// The headroom that ran.
    pub headroom_version: String,
    /// The spec's path as given, and a hash of its text (FNV-1a, 64 bits, hex).
    pub spec: SpecRef,
    /// `--quick`: durations, steps and repeats were scaled down; not figures to plan with.
    pub quick: bool,
    /// The machine the runs ran on.
    pub environment: Environment,
    /// The plan that ran (after `--quick` scaling): `headroom compile --json`'s shape.
    pub plan: ResolvedPlan,
    /// Every phase that ran, each with its points and runs.
    pub phases: Vec<PhaseResults>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SpecRef {
    /// The spec's path as given on the command line.
    pub path: String,
    /// FNV-1a (64 bits, hex) of the spec's text: results are only merged with results of the same spec.
    pub hash: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhaseResults {
    /// The phase's name in the spec.
    pub name: String,
    /// The points that ran, in order.
    pub points: Vec<PointResults>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PointResults {
    /// The point's index in its phase, from 0.
    pub index: usize,
    /// The swept variables at this point.
    pub at: BTreeMap<String, VarValue>,
    /// Every repeat of the point.
    pub runs: Vec<RunResult>,
}

/// One run of one point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// The repeat, from 1.
    pub repeat: u32,
    /// Unix time in milliseconds.
    pub started_ms: u64,
    /// Seconds from the target's start to its stop.
    pub duration_s: f64,
    /// The loopback port the target listened on.
    pub port: u16,
    /// The target's output, relative to the results file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Seconds until the readiness check passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_after_s: Option<f64>,
    /// The machine's 1-minute load average during the run.
    pub load_average: LoadAverage,
    /// Why the run failed; absent when it did not. A failed run's figures are not fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// How the target ended, when headroom stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// Each scenario's figures, by name.
    pub scenarios: BTreeMap<String, ScenarioResult>,
    /// The server's process group: samples during the load, and the steady state.
    pub process: ProcessResult,
    /// The server's Prometheus series at the steady state.
    pub metrics: MetricsResult,
    /// Whether the load generator, not the server, may have set the latency.
    pub generator: GeneratorResult,
    /// Every SLO of the spec against this run.
    pub slo: Vec<SloVerdict>,
    /// What the run could not do, in words (an external target without a pid, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

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
}

impl Failure {
    /// Its name in the results file (`never_ready`), written out, not taken from `Debug`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::SpawnFailed { .. } => "spawn_failed",
            Failure::ExitedEarly { .. } => "exited_early",
            Failure::NeverReady { .. } => "never_ready",
            Failure::Died { .. } => "died",
            Failure::Load { .. } => "load",
            Failure::NothingMeasured { .. } => "nothing_measured",
            Failure::MetricsMissing { .. } => "metrics_missing",
            Failure::ProcessUnread { .. } => "process_unread",
            Failure::Interrupted => "interrupted",
        }
    }

    /// What went wrong, in words.
    pub fn describe(&self) -> String {
        match self {
            Failure::SpawnFailed { message } | Failure::Load { message } => message.clone(),
            Failure::ExitedEarly { exit, .. } => {
                format!("the target exited before it was ready ({exit})")
            }
            Failure::NeverReady {
                waited_s, check, ..
            } => {
                format!("the target was not ready after {waited_s:.1}s (waiting for {check})")
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorCounts {
    /// The connection could not be made (refused, reset before an answer).
    pub connect: u64,
    /// No answer within the request's `timeout`.
    pub timeout: u64,
    /// Answers with a status the request did not expect.
    pub status: u64,
    /// An answer that was not valid HTTP, or a connection cut mid-answer.
    pub protocol: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.status + self.protocol
    }
}

/// A latency distribution in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Observations; 0 when nothing was measured (every other field is then 0 and means nothing).
    pub count: u64,
    /// The mean, in milliseconds.
    pub mean_ms: f64,
    /// The smallest, in milliseconds.
    pub min_ms: f64,
    /// The median, in milliseconds.
    pub p50_ms: f64,
    /// The 90th percentile, in milliseconds.
    pub p90_ms: f64,
    /// The 95th percentile, in milliseconds.
    pub p95_ms: f64,
    /// The 99th percentile, in milliseconds.
    pub p99_ms: f64,
    /// The 99.9th percentile, in milliseconds.
    pub p999_ms: f64,
    /// The largest, in milliseconds.
    pub max_ms: f64,
}

/// One window of the per-second series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    /// Seconds from the scenario's start.
    pub t_s: u64,
    /// Requests completed in the second.
    pub requests: u64,
    /// Of those, the ones that failed.
    pub errors: u64,
    /// The second's median latency, in milliseconds (0 with no request).
    pub p50_ms: f64,
    /// The second's 95th percentile, in milliseconds (0 with no request).
    pub p95_ms: f64,
    /// The second's 99th percentile, in milliseconds (0 with no request).
    pub p99_ms: f64,
}

impl Window {
    pub fn of(index: u64, h: &Histogram<u64>, errors: u64) -> Window {
        let summary = histogram_summary(h);
        Window {
            t_s: index,
            requests: summary.count,
            errors,
            p50_ms: summary.p50_ms,
            p95_ms: summary.p95_ms,
            p99_ms: summary.p99_ms,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioResult {
    /// `http` or `rooms`.
    pub kind: String,
    /// Why the scenario did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Requests that completed (answered or failed) in the measurement window: the hold (the
    /// whole run when there is no hold). HTTP only; ramp traffic is in `ramps`.
    pub requests: u64,
    /// Of `requests`, the ones answered as expected (rooms: messages sent).
    pub ok: u64,
    /// Starts skipped because `max_in_flight` requests were outstanding.
    pub dropped: u64,
    /// Failed requests by why (rooms: sockets that failed to open).
    pub errors: ErrorCounts,
    /// Seconds from the scenario's start to its end, ramps included.
    pub duration_s: f64,
    /// Completed requests per second over the measurement window.
    pub rate: f64,
    /// From the intended start (open model) or the send (closed model) to the last byte.
    pub latency: Summary,
    /// Actual minus intended send time: the generator's own delay.
    pub schedule_lag: Summary,
    /// The full distributions (`latency`, `schedule_lag`; rooms: `seen`, `seen_by_all`, `connect`, `reload`), HdrHistogram V2 compressed in base64: any percentile can be recomputed and repeats merged.
    pub histograms: BTreeMap<String, String>,
    /// Every second of the run, ramps included: the timeline, not the measurement.
    pub windows: Vec<Window>,
    /// HTTP: the requests intended during the ramp-up and ramp-down, counted apart from the
    /// hold's figures (a ramp is not the load being measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramps: Option<RampCounts>,
    /// What a rooms scenario measured beyond the common figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rooms: Option<RoomsResult>,
}

/// Traffic of the ramps, kept out of the measured figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RampCounts {
    /// Requests that completed (answered or failed).
    pub requests: u64,
    /// Of `requests`, the ones answered as expected.
    pub ok: u64,
    /// Starts skipped because `max_in_flight` requests were outstanding.
    pub dropped: u64,
    /// Failed requests by why.
    pub errors: ErrorCounts,
}

/// A rooms scenario's run. In the common fields of [`ScenarioResult`], `requests` counts the
/// messages sent, `latency` is the per-recipient latency ("seen"), `schedule_lag` the sends'
/// delay behind their intended time, and `errors` the sockets that failed to open.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoomsResult {
    /// Rooms opened.
    pub rooms: u64,
    /// Sockets planned in all.
    pub peers: u64,
    /// Sockets: planned, opened, failed and closed.
    pub sockets: SocketCounts,
    /// From a socket's scheduled connect time to its open WebSocket (join sent).
    pub connect: Summary,
    /// When the hold began, in seconds from the scenario's start: after the ramp-up and once
    /// every socket had opened or failed.
    pub hold_started_s: f64,
    /// How long the peers sent.
    pub hold_s: f64,
    /// Messages sent and frames delivered.
    pub messages: MessageCounts,
    /// Per recipient: from the intended send time to the receipt.
    pub seen: Summary,
    /// Per message that reached every expected recipient: the time until the last one had it.
    /// Messages that never reached everyone are not in it; see `messages.incomplete`.
    pub seen_by_all: Summary,
    /// Page reloads (`reload`), when the scenario has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadResult>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SocketCounts {
    /// Sockets the scenario opens (rooms × peers).
    pub planned: u64,
    /// Sockets that opened (upgrade answered with 101).
    pub opened: u64,
    /// Sockets that did not open, by why.
    pub failed: ConnectFailures,
    /// Open sockets the server closed (a close frame, a reset or the end of the stream).
    pub closed_by_server: u64,
    /// Open sockets we closed at the end of the run.
    pub closed_by_us: u64,
    /// Pings we sent (`ping.every`).
    pub pings_sent: u64,
    /// Pings the server sent us; tungstenite answers each with a pong.
    pub pings_received: u64,
}

/// Sockets that did not open, by why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectFailures {
    /// Nothing listened (connection refused).
    pub refused: u64,
    /// The server answered the upgrade with another status than 101.
    pub status: u64,
    /// No open socket within `connect_timeout`.
    pub timeout: u64,
    /// A reset, a protocol error, or anything else.
    pub other: u64,
}

impl ConnectFailures {
    pub fn total(&self) -> u64 {
        self.refused + self.status + self.timeout + self.other
    }
}

/// Messages and frames of a rooms scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageCounts {
    /// Messages sent.
    pub sent: u64,
    /// Sends the run could not track (its message budget was used up); not sent.
    pub skipped: u64,
    /// Frames expected: for every message, the peers of its room that were open when it was
    /// sent, the sender excluded.
    pub expected: u64,
    /// Frames that arrived, on time or late.
    pub delivered: u64,
    /// Frames that arrived within the deadline.
    pub on_time: u64,
    /// Frames that arrived after the deadline (late, not lost).
    pub late: u64,
    /// Messages every expected recipient got.
    pub reached_all: u64,
    /// Messages every expected recipient got within the deadline.
    pub reached_all_on_time: u64,
    /// Messages some expected recipient never got.
    pub incomplete: u64,
    /// A sender's own message coming back to it (not counted as delivered).
    pub own_echoes: u64,
    /// Frames without a stamp of this run (the server's own messages).
    pub unstamped: u64,
}

/// The page reloads of a rooms scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReloadResult {
    /// Reloads completed (answered or failed).
    pub requests: u64,
    /// Of those, the ones answered as expected.
    pub ok: u64,
    /// Failed reloads by why.
    pub errors: ErrorCounts,
    /// From the reload's intended time to the last byte of the page.
    pub latency: Summary,
}

impl RoomsResult {
    /// The time until everyone had a message, at quantile `q` of *all* messages that expected
    /// someone: a message that never reached everyone counts as never. `None` when the quantile
    /// falls among those (the figure is "never"), or no message was expected anywhere.
    pub fn seen_by_all_quantile(&self, histogram: &Histogram<u64>, q: f64) -> Option<f64> {
        let complete = self.messages.reached_all;
        let total = complete + self.messages.incomplete;
        if total == 0 || complete == 0 {
            return None;
        }
        let share = q * total as f64 / complete as f64;
        if share > 1.0 {
            return None;
        }
        Some(histogram.value_at_quantile(share) as f64 / 1e6)
    }
}

/// The server's process tree (its process group), from /proc.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessResult {
    /// Readings of the process group every `sample_every` during the load.
    pub samples: Vec<ProcessSample>,
    /// Reduced from the steady-state samples (the same instants as the scrapes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady: Option<ProcessSample>,
    /// Readings that failed, during the load and at steady state; they are left out, never
    /// written as 0 bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_samples: u32,
    /// Why the last failed reading failed (`cannot list /proc: Too many open files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_error: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessSample {
    /// Seconds from the start of the load.
    pub t_s: f64,
    /// The resident set of every process in the group, in bytes.
    pub rss_bytes: u64,
    /// CPU since the previous sample, in percent of one core; `null` for a first reading, which
    /// has nothing to measure CPU against (CPU use is the difference of two readings).
    pub cpu_pct: Option<f64>,
    /// Processes in the group.
    pub processes: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsResult {
    /// Each steady-state scrape: the selected series by name.
    pub scrapes: Vec<BTreeMap<String, f64>>,
    /// The scrapes reduced (median by default).
    pub steady: BTreeMap<String, f64>,
    /// Series the spec names that no scrape held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Scrapes that got no metrics (a status other than 200, no connection, a timeout).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_scrapes: u32,
    /// Why the last failed scrape failed (`answered 404`, `connection refused`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The generator's own honesty: was it the bottleneck?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GeneratorResult {
    /// The p99 of the generator's lag behind its schedule (actual minus intended send), in milliseconds, over the run's scenarios.
    pub schedule_lag_p99_ms: f64,
    /// CPU the generator used during the load, in cores.
    pub cpu_cores: f64,
    /// The logical cores the generator could use.
    pub cores_available: usize,
    /// Lag p99 over the threshold or CPU over 90 % of the cores: the latency is not the server's.
    pub bound: bool,
    /// Why the run counts as generator-bound, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SloVerdict {
    /// The SLO's key in `[slo]`.
    pub name: String,
    /// The SLO as written.
    pub expression: String,
    /// The figure at this run, in result units (seconds, fraction, bytes, per second).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The threshold in result units (seconds, fraction, bytes, per second).
    pub threshold: f64,
    /// `None` when the figure was not measured (see `note`): neither a pass nor a failure.
    pub pass: Option<bool>,
    /// Why there is no value (a figure of a scenario that was skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why a results file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file could not be read as results of this format.
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why, with the place in the file when there is one.
        reason: ReadError,
    },
}

/// Why a text is not results this headroom reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or no `format` field: not a results file at all.
    #[error("not a headroom results file ({0})")]
    NotResults(String),
    /// A results file of another version of the format.
    #[error(
        "a results file of format {found}, and this headroom reads format {RESULTS_FORMAT}: re-run `headroom run` with this headroom, or read it with the headroom that wrote it"
    )]
    OtherFormat {
        /// The format the file says it has.
        found: u64,
    },
    /// The right format, but a field that does not fit it.
    #[error(
        "results of format {RESULTS_FORMAT} with a field that does not fit at `{place}`: {message}"
    )]
    Field {
        /// Where, as a path of fields (`phases[0].points[2].runs[0].process`).
        place: String,
        /// What serde said.
        message: String,
    },
}

/// A temporary file beside `path` (`path` + `.tmp`), then a rename: a reader never sees half a
/// file, and an interrupted write leaves the old one whole. Creates the folder if needed.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

impl Results {
    /// Writes the file atomically ([`write_atomically`]).
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        let error = |source| ResultsError::Write {
            path: path.display().to_string(),
            source,
        };
        let text =
            serde_json::to_string_pretty(self).map_err(|e| error(std::io::Error::other(e)))?;
        write_atomically(path, &(text + "\n")).map_err(error)
    }

    /// Reads a results file ([`Results::from_json`]).
    pub fn read(path: &Path) -> Result<Results, ResultsError> {
        let error = |reason: ReadError| ResultsError::Read {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| error(ReadError::NotResults(e.to_string())))?;
        Results::from_json(&text).map_err(error)
    }

    /// Results from their JSON text. The format is checked first, so a file of another
    /// version is named as one, not as a field that does not fit.
    pub fn from_json(text: &str) -> Result<Results, ReadError> {
        #[derive(Deserialize)]
        struct Format {
            format: Option<u64>,
        }
        let version: Format =
            serde_json::from_str(text).map_err(|e| ReadError::NotResults(e.to_string()))?;
        match version.format {
            None => return Err(ReadError::NotResults("it has no `format`".to_owned())),
            Some(found) if found != u64::from(RESULTS_FORMAT) => {
                return Err(ReadError::OtherFormat { found });
            }
            Some(_) => {}
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|e| ReadError::Field {
            place: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }
}

/// FNV-1a, 64 bits: a stable hash of the spec's text that needs no dependency.
pub fn spec_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_survive_the_file() {
        let mut h = crate::histogram::new();
        for v in [1_000u64, 2_000, 3_000, 250_000] {
            h.record(v).expect("record");
        }
        let back = deserialize_histogram(&serialize_histogram(&h)).expect("round trip");
        assert_eq!(back.len(), 4);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert_eq!(back.max(), h.max());
    }

    /// `kind` is the tag serde writes, for every failure.
    #[test]
    fn a_failure_kind_is_its_tag() {
        let exit = || Exit::Code(1);
        for failure in [
            Failure::SpawnFailed {
                message: String::new(),
            },
            Failure::ExitedEarly {
                exit: exit(),
                stderr_tail: Vec::new(),
            },
            Failure::NeverReady {
                waited_s: 1.0,
                check: String::new(),
                stderr_tail: Vec::new(),
            },
            Failure::Died {
                exit: exit(),
                stderr_tail: Vec::new(),
            },
            Failure::Load {
                message: String::new(),
            },
            Failure::NothingMeasured {
                scenario: String::new(),
                why: String::new(),
            },
            Failure::MetricsMissing {
                series: Vec::new(),
                why: String::new(),
            },
            Failure::ProcessUnread { why: String::new() },
            Failure::Interrupted,
        ] {
            let written = serde_json::to_value(&failure).expect("serialises");
            assert_eq!(written["kind"], failure.kind());
        }
    }

    #[test]
    fn the_spec_hash_is_stable() {
        assert_eq!(spec_hash(""), "cbf29ce484222325");
        assert_eq!(spec_hash("a"), "af63dc4c8601ec8c");
    }
}
