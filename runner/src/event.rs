//! What the runner reports as it goes: the CLI shows it (a bar or a line per run), the
//! runner never prints.

use headroom_matrix::Point;

use crate::results::RunResult;

/// What the runner reports as it goes; the CLI shows it.
pub enum Event<'a> {
    /// The matrix is about to run.
    Started {
        /// Runs in all.
        runs: usize,
        /// Load, settle, scrapes and cool-down of every run; start-up not included.
        estimated_s: f64,
    },
    /// How `[target] limits` are carried out, said once before the first run: the cgroup
    /// hierarchy, or that they are ignored.
    Limits {
        /// In words.
        how: String,
    },
    /// A run starts.
    RunStarted {
        /// Its phase.
        phase: &'a str,
        /// Its point.
        point: &'a Point,
        /// Its repeat, from 1.
        repeat: u32,
        /// Its number among all runs, from 1.
        number: usize,
        /// Runs in all.
        runs: usize,
    },
    /// Once a second during a run's load.
    Progress {
        /// Seconds since the load started.
        elapsed_s: f64,
        /// Requests and messages sent so far.
        requests: u64,
        /// Errors so far.
        errors: u64,
        /// The p95 of the last whole second, in milliseconds.
        p95_ms: Option<f64>,
        /// The generator's CPU since the last tick, in cores (this process: its load threads,
        /// its runtime, the view).
        generator_cores: Option<f64>,
        /// Of a target held to `[target] limits`: the share of its CPU periods since the
        /// last tick in which it spent its whole quota (0 to 1).
        throttled: Option<f64>,
    },
    /// A second of a running scenario closed: the window its results will hold, in order
    /// (an empty second is told with the next one that had a request).
    Second {
        /// The scenario.
        scenario: &'a str,
        /// When the second ended, Unix milliseconds: the load's start plus `t_s + 1` s.
        unix_ms: u64,
        /// The second.
        window: &'a crate::results::Window,
        /// What the window does not hold, read as it closed.
        gauges: &'a crate::live::Gauges,
    },
    /// The server was read during the load.
    Sampled {
        /// The service of a stack; `None`: the target, or a stack's sum.
        service: Option<&'a str>,
        /// When it was read, Unix milliseconds.
        unix_ms: u64,
        /// The reading.
        sample: &'a crate::results::ProcessSample,
    },
    /// A phase's kept target (`process = "per-phase"`) is up, before its first run.
    PhaseTargetUp {
        /// The phase.
        phase: &'a str,
        /// The port load goes to.
        port: u16,
        /// Seconds until it was ready (its slowest service's, of a stack).
        ready_after_s: Option<f64>,
        /// The phase's runs, all on it.
        runs: usize,
    },
    /// A phase's kept target ended: stopped after the phase, or failed (never up, a step
    /// run once a phase failed, died during a run).
    PhaseTargetEnded {
        /// The phase.
        phase: &'a str,
        /// Its record, as written to the results file.
        target: &'a crate::results::PhaseTarget,
    },
    /// A probe of a search was judged on its runs.
    Probed {
        /// Its phase.
        phase: &'a str,
        /// The probe, as recorded.
        probe: &'a crate::results::SearchProbe,
    },
    /// A phase's search ended.
    SearchEnded {
        /// Its phase.
        phase: &'a str,
        /// Its record, as written to the results file.
        record: &'a crate::results::SearchRecord,
        /// Runs of its budget (`max_runs`) it did not take: counted in `Started`'s runs.
        unspent: usize,
    },
    /// A run ended.
    RunFinished {
        /// Its phase.
        phase: &'a str,
        /// Its point.
        point: &'a Point,
        /// What it measured.
        result: &'a RunResult,
    },
    /// Other work competed for the machine over a run's hold: the run is run again, and this
    /// try is not kept.
    RunAgain {
        /// Why, in words: `other processes used 0.93 cores over the hold`.
        why: String,
        /// The tries left after this one.
        left: u32,
    },
}
