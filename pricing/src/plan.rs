//! Ceilings on one instance, the binding one, and what a unit costs there.
//!
//! Every ceiling is in units (rooms, users): memory from the fit of the provisioning series,
//! the SLO/CPU ceiling from an SLO sweep (or given), and caps. The smallest binds; the planner
//! names it, the runner-up and how far it trails, then divides the month's cost by it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::entries::HOURS_PER_MONTH;
use crate::fit::Fit;
use crate::numbers::count;
use crate::points::Sweep;
use crate::{Instance, PriceTable};

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

/// The ceiling an SLO sweep gives: the largest point that passes every SLO.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SloCeiling {
    /// The phase the verdicts come from, and why the planner took it.
    pub phase: String,
    pub chosen_because: String,
    /// The last point that passed every SLO; `None` when they failed already at the first.
    pub units: Option<f64>,
    pub first_failing: Option<f64>,
    /// What did not hold at the first failing point.
    pub broke: Vec<String>,
    /// No point failed: the ceiling is at least this, the most tested.
    pub lower_bound: bool,
}

/// The SLO ceiling of a sweep: the last passing point before the first failing one. `None`
/// when nothing in the sweep was judged.
pub fn slo_ceiling(sweep: &Sweep, chosen_because: &str) -> Option<SloCeiling> {
    if sweep.verdicts.is_empty() {
        return None;
    }
    let mut last_pass = None;
    for (x, verdict) in &sweep.verdicts {
        if !verdict.pass {
            return Some(SloCeiling {
                phase: sweep.name.clone(),
                chosen_because: chosen_because.to_owned(),
                units: last_pass,
                first_failing: Some(x.0),
                broke: verdict.broke.clone(),
                lower_bound: false,
            });
        }
        last_pass = Some(x.0);
    }
    Some(SloCeiling {
        phase: sweep.name.clone(),
        chosen_because: chosen_because.to_owned(),
        units: last_pass,
        first_failing: None,
        broke: Vec::new(),
        lower_bound: true,
    })
}

/// What the planner knows of the spec's capacity model, to choose its sweeps.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// The variable that counts units; `None` takes any sweep.
    pub units: Option<&'a str>,
    pub memory_series: &'a str,
    pub memory_phase: Option<&'a str>,
    pub ceiling_phase: Option<&'a str>,
}

/// A sweep the planner uses, and why that one.
#[derive(Debug, Clone, Copy)]
pub struct Chosen<'a> {
    pub sweep: &'a Sweep,
    pub because: &'static str,
}

/// The sweep memory is fitted over: the one the spec names, else the first over the units
/// variable that carries the memory series. `Err` says why there is none. The page and
/// `headroom plan` both call this, so they never disagree.
pub fn memory_sweep<'a>(sweeps: &'a [Sweep], selection: Selection) -> Result<Chosen<'a>, String> {
    let has_series = |s: &Sweep| s.series.iter().any(|p| p.name == selection.memory_series);
    let series = selection.memory_series;
    match selection.memory_phase {
        Some(name) => {
            let sweep = sweeps.iter().find(|s| s.name == name).ok_or_else(|| {
                format!("the memory phase `{name}` is not in the results (or sweeps no single variable)")
            })?;
            if let Some(units) = selection.units
                && sweep.x != units
            {
                return Err(format!(
                    "the memory phase `{name}` sweeps `{}`, not `{units}`: its slope is memory per {}, not per unit, so it gives no memory ceiling",
                    sweep.x, sweep.x
                ));
            }
            if !has_series(sweep) {
                return Err(format!(
                    "the memory phase `{name}` carries no series `{series}`: no memory ceiling"
                ));
            }
            Ok(Chosen {
                sweep,
                because: "named by `capacity.memory_phase`",
            })
        }
        None => sweeps
            .iter()
            .find(|s| selection.units.is_none_or(|u| s.x == u) && has_series(s))
            .map(|sweep| Chosen {
                sweep,
                because: "`capacity.memory_phase` is not set: the first phase that sweeps the units and records the memory series",
            })
            .ok_or_else(|| match selection.units {
                Some(units) => format!(
                    "no phase sweeps `{units}` with the series `{series}`: no memory ceiling"
                ),
                None => format!("no sweep carries the memory series `{series}`: no memory ceiling"),
            }),
    }
}

