//! The Universal Scalability Law fitted by nonlinear least squares:
//! `X(N) = λN / (1 + σ(N − 1) + κN(N − 1))`, N the cores, X the ceiling at N.
//!
//! The fit is Levenberg–Marquardt with Marquardt's scaling (the damping is a share of the
//! diagonal of JᵀJ, so λ in hundreds and κ in thousandths step alike), started from Gunther's
//! linearisation (`N/C(N) − 1 = (σ + κ)(N − 1) + κ(N − 1)²`, C the efficiency over the
//! smallest size). Its intervals are those of R's `usl` (`confint`): each parameter's
//! standard error from `s²(JᵀJ)⁻¹` at the fit, times Student t at 97.5 % for n − 3 degrees of
//! freedom. Three parameters need only a 3×3 solve, written here rather than pulling in a
//! linear algebra crate (statrs gives the t quantile).

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::ScalingError;

/// Below this many sizes the three parameters are not fitted (usl4j, the `usl` crate and R's
/// `usl` all ask for six): the range is given instead.
pub const MIN_SIZES: usize = 6;

/// The fitted law, with what a reader needs to trust it.
#[derive(Debug, Clone, PartialEq)]
pub struct UslFit {
    /// The sizes fitted.
    pub n: usize,
    /// λ: the ceiling of one core without contention or coherency costs.
    pub lambda: f64,
    /// σ: contention, the share of the work that is serial.
    pub sigma: f64,
    /// κ: coherency, the cost each pair of cores pays to agree.
    pub kappa: f64,
    /// 95 % intervals of λ, σ and κ.
    pub lambda_ci95: [f64; 2],
    /// σ's 95 % interval.
    pub sigma_ci95: [f64; 2],
    /// κ's 95 % interval.
    pub kappa_ci95: [f64; 2],
    /// The residual standard error, `sqrt(SSE / (n − 3))`: in the ceiling's unit, or a share
    /// of it where the misses were weighed relative ([`Scatter::Relative`]).
    pub residual_se: f64,
    /// How the misses were weighed.
    pub scatter: Scatter,
    /// The largest size measured: a prediction past twice it is an extrapolation.
    pub largest: f64,
    /// The parameters' covariance, `s²(JᵀJ)⁻¹`, in the order λ, σ, κ.
    covariance: [[f64; 3]; 3],
    /// Student t at 97.5 % for n − 3 degrees of freedom.
    t975: f64,
}

/// How the points' misses are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scatter {
    /// Each miss in the ceiling's unit (the book's fit, and R's `usl`).
    Absolute,
    /// Each miss as a share of the ceiling measured: a searched ceiling is bracketed to a
    /// share of itself, so a 16-core ceiling misses by more units than a 1-core one, and an
    /// unweighted fit would read the largest sizes' scatter into the parameters.
    Relative,
}

/// Fits the law through `(cores, ceiling)` points, at least [`MIN_SIZES`] distinct sizes,
/// each miss as a share of its ceiling ([`Scatter::Relative`]).
pub fn fit(points: &[(f64, f64)]) -> Result<UslFit, ScalingError> {
    fit_with(points, Scatter::Relative)
}

