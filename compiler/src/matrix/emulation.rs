//! `[plan] emulate` and `run --emulate`: the ceiling phase once more per instance, each point
//! held to the instance's vCPUs and memory (less the reserve); a burstable instance also at
//! its sustained baseline. The runner carries the limits out like any other.

use headroom_prices::PriceTable;
use headroom_spec::Size;

use headroom_matrix::{EmulatedInstance, MatrixPhase, Run, RunMatrix, resolved};
use headroom_spec::Duration;

/// The name of the phase that runs `phase` in `instance`'s shape (`load@t4g.medium`, and
/// `load@t4g.medium-baseline` at its baseline).
pub fn emulated_name(phase: &str, instance: &str, baseline: bool) -> String {
    let suffix = if baseline { "-baseline" } else { "" };
    format!("{phase}@{instance}{suffix}")
}

/// Appends to `matrix` the ceiling phase run in the shape of each of `instances`, their runs
/// and their time; or says why it cannot (no ceiling phase, an instance the table lacks, a
/// reserve that leaves it no memory).
pub fn emulate(
    matrix: &mut RunMatrix,
    instances: &[String],
    prices: &PriceTable,
) -> Result<(), String> {
    let Some(ceiling) = matrix.capacity.ceiling_phase.clone() else {
        return Err("emulating an instance runs [capacity] ceiling_phase in its shape, and the spec names none".to_owned());
    };
    if !matrix.target.services.is_empty() {
        return Err("emulating an instance is not carried out for a stack yet: give each service the `limits` of the instance it would run on".to_owned());
    }
    if matrix.target.command.is_none() {
        return Err("an external target (`url`) cannot be held to an instance's shape: only a server headroom starts runs in a cgroup".to_owned());
    }
    let Some(phase) = matrix.phases.iter().find(|p| p.name == ceiling).cloned() else {
        return Err(format!(
            "the ceiling phase `{ceiling}` is not in the matrix"
        ));
    };
    let reserve = matrix.capacity.reserve.bytes();
    let pin = matrix.target.limits.as_ref().is_some_and(|l| l.pin);
    for id in instances {
        let instance = prices
            .instance(id)
            .ok_or_else(|| {
                format!("`{id}` is not in the price table: no shape to emulate (`headroom prices` lists the instances it has)")
            })?;
        let gib = instance.memory_gib.or(instance.memory_gb).unwrap_or(0.0);
        let total = (gib * 1_073_741_824.0) as u64;
        let memory = total.saturating_sub(reserve);
        if memory < super::point_checks::MIN_LIMIT_MEMORY {
            return Err(format!(
                "{id} has {gib} GiB, and the reserve ({}) leaves the server less than 16MiB: lower `[capacity] reserve`",
                matrix.capacity.reserve
            ));
        }
        let full = f64::from(instance.vcpu);
        let mut shapes = vec![(full, false)];
        if instance.burstable
            && let Some(pct) = instance.baseline_cpu_pct_per_vcpu
        {
            shapes.push((((full * pct / 100.0) * 100.0).round() / 100.0, true));
        }
        for (cpus, baseline) in shapes {
            let emulated = EmulatedInstance {
                instance: id.clone(),
                of_phase: ceiling.clone(),
                vcpu: instance.vcpu,
                cpus,
                memory: Size::from_bytes(memory),
                baseline,
            };
            let name = emulated_name(&ceiling, id, baseline);
            if matrix.phases.iter().any(|p| p.name == name) {
                continue;
            }
            matrix.phases.push(in_shape(&phase, name, emulated, pin));
        }
    }
    matrix.runs = runs_of(&matrix.phases);
    matrix.estimated = matrix
        .phases
        .iter()
        .fold(Duration::ZERO, |sum, p| sum.saturating_add(p.estimated));
    Ok(())
}

/// `phase` again as `name`, every point's target held to `emulated`'s shape.
fn in_shape(
    phase: &MatrixPhase,
    name: String,
    emulated: EmulatedInstance,
    pin: bool,
) -> MatrixPhase {
    let mut copy = phase.clone();
    copy.description = Some(format!(
        "`{}` in the shape of {}: {}",
        phase.name,
        emulated.instance,
        emulated.describe()
    ));
    copy.name = name;
    for point in &mut copy.points {
        point.target.limits = Some(resolved::Limits {
            cpus: Some(emulated.cpus),
            memory: Some(emulated.memory),
            pin,
        });
    }
    copy.emulates = Some(emulated);
    copy
}

/// Every run of `phases` in the order they run: phase, point, repeat.
pub(super) fn runs_of(phases: &[MatrixPhase]) -> Vec<Run> {
    phases
        .iter()
        .flat_map(|phase| {
            phase
                .run_order(phase.repeats)
                .into_iter()
                .map(|(point, repeat)| Run {
                    phase: phase.name.clone(),
                    point: phase.points[point].index,
                    repeat,
                })
        })
        .collect()
}