/// The sweep whose SLO verdicts give the ceiling: the one the spec names, else the first over
/// the units variable where an SLO failed, else the first over it judged at several steps.
pub fn ceiling_sweep<'a>(sweeps: &'a [Sweep], selection: Selection) -> Result<Chosen<'a>, String> {
    match selection.ceiling_phase {
        Some(name) => {
            let sweep = sweeps.iter().find(|s| s.name == name).ok_or_else(|| {
                format!("the ceiling phase `{name}` is not in the results (or sweeps no single variable)")
            })?;
            if sweep.verdicts.is_empty() {
                return Err(format!(
                    "the ceiling phase `{name}` was judged by no SLO: no SLO ceiling"
                ));
            }
            Ok(Chosen {
                sweep,
                because: "named by `capacity.ceiling_phase`",
            })
        }
        None => {
            let over_units =
                |s: &&Sweep| selection.units.is_none_or(|u| s.x == u) && !s.verdicts.is_empty();
            sweeps
                .iter()
                .filter(over_units)
                .find(|s| s.verdicts.values().any(|v| !v.pass))
                .map(|sweep| Chosen {
                    sweep,
                    because: "`capacity.ceiling_phase` is not set: the first phase over the units where an SLO failed",
                })
                .or_else(|| {
                    sweeps
                        .iter()
                        .filter(over_units)
                        .find(|s| s.verdicts.len() > 1)
                        .map(|sweep| Chosen {
                            sweep,
                            because: "`capacity.ceiling_phase` is not set and no SLO failed: the first phase over the units judged at several steps",
                        })
                })
                .ok_or_else(|| "no sweep over the units was judged by SLOs: no SLO ceiling".to_owned())
        }
    }
}

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
    /// `378,881, extrapolated ×3,800 past the data: not a ceiling to plan with`.
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
                ", extrapolated {} past the data: not a ceiling to plan with",
                self::factor(factor)
            ));
        } else if self.weak {
            text.push_str(", weak fit");
        }
        text
    }
}

/// A factor as people say it: `×2.6`, `×58`, `×3,800` (two significant digits).
pub fn factor(x: f64) -> String {
    if x < 10.0 {
        format!("×{x:.1}")
    } else {
        format!("×{}", count(two_significant(x)))
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
                "{}: the memory ceiling, {} {}, lies {} past the largest measured ({}): an extrapolation, not a ceiling to plan with",
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
            "the {} ceiling, {}, is an extrapolation {} past the data; sweep up to it to measure it",
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

/// A fleet of one instance type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    pub instance: String,
    pub currency: &'static str,
    pub count: u64,
    pub units: f64,
    /// Every instance with its own lines, plus the shared lines once.
    pub per_month: f64,
    /// Why this fleet is not the first choice, or cannot be one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn costs(plan: &InstancePlan) -> (f64, f64) {
    let shared: f64 = plan
        .all_in
        .lines
        .iter()
        .filter(|l| l.shared)
        .map(|l| l.per_month)
        .sum();
    (plan.all_in.per_month - shared, shared)
}

/// The cheapest way to hold `units` with each instance type (a whole number of instances),
/// cheapest first; the others say how much more they cost.
pub fn for_units(plans: &[InstancePlan], units: f64) -> Vec<Fleet> {
    let mut fleets: Vec<Fleet> = plans
        .iter()
        .map(|plan| {
            let (each, shared) = costs(plan);
            let Some(planned) = plan.planned_units.filter(|p| *p >= 1.0) else {
                return Fleet {
                    instance: plan.name.clone(),
                    currency: plan.currency,
                    count: 0,
                    units: 0.0,
                    per_month: f64::INFINITY,
                    note: Some(match &plan.not_priced {
                        Some(why) => format!("not priced: {why}"),
                        None => format!("holds no unit (binding: {})", plan.binding.resource),
                    }),
                };
            };
            let count = (units / planned).ceil().max(1.0) as u64;
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: count as f64 * planned,
                per_month: count as f64 * each + shared,
                note: None,
            }
        })
        .collect();
    fleets.sort_by(|a, b| a.per_month.total_cmp(&b.per_month));
    if let Some(best) = fleets
        .first()
        .map(|f| (f.per_month, f.currency, f.instance.clone()))
    {
        for fleet in fleets.iter_mut().skip(1) {
            if fleet.note.is_none() {
                fleet.note = Some(if fleet.currency != best.1 {
                    format!(
                        "priced in {}, not comparable with {}",
                        fleet.currency, best.2
                    )
                } else {
                    format!(
                        "{:.2} more a month than the {} fleet",
                        fleet.per_month - best.0,
                        best.2
                    )
                });
            }
        }
    }
    fleets
}