/// Fits the law through `(cores, ceiling)` points, the misses weighed as `scatter` says.
pub fn fit_with(points: &[(f64, f64)], scatter: Scatter) -> Result<UslFit, ScalingError> {
    super::check_points(points)?;
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.len() < MIN_SIZES {
        return Err(ScalingError::TooFewSizes(sizes.len()));
    }
    let mut params = start(points);
    let mut sse = sum_of_squares(points, params, scatter);
    let mut damping = 1e-3;
    for _ in 0..500 {
        let (jtj, jtr) = normal_equations(points, params, scatter);
        let mut improved = false;
        // Raise the damping until a step lowers the error (or the step vanishes).
        while damping < 1e12 {
            let mut damped = jtj;
            for (i, row) in damped.iter_mut().enumerate() {
                row[i] += damping * jtj[i][i].max(f64::MIN_POSITIVE);
            }
            let Some(step) = solve(damped, jtr) else {
                damping *= 10.0;
                continue;
            };
            let next = [
                params[0] + step[0],
                params[1] + step[1],
                params[2] + step[2],
            ];
            let next_sse = sum_of_squares(points, next, scatter);
            if next_sse.is_finite() && next_sse <= sse {
                let change = (sse - next_sse) / sse.max(f64::MIN_POSITIVE);
                params = next;
                sse = next_sse;
                damping = (damping / 10.0).max(1e-12);
                improved = change > 1e-15;
                break;
            }
            damping *= 10.0;
        }
        if !improved {
            break;
        }
    }
    let [lambda, sigma, kappa] = params;
    if !(lambda > 0.0 && lambda.is_finite() && sigma.is_finite() && kappa.is_finite()) {
        return Err(ScalingError::NoFit);
    }
    let n = points.len();
    let df = (n - 3) as f64;
    let residual_se = (sse / df).sqrt();
    let (jtj, _) = normal_equations(points, params, scatter);
    let inverse = invert(jtj).ok_or(ScalingError::NoFit)?;
    let variance = residual_se * residual_se;
    let covariance = inverse.map(|row| row.map(|v| v * variance));
    let t975 = StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(0.975));
    let interval = |i: usize| {
        let half = t975 * covariance[i][i].max(0.0).sqrt();
        [params[i] - half, params[i] + half]
    };
    Ok(UslFit {
        n,
        lambda,
        sigma,
        kappa,
        lambda_ci95: interval(0),
        sigma_ci95: interval(1),
        kappa_ci95: interval(2),
        residual_se,
        scatter,
        largest: sizes[sizes.len() - 1],
        covariance,
        t975,
    })
}

impl UslFit {
    /// The law's ceiling at `cores`.
    pub fn predict(&self, cores: f64) -> f64 {
        law([self.lambda, self.sigma, self.kappa], cores)
    }

    /// The 95 % prediction interval of one new measurement at `cores`: the fit's uncertainty
    /// there (the delta method, `gᵀ Σ g`) and the scatter of one measurement around it.
    pub fn prediction_interval(&self, cores: f64) -> [f64; 2] {
        let at = self.predict(cores);
        let gradient = gradient([self.lambda, self.sigma, self.kappa], cores);
        let scatter = self.residual_se * unit(at, self.scatter);
        let mut variance = scatter * scatter;
        for (i, gi) in gradient.iter().enumerate() {
            for (j, gj) in gradient.iter().enumerate() {
                variance += gi * self.covariance[i][j] * gj;
            }
        }
        let half = self.t975 * variance.max(0.0).sqrt();
        [at - half, at + half]
    }

    /// The size past which more cores hold less: `sqrt((1 − σ) / κ)`, rounded down (Gunther).
    /// `None` when κ's interval reaches zero (the data shows no peak: any size would do) or σ
    /// is 1 or more.
    pub fn peak(&self) -> Option<f64> {
        (self.kappa_ci95[0] > 0.0 && self.sigma < 1.0)
            .then(|| ((1.0 - self.sigma) / self.kappa).sqrt().floor())
            .filter(|n| n.is_finite() && *n >= 1.0)
    }

    /// What a reader should know before trusting the law: a parameter fitted below zero (a
    /// superlinear stretch the law cannot hold), κ's interval reaching zero (the data shows no
    /// peak, so `Nmax` is a guess).
    pub fn caveats(&self) -> Vec<String> {
        let mut said = Vec::new();
        if self.sigma < 0.0 {
            said.push(format!(
                "σ was fitted below zero ({:.4}): the sizes measured scale better than linearly somewhere, which the law cannot hold",
                self.sigma
            ));
        }
        if self.kappa_ci95[0] <= 0.0 {
            said.push(
                "κ's 95 % interval reaches zero: the sizes measured show no peak, so the peak size is a guess"
                    .to_owned(),
            );
        }
        said
    }
}

