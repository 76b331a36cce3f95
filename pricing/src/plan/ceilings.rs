//! The ceilings on one instance (memory, SLO or given CPU, cap) and the one that binds.

use super::scaled::cores_phrase;
use super::sweeps::SloCeiling;
use super::{Binding, Ceiling, EXTRAPOLATION_LIMIT, Model, Resource, factor};
use crate::Instance;
use crate::numbers::count;
use std::collections::BTreeMap;

/// An instance's memory, as the price table gives it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Memory {
    pub bytes: f64,
    pub gib: f64,
}

/// The instance's memory; a table that gives GB is taken as GiB, and said.
pub(super) fn usable_memory(
    instance: &Instance,
    model: &Model,
    warnings: &mut Vec<String>,
) -> Memory {
    let (bytes, gib) = match (instance.memory_gib, instance.memory_gb) {
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
    if model.reserve_bytes >= bytes && bytes > 0.0 {
        warnings.push(format!(
            "{}: the reserve ({:.0} MiB) is all of its {gib} GiB: nothing is left for the server, so its memory ceiling is 0",
            instance.id,
            model.reserve_bytes / 1_048_576.0
        ));
    }
    Memory { bytes, gib }
}

/// Every ceiling the model gives this instance, by resource (`memory`, `slo` or `cpu`, `cap`).
pub(super) fn of_instance(
    instance: &Instance,
    model: &Model,
    memory: Memory,
    warnings: &mut Vec<String>,
) -> BTreeMap<Resource, Ceiling> {
    let mut ceilings = BTreeMap::new();
    if let Some(ceiling) = memory_ceiling(instance, model, memory, warnings) {
        ceilings.insert(Resource::Memory, ceiling);
    }
    if model.cpu_ceiling.is_none()
        && let Some(ceiling) = measured_cpu_ceiling(instance, model, warnings)
    {
        ceilings.insert(Resource::CpuMeasured, ceiling);
    }
    if let Some(given) = model.cpu_ceiling {
        ceilings.insert(
            Resource::Cpu,
            Ceiling::at(
                given,
                "given (--cpu-ceiling), not measured by headroom".to_owned(),
            ),
        );
    } else if let Some(emulated) = model
        .emulated
        .get(&instance.id)
        .and_then(|e| e.full.as_ref())
    {
        // Measured in the instance's shape: nothing to scale.
        let how = format!(
            "; measured in {}'s shape, {}",
            instance.id,
            emulated.describe()
        );
        ceilings.insert(
            Resource::Slo,
            slo_ceiling_with(&emulated.slo, None, &how, warnings),
        );
    } else if let Some(scaled) = &model.scaled {
        // Measured at several core counts: as measured at the instance's, else carried to it.
        let cores = model.usable_cores(instance);
        let ceiling = match scaled.measured_at(cores) {
            Some(slo) => {
                let how = format!("; measured with the server on {}", cores_phrase(cores));
                slo_ceiling_with(slo, None, &how, warnings)
            }
            None => super::carried::ceiling_on(instance, model, scaled, warnings),
        };
        ceilings.insert(Resource::Slo, ceiling);
    } else if let Some(slo) = &model.slo {
        ceilings.insert(
            Resource::Slo,
            slo_ceiling_on(instance, model, slo, warnings),
        );
    }
    if let Some(cap) = model.cap {
        ceilings.insert(
            Resource::Cap,
            Ceiling::at(cap, "the server's own limit".to_owned()),
        );
    }
    ceilings
}

/// The memory ceiling: the memory left after the reserve and the fit's intercept, over the
/// fit's slope. `None` without a fit that grows with units.
fn memory_ceiling(
    instance: &Instance,
    model: &Model,
    memory: Memory,
    warnings: &mut Vec<String>,
) -> Option<Ceiling> {
    // The fit's weaknesses are the fit's (the same for every instance), said whatever its
    // slope; how far this instance's ceiling lies past the data is the instance's.
    let fit = model.memory.as_ref()?;
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
        return None;
    }
    let room = memory.bytes - model.reserve_bytes - fit.intercept;
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
    Some(Ceiling {
        low: (weak && fit.slope_ci95[1] > 0.0).then_some(low),
        extrapolated,
        weak,
        ..Ceiling::at(
            units,
            format!(
                "({} GiB − {:.1} MiB reserve − {:.1} MiB) / {:.2} MiB per {}",
                memory.gib,
                model.reserve_bytes / 1_048_576.0,
                fit.intercept / 1_048_576.0,
                fit.slope / 1_048_576.0,
                model.unit
            ),
        )
    })
}

