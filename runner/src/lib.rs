//! Executes a compiled run matrix and writes one results file.
//!
//! **The orchestration: with the load generator (`headroom-load`), the only crate that spawns
//! processes or opens sockets.** For every run of every point it starts a fresh target
//! ([`target`]), in its cgroup when the point has limits, has `headroom-load` send the load
//! (HTTP, open and closed model; WebSocket rooms and their fan-out), samples the target's
//! process group from /proc, scrapes its Prometheus metrics at steady state, judges the SLOs
//! (`headroom_figures`) and rewrites the results file ([`results`]) atomically. It reports
//! progress as [`Event`]s and never prints: the CLI shows them.

#![warn(missing_docs)]

pub mod cgroup;
mod environment;
mod event;
mod external;
mod generator;
mod guard;
mod limits;
pub mod machine;
mod names;
mod quick;
/// What the load tells while it runs (the seconds and gauges of [`Event::Second`]).
pub use headroom_load::live;
pub use headroom_results as results;
mod run;
mod sample;
mod scenarios;
mod scrape;
mod search;
mod series;
pub mod split;
mod stack;
mod steady;
mod steps;
pub mod tally;
pub mod target;

pub use event::Event;
pub use headroom_load::stripe::Segment;
pub use limits::LIMITS_IGNORED;
pub use run::{Outcome, RunError, RunOptions, raise_open_files, run};
pub use steps::kill_running_steps;