/// The law at `n` for parameters λ, σ, κ.
pub(super) fn law([lambda, sigma, kappa]: [f64; 3], n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// The law's derivatives in λ, σ and κ at `n`.
fn gradient([lambda, sigma, kappa]: [f64; 3], n: f64) -> [f64; 3] {
    let denominator = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
    let squared = denominator * denominator;
    [
        n / denominator,
        -lambda * n * (n - 1.0) / squared,
        -lambda * n * n * (n - 1.0) / squared,
    ]
}

/// The unit a miss at ceiling `x` is counted in.
fn unit(x: f64, scatter: Scatter) -> f64 {
    match scatter {
        Scatter::Absolute => 1.0,
        Scatter::Relative => x,
    }
}

fn sum_of_squares(points: &[(f64, f64)], params: [f64; 3], scatter: Scatter) -> f64 {
    points
        .iter()
        .map(|&(n, x)| ((x - law(params, n)) / unit(x, scatter)).powi(2))
        .sum()
}

/// JᵀJ and Jᵀr at `params`, r the residuals `x − X(n)`, each in its unit.
fn normal_equations(
    points: &[(f64, f64)],
    params: [f64; 3],
    scatter: Scatter,
) -> ([[f64; 3]; 3], [f64; 3]) {
    let mut jtj = [[0.0; 3]; 3];
    let mut jtr = [0.0; 3];
    for &(n, x) in points {
        let weight = unit(x, scatter);
        let g = gradient(params, n).map(|d| d / weight);
        let residual = (x - law(params, n)) / weight;
        for i in 0..3 {
            jtr[i] += g[i] * residual;
            for j in 0..3 {
                jtj[i][j] += g[i] * g[j];
            }
        }
    }
    (jtj, jtr)
}

/// Where the search starts: λ from the smallest size's ceiling per core, σ and κ from
/// Gunther's linearisation through the origin, both at least a little above zero.
fn start(points: &[(f64, f64)]) -> [f64; 3] {
    let smallest = points
        .iter()
        .copied()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap_or((1.0, 1.0));
    let lambda = smallest.1 / smallest.0;
    // y = N/C − 1 over u = N − 1, C = X/λ: y = a·u + b·u², a = σ + κ, b = κ.
    let (mut sxx, mut sxxx, mut sxxxx, mut sxy, mut sxxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in points {
        let relative = x / lambda;
        let (u, y) = (n - 1.0, n / relative.max(f64::MIN_POSITIVE) - 1.0);
        sxx += u * u;
        sxxx += u * u * u;
        sxxxx += u * u * u * u;
        sxy += u * y;
        sxxy += u * u * y;
    }
    let determinant = sxx * sxxxx - sxxx * sxxx;
    let (a, b) = if determinant.abs() > f64::EPSILON {
        (
            (sxy * sxxxx - sxxy * sxxx) / determinant,
            (sxx * sxxy - sxxx * sxy) / determinant,
        )
    } else {
        (0.1, 0.01)
    };
    let kappa = b.max(1e-6);
    let sigma = (a - b).max(1e-4);
    [lambda, sigma, kappa]
}

/// `a x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
fn solve(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for column in 0..3 {
        let pivot =
            (column..3).max_by(|&i, &j| a[i][column].abs().total_cmp(&a[j][column].abs()))?;
        if a[pivot][column].abs() < f64::MIN_POSITIVE * 1e10 {
            return None;
        }
        a.swap(column, pivot);
        b.swap(column, pivot);
        for row in column + 1..3 {
            let factor = a[row][column] / a[column][column];
            let pivot_row = a[column];
            for (cell, above) in a[row].iter_mut().zip(pivot_row).skip(column) {
                *cell -= factor * above;
            }
            b[row] -= factor * b[column];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let known: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - known) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The inverse of `a`, column by column; `None` when it is singular.
fn invert(a: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let mut inverse = [[0.0; 3]; 3];
    for column in 0..3 {
        let mut unit = [0.0; 3];
        unit[column] = 1.0;
        let solved = solve(a, unit)?;
        for row in 0..3 {
            inverse[row][column] = solved[row];
        }
    }
    Some(inverse)
}
