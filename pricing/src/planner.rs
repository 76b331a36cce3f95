//! The planner's one model: from a [`Request`] (the spec's `[capacity]` and `[plan]`, flags
//! over them) and what was [`Measured`], the fits, the SLO ceiling and a plan per instance.
//!
//! `headroom plan` and the capacity page both call [`plan`], so a page and its own cost table
//! cannot disagree: the memory sweep and the ceiling phase are chosen by one rule
//! ([`memory_sweep`], [`ceiling_sweep`]).

use std::collections::BTreeMap;

use headroom_matrix::RunMatrix;
use headroom_results::Results;

use crate::PriceTable;
use crate::entries::HOURS_PER_MONTH;
use crate::fit::fit;
use crate::plan::{
    Emulated, EmulatedCeiling, FitJson, FleetJson, InstanceJson, InstancePlan, Lines, Model,
    Placement, PlacementJson, PlanReport, ScaledCeilings, Selection, ServiceFits, SloCeilingJson,
    ceiling_sweep, for_budget, for_units, memory_sweep, place, plan_instance, slo_ceiling,
};
use crate::points::{self, MeasuredSweep};
use jiff::civil::Date;

/// What a plan is asked for: the unit and its model, what to price, and what to rank.
#[derive(Debug, Clone)]
pub struct Request {
    /// What one unit is (`room`), and how the planner prices it (everything measured is
    /// filled in by [`plan`]).
    pub model: Model,
    /// The series memory is provisioned against (`rss`, a `[measure]` series, a CSV column).
    pub memory_series: String,
    /// The phase whose points fit memory, when the spec names one.
    pub memory_phase: Option<String>,
    /// The phase whose SLO verdicts give the ceiling, when the spec names one.
    pub ceiling_phase: Option<String>,
    /// The variable that counts units at a point (`rooms`), or the CSV's x column.
    pub units_variable: Option<String>,
    /// The instance types to price, in order; none with `units` or `budget` prices every
    /// instance of `provider`.
    pub instances: Vec<String>,
    /// The provider whose instances are candidates when none is named (`aws`).
    pub provider: String,
    /// The cheapest fleet that holds this many units, per instance type.
    pub units: Option<u64>,
    /// The most units this much a month holds, per instance type.
    pub budget: Option<f64>,
    /// A stack priced apart: `(service, instance)`, each service on an instance of its own.
    pub place: Vec<(String, String)>,
}

impl Request {
    /// A plan from flags alone: a `unit`, 512 MiB kept for the OS, one public IPv4 address,
    /// prices older than 180 days warned of.
    pub fn new(today: Option<Date>) -> Request {
        Request {
            model: Model {
                unit: "unit".to_owned(),
                people_per_unit: 1.0,
                reserve_bytes: 512.0 * 1_048_576.0,
                lines: Lines {
                    public_ipv4: 1,
                    ..Lines::default()
                },
                today,
                max_price_age_days: 180,
                cpu_target: 0.8,
                ..Model::default()
            },
            memory_series: "rss".to_owned(),
            memory_phase: None,
            ceiling_phase: None,
            units_variable: None,
            instances: Vec::new(),
            provider: "aws".to_owned(),
            units: None,
            budget: None,
            place: Vec::new(),
        }
    }

