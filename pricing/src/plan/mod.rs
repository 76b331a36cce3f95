//! Ceilings on one instance, the binding one, and what a unit costs there.
//!
//! Every ceiling is in units (rooms, users): memory from the fit of the provisioning series,
//! the SLO/CPU ceiling from an SLO sweep (or given), and caps. The smallest binds; the planner
//! names it, the runner-up and how far it trails, then divides the month's cost by it.

mod burstable;
mod carried;
mod ceilings;
mod costs;
mod fleets;
mod instance;
mod placement;
mod report;
mod scaled;
mod sweeps;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::fit::Fit;
use crate::numbers::count;

pub use fleets::{Fleet, for_budget, for_units};
pub use instance::plan_instance;
pub use placement::{PlacedService, Placement, ServiceFits, fit_service, place};
pub use report::{
    AllInJson, BindingJson, CeilingJson, FitJson, FleetJson, InstanceJson, LineJson, PLAN_FORMAT,
    PlacedServiceJson, PlacementJson, PlanReport, SloCeilingJson,
};
pub use scaled::{CoreSizeJson, CurvePointJson, LawJson, ScaledCeilings, ScaledCeilingsJson};
pub use sweeps::{
    Chosen, SearchedCeiling, Selection, SloCeiling, ceiling_sweep, memory_sweep, passing_points,
    search_spent, slo_ceiling,
};

/// What the measurements and the spec say about one unit.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// What one unit is (`room`).
    pub unit: String,
    /// People one unit holds, for costs per person.
    pub people_per_unit: f64,
    /// The fit of the provisioning series (bytes per unit).
    pub memory: Option<Fit>,
    /// Memory kept for the OS and the rest of the image, in bytes.
    pub reserve_bytes: f64,
    /// Where the SLOs broke in the ceiling sweep.
    pub slo: Option<SloCeiling>,
    /// A CPU ceiling given directly; it replaces the SLO sweep's.
    pub cpu_ceiling: Option<f64>,
    /// The server's own limit on units.
    pub cap: Option<f64>,
    /// The share of the binding ceiling left free (0.25: plan with 75 % of it).
    pub headroom: f64,
    /// Scale the CPU ceiling by the instance's vCPUs over the cores measured on.
    pub cpu_scales_with_vcpus: bool,
    /// The most cores the server can use (`[target] cores`): an instance's vCPUs past them
    /// add nothing to its CPU or SLO ceiling.
    pub server_cores: Option<f64>,
    /// The logical cores the SLO ceiling was measured on.
    pub measured_cores: f64,
    /// The points were given (`--points`), not run by headroom.
    pub points_given: bool,
    /// The fit of the server's CPU use (cores per unit), for burstable instances.
    pub cpu: Option<Fit>,
    /// A CPU fit was measured but is too weak to plan with (then `cpu` is `None`).
    pub cpu_fit_weak: bool,
    /// The share of an instance's vCPUs the server may use (0.8), for the CPU ceiling; 0 leaves
    /// the CPU ceiling out.
    pub cpu_target: f64,
    /// SLO ceilings measured in an instance's shape (`[plan] emulate`), by instance type.
    pub emulated: BTreeMap<String, Emulated>,
    /// The monthly lines beside the instance.
    pub lines: Lines,
    /// Today, for the age of prices; `None` skips the check.
    pub today: Option<jiff::civil::Date>,
    /// Prices older than this many days draw a warning.
    pub max_price_age_days: i64,
    /// SLO ceilings measured at several core counts (`[plan] scale_cores`), carried to each
    /// instance's cores.
    pub scaled: Option<ScaledCeilings>,
    /// Carry a ceiling past twice the largest core count measured (`plan --extrapolate`),
    /// marked.
    pub extrapolate: bool,
}

/// The SLO ceilings of one instance type measured in its shape.
#[derive(Debug, Clone, Default)]
pub struct Emulated {
    /// At its full vCPUs.
    pub full: Option<EmulatedCeiling>,
    /// At its sustained baseline (a burstable instance).
    pub baseline: Option<EmulatedCeiling>,
}

/// An SLO ceiling measured in an instance's shape.
#[derive(Debug, Clone)]
pub struct EmulatedCeiling {
    /// Where the SLOs broke in the phase run in the shape.
    pub slo: SloCeiling,
    /// The shape in words (`2 vCPU, 3.5GiB`).
    pub shape: String,
    /// How the runner held the server to it (`2 CPU, 3.5GiB memory, no swap (cgroup v1)`).
    pub measured_in: Option<String>,
}

