//! One instance planned: its ceilings, the binding one, its month and what a unit costs on it.

use super::Model;
use super::{AllIn, InstancePlan, Resource, burstable, ceilings, costs};
use crate::{Instance, PriceTable};

/// The plan for one instance type.
pub fn plan_instance(instance: &Instance, model: &Model, table: &PriceTable) -> InstancePlan {
    let mut warnings = Vec::new();
    let memory = ceilings::usable_memory(instance, model, &mut warnings);
    let mut ceilings = ceilings::of_instance(instance, model, memory, &mut warnings);
    let bound = ceilings::bind(&ceilings, model, &mut warnings);
    // Burstable: the measured ceiling holds while CPU credits last. The sustained ceiling is
    // said beside the others; it does not bind.
    let mut lines = Vec::new();
    if instance.burstable {
        let sustained = burstable::sustained(instance, model, table, bound.planned_units);
        match sustained {
            Ok((ceiling, credits)) => {
                ceilings.insert(Resource::CpuSustained, ceiling);
                lines.extend(credits);
            }
            Err(warning) => warnings.push(warning),
        }
    }
    let mut stale_prices = Vec::new();
    costs::stale_price(
        &instance.as_of,
        instance.stale_after.as_deref(),
        &instance.id,
        model,
        &mut warnings,
        &mut stale_prices,
    );
    let (currency, per_month) = costs::instance_month(instance, &mut warnings);
    match instance.provider.as_str() {
        "azure" => costs::azure_lines(instance, model, &mut warnings),
        _ if currency == "USD" => costs::usd_lines(model, table, &mut lines, &mut warnings),
        _ => costs::eur_lines(instance, model, table, &mut lines, &mut warnings),
    }
    // A line's price ages like the instance's; an undated one is counted stale.
    for line in &lines {
        costs::stale_price(
            &line.as_of,
            None,
            &line.name,
            model,
            &mut warnings,
            &mut stale_prices,
        );
    }
    let per_unit = |total: f64| {
        bound
            .planned_units
            .filter(|units| *units > 0.0)
            .map(|units| total / units)
    };
    let per_person = |total: f64| per_unit(total).map(|p| p / model.people_per_unit.max(1.0));
    let all_in_month = per_month + lines.iter().map(|l| l.per_month).sum::<f64>();
    InstancePlan {
        name: instance.id.clone(),
        vcpu: instance.vcpu,
        memory_gib: memory.gib,
        currency,
        per_month,
        as_of: instance.as_of.clone(),
        price_table: table
            .source_of(&instance.id)
            .map_or_else(String::new, |source| source.name.clone()),
        per_unit_month: per_unit(per_month),
        per_person_month: per_person(per_month),
        measured: ceilings::measured(instance, model),
        all_in: AllIn {
            per_month: all_in_month,
            per_unit_month: per_unit(all_in_month),
            per_person_month: per_person(all_in_month),
            lines,
        },
        ceilings,
        binding: bound.binding,
        runner_up: bound.runner_up,
        planned_units: bound.planned_units,
        not_priced: bound.not_priced,
        cost_is_upper_bound: bound.cost_is_upper_bound,
        warnings,
        stale_prices,
    }
}
