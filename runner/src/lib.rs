//! Executes a compiled run matrix and writes one results file.
//!
//! **The only crate that spawns processes or opens sockets.** For every run of every point it
//! starts a fresh target ([`target`]), sends the load ([`load`]: HTTP, open and closed model;
//! [`rooms`]: WebSocket rooms and their fan-out, tracked by [`fanout`]),
//! samples the target's process group from /proc, scrapes its Prometheus metrics at steady
//! state, evaluates the SLOs and rewrites the results file ([`results`]) atomically. It reports
//! progress as [`Event`]s and never prints: the CLI shows them.

#![warn(missing_docs)]

mod barrier;
pub mod cgroup;
mod environment;
mod event;
mod external;
pub mod fanout;
mod fill;
mod generator;
mod guard;
mod handover;
mod http;
mod limits;
mod load;
pub mod machine;
mod quick;
mod reach;
pub use headroom_results as results;
pub mod rooms;
mod run;
mod sample;
mod scenarios;
mod scrape;
mod series;
mod source;
mod stack;
mod steady;
mod steps;
mod stripe;
pub mod target;
mod tls;

pub use event::Event;
pub use limits::LIMITS_IGNORED;
pub use run::{Outcome, RunError, RunOptions, raise_open_files, run};
pub use stripe::Segment;
