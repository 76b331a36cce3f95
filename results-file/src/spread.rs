//! How far a point's repeats spread, and when that makes it noisy: one rule for the capacity
//! page and `headroom compare`.

/// Repeats that spread more than this (coefficient of variation) make a figure noisy: a
/// median or a verdict resting on few, scattered values, which more repeats would firm up.
pub const NOISY_CV: f64 = 0.10;

/// The coefficient of variation of `values`: their sample standard deviation over the
/// magnitude of their mean. `None` for fewer than two values or a mean of 0.
pub fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 || !mean.is_finite() {
        return None;
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(variance.sqrt() / mean.abs())
}

/// A figure over a point's repeats: its finite values sorted, lowest, median (of an even
/// count, the mean of the middle two), highest and coefficient of variation. The one summary
/// of repeats the page (`Stat`) and `compare` (`Spread`) both show.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatSummary {
    /// The finite values, lowest first.
    pub sorted: Vec<f64>,
    /// The lowest.
    pub min: f64,
    /// The median.
    pub median: f64,
    /// The highest.
    pub max: f64,
    /// [`coefficient_of_variation`] of the values.
    pub cv: Option<f64>,
}

impl RepeatSummary {
    /// The summary of `values`' finite ones; `None` without any.
    pub fn of(values: &[f64]) -> Option<RepeatSummary> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let middle = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[middle - 1] + sorted[middle]) / 2.0
        } else {
            sorted[middle]
        };
        Some(RepeatSummary {
            min: sorted[0],
            median,
            max: sorted[sorted.len() - 1],
            cv: coefficient_of_variation(&sorted),
            sorted,
        })
    }

    /// Whether the repeats spread more than [`NOISY_CV`].
    pub fn noisy(&self) -> bool {
        self.cv.is_some_and(|cv| cv > NOISY_CV)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_leaves_out_what_is_not_a_number() {
        let summary = RepeatSummary::of(&[3.0, f64::NAN, 1.0, f64::INFINITY, 2.0, 4.0])
            .expect("four finite values");
        assert_eq!(summary.sorted, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!((summary.min, summary.median, summary.max), (1.0, 2.5, 4.0));
        assert_eq!(RepeatSummary::of(&[f64::NAN]), None);
    }

    #[test]
    fn the_coefficient_of_variation_is_the_sample_deviation_over_the_mean() {
        // Mean 10, sample variance (1 + 0 + 1) / 2 = 1.
        let cv = coefficient_of_variation(&[9.0, 10.0, 11.0]).expect("three values");
        assert!((cv - 0.1).abs() < 1e-12, "{cv}");
        assert_eq!(coefficient_of_variation(&[5.0]), None);
        assert_eq!(coefficient_of_variation(&[-1.0, 1.0]), None);
        // 0.1 itself is not over the line; 9, 10, 12 is.
        assert!(cv <= NOISY_CV);
        let wider = coefficient_of_variation(&[9.0, 10.0, 12.0]).expect("three values");
        assert!(wider > NOISY_CV, "{wider}");
    }
}
