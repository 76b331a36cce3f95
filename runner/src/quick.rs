//! `--quick`: the same plan, smaller. For CI and a first look, never for figures to plan with
//! (the results say `"quick": true`).

use headroom_compiler::ResolvedPlan;
use headroom_spec::{Duration, Param, Scenario};

/// Holds shrink to a tenth (between 2 s and 5 s), ramps to a tenth (at most 1 s), repeats to one, and
/// every axis to its first, middle and last values.
pub fn scale(plan: &ResolvedPlan) -> ResolvedPlan {
    let mut plan = plan.clone();
    for phase in &mut plan.phases {
        phase.repeats = 1;
        phase.cooldown = Duration::ZERO;
        let steady = &mut phase.measure.steady_state;
        steady.settle = steady.settle.min(Duration::from_millis(500));
        steady.every = steady.every.min(Duration::from_millis(100));
        for axis in &mut phase.axes {
            let n = axis.values.len();
            if n > 3 {
                axis.values = vec![
                    axis.values[0].clone(),
                    axis.values[n / 2].clone(),
                    axis.values[n - 1].clone(),
                ];
            }
        }
        let axes = phase.axes.clone();
        phase.points.retain(|point| {
            axes.iter().all(|axis| {
                point
                    .at
                    .get(&axis.variable)
                    .is_none_or(|v| axis.values.contains(v))
            })
        });
        for (index, point) in phase.points.iter_mut().enumerate() {
            point.index = index;
            for scenario in &mut point.scenarios {
                shrink(scenario);
            }
        }
    }
    plan.runs = plan
        .phases
        .iter()
        .flat_map(|phase| {
            phase.points.iter().map(|p| headroom_compiler::matrix::Run {
                phase: phase.name.clone(),
                point: p.index,
                repeat: 1,
            })
        })
        .collect();
    plan
}

fn tenth(param: &mut Param<Duration>, floor: Duration, ceiling: Duration) {
    if let Param::Value(duration) = param {
        let scaled = Duration::from_micros(duration.as_micros() / 10);
        *duration = scaled.max(floor).min(ceiling).min(*duration);
    }
}

fn shrink(scenario: &mut Scenario) {
    let stages = scenario.stages_mut();
    tenth(&mut stages.ramp_up, Duration::ZERO, Duration::from_secs(1));
    tenth(
        &mut stages.ramp_down,
        Duration::ZERO,
        Duration::from_secs(1),
    );
    if let Some(hold) = &mut stages.hold {
        tenth(hold, Duration::from_secs(2), Duration::from_secs(5));
    }
    if let Scenario::Rooms(rooms) = scenario {
        if let Some(over) = &mut rooms.connect_over {
            tenth(over, Duration::ZERO, Duration::from_secs(1));
        }
        if let Some(reload) = &mut rooms.reload {
            tenth(
                &mut reload.every,
                Duration::from_secs(1),
                Duration::from_secs(3600),
            );
        }
    }
}
