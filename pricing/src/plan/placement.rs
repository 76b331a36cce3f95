//! A stack priced apart (`[plan] place = { db = "r7g.medium", api = "t4g.small" }`): each
//! service on an instance of its own, planned with its own memory and CPU per unit (`db.rss`,
//! `db.cpu`), the stack's SLO ceiling shared by all; the stack holds what its most constrained
//! service holds, and a unit costs every instance over that.

use super::instance::plan_instance;
use super::{InstancePlan, Model};
use crate::PriceTable;
use crate::fit::{Fit, fit};
use crate::points::MeasuredSweep;

/// One service's own fits, from the memory sweep.
#[derive(Debug, Clone, Default)]
pub struct ServiceFits {
    /// Its memory per unit (`db.rss`).
    pub memory: Option<Fit>,
    /// Its CPU per unit over the hold (`db.cpu`), when strong enough to plan with.
    pub cpu: Option<Fit>,
    /// What could not be fitted, in words.
    pub notes: Vec<String>,
}

/// A service on its instance.
#[derive(Debug, Clone)]
pub struct PlacedService {
    /// The service (`db`).
    pub service: String,
    /// Its instance planned with its own fits.
    pub plan: InstancePlan,
}

/// The stack priced apart.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Each service on its instance, in the order placed.
    pub services: Vec<PlacedService>,
    /// The services whose instances hold the fewest units: they set the stack's (more than
    /// one when they hold as many, as under a shared SLO ceiling).
    pub binding_services: Vec<String>,
    /// The units one stack of these instances is planned with: the fewest any service's
    /// instance is planned with. `None` when one of them cannot be planned with.
    pub planned_units: Option<f64>,
    /// Every instance's price a month, together.
    pub per_month: f64,
    /// Every instance and its lines, a month.
    pub all_in_month: f64,
    /// `per_month` over the planned units.
    pub per_unit_month: Option<f64>,
    /// `all_in_month` over the planned units.
    pub all_in_per_unit_month: Option<f64>,
    /// The binding ceiling is a lower bound: the cost per unit is at most what is shown.
    pub cost_is_upper_bound: bool,
    /// Why no cost per unit is given, when none is.
    pub not_priced: Option<String>,
}

/// A service's own memory and CPU per unit over the memory sweep (`db.rss`, `db.cpu`): the
/// CPU from the steps that passed their SLOs, planned with only when strong.
pub fn fit_service(sweep: &MeasuredSweep, service: &str) -> ServiceFits {
    let mut own = ServiceFits::default();
    let series = |name: String| sweep.series.iter().find(|p| p.name == name);
    match series(format!("{service}.rss")).map(|points| fit(&points.points)) {
        Some(Ok(memory)) => own.memory = Some(memory),
        Some(Err(why)) => own.notes.push(format!("`{service}`: no memory fit: {why}")),
        None => own.notes.push(format!(
            "`{service}`: the `{}` phase has no memory of its own (no service of that name ran)",
            sweep.name
        )),
    }
    if let Some(cpu) = series(format!("{service}.cpu")) {
        let (points, _) = super::passing_points(sweep, &cpu.points);
        match fit(&points) {
            Ok(f) if f.is_weak() => own.notes.push(format!(
                "`{service}`: its CPU fit is weak ({}): reported, not planned with",
                f.weaknesses().join("; ")
            )),
            Ok(f) => own.cpu = Some(f),
            Err(why) => own.notes.push(format!("`{service}`: no CPU fit: {why}")),
        }
    }
    own
}