/// The most units `budget` a month holds with each instance type, most first.
pub fn for_budget(plans: &[InstancePlan], budget: f64) -> Vec<Fleet> {
    let mut fleets: Vec<Fleet> = plans
        .iter()
        .map(|plan| {
            let (each, shared) = costs(plan);
            let Some(planned) = plan.planned_units else {
                return Fleet {
                    instance: plan.name.clone(),
                    currency: plan.currency,
                    count: 0,
                    units: 0.0,
                    per_month: 0.0,
                    note: Some(format!(
                        "not priced: {}",
                        plan.not_priced
                            .as_deref()
                            .unwrap_or("no ceiling to plan with")
                    )),
                };
            };
            let count = if each > 0.0 {
                ((budget - shared) / each).floor().max(0.0) as u64
            } else {
                0
            };
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: count as f64 * planned,
                per_month: count as f64 * each + shared,
                note: (count == 0).then(|| {
                    format!(
                        "one instance and the shared lines cost {:.2}, over the budget",
                        each + shared
                    )
                }),
            }
        })
        .collect();
    fleets.sort_by(|a, b| {
        b.units
            .total_cmp(&a.units)
            .then(a.per_month.total_cmp(&b.per_month))
    });
    if let Some((best_units, best)) = fleets.first().map(|f| (f.units, f.instance.clone())) {
        for fleet in fleets.iter_mut().skip(1) {
            if fleet.note.is_none() {
                fleet.note = Some(format!(
                    "holds {} fewer than the {best} fleet",
                    count(best_units - fleet.units)
                ));
            }
        }
    }
    fleets
}

/// `headroom plan --json`: the stable contract (`schemas/plan.schema.json`, `docs/planning.md`).
/// Numbers are unrounded; amounts are in the instance's `currency` (USD for AWS, EUR for
/// Hetzner) even where a field's name says `usd`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// What one unit is (`room`, `user`).
    pub unit: String,
    /// The least-squares lines the plan stands on: the memory series, and the server's CPU
    /// over the same sweep when it was measured.
    pub fits: Vec<FitJson>,
    /// Where the SLOs broke in the ceiling sweep; `null` when no sweep was judged by SLOs.
    pub slo_ceiling: Option<SloCeilingJson>,
    /// One plan per priced instance type, in the order asked.
    pub instances: Vec<InstanceJson>,
    /// `--units N`: the cheapest fleet of each instance type that holds N units, cheapest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_units: Option<Vec<FleetJson>>,
    /// `--budget`: the most units each instance type holds for the budget, most first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_budget: Option<Vec<FleetJson>>,
    /// The hours in a month that hourly prices are multiplied by (730).
    pub hours_per_month: f64,
    /// What a reader should know before trusting the plan, once each.
    pub warnings: Vec<String>,
}

