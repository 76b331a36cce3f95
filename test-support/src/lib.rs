//! What the tests share, unit and end-to-end alike, so that no test writes its own copy:
//!
//! - [`hostile`]: servers that misbehave the way real ones do (one that never accepts, one
//!   that stalls, one that dies after a few answers, one that reads slowly), on loopback,
//!   each stopping by itself;
//! - [`fixtures`]: the files more than one crate's tests read (a real results file, recorded
//!   k6 and Locust outputs), found from this crate, never through a `../../tests` path;
//! - [`harness`]: a test's own results folder, the machine shared between the tests that
//!   load it, waiting with a limit, what a test says beside its verdict;
//! - [`results`]: a results file read as its types, the way every test reads one.
//!
//! A dev-dependency only: nothing the product ships depends on it.

#![warn(missing_docs)]

pub mod fixtures;
pub mod harness;
pub mod hostile;
pub mod results;