/// Plans each `(service, instance)` with the service's fits and the stack's SLO ceiling.
/// `Err` names an instance the table does not have.
pub fn place(
    placed: &[(String, String)],
    model: &Model,
    fits: &std::collections::BTreeMap<String, ServiceFits>,
    table: &PriceTable,
) -> Result<Placement, String> {
    let mut services = Vec::new();
    for (service, instance_id) in placed {
        let instance = table.instance(instance_id).ok_or_else(|| {
            format!("`{instance_id}` (for `{service}`) is not in the price table; `headroom prices` lists the instances")
        })?;
        let own = fits.get(service).cloned().unwrap_or_default();
        let mut model = model.clone();
        model.memory = own.memory;
        model.cpu_fit_weak = model.cpu_fit_weak || own.cpu.is_none();
        model.cpu = own.cpu;
        // The SLO ceiling was measured on the whole stack as it ran: which service's cores it
        // would scale with is not known, so it is taken as measured.
        model.cpu_scales_with_vcpus = false;
        let mut plan = plan_instance(instance, &model, table);
        // The instance's own words name "the memory fit": here it is the service's.
        for warning in &mut plan.warnings {
            if let Some(rest) = warning.strip_prefix("the memory fit") {
                *warning = format!("`{service}`'s memory fit{rest}");
            }
        }
        plan.warnings.extend(own.notes);
        services.push(PlacedService {
            service: service.clone(),
            plan,
        });
    }
    let binding = services
        .iter()
        .filter_map(|s| Some((s, s.plan.planned_units?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    // An instance planned with no whole unit holds no stack either: not a cost per unit of 0.
    let unpriced = services
        .iter()
        .find(|s| s.plan.planned_units.is_none_or(|units| units <= 0.0));
    let planned_units = match unpriced {
        Some(_) => None,
        None => binding.map(|(_, units)| units),
    };
    let not_priced = unpriced.map(|s| {
        format!(
            "`{}` on {}: {}",
            s.service,
            s.plan.name,
            s.plan
                .not_priced
                .clone()
                .unwrap_or_else(|| "no ceiling to plan with".to_owned())
        )
    });
    let per_month: f64 = services.iter().map(|s| s.plan.per_month).sum();
    let all_in_month: f64 = services.iter().map(|s| s.plan.all_in.per_month).sum();
    let per_unit = |total: f64| planned_units.filter(|u| *u > 0.0).map(|u| total / u);
    // Services whose instances hold as few units as the binding one bind together (the
    // shared SLO ceiling, often).
    let binding_services = binding
        .map(|(_, least)| {
            services
                .iter()
                .filter(|s| s.plan.planned_units == Some(least))
                .map(|s| s.service.clone())
                .collect()
        })
        .unwrap_or_default();
    Ok(Placement {
        binding_services,
        cost_is_upper_bound: binding.is_some_and(|(s, _)| s.plan.cost_is_upper_bound),
        per_unit_month: per_unit(per_month),
        all_in_per_unit_month: per_unit(all_in_month),
        planned_units,
        per_month,
        all_in_month,
        not_priced,
        services,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::fit;

    /// Memory per unit, `intercept + slope × x` MiB over x = 100…500.
    fn memory(intercept_mib: f64, slope_mib: f64) -> Fit {
        let points: Vec<(f64, f64)> = (1..=5)
            .map(|k| {
                let x = f64::from(k) * 100.0;
                (x, (intercept_mib + slope_mib * x) * 1_048_576.0)
            })
            .collect();
        fit(&points).expect("a line")
    }

    /// Each service is planned on its instance with its own memory per unit; the stack holds
    /// what the tighter one holds, and a unit costs both instances over that.
    #[test]
    fn the_stack_holds_what_its_tightest_service_holds() {
        let table = PriceTable::embedded().expect("table");
        let model = Model {
            unit: "reader".to_owned(),
            people_per_unit: 1.0,
            reserve_bytes: 512.0 * 1_048_576.0,
            cpu_target: 0.8,
            ..Model::default()
        };
        let mut fits = std::collections::BTreeMap::new();
        // db: 100 MiB + 10 MiB a reader on 8 GiB less 512 MiB: (8192 − 512 − 100) / 10 = 758.
        fits.insert(
            "db".to_owned(),
            ServiceFits {
                memory: Some(memory(100.0, 10.0)),
                ..ServiceFits::default()
            },
        );
        // api: 50 MiB + 2 MiB a reader on 2 GiB less 512 MiB: (2048 − 512 − 50) / 2 = 743.
        fits.insert(
            "api".to_owned(),
            ServiceFits {
                memory: Some(memory(50.0, 2.0)),
                ..ServiceFits::default()
            },
        );
        let placed = [
            ("db".to_owned(), "r7g.medium".to_owned()),
            ("api".to_owned(), "c7g.medium".to_owned()),
        ];
        let placement = place(&placed, &model, &fits, &table).expect("placed");
        let units = |k: usize| placement.services[k].plan.planned_units.expect("planned");
        assert_eq!((units(0), units(1)), (758.0, 743.0));
        assert_eq!(placement.binding_services, ["api"]);
        assert_eq!(placement.planned_units, Some(743.0));
        let month = placement.services[0].plan.per_month + placement.services[1].plan.per_month;
        assert!((placement.per_month - month).abs() < 1e-9);
        let per_unit = placement.per_unit_month.expect("priced");
        assert!((per_unit - month / 743.0).abs() < 1e-9, "{per_unit}");
        assert!(!placement.cost_is_upper_bound);
        // An instance the table does not have is named with its service.
        let unknown = [("db".to_owned(), "r9z.huge".to_owned())];
        let why = place(&unknown, &model, &fits, &table).expect_err("refused");
        // A service whose instance holds no whole unit leaves the stack unpriced, named.
        let mut starved = fits.clone();
        starved.get_mut("api").expect("api").memory = Some(memory(1600.0, 2.0));
        let placement = place(&placed, &model, &starved, &table).expect("placed");
        assert_eq!(placement.planned_units, None);
        assert_eq!(placement.per_unit_month, None);
        let not_priced = placement.not_priced.expect("why");
        assert!(
            not_priced.starts_with("`api` on c7g.medium"),
            "{not_priced}"
        );
        assert!(why.contains("`r9z.huge` (for `db`)"), "{why}");
    }
}
