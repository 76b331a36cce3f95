//! An instance's SLO ceiling carried to its cores from the ceiling phase run at several core
//! counts (`[plan] scale_cores`, and the ceiling phase itself at this machine's cores):
//! as measured where its cores were measured, else by the Universal Scalability Law through
//! six sizes or more, else the range (at least the largest smaller size's ceiling, at most
//! linear scaling from it). Past twice the largest size measured only with `--extrapolate`,
//! and then marked.

use serde::Serialize;

use super::sweeps::{SloCeiling, slo_ceiling};
use crate::numbers::count;
use crate::points::MeasuredSweep;
use crate::scaling::{Basis, CoreScaling, Estimate};

/// The ceilings measured per core count, and what they carry to other core counts.
#[derive(Debug, Clone)]
pub struct ScaledCeilings {
    /// Each size measured, smallest first: its cores and its SLO ceiling.
    pub sizes: Vec<(f64, SloCeiling)>,
    /// The law or the range through their ceilings.
    pub scaling: CoreScaling,
    /// Predict past twice the largest size measured (`plan --extrapolate`), marked.
    pub extrapolate: bool,
}

impl ScaledCeilings {
    /// The sizes of `sweeps` run at a core count (`[plan] scale_cores`), with `machine`'s
    /// ceiling at its `machine_cores` (the ceiling phase as run); `Ok(None)` when no phase
    /// ran at a core count, `Err` saying why the sizes carry nothing.
    pub fn of(
        sweeps: &[MeasuredSweep],
        machine: Option<&SloCeiling>,
        machine_cores: f64,
    ) -> Result<Option<ScaledCeilings>, String> {
        let mut sizes: Vec<(f64, SloCeiling)> = Vec::new();
        for sweep in sweeps {
            let Some(scaled) = &sweep.scales else {
                continue;
            };
            if let Some(slo) = slo_ceiling(sweep, "run at a core count ([plan] scale_cores)") {
                sizes.push((f64::from(scaled.cores), slo));
            }
        }
        if sizes.is_empty() {
            return Ok(None);
        }
        if let Some(slo) = machine.filter(|_| machine_cores > 0.0)
            && !sizes.iter().any(|(cores, _)| *cores == machine_cores)
        {
            sizes.push((machine_cores, slo.clone()));
        }
        sizes.sort_by(|a, b| a.0.total_cmp(&b.0));
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .filter_map(|(cores, slo)| slo.units.map(|units| (*cores, units)))
            .collect();
        let unmeasured: Vec<String> = sizes
            .iter()
            .filter(|(_, slo)| slo.units.is_none())
            .map(|(cores, slo)| format!("{} ({})", cores_phrase(*cores), slo.phase))
            .collect();
        if !unmeasured.is_empty() {
            return Err(format!(
                "the ceiling at {} was not measured (every probe failed, or none was confirmed): no size is carried to an instance's cores",
                unmeasured.join(", ")
            ));
        }
        let scaling = CoreScaling::of(&points)
            .map_err(|why| format!("the ceilings per core count carry nothing: {why}"))?;
        Ok(Some(ScaledCeilings {
            sizes,
            scaling,
            extrapolate: false,
        }))
    }

    /// The SLO ceiling measured at `cores`, when it was.
    pub(super) fn measured_at(&self, cores: f64) -> Option<&SloCeiling> {
        self.sizes
            .iter()
            .find(|(measured, _)| *measured == cores)
            .map(|(_, slo)| slo)
    }

    /// How an estimate was reached, in words: the law with its parameters and interval, or
    /// the range with the sizes it stands on.
    pub(super) fn describe(&self, estimate: &Estimate) -> String {
        let cores = cores_phrase(estimate.cores);
        match (estimate.basis, &self.scaling.law) {
            (Basis::Law, Some(law)) => format!(
                "the Universal Scalability Law through {} core counts (λ {:.1}, σ {:.4}, κ {:.5}) at {cores}: {}, 95 % prediction interval {}–{}",
                self.sizes.len(),
                law.lambda,
                law.sigma,
                law.kappa,
                count(estimate.ceiling.floor()),
                count(estimate.low.floor()),
                count(estimate.high.floor())
            ),
            _ => {
                let measured: Vec<String> = self
                    .sizes
                    .iter()
                    .map(|(cores, slo)| {
                        format!(
                            "{} at {}",
                            slo.units.map_or_else(|| "?".to_owned(), count),
                            cores_phrase(*cores)
                        )
                    })
                    .collect();
                format!(
                    "at {cores}: at least {} (a server on more cores holds no less, below its peak), at most {} (linear scaling; no server scales better than its cores), from {} measured; under {} core counts no law is fitted",
                    count(estimate.low.floor()),
                    count(estimate.high.floor()),
                    measured.join(" and "),
                    crate::scaling::MIN_SIZES
                )
            }
        }
    }