/// A least-squares line `y = intercept + slope × x` over one sweep.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FitJson {
    /// The series fitted: `rss`, a `[measure]` series, a CSV column, or `cpu`.
    pub series: String,
    /// The unit of `intercept` and of `slope` per unit of x: `bytes`, `cores`, `seconds`,
    /// `fraction`, or `count` (a plain number).
    pub unit: String,
    /// The phase (or `csv`) the points come from.
    pub phase: String,
    /// Why the planner fitted this phase.
    pub chosen_because: String,
    /// The variable on the x axis (the units variable).
    pub x: String,
    /// The line at x = 0, in `unit`.
    pub intercept: f64,
    /// What one more unit of x adds, in `unit` per unit of x.
    pub slope: f64,
    /// The share of the variance the line explains; `null` when the series does not vary (R²
    /// is 0/0 there).
    pub r2: Option<f64>,
    /// The points fitted (every run, repeats included).
    pub n: usize,
    /// The slope's 95 % confidence interval (Student t, n − 2 degrees of freedom).
    pub slope_ci95: [f64; 2],
    /// The largest x measured.
    pub max_x: f64,
    /// The fit is too weak to plan with unflagged (`weaknesses` says why).
    pub weak: bool,
    /// Fewer than four points, R² under 0.9 or undefined, a slope interval wider than ±50 %.
    pub weaknesses: Vec<String>,
}

/// The SLO ceiling of the ceiling sweep.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SloCeilingJson {
    /// The phase whose verdicts give it, and why the planner took it.
    pub phase: String,
    /// Why the planner took this phase (`capacity.ceiling_phase`, or its rule).
    pub chosen_because: String,
    /// The last step that passed every SLO; `null` when they failed already at the first step.
    pub units: Option<f64>,
    /// The first step where something failed; `null` when every step passed.
    pub first_failing: Option<f64>,
    /// What did not hold at `first_failing`: failed SLOs, unmeasured figures, failed runs.
    pub broke: Vec<String>,
    /// Every step passed: the ceiling is at least `units`, the most tested.
    pub lower_bound: bool,
}

/// One ceiling on one instance.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CeilingJson {
    /// The ceiling in units; `null` when it lies under `below` and was not measured.
    pub units: Option<f64>,
    /// The SLOs failed already at this first step: the ceiling is under it, not measured.
    pub below: Option<f64>,
    /// The lower end of a weak memory ceiling (at the slope's upper 95 % bound).
    pub low: Option<f64>,
    /// The most that was tested (every SLO passed there), so the ceiling is at least `units`.
    pub lower_bound: bool,
    /// How many times the largest measured x the ceiling lies, when that is more than
    /// `EXTRAPOLATION_LIMIT` (2): not a ceiling to plan with.
    pub extrapolated: Option<f64>,
    /// From a weak fit (see the fit's `weaknesses`).
    pub weak: bool,
    /// The ceiling as a table reads it: `< 16, not measured`, `≥ 100`, `325–334, weak fit`.
    pub reads: String,
    /// How it was worked out.
    pub note: String,
}

/// The ceiling that binds, or the runner-up.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BindingJson {
    /// A key of `ceilings`: `memory`, `slo`, `cap`, `cpu` (given with `--cpu-ceiling`), or
    /// `none` when there is no ceiling at all.
    pub resource: String,
    /// `null` when nothing bounds the units, or the ceiling was not measured.
    pub units: Option<f64>,
    /// The ceiling as a table reads it (`CeilingJson.reads`).
    pub reads: String,
}

/// The monthly cost with the lines beside the instance.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AllInJson {
    /// The instance and every line, a month.
    pub usd_month: f64,
    /// That divided by the planned units; `null` when the plan is not priced.
    pub usd_per_unit_month: Option<f64>,
    /// Each line beside the instance.
    pub lines: Vec<LineJson>,
}

/// A monthly line beside the instance (storage, an address, a database, egress, credits).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LineJson {
    /// What the line is (`EBS gp3, 30 GB`).
    pub name: String,
    /// Its cost a month, in the instance's currency.
    pub usd_month: f64,
    /// Shared by the fleet (a database): counted once, not per instance.
    pub shared: bool,
    /// The date of its price (`YYYY-MM-DD`), or `undated`.
    pub as_of: String,
}

