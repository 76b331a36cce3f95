//! Burstable instances: the ceiling the CPU baseline sustains without spending credits, and
//! the surplus credits a plan above it pays for.

use super::{Ceiling, CostLine, Emulated, EmulatedCeiling, Model, dated};
use crate::entries::HOURS_PER_MONTH;
use crate::{Instance, PriceTable};

/// The sustained CPU ceiling and the surplus credit line (when the plan runs above the
/// baseline), or the warning that says why there is none.
pub(super) fn sustained(
    instance: &Instance,
    model: &Model,
    table: &PriceTable,
    planned_units: Option<f64>,
) -> Result<(Ceiling, Option<CostLine>), String> {
    let baseline_pct = instance.baseline_cpu_pct_per_vcpu;
    let baseline = baseline_pct.map(|pct| pct / 100.0 * f64::from(instance.vcpu));
    if let Some(emulated) = model.emulated.get(&instance.id)
        && let Some(at_baseline) = &emulated.baseline
        && let Some(baseline) = baseline
    {
        return Ok(measured_sustained(
            instance,
            emulated,
            at_baseline,
            baseline,
            table,
            planned_units,
        ));
    }
    match (&model.cpu, baseline) {
        (Some(cpu), Some(baseline)) if cpu.slope > 0.0 => {
            let sustained = ((baseline - cpu.intercept) / cpu.slope).floor().max(0.0);
            let ceiling = Ceiling::at(
                sustained,
                format!("at the baseline of {baseline:.2} cores, without spending credits"),
            );
            let above = planned_units.map_or(0.0, |units| (cpu.predict(units) - baseline).max(0.0));
            let credits = if above > 0.0
                && let Some(credit) = table.cpu_credit(&instance.id)
                && let Some(price) = credit.usd_per_vcpu_hour
            {
                Some(CostLine {
                    name: format!("surplus CPU credits ({above:.2} vCPU above the baseline)"),
                    per_month: above * HOURS_PER_MONTH * price,
                    shared: false,
                    as_of: dated(&credit.as_of),
                })
            } else {
                None
            };
            Ok((ceiling, credits))
        }
        (measured, _) => Err(format!(
            "{} is burstable: the ceilings assume burst, and {}; {}",
            instance.id,
            match baseline_pct {
                Some(pct) => format!("{} sustains {pct:.0} % per vCPU", instance.id),
                None => "the price table gives no baseline for it".to_owned(),
            },
            match (measured, baseline_pct) {
                (_, None) => "no sustained ceiling can be computed".to_owned(),
                (Some(_), Some(_)) => format!(
                    "the server's measured CPU does not rise with {} (slope ≤ 0), so no sustained ceiling follows from it",
                    crate::numbers::plural(&model.unit)
                ),
                (None, Some(_)) if model.cpu_fit_weak => format!(
                    "the CPU fit per {} is too weak to compute the sustained ceiling from",
                    model.unit
                ),
                (None, Some(_)) => format!(
                    "no CPU use under load per {} was measured to compute the sustained ceiling",
                    model.unit
                ),
            }
        )),
    }
}

/// The sustained ceiling measured at the baseline (the ceiling phase run at the baseline's
/// share of the vCPUs), and the surplus credits of a plan above it, from the measured gap: the
/// CPU needed grows from the baseline at the sustained ceiling to every vCPU at the burst
/// ceiling, in a line.
fn measured_sustained(
    instance: &Instance,
    emulated: &Emulated,
    at_baseline: &EmulatedCeiling,
    baseline: f64,
    table: &PriceTable,
    planned_units: Option<f64>,
) -> (Ceiling, Option<CostLine>) {
    let slo = &at_baseline.slo;
    let sustained = slo.units.unwrap_or(0.0);
    let note = format!(
        "measured at the baseline, {}, in `{}`: without spending credits",
        at_baseline.describe(),
        slo.phase
    );
    let ceiling = match slo.units {
        Some(units) => Ceiling {
            lower_bound: slo.first_failing.is_none(),
            ..Ceiling::at(units, note)
        },
        None => Ceiling {
            units: None,
            below: slo.first_failing,
            ..Ceiling::at(0.0, note)
        },
    };
    let full = emulated.full.as_ref().and_then(|f| f.slo.units);
    let vcpu = f64::from(instance.vcpu);
    let above = match (planned_units, full, slo.units) {
        (Some(planned), Some(full), Some(_)) if planned > sustained && full > sustained => {
            ((planned - sustained) / (full - sustained)).min(1.0) * (vcpu - baseline)
        }
        // No burst ceiling measured, or none at the baseline (it failed its first step): the
        // line between them is unknown, and the whole gap is what may be paid for.
        (Some(planned), _, _) if planned > sustained => vcpu - baseline,
        _ => 0.0,
    };
    let at_most = if full.is_none() || slo.units.is_none() {
        ", at most: the gap was not measured at both ends"
    } else {
        ", from the measured ceilings"
    };
    let credits = if above > 0.0
        && let Some(credit) = table.cpu_credit(&instance.id)
        && let Some(price) = credit.usd_per_vcpu_hour
    {
        Some(CostLine {
            name: format!("surplus CPU credits ({above:.2} vCPU above the baseline{at_most})"),
            per_month: above * HOURS_PER_MONTH * price,
            shared: false,
            as_of: dated(&credit.as_of),
        })
    } else {
        None
    };
    (ceiling, credits)
}
