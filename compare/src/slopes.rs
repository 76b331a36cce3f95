//! Fitted slopes compared: memory and CPU per unit, each a least-squares line over a sweep
//! (every run of every point), judged by their standard errors (the fit's own) rather than by repeats.
//!
//! The test is Welch's t on the difference of two independent least-squares slopes: the
//! difference over `sqrt(se_base² + se_new²)`, with Welch–Satterthwaite degrees of freedom
//! from each fit's `n − 2`. Its false-alarm rate is [`ALPHA`] when each line's residuals are
//! normal and alike along it, what the slope's interval assumes already.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::verdict::{ALPHA, Basis, CannotTell, Direction, Judgement, Spread, Verdict};

/// A slope as a fit gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slope {
    /// What one more unit adds.
    pub slope: f64,
    /// Its standard error.
    pub se: f64,
    /// The slope's 95 % confidence interval, shown beside it.
    pub ci95: [f64; 2],
    /// The points fitted.
    pub n: usize,
}

impl Slope {
    fn spread(&self) -> Spread {
        Spread {
            repeats: self.n,
            min: self.ci95[0],
            median: self.slope,
            max: self.ci95[1],
            cv: None,
        }
    }
}

/// Judges the new slope against the base's.
pub fn judge_slopes(base: Option<Slope>, new: Option<Slope>, direction: Direction) -> Judgement {
    let change = match (base, new) {
        (Some(b), Some(n)) if b.slope == 0.0 => (n.slope == 0.0).then_some(0.0),
        (Some(b), Some(n)) => Some(n.slope / b.slope - 1.0),
        _ => None,
    };
    let mut judgement = Judgement {
        base: base.map(|s| s.spread()),
        new: new.map(|s| s.spread()),
        change,
        p_value: None,
        verdict: Verdict::WithinNoise,
        basis: Basis::Fit,
    };
    let (Some(b), Some(n)) = (base, new) else {
        judgement.verdict = Verdict::CannotTell(CannotTell::Missing {
            base: base.map_or(0, |s| s.n),
            new: new.map_or(0, |s| s.n),
        });
        return judgement;
    };
    let (se_b, se_n) = (b.se, n.se);
    if b.n < 3 || n.n < 3 || ![b.slope, n.slope, se_b, se_n].iter().all(|v| v.is_finite()) {
        judgement.verdict = Verdict::CannotTell(CannotTell::NotANumber);
        return judgement;
    }
    let (var_b, var_n) = (se_b * se_b, se_n * se_n);
    let se = (var_b + var_n).sqrt();
    let difference = n.slope - b.slope;
    let p = if se == 0.0 {
        // Two exact lines: any difference is real, none is none.
        if difference == 0.0 { 1.0 } else { 0.0 }
    } else {
        let (df_b, df_n) = ((b.n - 2) as f64, (n.n - 2) as f64);
        let df = (var_b + var_n).powi(2) / (var_b * var_b / df_b + var_n * var_n / df_n);
        match StudentsT::new(0.0, 1.0, df.max(1.0)) {
            Ok(t) => 2.0 * (1.0 - t.cdf((difference / se).abs())),
            Err(_) => 1.0,
        }
    };
    judgement.p_value = Some(p);
    if p < ALPHA {
        judgement.verdict = match (direction, difference < 0.0) {
            (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => {
                Verdict::Better
            }
            _ => Verdict::Worse,
        };
    }
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A least-squares slope through `y = slope × x + noise` at x = 1…n, its interval from
    /// the pricing crate's fit.
    fn fitted(slope: f64, noise: &[f64]) -> Slope {
        let points: Vec<(f64, f64)> = noise
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let x = (i + 1) as f64;
                (x, slope * x + e)
            })
            .collect();
        let fit = headroom_pricing::fit::fit(&points).expect("a fit");
        Slope {
            slope: fit.slope,
            se: fit.slope_se,
            ci95: fit.slope_ci95,
            n: fit.n,
        }
    }

    const NOISE: [f64; 8] = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0, -0.1, 0.3];
    const OTHER_NOISE: [f64; 8] = [-0.1, 0.2, -0.3, 0.1, 0.4, -0.2, 0.0, -0.1];

    #[test]
    fn a_steeper_line_is_worse_the_same_line_within_noise() {
        let base = fitted(2.0, &NOISE);
        // 20 % more per unit, the same noise: far outside either interval.
        let steeper = judge_slopes(
            Some(base),
            Some(fitted(2.4, &OTHER_NOISE)),
            Direction::LowerIsBetter,
        );
        assert_eq!(steeper.verdict, Verdict::Worse, "{steeper:?}");
        let change = steeper.change.expect("a base slope");
        assert!((change - 0.2).abs() < 0.05, "{change}");
        assert_eq!(steeper.basis, Basis::Fit);
        // The same slope, other noise: within noise.
        let same = judge_slopes(
            Some(base),
            Some(fitted(2.0, &OTHER_NOISE)),
            Direction::LowerIsBetter,
        );
        assert_eq!(same.verdict, Verdict::WithinNoise, "{same:?}");
        // Against itself, p = 1.
        let itself = judge_slopes(Some(base), Some(base), Direction::LowerIsBetter);
        assert_eq!(itself.p_value, Some(1.0));
        // A side without a fit cannot tell.
        assert!(matches!(
            judge_slopes(Some(base), None, Direction::LowerIsBetter).verdict,
            Verdict::CannotTell(CannotTell::Missing { base: 8, new: 0 })
        ));
    }

    /// The false-alarm rate: two fits of one line with independent normal noise are called
    /// apart at about ALPHA, not more (4,000 pairs, Box–Muller noise from a fixed LCG).
    #[test]
    fn two_fits_of_one_line_are_called_apart_about_one_time_in_twenty() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut normal = move || {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let trials = 4000;
        let mut called = 0;
        for _ in 0..trials {
            let a: Vec<f64> = (0..9).map(|_| normal()).collect();
            let b: Vec<f64> = (0..9).map(|_| normal()).collect();
            let judgement = judge_slopes(
                Some(fitted(1.0, &a)),
                Some(fitted(1.0, &b)),
                Direction::LowerIsBetter,
            );
            called += usize::from(matches!(
                judgement.verdict,
                Verdict::Better | Verdict::Worse
            ));
        }
        let rate = called as f64 / trials as f64;
        assert!((0.03..=0.065).contains(&rate), "false alarms: {rate}");
    }
}
