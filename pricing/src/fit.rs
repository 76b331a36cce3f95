//! Ordinary least squares, `y = intercept + slope × x`, with the figures a reader needs to trust
//! a slope: n, R², the residual standard error, a 95 % confidence interval on the slope and a
//! 95 % prediction interval at any x (Student t, from statrs).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::numbers::count;

/// A straight-line fit of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// The points fitted.
    pub n: usize,
    /// The line at x = 0.
    pub intercept: f64,
    /// What one more unit of x adds.
    pub slope: f64,
    /// The share of the variance the line explains; `None` when the series does not vary at
    /// all (R² is 0/0 there: a flat line through flat points explains nothing).
    pub r2: Option<f64>,
    /// The residual standard error, `sqrt(SSE / (n − 2))`, in the series' unit.
    pub residual_se: f64,
    /// The standard error of the slope.
    pub slope_se: f64,
    /// The slope's 95 % confidence interval.
    pub slope_ci95: [f64; 2],
    /// The largest x measured: a prediction beyond twice it is an extrapolation.
    pub max_x: f64,
    mean_x: f64,
    sxx: f64,
    /// Student t at 97.5 % for n − 2 degrees of freedom.
    t975: f64,
}

/// Why no line can be fitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// Fewer than two points: the number given.
    #[error("a fit needs at least 3 points (two for the line, one for its error), found {0}")]
    TooFewPoints(usize),
    /// Every point at the same x: no slope.
    #[error("every point has the same x, so no slope can be fitted")]
    NoSpread,
    /// A value that is not a finite number.
    #[error("a value is not a finite number")]
    NotFinite,
}

/// Fits a line through `(x, y)` points.
pub fn fit(points: &[(f64, f64)]) -> Result<Fit, FitError> {
    let n = points.len();
    if n < 3 {
        return Err(FitError::TooFewPoints(n));
    }
    if points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return Err(FitError::NotFinite);
    }
    let nf = n as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    let sxy: f64 = points
        .iter()
        .map(|(x, y)| (x - mean_x) * (y - mean_y))
        .sum();
    let syy: f64 = points.iter().map(|(_, y)| (y - mean_y).powi(2)).sum();
    if sxx <= f64::EPSILON * nf * mean_x.abs().max(1.0) {
        return Err(FitError::NoSpread);
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let sse: f64 = points
        .iter()
        .map(|(x, y)| (y - intercept - slope * x).powi(2))
        .sum();
    // A series that does not vary has no variance to explain: R² is 0/0, not 1.
    let r2 = (syy > 0.0).then(|| 1.0 - sse / syy);
    let df = nf - 2.0;
    let residual_se = (sse / df).sqrt();
    let slope_se = residual_se / sxx.sqrt();
    let t975 = StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(0.975));
    let max_x = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    Ok(Fit {
        n,
        intercept,
        slope,
        r2,
        residual_se,
        slope_se,
        slope_ci95: [slope - t975 * slope_se, slope + t975 * slope_se],
        max_x,
        mean_x,
        sxx,
        t975,
    })
}

impl Fit {
    /// The line's value at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// The 95 % prediction interval of one new observation at `x`.
    pub fn prediction_interval(&self, x: f64) -> [f64; 2] {
        let n = self.n as f64;
        let half = self.t975
            * self.residual_se
            * (1.0 + 1.0 / n + (x - self.mean_x).powi(2) / self.sxx).sqrt();
        let y = self.predict(x);
        [y - half, y + half]
    }

    /// How wide the slope's 95 % interval is, as a share of the slope (0.5: ±50 %); infinite
    /// for a zero slope.
    pub fn relative_interval(&self) -> f64 {
        let half = (self.slope_ci95[1] - self.slope_ci95[0]) / 2.0;
        if self.slope == 0.0 {
            if half == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            half / self.slope.abs()
        }
    }

    /// Why this line is too weak to plan with unflagged: no variation, R² under 0.9, fewer than
    /// four points, or a slope interval wider than ±50 %. Empty for a good fit.
    pub fn weaknesses(&self) -> Vec<String> {
        let mut weaknesses = Vec::new();
        match self.r2 {
            None => weaknesses.push(
                "no variation: every point has the same value, so R² is undefined and the line says nothing about the slope".to_owned(),
            ),
            Some(r2) if r2 < 0.9 => weaknesses.push(format!(
                "R² is {r2:.3}, under 0.9: the points do not lie on a line"
            )),
            Some(_) => {}
        }
        if self.n < 4 {
            weaknesses.push(format!(
                "only {} points: the interval is wide and one outlier moves the slope",
                self.n
            ));
        }
        let relative = self.relative_interval();
        if self.r2.is_some() && relative > 0.5 {
            weaknesses.push(format!(
                "the slope's 95 % interval is ±{} % of the slope (wider than ±50 %)",
                count(relative * 100.0)
            ));
        }
        weaknesses
    }

    /// Whether any weakness applies (`weaknesses` says which).
    pub fn is_weak(&self) -> bool {
        !self.weaknesses().is_empty()
    }

