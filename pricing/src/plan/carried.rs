//! An instance's SLO ceiling carried to its cores from ceilings measured at others
//! ([`ScaledCeilings`]): the law's prediction with its interval, or the range; past twice the
//! largest size measured, refused unless `--extrapolate`, then marked.

use super::scaled::{ScaledCeilings, cores_phrase};
use super::{Ceiling, Model, factor};
use crate::Instance;
use crate::numbers::count;
use crate::scaling::Basis;

/// The SLO ceiling of `instance`, whose cores were not measured, carried from `scaled`.
pub(super) fn ceiling_on(
    instance: &Instance,
    model: &Model,
    scaled: &ScaledCeilings,
    warnings: &mut Vec<String>,
) -> Ceiling {
    let cores = model.usable_cores(instance);
    let estimate = match scaled.scaling.estimate(cores, true) {
        Ok(estimate) => estimate,
        Err(why) => {
            return Ceiling {
                units: None,
                ..Ceiling::at(
                    0.0,
                    format!("not carried to {}: {why}", cores_phrase(cores)),
                )
            };
        }
    };
    let note = scaled.describe(&estimate);
    let mut ceiling = match estimate.basis {
        Basis::Law => Ceiling {
            low: Some(estimate.low.floor()),
            high: Some(estimate.high.floor()),
            ..Ceiling::at(estimate.ceiling.floor(), note)
        },
        Basis::Range | Basis::Measured => Ceiling {
            lower_bound: true,
            high: Some(estimate.high.floor()),
            ..Ceiling::at(estimate.low.floor(), note)
        },
    };
    if estimate.extrapolated {
        let largest = scaled.scaling.largest();
        let times = cores / largest;
        if scaled.extrapolate {
            ceiling.extrapolation_asked = Some(times);
            warnings.push(format!(
                "{}: its SLO ceiling is carried to {} vCPUs, {} the largest core count measured ({}), because --extrapolate asked: a guess past the data",
                instance.id,
                count(cores),
                factor(times),
                count(largest)
            ));
        } else {
            ceiling.extrapolated = Some(times);
            warnings.push(format!(
                "{}: {} vCPUs is more than twice the largest core count measured ({}): its SLO ceiling is not predicted there; measure a larger size, or pass --extrapolate to plan on the guess, marked",
                instance.id,
                count(cores),
                count(largest)
            ));
        }
    }
    ceiling
}