    /// The sizes and the law, for `plan --json` and the page.
    pub fn json(&self) -> ScaledCeilingsJson {
        ScaledCeilingsJson {
            sizes: self
                .sizes
                .iter()
                .map(|(cores, slo)| CoreSizeJson {
                    cores: *cores,
                    phase: slo.phase.clone(),
                    units: slo.units,
                    fails_at: slo.first_failing,
                })
                .collect(),
            law: self.scaling.law.as_ref().map(|law| LawJson {
                lambda: law.lambda,
                lambda_ci95: law.lambda_ci95,
                sigma: law.sigma,
                sigma_ci95: law.sigma_ci95,
                kappa: law.kappa,
                kappa_ci95: law.kappa_ci95,
                residual_se_share: law.residual_se,
                peak_cores: law.peak(),
                caveats: law.caveats(),
            }),
            largest_cores: self.scaling.largest(),
            extrapolate: self.extrapolate,
            curve: self.curve(),
        }
    }

    /// The ceiling carried to each whole core count up to twice the largest measured (at
    /// most 256 of them): what the page plots.
    fn curve(&self) -> Vec<CurvePointJson> {
        let top = (2.0 * self.scaling.largest()).ceil().clamp(1.0, 256.0) as u32;
        (1..=top)
            .filter_map(|n| self.scaling.estimate(f64::from(n), true).ok())
            .map(|estimate| CurvePointJson {
                cores: estimate.cores,
                ceiling: estimate.ceiling,
                low: estimate.low,
                high: estimate.high,
            })
            .collect()
    }
}

/// `1 core`, `2 cores`, `1.5 cores`.
pub(super) fn cores_phrase(cores: f64) -> String {
    if (cores - 1.0).abs() < f64::EPSILON {
        "1 core".to_owned()
    } else {
        format!("{cores} cores")
    }
}

/// The ceilings per core count and the law through them, as `plan --json` writes them.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ScaledCeilingsJson {
    /// Each size measured, smallest first.
    pub sizes: Vec<CoreSizeJson>,
    /// The Universal Scalability Law through them; `null` under six sizes (then each
    /// instance's SLO ceiling is the range: at least the largest smaller size's ceiling, at
    /// most linear scaling from it).
    pub law: Option<LawJson>,
    /// The largest core count measured: past twice it nothing is predicted unless
    /// `extrapolate`.
    pub largest_cores: f64,
    /// `plan --extrapolate` asked for predictions past twice the largest size, marked.
    pub extrapolate: bool,
    /// The ceiling at each whole core count from 1 to twice the largest measured: as measured,
    /// the law's prediction and its 95 % interval, or the range's lower end and its bounds.
    #[serde(default)]
    pub curve: Vec<CurvePointJson>,
}

/// The ceiling carried to one core count.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CurvePointJson {
    /// The cores.
    pub cores: f64,
    /// The ceiling planned on: as measured, the law's prediction, or the range's lower end.
    pub ceiling: f64,
    /// The low end: the law's interval bottom, or the range's lower bound.
    pub low: f64,
    /// The high end: the law's interval top, or linear scaling.
    pub high: f64,
}

/// One core count measured.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CoreSizeJson {
    /// The cores the server ran on.
    pub cores: f64,
    /// The phase measured there (`load@1-core`, or the ceiling phase at this machine's cores).
    pub phase: String,
    /// Its SLO ceiling, units; `null` where none was measured.
    pub units: Option<f64>,
    /// The first load that failed there.
    pub fails_at: Option<f64>,
}

/// The fitted law `X(N) = λN / (1 + σ(N − 1) + κN(N − 1))`, N the cores.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LawJson {
    /// λ: one core's ceiling without contention or coherency costs, units.
    pub lambda: f64,
    /// λ's 95 % interval.
    pub lambda_ci95: [f64; 2],
    /// σ: contention, the serial share of the work.
    pub sigma: f64,
    /// σ's 95 % interval.
    pub sigma_ci95: [f64; 2],
    /// κ: coherency, what each pair of cores pays to agree.
    pub kappa: f64,
    /// κ's 95 % interval.
    pub kappa_ci95: [f64; 2],
    /// The residual standard error, as a share of the ceiling (each miss weighed relative).
    pub residual_se_share: f64,
    /// The core count past which more cores hold less; `null` where κ's interval reaches zero.
    pub peak_cores: Option<f64>,
    /// What to know before trusting the law.
    pub caveats: Vec<String>,
}