impl EmulatedCeiling {
    /// The shape as the runner applied it (`2 CPU, 3.5GiB memory, no swap (cgroup v1)`), or
    /// as the phase asked for it when no run recorded its limits.
    pub fn describe(&self) -> String {
        self.measured_in
            .clone()
            .unwrap_or_else(|| self.shape.clone())
    }
}

/// The monthly lines beside the instance.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// EBS gp3 storage per instance, in GB.
    pub ebs_gb: Option<f64>,
    /// A managed database class shared by the fleet.
    pub rds: Option<String>,
    /// Public IPv4 addresses per instance.
    pub public_ipv4: u32,
    /// Internet egress a month for the fleet, in GB.
    pub egress_gb: Option<f64>,
}

/// How far past the largest measured x a ceiling may lie and still be planned with: the fit's
/// own rule ("more than twice the largest measured x: an extrapolation").
pub const EXTRAPOLATION_LIMIT: f64 = 2.0;

/// One ceiling on one instance, in units, and how far it can be trusted.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    /// A searched ceiling's first fail above it: the bracket's top.
    pub fails_at: Option<f64>,
    /// A searched load that passed a shorter probe and no full-hold probe confirmed; with no
    /// `units`, the search confirmed nothing and no plan stands on it.
    pub unconfirmed: Option<f64>,
    /// The upper end of a ceiling carried to other cores: the law's 95 % prediction interval
    /// top, or linear scaling from the largest smaller core count measured.
    pub high: Option<f64>,
    /// How many times the largest core count measured the instance's cores are, past twice
    /// it, planned on because `--extrapolate` asked: marked wherever the ceiling is shown.
    pub extrapolation_asked: Option<f64>,
    /// How it was worked out.
    pub note: String,
}

