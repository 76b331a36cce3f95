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

#[cfg(test)]
mod tests {
    use super::*;

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
