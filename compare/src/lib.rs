//! Comparing runs (issue 16): a base and a new side, each a figure's repeats, judged better,
//! worse, within noise, or not to be told apart with so few repeats.
//!
//! [`verdict`] is the statistics: a two-sided Mann–Whitney U test on the repeats, so that a
//! difference is called only when the repeats of one side rank apart from the other's more
//! often than chance would rank them 5 % of the time. [`figures`] names what a run measured and
//! which way is better; [`matching`] pairs two results files' points by their variables and
//! judges each figure.

#![warn(missing_docs)]

pub mod brackets;
pub mod derived;
pub mod figures;
pub mod gate;
pub mod levers;
pub mod likeness;
pub mod matching;
pub mod repeats;
pub mod report;
mod sides;
pub mod slopes;
pub mod text;
pub mod verdict;
mod withheld;
