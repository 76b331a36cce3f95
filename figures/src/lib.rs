//! The figures a user can name, each defined once: in an SLO, a `[compare]` gate,
//! `compare --fail-on`, a page column, the run table and `merge` (`edits.seen_by_all.p95`,
//! `api.failed`, `rss`). The [`catalogue`] says what each is (unit, which scenarios produce
//! it, how it is computed, which way is better); [`read`] computes it from a run's recorded
//! histograms and counts; [`verdict`] judges a run's SLOs with it and [`merge`] joins the
//! segments of a run and judges them again; [`users`] says when a closed model's users were
//! stuck. Pure: no async runtime, no network, no I/O.

#![warn(missing_docs)]

pub mod catalogue;
pub mod merge;
mod reading;
pub mod text;
pub mod users;
pub mod verdict;

pub use crate::catalogue::Definition;
pub use crate::reading::{Named, Reading, Which, figures_count, read};