    /// What a reader should know before trusting this fit (at `at`, when a prediction is made).
    pub fn warnings(&self, at: Option<f64>) -> Vec<String> {
        let mut warnings = self.weaknesses();
        if let Some(x) = at
            && x > 2.0 * self.max_x
        {
            warnings.push(format!(
                "{} is more than twice the largest measured x ({}): an extrapolation",
                count(x),
                count(self.max_x)
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// Anscombe's first data set (Anscombe 1973, "Graphs in Statistical Analysis"): the
    /// published fit is y = 3.00 + 0.500 x, R² = 0.667, residual SE 1.237 on 9 degrees of
    /// freedom, slope SE 0.118; t(0.975, 9) = 2.262.
    #[test]
    fn anscombe_one_matches_the_published_fit() {
        let x = [10.0, 8.0, 13.0, 9.0, 11.0, 14.0, 6.0, 4.0, 12.0, 7.0, 5.0];
        let y = [
            8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68,
        ];
        let points: Vec<(f64, f64)> = x.into_iter().zip(y).collect();
        let f = fit(&points).expect("fit");
        assert_eq!(f.n, 11);
        assert!(close(f.intercept, 3.0001, 1e-4), "{}", f.intercept);
        assert!(close(f.slope, 0.5001, 1e-4), "{}", f.slope);
        let r2 = f.r2.expect("the points vary");
        assert!(close(r2, 0.6665, 1e-4), "{r2}");
        assert!(close(f.residual_se, 1.2366, 1e-4), "{}", f.residual_se);
        assert!(close(f.slope_se, 0.1179, 1e-4), "{}", f.slope_se);
        assert!(close(f.t975, 2.2622, 1e-4), "{}", f.t975);
        assert!(
            close(f.slope_ci95[0], 0.2333, 1e-3) && close(f.slope_ci95[1], 0.7668, 1e-3),
            "{:?}",
            f.slope_ci95
        );
        // Prediction interval at the mean of x (9): 7.5 ± 2.262 × 1.2366 × sqrt(1 + 1/11).
        let [lo, hi] = f.prediction_interval(9.0);
        assert!(close(
            hi - lo,
            2.0 * 2.2622 * 1.2366 * (1.0f64 + 1.0 / 11.0).sqrt(),
            1e-3
        ));
        assert!(f.warnings(None).iter().any(|w| w.contains("R²")));
    }

    /// The relay capacity page's memory sweep (shared/reference): its least squares over six
    /// points gives 222.6 MiB + 10.04 MiB per room, R² 0.9996, and predicts 1,507.7 MiB at 128.
    #[test]
    fn the_relay_sweep_matches_its_capacity_page() {
        let rooms = [1.0, 4.0, 16.0, 32.0, 64.0, 128.0];
        let rss_mib = [218.8, 260.9, 399.7, 546.5, 863.9, 1506.2];
        let points: Vec<(f64, f64)> = rooms.into_iter().zip(rss_mib).collect();
        let f = fit(&points).expect("fit");
        assert!(close(f.intercept, 222.6, 0.05), "{}", f.intercept);
        assert!(close(f.slope, 10.04, 0.005), "{}", f.slope);
        let r2 = f.r2.expect("the points vary");
        assert!(close(r2, 0.9996, 0.00005), "{r2}");
        assert!(f.weaknesses().is_empty(), "{:?}", f.weaknesses());
        // The page multiplies its rounded figures (222.6 + 128 × 10.04 = 1,507.7); unrounded,
        // the line gives 1,508.0, against 1,506.2 measured.
        assert!(close(f.predict(128.0), 1507.7, 0.5), "{}", f.predict(128.0));
        assert!(close(222.6 + 128.0 * 10.04, 1507.7, 0.05));
        assert!(
            f.warnings(Some(300.0))
                .iter()
                .any(|w| w.contains("extrapolation"))
        );
    }

    #[test]
    fn degenerate_inputs_are_refused() {
        assert_eq!(
            fit(&[(1.0, 1.0), (2.0, 2.0)]),
            Err(FitError::TooFewPoints(2))
        );
        assert_eq!(
            fit(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]),
            Err(FitError::NoSpread)
        );
        assert_eq!(
            fit(&[(1.0, f64::NAN), (2.0, 2.0), (3.0, 3.0)]),
            Err(FitError::NotFinite)
        );
    }

    /// A series with no variation (every point 0) has no R²: 0/0 is not a perfect fit, and the
    /// fit is weak, never a good line.
    #[test]
    fn a_flat_series_has_no_r2_and_is_weak() {
        let flat = fit(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]).expect("flat");
        assert_eq!(flat.slope, 0.0);
        assert_eq!(flat.r2, None);
        assert!(flat.is_weak());
        assert!(
            flat.warnings(None)[0].starts_with("no variation"),
            "{:?}",
            flat.warnings(None)
        );
    }

    /// Three points, or an interval wider than ±50 % of the slope, make a weak fit.
    #[test]
    fn few_points_or_a_wide_interval_are_weak() {
        let three = fit(&[(25.0, 100.0), (50.0, 101.0), (100.0, 102.0)]).expect("three");
        assert!(
            three
                .weaknesses()
                .iter()
                .any(|w| w.contains("only 3 points"))
        );
        // Noisy around a small slope: ±50 % or more.
        let noisy: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
            .into_iter()
            .zip([10.0, 14.0, 9.0, 15.0, 11.0, 16.0])
            .collect();
        let noisy = fit(&noisy).expect("noisy");
        assert!(
            noisy.relative_interval() > 0.5,
            "{}",
            noisy.relative_interval()
        );
        assert!(
            noisy
                .weaknesses()
                .iter()
                .any(|w| w.contains("wider than ±50 %")),
            "{:?}",
            noisy.weaknesses()
        );
    }
}
