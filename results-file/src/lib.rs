//! The results file: one JSON document per spec, versioned, with a committed JSON Schema
//! (`schemas/results.schema.json`). The runner writes it atomically after every run, so a crash
//! loses at most the run in flight; the planner, the page and `compare` read it through these
//! types, never by key.

#![warn(missing_docs)]

mod env_fill;
pub mod environment;
mod error_counts;
mod failure;
mod file;
pub mod histogram;
mod limits;
mod masked_url;
pub mod process;
mod protocols;
pub mod provenance;
mod scenario;
mod search;
pub mod spread;
pub mod stream;

use std::collections::BTreeMap;

use headroom_matrix::RunMatrix;
use headroom_spec::VarValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::env_fill::EnvFill;
pub use crate::environment::{Environment, LoadAverage, MachineCpu};
pub use crate::error_counts::ErrorCounts;
pub use crate::failure::Failure;
pub use crate::file::{ReadError, ResultsError, spec_hash, write_atomically};
pub use crate::histogram::{
    HistogramKey, Summary, deserialize_histogram, histogram_summary, serialize_histogram,
};
pub use crate::limits::{AppliedLimits, CgroupVersion, RunLimits};
pub use crate::masked_url::{MASK, mask_every_url, masked_urls};
pub use crate::process::{Exit, Stopped};
pub use crate::protocols::{SocketIoFigures, SseFigures};
pub use crate::scenario::{
    ConnectFailures, Connections, Drops, Interval, MessageCounts, ReloadResult, RequestCounts,
    RequestResult, RoomsResult, ScenarioResult, SocketCounts, TlsFigures, Users, Window,
};
pub use crate::search::{
    ProbeOutcome, ProbeStage, SearchEnding, SearchProbe, SearchRecord, WarmStart,
};
/// Where a price table came from, as the results file records it.
pub use headroom_prices::TableSource;

/// The version of this file's shape, as written. Format 2 (issue 31): a scenario's
/// `histograms` are keyed by a closed set of names ([`HistogramKey`]), `latency` counts the
/// answers that met `expect` only, and a figure such as `seen_by_all.p95` is read from the
/// histograms and counts ([`ScenarioResult::histogram`]), never from a summary alone.
pub const RESULTS_FORMAT: u32 = 2;

/// The formats this headroom reads: format 1's fields are all in format 2, with the same
/// names, so a format-1 file reads into the same types (its `format` says which it was).
pub const READABLE_FORMATS: [u32; 2] = [1, 2];

/// A results file: what ran, on what machine, and every run's measurements.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// The version of this file's shape (2; 1 is still read); a reader refuses another.
    pub format: u32,
    /// The headroom that ran.
    pub headroom_version: String,
    /// The spec's path as given, and a hash of its text (FNV-1a, 64 bits, hex).
    pub spec: SpecRef,
    /// `--quick`: durations, steps and repeats were scaled down; not figures to plan with.
    pub quick: bool,
    /// The machine the runs ran on.
    pub environment: Environment,
    /// The run matrix that ran (after `--quick` scaling): `headroom compile --json`'s shape.
    /// Written as `plan`, its name since format 1.
    #[serde(rename = "plan")]
    pub matrix: RunMatrix,
    /// Every phase that ran, each with its points and runs.
    pub phases: Vec<PhaseResults>,
    /// The seed the runs' Poisson arrivals are drawn from (each run and scenario derives its
    /// own from it), so a run can be repeated arrival for arrival; the segments of one run
    /// share it. Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `run --segment`: this file holds one share of every run, not a result to read alone;
    /// `headroom merge` joins the shares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<SegmentRef>,
    /// The environment variables `{env:NAME}` filled anywhere in the run (the target's command,
    /// env and URL, the load's URLs, headers and bodies), each by a short keyed hash of its
    /// value, never the value (it may be a secret): levers outside the spec that two files can
    /// differ by, said by `compare` without their values. Unset ones are left out. Absent in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, EnvFill>,
    /// The price tables the spec's plan priced from when it ran (the shipped one, then the
    /// spec's own `[plan] prices`): each named, with its SHA-256, its entries and the span of
    /// their as-of dates. Empty in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub price_tables: Vec<TableSource>,
}

/// Which share of every run a partial results file holds, and where it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SegmentRef {
    /// From 0: which share it sent, by the rule of `run --segment INDEX/COUNT`
    /// (docs/scale-out.md).
    pub index: u64,
    /// The shares of every run.
    pub count: u64,
    /// The host name of the machine (or pod) it ran on.
    pub host: String,
}

