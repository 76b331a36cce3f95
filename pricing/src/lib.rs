//! The planner: fits slopes over measured points, finds the SLO ceiling of a sweep, and joins
//! them with the price table to name the binding ceiling and the cost of a unit.
//!
//! It reads results through their typed contract ([`headroom_results`]) and prices with the
//! table of [`headroom_prices`], re-exported here so callers name one crate.

#![warn(missing_docs)]

pub mod fit;
pub mod fit_report;
pub mod given;
pub mod plan;
pub mod planner;
pub mod points;
pub mod scaling;
pub mod tool_points;

pub use headroom_prices::*;
pub use headroom_spec::numbers;
