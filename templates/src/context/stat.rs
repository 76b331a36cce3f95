//! A figure over a point's repeats: lowest, median, highest, whether they spread, and each.

use headroom_results::spread::RepeatSummary;
use schemars::JsonSchema;
use serde::Serialize;

/// Lowest, median and highest over a point's repeats, and each of them.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Stat {
    /// The lowest of the repeats.
    pub min: f64,
    /// The median of the repeats (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The highest of the repeats.
    pub max: f64,
    /// How many repeats had the figure.
    pub n: usize,
    /// The repeats spread more than 10 % (standard deviation over mean,
    /// `headroom_results::spread::NOISY_CV`): more repeats would firm the median up.
    pub noisy: bool,
    /// Each repeat's value, lowest first: what plots draw as points.
    pub values: Vec<f64>,
}

impl Stat {
    /// Min, median and max of the values, or `None` without any.
    pub fn of(values: &[f64]) -> Option<Stat> {
        let summary = RepeatSummary::of(values)?;
        Some(Stat {
            min: summary.min,
            median: summary.median,
            max: summary.max,
            n: summary.sorted.len(),
            noisy: summary.noisy(),
            values: summary.sorted,
        })
    }
}