/// The spec the results came from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SpecRef {
    /// The spec's path as given on the command line.
    pub path: String,
    /// FNV-1a (64 bits, hex) of the spec's text: results are only merged with results of the same spec.
    pub hash: String,
}

/// One phase's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PhaseResults {
    /// The phase's name in the spec.
    pub name: String,
    /// The points that ran, in order.
    pub points: Vec<PointResults>,
    /// The target the phase kept for all its runs (`process = "per-phase"`), or the external
    /// target its once-a-phase steps ran against; absent when every run started its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PhaseTarget>,
    /// How the phase found its ceiling, when it searched (`vary = { x = { search = … } }`):
    /// its points are then its probes, in the order they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchRecord>,
}

/// A target kept for a whole phase: started (and its once-a-phase setup steps run) before the
/// phase's first run, its once-a-phase teardown steps run and stopped after its last. Each run
/// on it records its own load, samples and limits counters; what is the phase's is here.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PhaseTarget {
    /// When it was started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// Seconds from its start until it was stopped.
    pub duration_s: f64,
    /// The loopback port load went to (the front service's).
    pub port: u16,
    /// The output of `[target] command`, relative to the results file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Seconds from its start until its readiness check passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_after_s: Option<f64>,
    /// How `[target] command` ended when headroom stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// Its cgroup over the whole phase: the shape, and the kernel's counters (the memory peak
    /// is the phase's; each run has its own CPU counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RunLimits>,
    /// A stack's services over the phase: port, log, readiness, stop and limits (their
    /// samples are each run's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub services: BTreeMap<String, ServiceResult>,
    /// The steps run once a phase (`per = "phase"`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepResult>,
    /// Why the phase's runs ended early: its target never got ready, a step run once a phase
    /// failed, or its target died or was killed for its memory during a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The run was interrupted (Ctrl-C, a missed meeting of segments) before the phase's
    /// last run: the target was stopped then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Runs of the phase not run because its target was gone (or never came up).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub runs_not_run: u32,
    /// What a reader should know about it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One point's results.
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
    /// The invocation of `headroom run` that ran it (`--run-id`, else the bench and its start
    /// time), as its live streams label it; absent in files written before runs had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Unix time in milliseconds.
    pub started_ms: u64,
    /// A segmented run's load start, announced by the segments' barrier (Unix milliseconds):
    /// the same in every segment's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_start_ms: Option<u64>,
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
    /// The run's hold: the one window in which every scenario was at its load, on the run's
    /// clock; every figure a verdict, a fit or the page reads is taken over it (each
    /// scenario's `held` says its part). Absent in files written before it was one for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Interval>,
    /// What other processes and the hypervisor took of the machine's CPUs over the hold.
    /// Absent where it was not read (no hold of two sampled seconds, the target's CPU unread,
    /// segments merged from one host, files written before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_cpu: Option<MachineCpu>,
    /// Why the run failed; absent when it did not. A failed run's figures are not fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// How the target ended, when headroom stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// Each scenario's figures, by name.
    pub scenarios: BTreeMap<String, ScenarioResult>,
    /// The instance shape the target ran in (`[target] limits`), when the spec sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RunLimits>,
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
    /// A stack's services, by name (`[target.services]`): each one's port, log, limits, how
    /// it stopped and its own samples. `process` is then their sum.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub services: BTreeMap<String, ServiceResult>,
    /// The setup and teardown steps that ran, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepResult>,
    /// The readings of `[measure]` series read by a command during the load, by series; each
    /// reduced into `metrics.steady`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub series_samples: BTreeMap<String, Vec<SeriesSample>>,
}

/// One service of a stack over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceResult {
    /// The loopback port it was given (`{port}` in its command, `{port.NAME}` elsewhere).
    pub port: u16,
    /// Its output, relative to the results file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Seconds from its start until its readiness check passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_after_s: Option<f64>,
    /// How it ended, when headroom stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// The instance shape it ran in (its `limits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RunLimits>,
    /// Its process tree: samples during the load, the steady state, the CPU over the hold.
    pub process: ProcessResult,
}

/// A setup or teardown step that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepResult {
    /// Its name.
    pub name: String,
    /// `setup` or `teardown`.
    pub when: String,
    /// Seconds it took.
    pub seconds: f64,
    /// How it ended; `null` when it was killed at its timeout.
    pub exit: Option<Exit>,
    /// Its output, relative to the results file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// One reading of a series' command during the load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeriesSample {
    /// Seconds from the start of the load.
    pub t_s: f64,
    /// The number it printed.
    pub value: f64,
}

