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
use crate::points::OrderedX;
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

/// The ceiling an SLO sweep gives: the largest point that passes every SLO.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SloCeiling {
    /// `None` when the SLO fails already at the first point.
    pub units: Option<f64>,
    pub first_failing: Option<f64>,
    /// No point failed: the ceiling is at least this, the most tested.
    pub lower_bound: bool,
}

/// The SLO ceiling of verdicts by x: the last passing point before the first failing one.
pub fn slo_ceiling(verdicts: &BTreeMap<OrderedX, bool>) -> Option<SloCeiling> {
    if verdicts.is_empty() {
        return None;
    }
    let mut last_pass = None;
    for (x, passed) in verdicts {
        if !passed {
            return Some(SloCeiling {
                units: last_pass,
                first_failing: Some(x.0),
                lower_bound: false,
            });
        }
        last_pass = Some(x.0);
    }
    Some(SloCeiling {
        units: last_pass,
        first_failing: None,
        lower_bound: true,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    pub units: f64,
    /// The lower end when the fit is weak (the slope's upper 95 % bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// The most that was tested, not where it broke: the real ceiling is at least this.
    pub lower_bound: bool,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    pub resource: String,
    pub units: f64,
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
    /// The binding ceiling less the headroom: the units to plan with.
    pub planned_units: f64,
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
    if let Some(fit) = &model.memory
        && fit.slope > 0.0
    {
        let room = memory_bytes - model.reserve_bytes - fit.intercept;
        let units = (room / fit.slope).floor().max(0.0);
        let low = (room / fit.slope_ci95[1]).floor().max(0.0);
        let weak = !fit.warnings(Some(units)).is_empty();
        for warning in fit.warnings(Some(units)) {
            warnings.push(format!("memory: {warning}"));
        }
        ceilings.insert(
            "memory".to_owned(),
            Ceiling {
                units,
                low: weak.then_some(low),
                lower_bound: false,
                note: format!(
                    "({memory_gib} GiB − {:.1} MiB reserve − {:.1} MiB) / {:.2} MiB per {}",
                    model.reserve_bytes / 1_048_576.0,
                    fit.intercept / 1_048_576.0,
                    fit.slope / 1_048_576.0,
                    model.unit
                ),
            },
        );
    }
    let measured = model
        .cpu_ceiling
        .map(|u| (u, "given".to_owned(), false))
        .or_else(|| {
            let slo = model.slo.as_ref()?;
            let units = slo.units?;
            let note = if slo.lower_bound {
                format!(
                    "≥ {}, the most tested: no point failed its SLOs",
                    count(units)
                )
            } else {
                format!(
                    "the last point that passed every SLO; {} failed",
                    count(slo.first_failing.unwrap_or_default())
                )
            };
            Some((units, note, slo.lower_bound))
        });
    if let Some(slo) = &model.slo
        && slo.units.is_none()
    {
        warnings.push(format!(
            "the SLOs fail already at the first point ({}): no CPU ceiling was measured",
            count(slo.first_failing.unwrap_or_default())
        ));
    }
    if let Some((units, note, lower_bound)) = measured {
        let (units, note) = if model.cpu_scales_with_vcpus && model.measured_cores > 0.0 {
            let scaled = (units * f64::from(instance.vcpu) / model.measured_cores).floor();
            (
                scaled,
                format!(
                    "{note}; scaled from {} measured cores to {} vCPUs",
                    model.measured_cores, instance.vcpu
                ),
            )
        } else {
            (units, format!("{note}; as measured, not scaled to vCPUs"))
        };
        ceilings.insert(
            "cpu".to_owned(),
            Ceiling {
                units,
                low: None,
                lower_bound,
                note,
            },
        );
    }
    if let Some(cap) = model.cap {
        ceilings.insert(
            "cap".to_owned(),
            Ceiling {
                units: cap,
                low: None,
                lower_bound: false,
                note: "the server's own limit".to_owned(),
            },
        );
    }
    let mut ranked: Vec<(&String, &Ceiling)> = ceilings.iter().collect();
    // Ties go to the non-memory resource: what the server refuses binds before what it holds.
    ranked.sort_by(|a, b| {
        a.1.units
            .total_cmp(&b.1.units)
            .then((a.0 == "memory").cmp(&(b.0 == "memory")))
    });
    let binding = ranked.first().map_or(
        Binding {
            resource: "none".to_owned(),
            units: f64::INFINITY,
        },
        |(name, c)| Binding {
            resource: (*name).clone(),
            units: c.units,
        },
    );
    let runner_up = ranked.get(1).map(|(name, c)| Binding {
        resource: (*name).clone(),
        units: c.units,
    });
    if ceilings.is_empty() {
        warnings.push(
            "no ceiling: give a memory sweep, an SLO sweep, --cpu-ceiling or --cap".to_owned(),
        );
    }
    let planned_units = (binding.units * (1.0 - model.headroom)).floor();

    // Burstable: the measured ceiling holds while CPU credits last.
    let mut lines = Vec::new();
    if instance.burstable {
        let baseline =
            instance.baseline_cpu_pct_per_vcpu.unwrap_or(0.0) / 100.0 * f64::from(instance.vcpu);
        match &model.cpu {
            Some(cpu) if cpu.slope > 0.0 => {
                let sustained = ((baseline - cpu.intercept) / cpu.slope).floor().max(0.0);
                ceilings.insert(
                    "cpu_sustained".to_owned(),
                    Ceiling {
                        units: sustained,
                        low: None,
                        lower_bound: false,
                        note: format!("at the baseline of {baseline:.2} cores, without spending credits"),
                    },
                );
                let above = (cpu.predict(planned_units) - baseline).max(0.0);
                if above > 0.0
                    && let Some(credit) = table.cpu_credit(&instance.id)
                    && let Some(price) = credit.usd_per_vcpu_hour
                {
                    lines.push(CostLine {
                        name: format!("surplus CPU credits ({above:.2} vCPU above the baseline)"),
                        per_month: above * HOURS_PER_MONTH * price,
                        shared: false,
                        as_of: credit.as_of.clone().unwrap_or_default(),
                    });
                }
            }
            _ => warnings.push(format!(
                "{} is burstable: the CPU ceiling assumes burst, and {} sustains {:.0} % per vCPU; the results carry no CPU use per {} to compute the sustained ceiling",
                instance.id,
                instance.id,
                instance.baseline_cpu_pct_per_vcpu.unwrap_or(0.0),
                model.unit
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
            table.line(id).and_then(|l| {
                l.usd_per_unit
                    .map(|p| (p, l.as_of.clone().unwrap_or_default()))
            })
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
            match table.database(rds).and_then(|d| {
                d.usd_per_hour
                    .map(|h| (h, d.as_of.clone().unwrap_or_default()))
            }) {
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
            let billed = (gb - line.free_gb_per_month.unwrap_or(0.0)).max(0.0);
            lines.push(CostLine {
                name: format!("egress, {gb} GB ({billed} GB billed)"),
                per_month: billed * price,
                shared: true,
                as_of: line.as_of.clone().unwrap_or_default(),
            });
        }
    }
    let per_unit = |total: f64| {
        (planned_units.is_finite() && planned_units > 0.0).then(|| total / planned_units)
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
            if !(plan.planned_units.is_finite() && plan.planned_units >= 1.0) {
                return Fleet {
                    instance: plan.name.clone(),
                    currency: plan.currency,
                    count: 0,
                    units: 0.0,
                    per_month: f64::INFINITY,
                    note: Some(format!(
                        "holds no {} (binding: {})",
                        "unit", plan.binding.resource
                    )),
                };
            }
            let count = (units / plan.planned_units).ceil().max(1.0) as u64;
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: count as f64 * plan.planned_units,
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
            let count = if each > 0.0 {
                ((budget - shared) / each).floor().max(0.0) as u64
            } else {
                0
            };
            let held = if plan.planned_units.is_finite() {
                count as f64 * plan.planned_units
            } else {
                0.0
            };
            Fleet {
                instance: plan.name.clone(),
                currency: plan.currency,
                count,
                units: held,
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
/// Numbers are unrounded; amounts are in `currency` (USD for AWS, EUR for Hetzner).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub unit: String,
    pub fits: Vec<FitJson>,
    pub slo_ceiling: Option<SloCeilingJson>,
    pub instances: Vec<InstanceJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_units: Option<Vec<FleetJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_budget: Option<Vec<FleetJson>>,
    pub hours_per_month: f64,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FitJson {
    pub series: String,
    pub intercept: f64,
    pub slope: f64,
    pub r2: f64,
    pub n: usize,
    pub slope_ci95: [f64; 2],
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SloCeilingJson {
    pub units: Option<f64>,
    pub first_failing: Option<f64>,
    pub lower_bound: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CeilingJson {
    pub units: f64,
    pub low: Option<f64>,
    /// The most that was tested (every SLO passed there), so the ceiling is at least `units`.
    pub lower_bound: bool,
    pub note: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BindingJson {
    pub resource: String,
    /// `null` when nothing bounds the units (no ceiling at all).
    pub units: Option<f64>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AllInJson {
    pub usd_month: f64,
    pub usd_per_unit_month: Option<f64>,
    pub lines: Vec<LineJson>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LineJson {
    pub name: String,
    pub usd_month: f64,
    pub shared: bool,
    pub as_of: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InstanceJson {
    pub name: String,
    pub vcpu: u32,
    pub memory_gib: f64,
    pub currency: String,
    pub usd_month: f64,
    pub as_of: String,
    pub ceilings: BTreeMap<String, CeilingJson>,
    pub binding: BindingJson,
    pub runner_up: Option<BindingJson>,
    pub planned_units: Option<f64>,
    pub usd_per_unit_month: Option<f64>,
    pub usd_per_person_month: Option<f64>,
    pub all_in: AllInJson,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FleetJson {
    pub instance: String,
    pub currency: String,
    pub count: u64,
    pub units: f64,
    pub usd_month: Option<f64>,
    pub note: Option<String>,
}

/// A finite number, or `None` for JSON (which has no infinity).
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl From<&InstancePlan> for InstanceJson {
    fn from(plan: &InstancePlan) -> InstanceJson {
        let binding = |b: &Binding| BindingJson {
            resource: b.resource.clone(),
            units: finite(b.units),
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
                .map(|(k, c)| {
                    (
                        k.clone(),
                        CeilingJson {
                            units: c.units,
                            low: c.low,
                            lower_bound: c.lower_bound,
                            note: c.note.clone(),
                        },
                    )
                })
                .collect(),
            binding: binding(&plan.binding),
            runner_up: plan.runner_up.as_ref().map(binding),
            planned_units: finite(plan.planned_units),
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
            assert_eq!(plan.ceilings["memory"].units, by_memory, "{name}");
            assert_eq!(
                plan.binding,
                Binding {
                    resource: "cpu".to_owned(),
                    units: 57.0
                }
            );
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
        assert_eq!(plan.ceilings["cpu_sustained"].units, 30.0);
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
        let verdicts: BTreeMap<OrderedX, bool> =
            [(16.0, true), (32.0, true), (64.0, false), (128.0, false)]
                .map(|(x, p)| (OrderedX(x), p))
                .into();
        model.slo = slo_ceiling(&verdicts);
        assert_eq!(
            model.slo,
            Some(SloCeiling {
                units: Some(32.0),
                first_failing: Some(64.0),
                lower_bound: false
            })
        );
        model.headroom = 0.25;
        let plan = plan_instance(
            table.instance("m7g.large").expect("m7g.large"),
            &model,
            &table,
        );
        assert_eq!(plan.binding.units, 32.0);
        assert_eq!(plan.planned_units, 24.0);
        assert!(plan.warnings.iter().all(|w| !w.contains("burstable")));
        // 100 rooms: m7g.large holds 24 a piece, so 5 of them.
        let fleets = for_units(std::slice::from_ref(&plan), 100.0);
        assert_eq!((fleets[0].count, fleets[0].units), (5, 120.0));
        let budget = for_budget(std::slice::from_ref(&plan), 300.0);
        assert!(
            budget[0].per_month <= 300.0 && budget[0].count >= 1,
            "{budget:?}"
        );
        let never: BTreeMap<OrderedX, bool> = [(1.0, true), (2.0, true)]
            .map(|(x, p)| (OrderedX(x), p))
            .into();
        assert_eq!(slo_ceiling(&never).map(|c| c.lower_bound), Some(true));
    }
}
