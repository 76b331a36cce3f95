//! What the runner reports as it goes: the CLI shows it (a bar or a line per run), the
//! runner never prints.

use headroom_compiler::matrix::Point;

use crate::results::RunResult;

/// What the runner reports as it goes; the CLI shows it.
pub enum Event<'a> {
    Started {
        runs: usize,
        /// Load, settle, scrapes and cool-down of every run; start-up not included.
        estimated_s: f64,
    },
    RunStarted {
        phase: &'a str,
        point: &'a Point,
        repeat: u32,
        number: usize,
        runs: usize,
    },
    Progress {
        elapsed_s: f64,
        requests: u64,
        errors: u64,
        /// The p95 of the last whole second, in milliseconds.
        p95_ms: Option<f64>,
    },
    RunFinished {
        phase: &'a str,
        point: &'a Point,
        result: &'a RunResult,
    },
}