/// The plan on one instance type.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InstanceJson {
    /// The instance type (`t4g.medium`, `CX22`).
    pub name: String,
    /// Its vCPUs, as the price table lists them.
    pub vcpu: u32,
    /// Its memory in GiB (a Hetzner "GB" is taken as GiB, with a warning).
    pub memory_gib: f64,
    /// `USD` or `EUR`: the currency of every amount of this instance.
    pub currency: String,
    /// The instance's price a month.
    pub usd_month: f64,
    /// The date of the instance's price (`YYYY-MM-DD`), or `undated`.
    pub as_of: String,
    /// Every ceiling by resource: `memory`, `slo`, `cap`, `cpu`, `cpu_sustained`.
    pub ceilings: BTreeMap<String, CeilingJson>,
    /// The smallest ceiling.
    pub binding: BindingJson,
    /// The next smallest.
    pub runner_up: Option<BindingJson>,
    /// The binding ceiling less the headroom; `null` when the plan is not priced.
    pub planned_units: Option<f64>,
    /// Why there is no cost per unit (the binding ceiling was not measured, or is an
    /// extrapolation); `null` when the plan is priced.
    pub not_priced: Option<String>,
    /// The binding ceiling is a lower bound: each cost per unit is at most what is given.
    pub cost_is_upper_bound: bool,
    /// The instance's month over the planned units.
    pub usd_per_unit_month: Option<f64>,
    /// That over the people in a unit.
    pub usd_per_person_month: Option<f64>,
    pub all_in: AllInJson,
    /// This instance's warnings (also in the report's `warnings`).
    pub warnings: Vec<String>,
}

/// A fleet of one instance type.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FleetJson {
    /// The instance type.
    pub instance: String,
    /// `USD` or `EUR`: the currency of `usd_month`.
    pub currency: String,
    /// Instances in the fleet.
    pub count: u64,
    /// The units the fleet holds at the planned units per instance.
    pub units: f64,
    /// The fleet's month, shared lines once; `null` when it cannot hold any unit.
    pub usd_month: Option<f64>,
    /// Why this fleet is not the first choice, or cannot be one.
    pub note: Option<String>,
}

/// A finite number, or `None` for JSON (which has no infinity).
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl From<&Ceiling> for CeilingJson {
    fn from(c: &Ceiling) -> CeilingJson {
        CeilingJson {
            units: c.units,
            below: c.below,
            low: c.low,
            lower_bound: c.lower_bound,
            extrapolated: c.extrapolated,
            weak: c.weak,
            reads: c.reads(),
            note: c.note.clone(),
        }
    }
}

impl From<&SloCeiling> for SloCeilingJson {
    fn from(s: &SloCeiling) -> SloCeilingJson {
        SloCeilingJson {
            phase: s.phase.clone(),
            chosen_because: s.chosen_because.clone(),
            units: s.units,
            first_failing: s.first_failing,
            broke: s.broke.clone(),
            lower_bound: s.lower_bound,
        }
    }
}

impl From<&InstancePlan> for InstanceJson {
    fn from(plan: &InstancePlan) -> InstanceJson {
        let binding = |b: &Binding| BindingJson {
            resource: b.resource.clone(),
            units: b.units.and_then(finite),
            reads: b.reads.clone(),
        };
        InstanceJson {
            name: plan.name.clone(),
            vcpu: plan.vcpu,
            memory_gib: plan.memory_gib,
            currency: plan.currency.to_owned(),
            usd_month: plan.per_month,
            as_of: plan.as_of.clone(),
            ceilings: plan
                .ceilings
                .iter()
                .map(|(k, c)| (k.clone(), CeilingJson::from(c)))
                .collect(),
            binding: binding(&plan.binding),
            runner_up: plan.runner_up.as_ref().map(binding),
            planned_units: plan.planned_units,
            not_priced: plan.not_priced.clone(),
            cost_is_upper_bound: plan.cost_is_upper_bound,
            usd_per_unit_month: plan.per_unit_month,
            usd_per_person_month: plan.per_person_month,
            all_in: AllInJson {
                usd_month: plan.all_in.per_month,
                usd_per_unit_month: plan.all_in.per_unit_month,
                lines: plan
                    .all_in
                    .lines
                    .iter()
                    .map(|l| LineJson {
                        name: l.name.clone(),
                        usd_month: l.per_month,
                        shared: l.shared,
                        as_of: l.as_of.clone(),
                    })
                    .collect(),
            },
            warnings: plan.warnings.clone(),
        }
    }
}

