//! Burstable instances: the ceiling the CPU baseline sustains without spending credits, and
//! the surplus credits a plan above it pays for.

use super::*;

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