impl RunResult {
    /// A run just started (at `started_ms`, Unix milliseconds): nothing measured yet.
    pub fn started(repeat: u32, started_ms: u64) -> RunResult {
        RunResult {
            repeat,
            run_id: None,
            started_ms,
            load_start_ms: None,
            duration_s: 0.0,
            port: 0,
            log: None,
            ready_after_s: None,
            load_average: LoadAverage::default(),
            hold: None,
            machine_cpu: None,
            failure: None,
            stopped: None,
            scenarios: BTreeMap::new(),
            limits: None,
            process: ProcessResult::default(),
            metrics: MetricsResult::default(),
            generator: GeneratorResult::default(),
            slo: Vec::new(),
            notes: Vec::new(),
            services: BTreeMap::new(),
            steps: Vec::new(),
            series_samples: BTreeMap::new(),
        }
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
    /// The group's CPU use while every scenario held its load, in cores: the samples taken in
    /// the hold, weighted by the time each covers. `null` when fewer than two fell in it (a
    /// hold too short for the sampling interval) or the run ended first. The steady state's
    /// CPU is read after the load, from an idle server: this is the figure CPU is fitted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_cpu_cores: Option<f64>,
    /// Readings that failed, during the load and at steady state; they are left out, never
    /// written as 0 bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_samples: u32,
    /// Why the last failed reading failed (`cannot list /proc: Too many open files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_error: Option<String>,
}

/// One reading of the server's process group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessSample {
    /// Seconds from the start of the load.
    pub t_s: f64,
    /// The memory the group holds, in bytes: one process's resident set (RSS); of several,
    /// the sum of their proportional set sizes (PSS), so a page they share (a database's shared
    /// buffers, mapped by every backend) counts once, not once per process.
    pub rss_bytes: u64,
    /// CPU since the previous sample, in percent of one core; `null` for a first reading, which
    /// has nothing to measure CPU against (CPU use is the difference of two readings).
    pub cpu_pct: Option<f64>,
    /// Processes in the group.
    pub processes: u32,
}

/// The server's Prometheus metrics over a run.
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
    /// The cores left to the generator beside the target's `[target] limits`: the cores less
    /// the target's CPU quota, or with `pin` the cores the target is not pinned to. Under one,
    /// the run is generator-bound. Absent when no limits were applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_left: Option<f64>,
    /// The load threads of the HTTP scenarios (`[generator] threads`, or the cores left to
    /// the generator). Absent before format 1's files had it, and without HTTP scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Lag p99 over the threshold (unless the machine's pauses explain it: `paused`) or CPU
    /// over 90 % of the cores: the latency is not the server's.
    pub bound: bool,
    /// Why the run counts as generator-bound, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The machine's pauses during the load, as the generator's pause meter saw them (a thread
    /// sleeping a millisecond at a time, woken late by more than 2 ms). Absent in files
    /// written before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses: Option<MachinePauses>,
    /// A lag over the threshold that the machine's pauses explain (the generator idle, every
    /// arrival sent): a caveat, not a bound, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<String>,
    /// A merged run (`headroom merge`): each segment's own figures, by index; the figures
    /// above are theirs together (CPU and cores added, the worst lag), bound when any was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<GeneratorResult>,
}

/// Pauses of the whole machine seen by the generator: every thread stopped at once (a shared
/// VM's host, a stop signal), the load threads' lag with them, though the generator was idle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MachinePauses {
    /// Wake-ups late by more than 2 ms.
    pub count: u64,
    /// The longest, in milliseconds.
    pub longest_ms: f64,
}

/// One SLO at one run: the figure, the threshold, and whether it held.
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
    /// Why there is no value (a figure of a scenario that was skipped); beside a latency that
    /// failed, where most of it went when that was the wait for a connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
            Failure::Service {
                service: "db".into(),
                failure: Box::new(Failure::Died {
                    exit: exit(),
                    stderr_tail: vec!["FATAL: out of shared memory".into()],
                }),
            },
            Failure::Step {
                step: "seed".into(),
                when: "setup".into(),
                exit: Some(exit()),
                seconds: 0.5,
                output_tail: Vec::new(),
            },
            Failure::Series {
                series: "pg_connections".into(),
                message: String::new(),
            },
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
