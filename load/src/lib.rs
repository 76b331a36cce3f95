//! The load generator: what sends load to a target and measures its answers.
//!
//! [`http`]: HTTP load, the open model (arrival rate) and the closed model (virtual users),
//! over a lean HTTP/1.1 client or hyper's HTTP/2, each load thread recording into its own HDR
//! histograms. [`rooms`]: WebSocket rooms, a task per socket, and their fan-out, every
//! message tracked by [`fanout`]. [`tls`]: rustls for `https://` and `wss://`. [`source`]:
//! each client bound to its own source address. [`stripe`]: arrivals, virtual users and rooms
//! numbered over the whole run and shared out to load threads and segments. [`barrier`]:
//! where the segments of a run meet. [`reach`]: where the load goes, [`web`]: single GETs,
//! URLs and the hosts load may go to, [`fill`]: placeholders filled, [`hold`]: the run's one
//! hold, when every scenario is at its load, [`handover`]: the load's meeting with the steady
//! state, [`live`]: what the load tells while it runs.
//!
//! **With the orchestration (`headroom-runner`), the only crate that opens sockets to a
//! target**; `tests/architecture.rs` checks the dependency edges. It spawns no process: the
//! runner starts targets and hands this crate where they listen.

#![warn(missing_docs)]

pub mod barrier;
pub mod fanout;
pub mod fill;
pub mod handover;
pub mod hold;
pub mod http;
pub mod live;
pub mod pauses;
pub mod reach;
pub mod rooms;
mod socket_io;
pub mod source;
mod sse;
pub mod stripe;
pub mod tls;
pub mod web;

/// The results' types, by the path the moved modules name them.
use headroom_results as results;
