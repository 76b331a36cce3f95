//! `headroom fit`'s report: a line through every series of every sweep, or why not.

use serde::{Deserialize, Serialize};

use crate::fit::fit;
use crate::points::{MeasuredSweep, Unit};

/// The version of `headroom fit --json`'s shape (schemas/fit.schema.json).
pub const FIT_FORMAT: u32 = 1;

/// Every series of every sweep: its line, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FitReport {
    /// The version of this shape (1); a reader refuses another.
    pub format: u32,
    /// The series fitted, sweep by sweep.
    pub fits: Vec<SeriesFit>,
    /// The series no line could be fitted through.
    pub skipped: Vec<NotFitted>,
}

/// One series' line, in the series' own unit (bytes, seconds, fractions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesFit {
    /// The sweep (the phase, or the points' file).
    pub sweep: String,
    /// What the x axis counts (`rooms`).
    pub x: String,
    /// The series (`rss`, a column).
    pub series: String,
    /// The unit of the intercept, the slope and the residual error.
    pub unit: Unit,
    /// The points fitted.
    pub n: usize,
    /// The line at x = 0.
    pub intercept: f64,
    /// What one more unit of x adds.
    pub slope: f64,
    /// The share of the variance the line explains; `null` when the series does not vary
    /// (R² is 0/0 there).
    pub r2: Option<f64>,
    /// The residual standard error, `sqrt(SSE / (n − 2))`.
    pub residual_se: f64,
    /// The slope's 95 % confidence interval.
    pub slope_ci95: [f64; 2],
    /// What makes the line less than trustworthy (few points, a poor R², a wide interval).
    pub warnings: Vec<String>,
}

/// A series with no line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotFitted {
    /// The sweep.
    pub sweep: String,
    /// The series.
    pub series: String,
    /// Why no line goes through it.
    pub reason: String,
}

/// Fits every series of every sweep.
pub fn fit_every_series(sweeps: &[MeasuredSweep]) -> FitReport {
    let mut report = FitReport {
        format: FIT_FORMAT,
        fits: Vec::new(),
        skipped: Vec::new(),
    };
    for sweep in sweeps {
        for series in &sweep.series {
            match fit(&series.points) {
                Ok(line) => report.fits.push(SeriesFit {
                    sweep: sweep.name.clone(),
                    x: sweep.x.clone(),
                    series: series.name.clone(),
                    unit: series.unit,
                    n: line.n,
                    intercept: line.intercept,
                    slope: line.slope,
                    r2: line.r2,
                    residual_se: line.residual_se,
                    slope_ci95: line.slope_ci95,
                    warnings: line.warnings(None),
                }),
                Err(why) => report.skipped.push(NotFitted {
                    sweep: sweep.name.clone(),
                    series: series.name.clone(),
                    reason: why.to_string(),
                }),
            }
        }
    }
    report
}