impl From<&Fleet> for FleetJson {
    fn from(fleet: &Fleet) -> FleetJson {
        FleetJson {
            instance: fleet.instance.clone(),
            currency: fleet.currency.to_owned(),
            count: fleet.count,
            units: fleet.units,
            usd_month: finite(fleet.per_month),
            note: fleet.note.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::fit;

    fn relay_model() -> Model {
        let rooms = [1.0, 4.0, 16.0, 32.0, 64.0, 128.0];
        let rss_mib = [218.8, 260.9, 399.7, 546.5, 863.9, 1506.2];
        let points: Vec<(f64, f64)> = rooms
            .into_iter()
            .zip(rss_mib.map(|m| m * 1_048_576.0))
            .collect();
        Model {
            unit: "room".to_owned(),
            people_per_unit: 1.0,
            memory: Some(fit(&points).expect("fit")),
            reserve_bytes: 512.0 * 1_048_576.0,
            cpu_ceiling: Some(57.0),
            cap: Some(128.0),
            lines: Lines {
                ebs_gb: Some(30.0),
                rds: Some("db.t4g.micro".to_owned()),
                public_ipv4: 0,
                egress_gb: None,
            },
            ..Model::default()
        }
    }

    /// The relay capacity page's cost table, by hand: 334 and 742 rooms by memory, 57 by CPU,
    /// $0.43 and $0.86 per room-month; all in with 30 GB gp3 and a db.t4g.micro, $38.61 and
    /// $63.14 a month, $0.68 and $1.11 per room.
    #[test]
    fn the_relay_page_by_hand() {
        let table = PriceTable::embedded().expect("table");
        let model = relay_model();
        let expected = [
            ("t4g.medium", 334.0, 0.43, 38.61, 0.68),
            ("t4g.large", 742.0, 0.86, 63.14, 1.11),
        ];
        for (name, by_memory, per_room, all_in, all_in_per_room) in expected {
            let plan = plan_instance(table.instance(name).expect("instance"), &model, &table);
            assert_eq!(plan.ceilings["memory"].units, Some(by_memory), "{name}");
            assert_eq!(
                (plan.binding.resource.as_str(), plan.binding.units),
                ("cpu", Some(57.0))
            );
            assert_eq!(plan.not_priced, None);
            assert_eq!(
                plan.runner_up.as_ref().map(|b| b.resource.as_str()),
                Some("cap")
            );
            let cents = |x: f64| (x * 100.0).round() / 100.0;
            assert_eq!(plan.per_unit_month.map(cents), Some(per_room), "{name}");
            assert_eq!(cents(plan.all_in.per_month), all_in, "{name}");
            assert_eq!(
                plan.all_in.per_unit_month.map(cents),
                Some(all_in_per_room),
                "{name}"
            );
            assert!(
                plan.all_in
                    .lines
                    .iter()
                    .any(|l| l.shared && l.name.contains("db.t4g.micro"))
            );
            assert!(
                plan.warnings.iter().any(|w| w.contains("burstable")),
                "{:?}",
                plan.warnings
            );
        }
    }

    /// With the server's CPU per room measured, a burstable instance gets its sustained ceiling
    /// and the surplus credits above it: t4g.medium's baseline is 20 % of 2 vCPUs = 0.4 cores;
    /// at 0.1 + 0.01 cores per room it sustains 30 rooms, and at the 57 planned it runs 0.27 cores
    /// above the baseline: 0.27 × 730 h × $0.04 = $7.88 a month.
    #[test]
    fn a_burstable_instance_with_cpu_data_prices_its_credits() {
        let table = PriceTable::embedded().expect("table");
        let mut model = relay_model();
        let points: Vec<(f64, f64)> = [1.0, 10.0, 20.0, 40.0].map(|r| (r, 0.1 + 0.01 * r)).into();
        model.cpu = Some(fit(&points).expect("cpu fit"));
        let plan = plan_instance(
            table.instance("t4g.medium").expect("t4g.medium"),
            &model,
            &table,
        );
        assert_eq!(plan.ceilings["cpu_sustained"].units, Some(30.0));
        let credits = plan
            .all_in
            .lines
            .iter()
            .find(|l| l.name.contains("credits"))
            .expect("credits");
        assert!(
            (credits.per_month - 0.27 * 730.0 * 0.04).abs() < 1e-6,
            "{}",
            credits.per_month
        );
        assert!(plan.warnings.iter().all(|w| !w.contains("assumes burst")));
    }

    #[test]
    fn headroom_and_the_slo_sweep() {
        let table = PriceTable::embedded().expect("table");
        let mut model = relay_model();
        model.cpu_ceiling = None;
        let sweep = sweep_of(&[(16.0, true), (32.0, true), (64.0, false), (128.0, false)]);
        model.slo = slo_ceiling(&sweep, "named");
        let slo = model.slo.clone().expect("judged");
        assert_eq!(
            (slo.units, slo.first_failing, slo.lower_bound),
            (Some(32.0), Some(64.0), false)
        );
        assert_eq!(slo.broke, ["`api.latency.p95 < 200ms` failed"]);
        model.headroom = 0.25;
        let plan = plan_instance(
            table.instance("m7g.large").expect("m7g.large"),
            &model,
            &table,
        );
        assert_eq!(
            (plan.binding.resource.as_str(), plan.binding.units),
            ("slo", Some(32.0))
        );
        assert_eq!(plan.planned_units, Some(24.0));
        assert!(!plan.cost_is_upper_bound);
        assert!(plan.warnings.iter().all(|w| !w.contains("burstable")));
        // 100 rooms: m7g.large holds 24 a piece, so 5 of them.
        let fleets = for_units(std::slice::from_ref(&plan), 100.0);
        assert_eq!((fleets[0].count, fleets[0].units), (5, 120.0));
        let budget = for_budget(std::slice::from_ref(&plan), 300.0);
        assert!(
            budget[0].per_month <= 300.0 && budget[0].count >= 1,
            "{budget:?}"
        );
        let never = sweep_of(&[(1.0, true), (2.0, true)]);
        assert_eq!(slo_ceiling(&never, "").map(|c| c.lower_bound), Some(true));
    }

    /// A sweep judged at each x: `true` passes, `false` fails a p95 SLO.
    fn sweep_of(verdicts: &[(f64, bool)]) -> Sweep {
        Sweep {
            name: "load".to_owned(),
            x: "rooms".to_owned(),
            series: Vec::new(),
            verdicts: verdicts
                .iter()
                .map(|&(x, pass)| {
                    let mut verdict = crate::points::Verdict::passing();
                    verdict.judge((!pass).then(|| "`api.latency.p95 < 200ms` failed".to_owned()));
                    (crate::points::OrderedX(x), verdict)
                })
                .collect(),
        }
    }

    /// Item 1 of issue 11: every SLO fails at the first step (16). The SLO ceiling is "< 16, not
    /// measured" and binds before the cap: nothing is planned and no cost per unit is given.
    #[test]
    fn a_ceiling_below_the_first_step_is_not_priced() {
        let table = PriceTable::embedded().expect("table");
        let mut model = relay_model();
        model.cpu_ceiling = None;
        model.slo = slo_ceiling(&sweep_of(&[(16.0, false), (64.0, false)]), "named");
        let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
        let slo = &plan.ceilings["slo"];
        assert_eq!((slo.units, slo.below), (None, Some(16.0)));
        assert_eq!(slo.reads(), "< 16, not measured");
        assert_eq!(
            (plan.binding.resource.as_str(), plan.binding.units),
            ("slo", None)
        );
        assert_eq!(plan.planned_units, None);
        assert_eq!(plan.per_unit_month, None);
        assert_eq!(plan.all_in.per_unit_month, None);
        let why = plan.not_priced.clone().expect("a reason");
        assert!(
            why.contains("SLO ceiling lies below 16, the first step"),
            "{why}"
        );
        let fleets = for_units(std::slice::from_ref(&plan), 100.0);
        assert_eq!(fleets[0].count, 0);
        assert!(
            fleets[0]
                .note
                .as_deref()
                .unwrap_or("")
                .starts_with("not priced")
        );
    }

    /// Memory that does not grow with the units gives no memory ceiling, and says so: the
    /// weaknesses of the fit and its slope, never a silent gap.
    #[test]
    fn a_flat_or_falling_memory_fit_says_why_there_is_no_memory_ceiling() {
        let table = PriceTable::embedded().expect("table");
        let points: Vec<(f64, f64)> = [(25.0, 161e6), (50.0, 160e6), (100.0, 159e6)].into();
        let model = Model {
            unit: "user".to_owned(),
            people_per_unit: 1.0,
            memory: Some(fit(&points).expect("fit")),
            cap: Some(100.0),
            ..Model::default()
        };
        let plan = plan_instance(table.instance("CX22").expect("CX22"), &model, &table);
        assert!(!plan.ceilings.contains_key("memory"));
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.starts_with("the memory fit's slope is ")
                    && w.ends_with("so no memory ceiling follows from them")),
            "{:?}",
            plan.warnings
        );
        assert!(
            plan.warnings.iter().any(|w| w.contains("only 3 points")),
            "{:?}",
            plan.warnings
        );
    }

