//! `headroom plan --json`: the report's types and how a plan becomes one.

use super::fleets::Fleet;
use super::placement::Placement;
use super::sweeps::SloCeiling;
use super::{Binding, Ceiling, InstancePlan, Resource};
use crate::fit::Fit;
use crate::points::{MeasuredSweep, Unit};
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of `headroom plan --json`'s shape (schemas/plan.schema.json); docs/contracts.md
/// says what each version added.
pub const PLAN_FORMAT: u32 = 1;

/// `headroom plan --json`: the stable contract (`schemas/plan.schema.json`, `docs/planning.md`).
/// Numbers are unrounded; amounts are in the instance's `currency` (USD for AWS, EUR for
/// Hetzner) even where a field's name says `usd`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PlanReport {
    /// The version of this shape ([`PLAN_FORMAT`]); a reader refuses another.
    pub format: u32,
    /// What one unit is (`room`, `user`).
    pub unit: String,
    /// The least-squares lines the plan stands on: the memory series, and the server's CPU
    /// over the same sweep when it was measured.
    pub fits: Vec<FitJson>,
    /// Where the SLOs broke in the ceiling sweep; `null` when no sweep was judged by SLOs.
    pub slo_ceiling: Option<SloCeilingJson>,
    /// The SLO ceiling measured at several core counts (`[plan] scale_cores`), and the law
    /// through them that carries it to each instance's cores; absent when measured at one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled_ceilings: Option<super::ScaledCeilingsJson>,
    /// One plan per priced instance type, in the order asked.
    pub instances: Vec<InstanceJson>,
    /// `--units N`: the cheapest fleet of each instance type that holds N units, cheapest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_units: Option<Vec<FleetJson>>,
    /// `--budget`: the most units each instance type holds for the budget, most first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_budget: Option<Vec<FleetJson>>,
    /// A stack priced apart (`[plan] place`, `--place`): each service on an instance of its
    /// own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementJson>,
    /// The hours in a month that hourly prices are multiplied by (730).
    pub hours_per_month: f64,
    /// What a reader should know before trusting the plan, once each.
    pub warnings: Vec<String>,
    /// The price tables the plan priced from, the shipped one first: each named, with its
    /// SHA-256 and the span of its as-of dates.
    #[serde(default)]
    pub price_tables: Vec<crate::TableSource>,
}

/// A least-squares line `y = intercept + slope × x` over one sweep.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// The slope's standard error, in `unit` per unit of x: what `slope_ci95` is made of, and
    /// what two slopes are compared by (`headroom compare`).
    pub slope_se: f64,
    /// The largest x measured.
    pub max_x: f64,
    /// The fit is too weak to plan with unflagged (`weaknesses` says why).
    pub weak: bool,
    /// Fewer than four points, R² under 0.9 or undefined, a slope interval wider than ±50 %.
    pub weaknesses: Vec<String>,
}

impl FitJson {
    /// The fit of `series` over `sweep`, as the report gives it; `because` says why that
    /// sweep.
    pub fn of(
        sweep: &MeasuredSweep,
        series: &str,
        unit: Unit,
        because: &str,
        fit: &Fit,
    ) -> FitJson {
        FitJson {
            series: series.to_owned(),
            unit: match (series, unit) {
                ("cpu", _) => "cores",
                (_, Unit::Bytes) => "bytes",
                (_, Unit::Seconds) => "seconds",
                (_, Unit::Fraction) => "fraction",
                (_, Unit::Plain) => "count",
            }
            .to_owned(),
            phase: sweep.name.clone(),
            chosen_because: because.to_owned(),
            x: sweep.x.clone(),
            intercept: fit.intercept,
            slope: fit.slope,
            r2: fit.r2,
            n: fit.n,
            slope_ci95: fit.slope_ci95,
            slope_se: fit.slope_se,
            max_x: fit.max_x,
            weak: fit.is_weak(),
            weaknesses: fit.weaknesses(),
        }
    }
}

/// The SLO ceiling of the ceiling sweep.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// Whether an SLO was over its threshold at `first_failing`; `false` when only runs
    /// failed or figures went unmeasured there (nothing says the ceiling is below it).
    pub breached: bool,
    /// Every step passed: the ceiling is at least `units`, the most tested.
    pub lower_bound: bool,
    /// How a searched phase found it (`units` is its last pass, `first_failing` its first
    /// fail); `null` for a phase of listed steps.
    pub search: Option<crate::plan::SearchedCeiling>,
}

/// One ceiling on one instance.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// A searched SLO ceiling's first fail above it: its bracket is `units` … `fails_at`.
    pub fails_at: Option<f64>,
    /// A searched load that passed a shorter probe and no full-hold probe confirmed; with
    /// `units` null, nothing was confirmed and nothing is priced.
    pub unconfirmed: Option<f64>,
    /// The upper end of an SLO ceiling carried to the instance's cores (`[plan]
    /// scale_cores`): the law's 95 % prediction interval top (then `low` is its bottom), or
    /// linear scaling from the largest smaller core count measured (then `lower_bound`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// How many times the largest core count measured the instance's cores are, planned on
    /// because `--extrapolate` asked: a guess past the data, marked in `reads`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extrapolation_asked: Option<f64>,
    /// The ceiling as a table reads it: `< 16, not measured`, `≥ 100`, `325–334, weak fit`.
    pub reads: String,
    /// How it was worked out.
    pub note: String,
}

