//! What a bigger box holds: the ceilings measured at several core counts carried to the core
//! count of a priced instance. With [`usl::MIN_SIZES`] sizes or more, the Universal
//! Scalability Law fitted through them predicts it with an interval and names the peak size;
//! with fewer, the honest range: at least what the nearest smaller size held (more cores do
//! not hold less, below the peak), at most linear scaling from it (no server scales better
//! than its cores), each bound named. Either way a size past twice the largest measured is
//! refused unless asked for, and then marked.

pub mod usl;

#[cfg(test)]
mod tests;

pub use usl::{MIN_SIZES, UslFit};

/// Why sizes cannot be carried to another core count.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScalingError {
    /// No size measured.
    #[error("no core count was measured")]
    NoSizes,
    /// Fewer distinct sizes than the law's fit needs: the number given.
    #[error("the law needs at least {MIN_SIZES} core counts measured, found {0}")]
    TooFewSizes(usize),
    /// A core count or a ceiling that is not a positive, finite number.
    #[error("a core count or a ceiling is not a positive number")]
    NotPositive,
    /// The fit did not settle on finite parameters.
    #[error("the law could not be fitted through these sizes")]
    NoFit,
    /// A size past twice the largest measured, not asked for.
    #[error(
        "{cores} cores is more than twice the largest core count measured ({largest}): an extrapolation, refused unless asked for (--extrapolate)"
    )]
    PastTwice {
        /// The size asked for.
        cores: f64,
        /// The largest size measured.
        largest: f64,
    },
}

/// Checks that every point is a positive, finite core count and ceiling.
pub(crate) fn check_points(points: &[(f64, f64)]) -> Result<(), ScalingError> {
    if points.is_empty() {
        return Err(ScalingError::NoSizes);
    }
    if points
        .iter()
        .any(|&(n, x)| !(n.is_finite() && x.is_finite() && n > 0.0 && x > 0.0))
    {
        return Err(ScalingError::NotPositive);
    }
    Ok(())
}

/// The measured sizes, and the law through them when there are enough.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreScaling {
    /// Each core count measured and its ceiling (the median where it was measured more
    /// than once), smallest first.
    pub sizes: Vec<(f64, f64)>,
    /// The law, fitted through every point when [`MIN_SIZES`] sizes or more were measured.
    pub law: Option<UslFit>,
}

/// How an [`Estimate`] was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The core count was measured: its ceiling as measured.
    Measured,
    /// The law fitted through the sizes, with its 95 % prediction interval.
    Law,
    /// Fewer sizes than the law needs: the measured lower bound and the linear upper bound.
    Range,
}

/// A ceiling carried to a core count.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The core count.
    pub cores: f64,
    /// The ceiling: as measured, as the law predicts, or the range's lower bound.
    pub ceiling: f64,
    /// Its low and high ends: the law's interval, or the range's bounds.
    pub low: f64,
    /// The high end.
    pub high: f64,
    /// How it was reached.
    pub basis: Basis,
    /// Past twice the largest size measured: asked for, and to be marked wherever shown.
    pub extrapolated: bool,
}

impl CoreScaling {
    /// The sizes of `points` (`(cores, ceiling)`), the law fitted when there are enough.
    pub fn of(points: &[(f64, f64)]) -> Result<CoreScaling, ScalingError> {
        check_points(points)?;
        let mut sizes: Vec<(f64, f64)> = Vec::new();
        let mut cores: Vec<f64> = points.iter().map(|p| p.0).collect();
        cores.sort_by(f64::total_cmp);
        cores.dedup();
        for n in cores {
            let mut at: Vec<f64> = points.iter().filter(|p| p.0 == n).map(|p| p.1).collect();
            at.sort_by(f64::total_cmp);
            sizes.push((n, at[(at.len() - 1) / 2]));
        }
        let law = if sizes.len() >= MIN_SIZES {
            Some(usl::fit(points)?)
        } else {
            None
        };
        Ok(CoreScaling { sizes, law })
    }

    /// The largest core count measured.
    pub fn largest(&self) -> f64 {
        self.sizes.last().map_or(0.0, |s| s.0)
    }

    /// The ceiling at `cores`: measured, predicted by the law, or the range. Past twice the
    /// largest size measured it is refused unless `extrapolate`.
    pub fn estimate(&self, cores: f64, extrapolate: bool) -> Result<Estimate, ScalingError> {
        if !(cores.is_finite() && cores > 0.0) {
            return Err(ScalingError::NotPositive);
        }
        if let Some(&(_, measured)) = self.sizes.iter().find(|s| s.0 == cores) {
            return Ok(Estimate {
                cores,
                ceiling: measured,
                low: measured,
                high: measured,
                basis: Basis::Measured,
                extrapolated: false,
            });
        }
        let largest = self.largest();
        let extrapolated = cores > 2.0 * largest;
        if extrapolated && !extrapolate {
            return Err(ScalingError::PastTwice { cores, largest });
        }
        if let Some(law) = &self.law {
            let [low, high] = law.prediction_interval(cores);
            return Ok(Estimate {
                cores,
                ceiling: law.predict(cores),
                low: low.max(0.0),
                high,
                basis: Basis::Law,
                extrapolated,
            });
        }
        let (low, high) = self.range(cores);
        Ok(Estimate {
            cores,
            ceiling: low,
            low,
            high,
            basis: Basis::Range,
            extrapolated,
        })
    }

    /// The bounds at an unmeasured `cores` from each size measured, M cores holding X: a
    /// larger box holds at least X and at most X·cores/M; a smaller one at least X·cores/M
    /// and at most X. The tightest of each, in order.
    fn range(&self, cores: f64) -> (f64, f64) {
        let mut low = 0.0_f64;
        let mut high = f64::INFINITY;
        for &(m, x) in &self.sizes {
            let linear = x * cores / m;
            if m < cores {
                low = low.max(x);
                high = high.min(linear);
            } else {
                low = low.max(linear);
                high = high.min(x);
            }
        }
        (low.min(high), low.max(high))
    }
}