impl Ceiling {
    pub(super) fn at(units: f64, note: String) -> Ceiling {
        Ceiling {
            units: Some(units),
            below: None,
            low: None,
            lower_bound: false,
            extrapolated: None,
            weak: false,
            fails_at: None,
            unconfirmed: None,
            high: None,
            extrapolation_asked: None,
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
    /// `400 (fails at 412)` (searched),
    /// `378,881, extrapolated to 3,800× the largest measured: not a ceiling to plan with`.
    pub fn reads(&self) -> String {
        let Some(units) = self.units else {
            return match (self.below, self.unconfirmed) {
                (Some(below), _) => format!("< {}, not measured", count(below)),
                (None, Some(unconfirmed)) => format!(
                    "not confirmed ({} passed a shorter probe only)",
                    count(unconfirmed)
                ),
                (None, None) => "not measured".to_owned(),
            };
        };
        let mut text = match (self.low, self.high) {
            // Carried to other cores by the law: the prediction and its interval.
            (Some(low), Some(high)) => {
                format!("{} (95 %: {}–{})", count(units), count(low), count(high))
            }
            (Some(low), None) if low < units => format!("{}–{}", count(low), count(units)),
            _ => count(units),
        };
        if self.lower_bound {
            text = format!("≥ {text}");
            if let (None, Some(high)) = (self.low, self.high) {
                text.push_str(&format!(", ≤ {} linear", count(high)));
            }
        }
        if let Some(fails_at) = self.fails_at {
            text.push_str(&format!(" (fails at {})", count(fails_at)));
        }
        if let (Some(factor), Some(_)) = (self.extrapolated, self.high) {
            text.push_str(&format!(
                ", at {} the largest core count measured: not predicted (--extrapolate)",
                self::factor(factor)
            ));
        } else if let Some(factor) = self.extrapolated {
            text.push_str(&format!(
                ", extrapolated to {} the largest measured: not a ceiling to plan with",
                self::factor(factor)
            ));
        } else if self.weak {
            text.push_str(", weak fit");
        }
        if let Some(factor) = self.extrapolation_asked {
            text.push_str(&format!(
                ", extrapolated to {} the largest core count measured (--extrapolate)",
                self::factor(factor)
            ));
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

/// What a ceiling bounds: the key of a plan's `ceilings`. Declared in the order of their
/// names, so a map of them lists them as `plan --json` always has.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// The server's own limit on units (`capacity.cap`).
    Cap,
    /// A CPU ceiling given with `--cpu-ceiling`, not measured.
    Cpu,
    /// The vCPUs at `cpu_target`, over the fit of the server's CPU over the hold.
    CpuMeasured,
    /// What a burstable instance's CPU baseline sustains without spending credits.
    CpuSustained,
    /// The memory left after the reserve, over the fit's bytes per unit.
    Memory,
    /// The last step of the ceiling sweep that passed every SLO.
    Slo,
    /// No ceiling at all (a binding only).
    None,
}

impl Resource {
    /// As `plan --json` writes it: `cpu_sustained`.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Cap => "cap",
            Resource::Cpu => "cpu",
            Resource::CpuMeasured => "cpu_measured",
            Resource::CpuSustained => "cpu_sustained",
            Resource::Memory => "memory",
            Resource::Slo => "slo",
            Resource::None => "none",
        }
    }

    /// As a sentence names it: `the SLO ceiling`, `the given CPU ceiling`.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Slo => "SLO",
            Resource::Cpu => "given CPU",
            Resource::CpuMeasured => "CPU",
            Resource::CpuSustained => "sustained CPU",
            other => other.as_str(),
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

/// The ceiling that binds, or the runner-up.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Binding {
    /// What it bounds.
    pub resource: Resource,
    /// `None` when nothing bounds the units, or the binding ceiling was not measured.
    pub units: Option<f64>,
    /// The ceiling as it reads (`Ceiling::reads`), or `none`.
    pub reads: String,
}

/// One monthly cost beside the instance.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CostLine {
    /// What it is (`EBS gp3, 30 GB`).
    pub name: String,
    /// Its cost a month.
    pub per_month: f64,
    /// Shared by the fleet (a database): it does not multiply with instances.
    pub shared: bool,
    /// The date of its price, or `undated`.
    pub as_of: String,
}

/// The plan for one instance type: its ceilings, the binding one, and the costs.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct InstancePlan {
    /// The instance type.
    pub name: String,
    /// vCPUs.
    pub vcpu: u32,
    /// Memory in GiB.
    pub memory_gib: f64,
    /// `USD` or `EUR`, as the price table gives the instance.
    pub currency: &'static str,
    /// The instance's price a month.
    pub per_month: f64,
    /// The date of its price.
    pub as_of: String,
    /// The price table its price was read from, as named (`the shipped table`, a file).
    pub price_table: String,
    /// Every ceiling, by what it bounds.
    pub ceilings: BTreeMap<Resource, Ceiling>,
    /// The smallest ceiling.
    pub binding: Binding,
    /// The next smallest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<Binding>,
    /// The binding ceiling less the headroom: the units to plan with. `None` when the binding
    /// ceiling cannot be planned with (see `not_priced`).
    pub planned_units: Option<f64>,
    /// Why no cost per unit is given, when none is.
    pub not_priced: Option<String>,
    /// The binding ceiling is a lower bound, so the cost per unit is at most what is shown.
    pub cost_is_upper_bound: bool,
    /// The instance's price a month over the planned units.
    pub per_unit_month: Option<f64>,
    /// The cost per unit-month over the people in a unit.
    pub per_person_month: Option<f64>,
    /// Where its SLO ceiling comes from, in words: measured in its shape, or scaled from (or
    /// as measured on) the machine that ran.
    pub measured: String,
    /// The month with the lines beside the instance.
    pub all_in: AllIn,
    /// What a reader should know before trusting this plan.
    pub warnings: Vec<String>,
    /// The prices this plan used that are older than the model allows, or that the provider
    /// changed since (`plan --check` refuses them without `--stale-ok`).
    pub stale_prices: Vec<StalePrice>,
}

/// A price a plan used that is out of date on the plan's day.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct StalePrice {
    /// The instance or the line it prices (`t4g.medium`, `EBS gp3, 20 GB`).
    pub name: String,
    /// The day the price was read (`YYYY-MM-DD`), or what the table says instead.
    pub as_of: String,
    /// Why it is out of date: its age over the allowed one, or the provider's change.
    pub why: Vec<String>,
}

/// The monthly cost with the lines beside the instance.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct AllIn {
    /// The instance and its lines, a month.
    pub per_month: f64,
    /// That over the planned units.
    pub per_unit_month: Option<f64>,
    /// That over the people the planned units hold.
    pub per_person_month: Option<f64>,
    /// The lines.
    pub lines: Vec<CostLine>,
}

#[cfg(test)]
mod tests;