/// The CPU ceiling from the fit of the server's CPU over the hold: the instance's vCPUs at
/// `cpu_target`, less the fit's intercept, over its cores per unit. Scaled to the instance's
/// vCPUs from the machine measured on, not measured on the instance. `None` without a CPU fit
/// to plan with, or one that does not grow with units.
fn measured_cpu_ceiling(
    instance: &Instance,
    model: &Model,
    warnings: &mut Vec<String>,
) -> Option<Ceiling> {
    let fit = model.cpu.as_ref().filter(|f| f.slope > 0.0)?;
    if model.cpu_target <= 0.0 {
        return None;
    }
    let cores = model.usable_cores(instance);
    let usable = cores * model.cpu_target;
    let units = ((usable - fit.intercept) / fit.slope).floor().max(0.0);
    let factor = units / fit.max_x;
    let extrapolated = (fit.max_x > 0.0 && factor > EXTRAPOLATION_LIMIT).then_some(factor);
    if let Some(factor) = extrapolated {
        warnings.push(format!(
            "{}: the CPU ceiling, {} {}, is {} the largest measured ({}): an extrapolation, not a ceiling to plan with",
            instance.id,
            count(units),
            crate::numbers::plural(&model.unit),
            self::factor(factor),
            count(fit.max_x)
        ));
    }
    let measured_on = if model.measured_cores > 0.0 {
        format!("a {}-core machine", model.measured_cores)
    } else {
        "a machine whose cores were not recorded".to_owned()
    };
    Some(Ceiling {
        extrapolated,
        ..Ceiling::at(
            units,
            match model.server_cores.filter(|c| *c < f64::from(instance.vcpu)) {
                Some(server) => format!(
                    "({} of {} vCPU × {:.0} % − {:.3} cores) / {:.4} cores per {}, from the CPU over the hold on {measured_on}: the server uses at most {} ([target] cores)",
                    cores_phrase(server),
                    instance.vcpu,
                    model.cpu_target * 100.0,
                    fit.intercept,
                    fit.slope,
                    model.unit,
                    cores_phrase(server)
                ),
                None => format!(
                    "({} vCPU × {:.0} % − {:.3} cores) / {:.4} cores per {}, from the CPU over the hold on {measured_on}: scaled to {} vCPU, not measured there",
                    instance.vcpu,
                    model.cpu_target * 100.0,
                    fit.intercept,
                    fit.slope,
                    model.unit,
                    instance.vcpu
                ),
            },
        )
    })
}

impl Model {
    /// The cores of `instance` the server can use: its vCPUs, or `[target] cores` if fewer.
    pub(super) fn usable_cores(&self, instance: &Instance) -> f64 {
        let vcpu = f64::from(instance.vcpu);
        self.server_cores.map_or(vcpu, |cores| cores.min(vcpu))
    }
}

/// Where an instance's SLO ceiling comes from, as a phrase for the page and `plan`: `SLO
/// ceiling measured at 2 vCPU, 3.5GiB (…)`, `… scaled from a 2-core machine to 4 vCPU, not
/// measured on it`.
pub(super) fn measured(instance: &Instance, model: &Model) -> String {
    let found = measured_phrase(instance, model);
    match model.server_cores.filter(|c| *c < f64::from(instance.vcpu)) {
        Some(cores) => format!(
            "{found}; the server uses at most {} of its {} vCPU ([target] cores), so its CPU ceiling is taken at {}",
            cores_phrase(cores),
            instance.vcpu,
            cores_phrase(cores)
        ),
        None => found,
    }
}