    /// Issue 12: a reserve of all the instance's memory is said, not planned around silently.
    #[test]
    fn a_reserve_of_all_the_memory_is_said() {
        let table = PriceTable::embedded().expect("table");
        let mut model = relay_model();
        model.reserve_bytes = 4.0 * 1_073_741_824.0;
        let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
        assert_eq!(plan.ceilings["memory"].units, Some(0.0));
        assert_eq!(plan.planned_units, None);
        assert_eq!(
            plan.not_priced.as_deref(),
            Some("the memory ceiling, less 0 % headroom, leaves no whole room to plan with")
        );
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.starts_with("t4g.medium: the reserve (4096 MiB) is all of its 4 GiB")),
            "{:?}",
            plan.warnings
        );
    }

    /// Item 16: a lower-bound ceiling binds; the cost per unit is an upper bound.
    #[test]
    fn a_lower_bound_ceiling_prices_an_upper_bound() {
        let table = PriceTable::embedded().expect("table");
        let mut model = relay_model();
        model.cpu_ceiling = None;
        model.cap = None;
        model.slo = slo_ceiling(&sweep_of(&[(25.0, true), (50.0, true), (100.0, true)]), "");
        let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
        assert_eq!(plan.binding.reads, "≥ 100");
        assert_eq!(plan.planned_units, Some(100.0));
        assert!(plan.cost_is_upper_bound);
        assert_eq!(plan.not_priced, None);
    }

    /// Item 15: a memory ceiling far past the data (×3,800) reads as an extrapolation, never as
    /// a plain number, and when it binds nothing is priced.
    #[test]
    fn a_memory_ceiling_far_past_the_data_is_flagged_and_not_priced() {
        let table = PriceTable::embedded().expect("table");
        // 25–100 users at 8 KiB each over 60 MiB: a CX22's 4 GiB holds ~450,000.
        let points: Vec<(f64, f64)> = [25.0, 50.0, 75.0, 100.0]
            .map(|u| (u, 60.0 * 1_048_576.0 + u * 8192.0))
            .into();
        let model = Model {
            unit: "user".to_owned(),
            people_per_unit: 1.0,
            memory: Some(fit(&points).expect("fit")),
            reserve_bytes: 512.0 * 1_048_576.0,
            ..Model::default()
        };
        let plan = plan_instance(table.instance("CX22").expect("CX22"), &model, &table);
        let memory = &plan.ceilings["memory"];
        let times = memory.extrapolated.expect("flagged");
        assert!(times > 1000.0, "{times}");
        assert!(
            memory
                .reads()
                .contains("past the data: not a ceiling to plan with"),
            "{}",
            memory.reads()
        );
        assert_eq!(plan.binding.resource, "memory");
        assert_eq!(plan.planned_units, None);
        assert_eq!(plan.per_unit_month, None);
        assert!(
            plan.not_priced
                .as_deref()
                .unwrap_or("")
                .contains("extrapolation"),
            "{:?}",
            plan.not_priced
        );
        // Inside the limit it is a plain ceiling.
        assert_eq!(factor(3789.0), "×3,800");
        assert_eq!(factor(57.5), "×58");
        assert_eq!(factor(2.6), "×2.6");
    }
}
