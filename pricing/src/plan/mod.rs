//! Ceilings on one instance, the binding one, and what a unit costs there.
//!
//! Every ceiling is in units (rooms, users): memory from the fit of the provisioning series,
//! the SLO/CPU ceiling from an SLO sweep (or given), and caps. The smallest binds; the planner
//! names it, the runner-up and how far it trails, then divides the month's cost by it.

mod fleets;
mod report;
mod sweeps;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::entries::HOURS_PER_MONTH;
use crate::fit::Fit;
use crate::numbers::count;
use crate::{Instance, PriceTable};

pub use fleets::{Fleet, for_budget, for_units};
pub use report::{
    AllInJson, BindingJson, CeilingJson, FitJson, FleetJson, InstanceJson, LineJson, Report,
    SloCeilingJson,
};
pub use sweeps::{Chosen, Selection, SloCeiling, ceiling_sweep, memory_sweep, slo_ceiling};

/// What the measurements and the spec say about one unit.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub unit: String,
    pub people_per_unit: f64,
    /// The fit of the provisioning series (bytes per unit).
    pub memory: Option<Fit>,
    pub reserve_bytes: f64,
    pub slo: Option<SloCeiling>,
    /// A CPU ceiling given directly; it replaces the SLO sweep's.
    pub cpu_ceiling: Option<f64>,
    pub cap: Option<f64>,
    /// The share of the binding ceiling left free (0.25: plan with 75 % of it).
    pub headroom: f64,
    /// Scale the CPU ceiling by the instance's vCPUs over the cores measured on.
    pub cpu_scales_with_vcpus: bool,
    pub measured_cores: f64,
    /// The fit of the server's CPU use (cores per unit), for burstable instances.
    pub cpu: Option<Fit>,
    pub lines: Lines,
    /// Today, for the age of prices; `None` skips the check.
    pub today: Option<crate::entries::Day>,
    /// Prices older than this many days draw a warning.
    pub max_price_age_days: i64,
}

/// The monthly lines beside the instance.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    pub ebs_gb: Option<f64>,
    pub rds: Option<String>,
    pub public_ipv4: u32,
    pub egress_gb: Option<f64>,
}

/// How far past the largest measured x a ceiling may lie and still be planned with: the fit's
/// own rule ("more than twice the largest measured x: an extrapolation").
pub const EXTRAPOLATION_LIMIT: f64 = 2.0;

/// One ceiling on one instance, in units, and how far it can be trusted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    /// `None`: the ceiling lies under `below` and was not measured.
    pub units: Option<f64>,
    /// The SLOs failed already at this, the first step: the ceiling is under it.
    pub below: Option<f64>,
    /// The lower end when the fit is weak (the slope's upper 95 % bound).
    pub low: Option<f64>,
    /// The most that was tested, not where it broke: the real ceiling is at least this.
    pub lower_bound: bool,
    /// How many times the largest measured x this ceiling lies, when that is past
    /// `EXTRAPOLATION_LIMIT`: not a ceiling to plan with.
    pub extrapolated: Option<f64>,
    /// From a weak fit (`Fit::weaknesses`).
    pub weak: bool,
    pub note: String,
}

impl Ceiling {
    fn at(units: f64, note: String) -> Ceiling {
        Ceiling {
            units: Some(units),
            below: None,
            low: None,
            lower_bound: false,
            extrapolated: None,
            weak: false,
            note,
        }
    }

    /// Whether a plan may stand on this ceiling: it was measured (or bounded from below), and
    /// does not lie far past the data.
    pub fn plannable(&self) -> bool {
        self.units.is_some() && self.extrapolated.is_none()
    }

    /// Where it ranks: an unmeasured ceiling under the first step could be anything below it,
    /// so it comes first.
    fn rank(&self) -> f64 {
        self.units.unwrap_or(f64::NEG_INFINITY)
    }