/// The ceiling that binds, or the runner-up.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BindingJson {
    /// A key of `ceilings`: `memory`, `slo`, `cap`, `cpu` (given with `--cpu-ceiling`), or
    /// `none` when there is no ceiling at all.
    pub resource: Resource,
    /// `null` when nothing bounds the units, or the ceiling was not measured.
    pub units: Option<f64>,
    /// The ceiling as a table reads it (`CeilingJson.reads`).
    pub reads: String,
}

/// The monthly cost with the lines beside the instance.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct AllInJson {
    /// The instance and every line, a month.
    pub usd_month: f64,
    /// That divided by the planned units; `null` when the plan is not priced.
    pub usd_per_unit_month: Option<f64>,
    /// That divided by the people the planned units hold (`people_per_unit`); `null` when the
    /// plan is not priced.
    pub usd_per_person_month: Option<f64>,
    /// Each line beside the instance.
    pub lines: Vec<LineJson>,
}

/// A monthly line beside the instance (storage, an address, a database, egress, credits).
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct InstanceJson {
    /// The instance type (`t4g.medium`, `CX23`).
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
    /// The price table the instance's price was read from, as `price_tables` names it.
    #[serde(default)]
    pub price_table: String,
    /// Every ceiling by resource: `memory`, `slo`, `cap`, `cpu`, `cpu_sustained`.
    pub ceilings: BTreeMap<Resource, CeilingJson>,
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
    /// Where its SLO ceiling comes from: measured in its shape (`[plan] emulate`), or scaled
    /// from (or as measured on) the machine that ran.
    pub measured: String,
    /// The month with the lines beside the instance.
    pub all_in: AllInJson,
    /// This instance's warnings (also in the report's `warnings`).
    pub warnings: Vec<String>,
    /// The prices this plan used that are out of date (older than `[plan] max_price_age` or
    /// changed by the provider since): `plan --check` refuses them without `--stale-ok`.
    #[serde(default)]
    pub stale_prices: Vec<super::StalePrice>,
}

/// A fleet of one instance type.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
            fails_at: c.fails_at,
            unconfirmed: c.unconfirmed,
            high: c.high,
            extrapolation_asked: c.extrapolation_asked,
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
            breached: s.breached,
            lower_bound: s.lower_bound,
            search: s.search.clone(),
        }
    }
}

impl From<&InstancePlan> for InstanceJson {
    fn from(plan: &InstancePlan) -> InstanceJson {
        let binding = |b: &Binding| BindingJson {
            resource: b.resource,
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
            price_table: plan.price_table.clone(),
            ceilings: plan
                .ceilings
                .iter()
                .map(|(k, c)| (*k, CeilingJson::from(c)))
                .collect(),
            binding: binding(&plan.binding),
            runner_up: plan.runner_up.as_ref().map(binding),
            planned_units: plan.planned_units,
            not_priced: plan.not_priced.clone(),
            cost_is_upper_bound: plan.cost_is_upper_bound,
            usd_per_unit_month: plan.per_unit_month,
            usd_per_person_month: plan.per_person_month,
            measured: plan.measured.clone(),
            all_in: AllInJson {
                usd_month: plan.all_in.per_month,
                usd_per_unit_month: plan.all_in.per_unit_month,
                usd_per_person_month: plan.all_in.per_person_month,
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
            stale_prices: plan.stale_prices.clone(),
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
/// A stack priced apart, in `headroom plan --json`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PlacementJson {
    /// Each service on its instance, planned with the service's own memory and CPU per unit
    /// and the stack's SLO ceiling.
    pub services: Vec<PlacedServiceJson>,
    /// The services whose instances hold the fewest units (several when they hold as many).
    pub binding_services: Vec<String>,
    /// The units one stack of these instances is planned with; `null` when some instance's
    /// ceiling cannot be planned with (`not_priced` says which).
    pub planned_units: Option<f64>,
    /// Every instance's price a month, together (one currency: the instances').
    pub per_month: f64,
    /// Every instance and its lines, a month.
    pub all_in_month: f64,
    /// `per_month` over the planned units.
    pub per_unit_month: Option<f64>,
    /// `all_in_month` over the planned units.
    pub all_in_per_unit_month: Option<f64>,
    /// The binding ceiling is a lower bound: the cost per unit is at most this.
    pub cost_is_upper_bound: bool,
    /// Why no cost per unit is given, when none is.
    pub not_priced: Option<String>,
}

/// One service on its instance, in `headroom plan --json`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PlacedServiceJson {
    /// The service.
    pub service: String,
    /// Its instance, planned as `instances[]` are.
    pub instance: InstanceJson,
}

impl From<&Placement> for PlacementJson {
    fn from(placement: &Placement) -> PlacementJson {
        PlacementJson {
            services: placement
                .services
                .iter()
                .map(|s| PlacedServiceJson {
                    service: s.service.clone(),
                    instance: InstanceJson::from(&s.plan),
                })
                .collect(),
            binding_services: placement.binding_services.clone(),
            planned_units: placement.planned_units,
            per_month: placement.per_month,
            all_in_month: placement.all_in_month,
            per_unit_month: placement.per_unit_month,
            all_in_per_unit_month: placement.all_in_per_unit_month,
            cost_is_upper_bound: placement.cost_is_upper_bound,
            not_priced: placement.not_priced.clone(),
        }
    }
}