/// Where an instance's SLO ceiling comes from, without what `[target] cores` adds.
fn measured_phrase(instance: &Instance, model: &Model) -> String {
    let machine = if model.points_given {
        "the points given".to_owned()
    } else if model.measured_cores > 0.0 {
        format!("a machine with {} cores", model.measured_cores)
    } else {
        "a machine whose cores were not recorded".to_owned()
    };
    let unmeasured = if model.points_given {
        format!("from the points given, not measured on a {}", instance.id)
    } else if model.cpu_scales_with_vcpus && model.measured_cores > 0.0 {
        format!(
            "scaled from {machine} to {} vCPU, not measured on it",
            instance.vcpu
        )
    } else {
        format!("as measured on {machine}, not on a {}", instance.id)
    };
    if model.cpu_ceiling.is_some() {
        return "CPU ceiling given (--cpu-ceiling), not measured".to_owned();
    }
    if model.slo.is_none() && !model.emulated.contains_key(&instance.id) {
        return "no SLO ceiling measured".to_owned();
    }
    let emulated = model.emulated.get(&instance.id);
    let full = emulated.and_then(|e| e.full.as_ref());
    if let (Some(scaled), None) = (&model.scaled, full) {
        let cores = model.usable_cores(instance);
        let sizes: Vec<String> = scaled.sizes.iter().map(|(n, _)| cores_phrase(*n)).collect();
        return if scaled.sizes.iter().any(|(n, _)| *n == cores) {
            format!(
                "SLO ceiling measured with the server on {}",
                cores_phrase(cores)
            )
        } else {
            format!(
                "SLO ceiling carried to {} from the ceilings measured at {} ([plan] scale_cores), not measured there",
                cores_phrase(cores),
                sizes.join(", ")
            )
        };
    }
    let baseline = emulated.and_then(|e| e.baseline.as_ref());
    match (full, baseline) {
        (Some(full), Some(baseline)) => format!(
            "SLO ceiling measured at {}, and at its baseline, {}",
            full.describe(),
            baseline.describe()
        ),
        (Some(full), None) => format!("SLO ceiling measured at {}", full.describe()),
        (None, Some(baseline)) => format!(
            "SLO ceiling {unmeasured}; at its baseline measured, {}",
            baseline.describe()
        ),
        (None, None) => format!("SLO ceiling {unmeasured}"),
    }
}

/// The SLO ceiling on this instance: the sweep's, scaled to its vCPUs when the spec says the
/// server scales with cores.
fn slo_ceiling_on(
    instance: &Instance,
    model: &Model,
    slo: &SloCeiling,
    warnings: &mut Vec<String>,
) -> Ceiling {
    // A server that uses at most `cores` gains nothing from vCPUs past them, here or there.
    let measured = model
        .server_cores
        .map_or(model.measured_cores, |c| c.min(model.measured_cores));
    let scale = (model.cpu_scales_with_vcpus && model.measured_cores > 0.0)
        .then(|| model.usable_cores(instance) / measured);
    let scaling = match (scale, model.server_cores) {
        (Some(_), Some(server)) => format!(
            "; scaled from {measured} to {} cores, the most of {} vCPUs the server uses ([target] cores = {server})",
            model.usable_cores(instance),
            instance.vcpu
        ),
        (Some(_), None) => format!(
            "; scaled from {} measured cores to {} vCPUs",
            model.measured_cores, instance.vcpu
        ),
        (None, _) => "; as measured, not scaled to vCPUs".to_owned(),
    };
    slo_ceiling_with(slo, scale, &scaling, warnings)
}