    /// The spec's own plan: its `[bench]` unit, `[capacity]` and `[plan]`, no flag over them
    /// (what a capacity page shows).
    pub fn of_spec(matrix: &RunMatrix, today: Option<Date>) -> Request {
        let mut request = Request::new(today);
        let capacity = &matrix.capacity;
        let model = &mut request.model;
        model.unit = matrix.bench.unit.clone();
        model.people_per_unit = matrix.bench.people_per_unit as f64;
        model.reserve_bytes = capacity.reserve.bytes() as f64;
        model.cap = capacity.cap.map(|c| c as f64);
        model.headroom = capacity.headroom.fraction();
        model.cpu_scales_with_vcpus = capacity.cpu_scales_with_vcpus;
        model.cpu_target = capacity.cpu_target.fraction();
        model.server_cores = matrix.target.cores;
        request.memory_series = capacity.memory.clone();
        request.memory_phase = capacity.memory_phase.clone();
        request.ceiling_phase = capacity.ceiling_phase.clone();
        request.units_variable = capacity.units.clone();
        if let Some(priced) = &matrix.plan {
            request.instances = priced.instances.clone();
            request.budget = priced.budget_usd_per_month;
            request.provider = priced.provider.as_str().to_owned();
            request.place = priced
                .place
                .iter()
                .map(|(service, instance)| (service.clone(), instance.clone()))
                .collect();
            let model = &mut request.model;
            model.max_price_age_days =
                (priced.max_price_age.as_secs_f64() / 86_400.0).round() as i64;
            model.lines = Lines {
                ebs_gb: priced.ebs_gb,
                rds: priced.rds.clone(),
                public_ipv4: priced.public_ipv4,
                egress_gb: priced.egress_gb,
            };
        }
        request
    }
}

/// The points a plan stands on.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// One sweep per phase (or the CSV's one).
    pub sweeps: Vec<MeasuredSweep>,
    /// The logical cores the points were measured on; `None` leaves the SLO ceiling unscaled
    /// (a warning says so), never 1.
    pub cores: Option<f64>,
    /// The points came with `--points`, not from a results file: the fits say so.
    pub given_points: bool,
}

impl Measured {
    /// The points of a results file, one sweep per phase.
    pub fn from_results(results: &Results) -> Measured {
        Measured {
            sweeps: points::from_results(results),
            cores: results.environment.logical_cores.map(|c| c as f64),
            given_points: false,
        }
    }

    /// Points measured elsewhere (a CSV).
    pub fn given(sweep: MeasuredSweep) -> Measured {
        Measured {
            sweeps: vec![sweep],
            cores: None,
            given_points: true,
        }
    }

    /// The one series in bytes of these points (`rss_mib`), when none is named `default`: a
    /// CSV names its columns with their units, so `rss` alone would find no memory in it.
    pub fn lone_memory_series(&self, default: &str) -> Option<String> {
        let series = || self.sweeps.iter().flat_map(|s| s.series.iter());
        if series().any(|s| s.name == default) {
            return None;
        }
        let mut bytes: Vec<&str> = series()
            .filter(|s| s.unit == points::Unit::Bytes)
            .map(|s| s.name.as_str())
            .collect();
        bytes.sort_unstable();
        bytes.dedup();
        match bytes[..] {
            [one] => Some(one.to_owned()),
            _ => None,
        }
    }
}

/// What the planner worked out: the model with its fits, a plan per instance, notes, and the
/// JSON report of it all.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The request's model with the measured fits and SLO ceiling filled in.
    pub model: Model,
    /// One plan per instance type, in the order asked.
    pub plans: Vec<InstancePlan>,
    /// What the measurements could not give (no fit, no sweep), in words.
    pub notes: Vec<String>,
    /// The stack priced apart, when asked (`[plan] place`, `--place`).
    pub placement: Option<Placement>,
    /// `headroom plan --json`.
    pub report: PlanReport,
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Neither an instance to price nor a point to say anything about.
    #[error(
        "name the instances to price: `--instance t4g.medium` (or [plan] instances in the spec)"
    )]
    NothingToPlan,
    /// An instance type the price table does not have.
    #[error("`{0}` is not in the price table; `headroom prices` lists the instances")]
    UnknownInstance(String),
    /// A service placed on an instance the price table does not have.
    #[error("{0}")]
    Placement(String),
}

/// Why a sweep was chosen, when the points were given rather than run.
const GIVEN_POINTS: &str = "the points given with --points";

/// The plan a spec's own `[plan]` asks for, over its results file, as the page shows it
/// beside `headroom plan`'s: `None` when the spec prices no instance.
pub fn plan_of_spec(
    matrix: &RunMatrix,
    results: &Results,
    table: &PriceTable,
    today: Date,
) -> Result<Option<PlanReport>, PlanError> {
    let priced = matrix
        .plan
        .as_ref()
        .is_some_and(|plan| !plan.instances.is_empty());
    if !priced {
        return Ok(None);
    }
    let request = Request::of_spec(matrix, Some(today));
    let measured = Measured::from_results(results);
    Ok(Some(plan(&request, &measured, table)?.report))
}