    /// The ceiling as a table cell reads: `< 16, not measured`, `≥ 100`, `325–334, weak fit`,
    /// `378,881, extrapolated to 3,800× the largest measured: not a ceiling to plan with`.
    pub fn reads(&self) -> String {
        let Some(units) = self.units else {
            return match self.below {
                Some(below) => format!("< {}, not measured", count(below)),
                None => "not measured".to_owned(),
            };
        };
        let mut text = match self.low {
            Some(low) if low < units => format!("{}–{}", count(low), count(units)),
            _ => count(units),
        };
        if self.lower_bound {
            text = format!("≥ {text}");
        }
        if let Some(factor) = self.extrapolated {
            text.push_str(&format!(
                ", extrapolated to {} the largest measured: not a ceiling to plan with",
                self::factor(factor)
            ));
        } else if self.weak {
            text.push_str(", weak fit");
        }
        text
    }
}

/// A factor as people say it: `2.6×`, `58×`, `3,800×` (two significant digits), read "2.6 times".
pub fn factor(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{}×", count(two_significant(x)))
    }
}

/// What a ceiling's key names, in a sentence: `the SLO ceiling`.
pub fn resource_name(key: &str) -> &str {
    match key {
        "slo" => "SLO",
        "cpu" => "given CPU",
        "cpu_sustained" => "sustained CPU",
        other => other,
    }
}

/// An entry's as-of date, or `undated`.
fn dated(as_of: &Option<String>) -> String {
    as_of.clone().unwrap_or_else(|| UNDATED.to_owned())
}

/// What an entry without a known date shows for its as-of date.
pub use headroom_prices::UNDATED;