/// An SLO ceiling, times `scale` when it is scaled, its note ending in `scaling`.
fn slo_ceiling_with(
    slo: &SloCeiling,
    scale: Option<f64>,
    scaling: &str,
    warnings: &mut Vec<String>,
) -> Ceiling {
    let scaled = |units: f64| scale.map_or(units, |s| (units * s).floor());
    let broke = if slo.broke.is_empty() {
        String::new()
    } else {
        format!(" ({})", slo.broke.join("; "))
    };
    if let Some(search) = &slo.search {
        return searched_ceiling(slo, search, &scaled, scaling, &broke, warnings);
    }
    match (slo.units, slo.first_failing) {
        (None, first) => {
            let first = first.unwrap_or_default();
            warnings.push(if slo.breached {
                format!(
                    "the SLOs failed already at the first step of `{}`, {}{broke}: the SLO ceiling is below it and was not measured; sweep lower to find it",
                    slo.phase,
                    count(first)
                )
            } else {
                // Nothing was measured there: a lower step would say no more.
                format!(
                    "nothing was measured at the first step of `{}`, {}{broke}: the server did not answer as expected, so where its SLO ceiling lies is unknown; make it answer (the runs' failures and notes say why) before sweeping lower",
                    slo.phase,
                    count(first)
                )
            });
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
    }
}

/// The SLO ceiling of a searched phase: its last pass, with the bracket, the precision and what
/// the search took; `from` failing is a ceiling below it, a search that judged nothing none.
fn searched_ceiling(
    slo: &SloCeiling,
    search: &super::sweeps::SearchedCeiling,
    scaled: &dyn Fn(f64) -> f64,
    scaling: &str,
    broke: &str,
    warnings: &mut Vec<String>,
) -> Ceiling {
    let phase = &slo.phase;
    let warm = search.warm();
    match (slo.units, slo.first_failing) {
        (Some(units), Some(fail)) => {
            let within = search.within();
            Ceiling {
                fails_at: Some(scaled(fail)),
                ..Ceiling::at(
                    scaled(units),
                    format!(
                        "searched in `{phase}`: passes at {}, fails at {}{within}, {}{broke}{warm}{scaling}",
                        count(units),
                        count(fail),
                        search.spent()
                    ),
                )
            }
        }
        (Some(units), None) => Ceiling {
            lower_bound: true,
            ..Ceiling::at(
                scaled(units),
                format!(
                    "searched in `{phase}`: {}, {}{warm}{scaling}",
                    search.said,
                    search.spent()
                ),
            )
        },
        (None, fail) if search.unconfirmed.is_some() => {
            warnings.push(format!(
                "the search of `{phase}` confirmed no load at the full hold: {}; no SLO ceiling is priced from it; give it the runs to confirm (`max_runs`, `max_time`)",
                search.said
            ));
            Ceiling {
                units: None,
                below: None,
                unconfirmed: search.unconfirmed.map(scaled),
                fails_at: fail.map(scaled),
                ..Ceiling::at(0.0, format!("searched in `{phase}`: {}", search.said))
            }
        }
        (None, fail) => {
            warnings.push(match fail {
                Some(fail) => format!(
                    "the SLOs failed already where the search of `{phase}` starts, {}{broke}: the SLO ceiling is below it and was not measured; lower the search's `from`",
                    count(fail)
                ),
                None => format!(
                    "the search of `{phase}` judged nothing: {}",
                    search.said
                ),
            });
            Ceiling {
                units: None,
                below: fail.map(scaled),
                ..Ceiling::at(0.0, format!("searched in `{phase}`: {}", search.said))
            }
        }
    }
}

/// The binding ceiling, the runner-up, and the units to plan with (or why there are none).
pub(super) struct Bound {
    pub binding: Binding,
    pub runner_up: Option<Binding>,
    pub planned_units: Option<f64>,
    pub not_priced: Option<String>,
    pub cost_is_upper_bound: bool,
}

/// Ranks the ceilings: the smallest binds, and the planned units are it less the headroom,
/// when it can be planned with.
pub(super) fn bind(
    ceilings: &BTreeMap<Resource, Ceiling>,
    model: &Model,
    warnings: &mut Vec<String>,
) -> Bound {
    let mut ranked: Vec<(&Resource, &Ceiling)> = ceilings.iter().collect();
    // Ties go to the non-memory resource: what the server refuses binds before what it holds.
    ranked.sort_by(|a, b| {
        a.1.rank()
            .total_cmp(&b.1.rank())
            .then((*a.0 == Resource::Memory).cmp(&(*b.0 == Resource::Memory)))
    });
    let binding_of = |(resource, c): &(&Resource, &Ceiling)| Binding {
        resource: **resource,
        units: c.units,
        reads: c.reads(),
    };
    let binding = ranked.first().map_or(
        Binding {
            resource: Resource::None,
            units: None,
            reads: "none".to_owned(),
        },
        binding_of,
    );
    let runner_up = ranked.get(1).map(binding_of);
    let binding_ceiling = ranked.first().map(|(_, c)| *c);
    let not_priced = match binding_ceiling {
        None => {
            warnings.push(
                "no ceiling: give a memory sweep, an SLO sweep, --cpu-ceiling or --cap".to_owned(),
            );
            Some("no ceiling was measured or given".to_owned())
        }
        Some(c) if c.units.is_none() && c.below.is_none() && c.unconfirmed.is_none() => {
            Some(c.note.clone())
        }
        Some(c) if c.high.is_some() && c.extrapolated.is_some() => Some(format!(
            "its cores are {} the largest core count measured, past twice it: the SLO ceiling is not predicted that far; measure a larger size ([plan] scale_cores on a bigger machine), or pass --extrapolate to plan on the guess, marked",
            factor(c.extrapolated.unwrap_or_default()),
        )),
        Some(c) if c.units.is_none() => Some(format!(
            "the {} ceiling lies below {}, the first step, and was not measured: there is no ceiling to plan with",
            binding.resource.name(),
            count(c.below.unwrap_or_default()),
        )),
        Some(c) if c.extrapolated.is_some() => Some(format!(
            "the {} ceiling, {}, is an extrapolation to {} the largest measured; sweep up to it to measure it",
            binding.resource.name(),
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
            binding.resource.name(),
            model.headroom * 100.0,
            model.unit
        )),
        (why, _) => why,
    };
    let cost_is_upper_bound =
        not_priced.is_none() && binding_ceiling.is_some_and(|c| c.lower_bound);
    Bound {
        planned_units: planned.filter(|_| not_priced.is_none()),
        binding,
        runner_up,
        not_priced,
        cost_is_upper_bound,
    }
}
