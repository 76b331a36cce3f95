//! `[plan] scale_cores`: the ceiling phase once more per core count, every point's server
//! pinned to that many whole cores (and the load generator to the others), so the planner can
//! carry the ceilings to a bigger instance's cores. The runner carries the limits out like any
//! other, and refuses a count that leaves the generator no core.

use headroom_matrix::{MatrixPhase, RunMatrix, ScaledCores, resolved};
use headroom_spec::Duration;

/// Appends to `matrix` the ceiling phase run at each of `cores`, their runs and their time;
/// or says why it cannot (no ceiling phase, a stack, an external target).
pub fn scale_cores(matrix: &mut RunMatrix, cores: &[u32]) -> Result<(), String> {
    let Some(ceiling) = matrix.capacity.ceiling_phase.clone() else {
        return Err("`scale_cores` runs [capacity] ceiling_phase at each core count, and the spec names none".to_owned());
    };
    if !matrix.target.services.is_empty() {
        return Err("`scale_cores` is not carried out for a stack yet: give each service the `limits` of the cores it would run on".to_owned());
    }
    if matrix.target.command.is_none() {
        return Err("an external target (`url`) cannot be pinned to cores: only a server headroom starts runs in a cgroup".to_owned());
    }
    let Some(phase) = matrix.phases.iter().find(|p| p.name == ceiling).cloned() else {
        return Err(format!(
            "the ceiling phase `{ceiling}` is not in the matrix"
        ));
    };
    for &count in cores {
        let name = ScaledCores::phase_name(&ceiling, count);
        if matrix.phases.iter().any(|p| p.name == name) {
            continue;
        }
        let mut copy = phase.clone();
        copy.description = Some(format!(
            "`{ceiling}` with the server pinned to {count} whole {}",
            if count == 1 { "core" } else { "cores" }
        ));
        copy.name = name;
        for point in &mut copy.points {
            let memory = point.target.limits.as_ref().and_then(|l| l.memory);
            point.target.limits = Some(resolved::Limits {
                cpus: Some(f64::from(count)),
                memory,
                pin: true,
            });
        }
        copy.scales = Some(ScaledCores {
            of_phase: ceiling.clone(),
            cores: count,
        });
        matrix.phases.push(copy);
    }
    matrix.runs = super::emulation::runs_of(&matrix.phases);
    matrix.estimated = matrix
        .phases
        .iter()
        .fold(Duration::ZERO, |sum, p: &MatrixPhase| {
            sum.saturating_add(p.estimated)
        });
    Ok(())
}