/// `3789.0` → `3800.0`.
fn two_significant(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / scale).round() * scale
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    pub resource: String,
    /// `None` when nothing bounds the units, or the binding ceiling was not measured.
    pub units: Option<f64>,
    /// The ceiling as it reads (`Ceiling::reads`), or `none`.
    pub reads: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostLine {
    pub name: String,
    pub per_month: f64,
    /// Shared by the fleet (a database): it does not multiply with instances.
    pub shared: bool,
    pub as_of: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstancePlan {
    pub name: String,
    pub vcpu: u32,
    pub memory_gib: f64,
    /// `USD` or `EUR`, as the price table gives the instance.
    pub currency: &'static str,
    pub per_month: f64,
    pub as_of: String,
    pub ceilings: BTreeMap<String, Ceiling>,
    pub binding: Binding,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<Binding>,
    /// The binding ceiling less the headroom: the units to plan with. `None` when the binding
    /// ceiling cannot be planned with (see `not_priced`).
    pub planned_units: Option<f64>,
    /// Why no cost per unit is given, when none is.
    pub not_priced: Option<String>,
    /// The binding ceiling is a lower bound, so the cost per unit is at most what is shown.
    pub cost_is_upper_bound: bool,
    pub per_unit_month: Option<f64>,
    pub per_person_month: Option<f64>,
    pub all_in: AllIn,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllIn {
    pub per_month: f64,
    pub per_unit_month: Option<f64>,
    pub lines: Vec<CostLine>,
}

/// The plan for one instance type.
pub fn plan_instance(instance: &Instance, model: &Model, table: &PriceTable) -> InstancePlan {
    let mut warnings = Vec::new();
    let mut ceilings = BTreeMap::new();
    let (memory_bytes, memory_gib) = match (instance.memory_gib, instance.memory_gb) {
        (Some(gib), _) => (gib * 1_073_741_824.0, gib),
        (None, Some(gb)) => {
            warnings.push(format!(
                "{} lists {gb} GB of memory; taken as GiB",
                instance.id
            ));
            (gb * 1_073_741_824.0, gb)
        }
        (None, None) => (0.0, 0.0),
    };
    if model.reserve_bytes >= memory_bytes && memory_bytes > 0.0 {
        warnings.push(format!(
            "{}: the reserve ({:.0} MiB) is all of its {memory_gib} GiB: nothing is left for the server, so its memory ceiling is 0",
            instance.id,
            model.reserve_bytes / 1_048_576.0
        ));
    }
    // The fit's weaknesses are the fit's (the same for every instance), said whatever its
    // slope; how far this instance's ceiling lies past the data is the instance's.
    if let Some(fit) = &model.memory {
        for weakness in fit.weaknesses() {
            warnings.push(format!("the memory fit: {weakness}"));
        }
        if fit.slope <= 0.0 {
            warnings.push(format!(
                "the memory fit's slope is {:.0} B per {}: memory does not grow with {} in these points, so no memory ceiling follows from them",
                fit.slope,
                model.unit,
                crate::numbers::plural(&model.unit)
            ));
        }
    }
    if let Some(fit) = &model.memory
        && fit.slope > 0.0
    {
        let room = memory_bytes - model.reserve_bytes - fit.intercept;
        let units = (room / fit.slope).floor().max(0.0);
        let weak = fit.is_weak();
        let low = (room / fit.slope_ci95[1]).floor().max(0.0);
        let factor = units / fit.max_x;
        let extrapolated = (fit.max_x > 0.0 && factor > EXTRAPOLATION_LIMIT).then_some(factor);
        if let Some(factor) = extrapolated {
            warnings.push(format!(
                "{}: the memory ceiling, {} {}, is {} the largest measured ({}): an extrapolation, not a ceiling to plan with",
                instance.id,
                count(units),
                crate::numbers::plural(&model.unit),
                self::factor(factor),
                count(fit.max_x)
            ));
        }
        ceilings.insert(
            "memory".to_owned(),
            Ceiling {
                low: (weak && fit.slope_ci95[1] > 0.0).then_some(low),
                extrapolated,
                weak,
                ..Ceiling::at(
                    units,
                    format!(
                        "({memory_gib} GiB − {:.1} MiB reserve − {:.1} MiB) / {:.2} MiB per {}",
                        model.reserve_bytes / 1_048_576.0,
                        fit.intercept / 1_048_576.0,
                        fit.slope / 1_048_576.0,
                        model.unit
                    ),
                )
            },
        );
    }
    if let Some(given) = model.cpu_ceiling {
        ceilings.insert(
            "cpu".to_owned(),
            Ceiling::at(
                given,
                "given (--cpu-ceiling), not measured by headroom".to_owned(),
            ),
        );
    } else if let Some(slo) = &model.slo {
        let scale = (model.cpu_scales_with_vcpus && model.measured_cores > 0.0)
            .then(|| f64::from(instance.vcpu) / model.measured_cores);
        let scaled = |units: f64| scale.map_or(units, |s| (units * s).floor());
        let scaling = match scale {
            Some(_) => format!(
                "; scaled from {} measured cores to {} vCPUs",
                model.measured_cores, instance.vcpu
            ),
            None => "; as measured, not scaled to vCPUs".to_owned(),
        };
        let broke = if slo.broke.is_empty() {
            String::new()
        } else {
            format!(" ({})", slo.broke.join("; "))
        };
        let ceiling = match (slo.units, slo.first_failing) {
            (None, first) => {
                let first = first.unwrap_or_default();
                warnings.push(format!(
                    "the SLOs failed already at the first step of `{}`, {}{broke}: the SLO ceiling is below it and was not measured; sweep lower to find it",
                    slo.phase,
                    count(first)
                ));
                Ceiling {
                    units: None,
                    below: Some(scaled(first)),
                    ..Ceiling::at(
                        0.0,
                        format!(
                            "below the first step of `{}`, {}{broke}{scaling}",
                            slo.phase,
                            count(first)
                        ),
                    )
                }
            }
            (Some(units), None) => Ceiling {
                lower_bound: true,
                ..Ceiling::at(
                    scaled(units),
                    format!(
                        "≥ {}, the most tested in `{}`: no step failed its SLOs{scaling}",
                        count(units),
                        slo.phase
                    ),
                )
            },
            (Some(units), Some(first)) => Ceiling::at(
                scaled(units),
                format!(
                    "the last step of `{}` that passed every SLO; {} did not{broke}{scaling}",
                    slo.phase,
                    count(first),
                ),
            ),
        };
        ceilings.insert("slo".to_owned(), ceiling);
    }
    if let Some(cap) = model.cap {
        ceilings.insert(
            "cap".to_owned(),
            Ceiling::at(cap, "the server's own limit".to_owned()),
        );
    }
    let mut ranked: Vec<(&String, &Ceiling)> = ceilings.iter().collect();
    // Ties go to the non-memory resource: what the server refuses binds before what it holds.
    ranked.sort_by(|a, b| {
        a.1.rank()
            .total_cmp(&b.1.rank())
            .then((a.0 == "memory").cmp(&(b.0 == "memory")))
    });
    let binding_of = |(name, c): &(&String, &Ceiling)| Binding {
        resource: (*name).clone(),
        units: c.units,
        reads: c.reads(),
    };
    let binding = ranked.first().map_or(
        Binding {
            resource: "none".to_owned(),
            units: None,
            reads: "none".to_owned(),
        },
        binding_of,
    );
    let runner_up = ranked.get(1).map(binding_of);
    let binding_ceiling = ranked.first().map(|(_, c)| (*c).clone());
    let not_priced = match &binding_ceiling {
        None => {
            warnings.push(
                "no ceiling: give a memory sweep, an SLO sweep, --cpu-ceiling or --cap".to_owned(),
            );
            Some("no ceiling was measured or given".to_owned())
        }
        Some(c) if c.units.is_none() => Some(format!(
            "the {} ceiling lies below {}, the first step, and was not measured: there is no ceiling to plan with",
            resource_name(&binding.resource),
            count(c.below.unwrap_or_default()),
        )),
        Some(c) if c.extrapolated.is_some() => Some(format!(
            "the {} ceiling, {}, is an extrapolation to {} the largest measured; sweep up to it to measure it",
            resource_name(&binding.resource),
            count(c.units.unwrap_or_default()),
            factor(c.extrapolated.unwrap_or_default()),
        )),
        Some(_) => None,
    };
    let planned = binding
        .units
        .map(|units| (units * (1.0 - model.headroom)).floor());
    // A binding ceiling that leaves no whole unit (a reserve of all the memory) prices nothing.
    let not_priced = match (not_priced, planned) {
        (None, Some(planned)) if planned < 1.0 => Some(format!(
            "the {} ceiling, less {:.0} % headroom, leaves no whole {} to plan with",
            resource_name(&binding.resource),
            model.headroom * 100.0,
            model.unit
        )),
        (why, _) => why,
    };
    let cost_is_upper_bound =
        not_priced.is_none() && binding_ceiling.as_ref().is_some_and(|c| c.lower_bound);
    let planned_units = planned.filter(|_| not_priced.is_none());

    // Burstable: the measured ceiling holds while CPU credits last.
    let mut lines = Vec::new();
    if instance.burstable {
        let baseline_pct = instance.baseline_cpu_pct_per_vcpu;
        let baseline = baseline_pct.map(|pct| pct / 100.0 * f64::from(instance.vcpu));
        match (&model.cpu, baseline) {
            (Some(cpu), Some(baseline)) if cpu.slope > 0.0 => {
                let sustained = ((baseline - cpu.intercept) / cpu.slope).floor().max(0.0);
                ceilings.insert(
                    "cpu_sustained".to_owned(),
                    Ceiling::at(
                        sustained,
                        format!("at the baseline of {baseline:.2} cores, without spending credits"),
                    ),
                );
                let above = planned_units.map_or(0.0, |units| (cpu.predict(units) - baseline).max(0.0));
                if above > 0.0
                    && let Some(credit) = table.cpu_credit(&instance.id)
                    && let Some(price) = credit.usd_per_vcpu_hour
                {
                    lines.push(CostLine {
                        name: format!("surplus CPU credits ({above:.2} vCPU above the baseline)"),
                        per_month: above * HOURS_PER_MONTH * price,
                        shared: false,
                        as_of: dated(&credit.as_of),
                    });
                }
            }
            (measured, _) => warnings.push(format!(
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
                    (None, Some(_)) => format!(
                        "no CPU use under load per {} was measured to compute the sustained ceiling",
                        model.unit
                    ),
                }
            )),
        }
    }
    if let Some(today) = model.today {
        for warning in crate::entries::staleness(
            &instance.as_of,
            instance.stale_after.as_deref(),
            today,
            model.max_price_age_days,
        ) {
            warnings.push(format!("the price of {}: {warning}", instance.id));
        }
    }
    let (currency, per_month) = match (instance.usd_per_hour, instance.eur_per_month) {
        (Some(hour), _) => ("USD", hour * HOURS_PER_MONTH),
        (None, Some(eur)) => ("EUR", eur),
        (None, None) => {
            warnings.push(format!("{} has no sourced price", instance.id));
            ("USD", 0.0)
        }
    };
    if currency == "USD" {
        let priced = |id: &str| {
            table
                .line(id)
                .and_then(|l| l.usd_per_unit.map(|p| (p, dated(&l.as_of))))
        };
        if let Some(gb) = model.lines.ebs_gb
            && let Some((price, as_of)) = priced("ebs-gp3-storage")
        {
            lines.push(CostLine {
                name: format!("EBS gp3, {gb} GB"),
                per_month: gb * price,
                shared: false,
                as_of,
            });
        }
        if model.lines.public_ipv4 > 0
            && let Some((price, as_of)) = priced("public-ipv4")
        {
            let n = f64::from(model.lines.public_ipv4);
            lines.push(CostLine {
                name: format!("public IPv4 × {n}"),
                per_month: n * price * HOURS_PER_MONTH,
                shared: false,
                as_of,
            });
        }
        if let Some(rds) = &model.lines.rds {
            match table
                .database(rds)
                .and_then(|d| d.usd_per_hour.map(|h| (h, dated(&d.as_of))))
            {
                Some((hour, as_of)) => lines.push(CostLine {
                    name: format!("RDS {rds}"),
                    per_month: hour * HOURS_PER_MONTH,
                    shared: true,
                    as_of,
                }),
                None => warnings.push(format!(
                    "RDS {rds} has no sourced price: it is not in the all-in cost"
                )),
            }
        }
        if let Some(gb) = model.lines.egress_gb
            && let Some(line) = table.line("data-transfer-out-internet-first-10tb")
            && let Some(price) = line.usd_per_unit
        {
            // No free allowance in the table: every GB is billed.
            let billed = line.free_gb_per_month.map_or(gb, |free| gb - free).max(0.0);
            lines.push(CostLine {
                name: format!("egress, {gb} GB ({billed} GB billed)"),
                per_month: billed * price,
                shared: true,
                as_of: dated(&line.as_of),
            });
        }
    }
    // A line's price ages like the instance's; an undated one is counted stale.
    if let Some(today) = model.today {
        for line in &lines {
            for warning in
                crate::entries::staleness(&line.as_of, None, today, model.max_price_age_days)
            {
                warnings.push(format!("the price of {}: {warning}", line.name));
            }
        }
    }
    let per_unit = |total: f64| {
        planned_units
            .filter(|units| *units > 0.0)
            .map(|units| total / units)
    };
    let all_in_month = per_month + lines.iter().map(|l| l.per_month).sum::<f64>();
    InstancePlan {
        name: instance.id.clone(),
        vcpu: instance.vcpu,
        memory_gib,
        currency,
        per_month,
        as_of: instance.as_of.clone(),
        per_unit_month: per_unit(per_month),
        per_person_month: per_unit(per_month).map(|p| p / model.people_per_unit.max(1.0)),
        all_in: AllIn {
            per_month: all_in_month,
            per_unit_month: per_unit(all_in_month),
            lines,
        },
        ceilings,
        binding,
        runner_up,
        planned_units,
        not_priced,
        cost_is_upper_bound,
        warnings,
    }
}

#[cfg(test)]
mod tests;