/// Plans `request` over `measured` with the prices of `table`.
pub fn plan(
    request: &Request,
    measured: &Measured,
    table: &PriceTable,
) -> Result<Planned, PlanError> {
    let mut model = request.model.clone();
    if let Some(cores) = measured.cores {
        model.measured_cores = cores;
    }
    model.points_given = measured.given_points;
    let mut notes = Vec::new();
    let mut service_fits = BTreeMap::new();
    let fits = fit_measured(request, measured, &mut model, &mut notes, &mut service_fits);
    let sweeps = &measured.sweeps;
    let mut instances = request.instances.clone();
    if instances.is_empty() && (request.units.is_some() || request.budget.is_some()) {
        // Every priced instance of the provider is a candidate.
        instances = table
            .instance_ids(&request.provider)
            .map(str::to_owned)
            .collect();
    }
    let placement = if request.place.is_empty() {
        None
    } else {
        Some(place(&request.place, &model, &service_fits, table).map_err(PlanError::Placement)?)
    };
    // Measurements alone (no instance named) still say where the SLOs broke and what a unit
    // weighs; with nothing measured either, there is nothing to say.
    if instances.is_empty() && sweeps.is_empty() {
        return Err(PlanError::NothingToPlan);
    }
    if instances.is_empty() && placement.is_none() {
        notes.push(
            "no instance was named, so nothing is priced: add `--instance t4g.medium` (or [plan] instances in the spec)".to_owned(),
        );
    }
    let plans = instances
        .iter()
        .map(|name| {
            table
                .instance(name)
                .map(|instance| plan_instance(instance, &model, table))
                .ok_or_else(|| PlanError::UnknownInstance(name.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings: Vec<String> = notes.clone();
    let placed = placement
        .iter()
        .flat_map(|p| p.services.iter().map(|s| &s.plan));
    for warning in plans.iter().chain(placed).flat_map(|p| &p.warnings) {
        if !warnings.contains(warning) {
            warnings.push(warning.clone());
        }
    }
    let report = PlanReport {
        format: crate::plan::PLAN_FORMAT,
        unit: model.unit.clone(),
        fits,
        slo_ceiling: model.slo.as_ref().map(SloCeilingJson::from),
        scaled_ceilings: model.scaled.as_ref().map(ScaledCeilings::json),
        instances: plans.iter().map(InstanceJson::from).collect(),
        for_units: request.units.map(|n| {
            for_units(&plans, n as f64)
                .iter()
                .map(FleetJson::from)
                .collect()
        }),
        for_budget: request
            .budget
            .map(|b| for_budget(&plans, b).iter().map(FleetJson::from).collect()),
        placement: placement.as_ref().map(PlacementJson::from),
        hours_per_month: HOURS_PER_MONTH,
        warnings,
        price_tables: table.sources().to_vec(),
    };
    Ok(Planned {
        model,
        plans,
        notes,
        placement,
        report,
    })
}

/// Fits memory (and the server's CPU) over the memory sweep and finds the SLO ceiling of the
/// ceiling sweep, into `model`; what could not be found goes to `notes`.
fn fit_measured(
    request: &Request,
    measured: &Measured,
    model: &mut Model,
    notes: &mut Vec<String>,
    service_fits: &mut BTreeMap<String, ServiceFits>,
) -> Vec<FitJson> {
    let sweeps = &measured.sweeps;
    let mut fits = Vec::new();
    if sweeps.is_empty() {
        return fits;
    }
    let selection = Selection {
        units: request.units_variable.as_deref(),
        memory_series: &request.memory_series,
        memory_phase: request.memory_phase.as_deref(),
        ceiling_phase: request.ceiling_phase.as_deref(),
    };
    let because = |chosen: &'static str| {
        if measured.given_points {
            GIVEN_POINTS
        } else {
            chosen
        }
    };
    match memory_sweep(sweeps, selection) {
        Ok(chosen) => {
            let (sweep, because) = (chosen.sweep, because(chosen.because));
            for (service, _) in &request.place {
                let own = crate::plan::fit_service(sweep, service);
                service_fits.insert(service.clone(), own);
            }
            let series = &request.memory_series;
            if let Some(points) = sweep.series.iter().find(|p| &p.name == series) {
                match fit(&points.points) {
                    Ok(f) => {
                        fits.push(FitJson::of(sweep, series, points.unit, because, &f));
                        model.memory = Some(f);
                    }
                    Err(why) => notes.push(format!(
                        "no memory fit of `{series}` in `{}`: {why}",
                        sweep.name
                    )),
                }
            }
            // The server's CPU over the hold: reported always, planned with (the measured CPU
            // ceiling, a burstable instance's sustained ceiling and credits) only when the line
            // can be trusted. Only the steps that passed their SLOs: past saturation a
            // server's CPU stops growing, and the line would promise what it cannot do.
            let cpu = sweep.series.iter().find(|p| p.name == "cpu");
            if cpu.is_none() && !measured.given_points {
                notes.push(format!(
                    "the results carry no CPU over the hold for `{}` (results from before it was recorded, or an external target without `pid_file`): no CPU ceiling is measured; give --cpu-ceiling",
                    sweep.name
                ));
            }
            let passing = cpu.map(|cpu| crate::plan::passing_points(sweep, &cpu.points));
            if let (Some(cpu), Some((points, left_out))) = (cpu, passing)
                && let Ok(f) = fit(&points)
            {
                if left_out > 0 {
                    notes.push(format!(
                        "the CPU fit over `{}` leaves out {left_out} step{} where the SLOs failed: a saturated server's CPU stops growing",
                        sweep.name,
                        if left_out == 1 { "" } else { "s" }
                    ));
                }
                fits.push(FitJson::of(sweep, "cpu", cpu.unit, because, &f));
                if f.is_weak() {
                    notes.push(format!(
                        "the CPU fit over `{}` is weak ({}): it is reported, not planned with",
                        sweep.name,
                        f.weaknesses().join("; ")
                    ));
                    model.cpu_fit_weak = true;
                } else {
                    model.cpu = Some(f);
                }
            }
        }
        Err(why) => notes.push(why),
    }
    if model.cpu_ceiling.is_none() {
        match ceiling_sweep(sweeps, selection) {
            Ok(chosen) => model.slo = slo_ceiling(chosen.sweep, because(chosen.because)),
            Err(why) => notes.push(why),
        }
        model.emulated = emulated_ceilings(sweeps);
        scaled_ceilings(sweeps, model, notes);
    }
    fits
}

/// The SLO ceilings measured at several core counts (`[plan] scale_cores`), into `model`;
/// why they carry nothing, to `notes`.
fn scaled_ceilings(sweeps: &[MeasuredSweep], model: &mut Model, notes: &mut Vec<String>) {
    match ScaledCeilings::of(sweeps, model.slo.as_ref(), model.measured_cores) {
        Ok(Some(mut scaled)) => {
            scaled.extrapolate = model.extrapolate;
            model.scaled = Some(scaled);
        }
        Ok(None) => {}
        Err(why) => notes.push(why),
    }
}

/// The SLO ceilings of the phases run in an instance's shape, by instance type.
fn emulated_ceilings(sweeps: &[MeasuredSweep]) -> BTreeMap<String, Emulated> {
    let mut emulated: BTreeMap<String, Emulated> = BTreeMap::new();
    for sweep in sweeps {
        let Some(shape) = &sweep.emulates else {
            continue;
        };
        let Some(slo) = slo_ceiling(sweep, "run in the instance's shape") else {
            continue;
        };
        let ceiling = EmulatedCeiling {
            slo,
            shape: shape.describe(),
            measured_in: sweep.measured_in.clone(),
        };
        let entry = emulated.entry(shape.instance.clone()).or_default();
        if shape.baseline {
            entry.baseline = Some(ceiling);
        } else {
            entry.full = Some(ceiling);
        }
    }
    emulated
}

#[cfg(test)]
mod tests;
