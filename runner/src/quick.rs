//! `--quick`: the same matrix, smaller. For CI and a first look, never for figures to plan with
//! (the results say `"quick": true`).

use headroom_compiler::RunMatrix;
use headroom_compiler::matrix::resolved::Scenario;
use headroom_compiler::matrix::run_time;
use headroom_spec::Duration;

/// A search under `--quick` stops once its bracket is within this share, or the precision
/// asked when that is coarser.
pub const QUICK_PRECISION_PERCENT: f64 = 10.0;

/// Holds shrink to a tenth (between 2 s and 5 s), ramps to a tenth (at most 1 s), repeats to one, and
/// every axis to its first, middle and last values. A search keeps searching, coarser: to
/// [`QUICK_PRECISION_PERCENT`], its probes held a tenth as long (2 s at least) and run once.
pub fn scale(matrix: &RunMatrix) -> RunMatrix {
    let mut matrix = matrix.clone();
    for phase in &mut matrix.phases {
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
        let mut estimated = Duration::ZERO;
        for (index, point) in phase.points.iter_mut().enumerate() {
            point.index = index;
            for scenario in &mut point.scenarios {
                shrink(scenario);
            }
            // The estimate follows the scaled matrix, not the written one.
            point.run_time = run_time(&point.scenarios, &phase.measure, phase.cooldown);
            estimated = estimated.saturating_add(point.run_time);
        }
        phase.estimated = estimated;
        let quick_hold = phase
            .points
            .iter()
            .flat_map(|point| point.scenarios.iter().filter_map(|s| s.stages().hold))
            .max()
            .unwrap_or(Duration::from_secs(2));
        if let Some(search) = &mut phase.search {
            let coarser = search.precision.percent().max(QUICK_PRECISION_PERCENT);
            search.precision = headroom_spec::Percent::new(coarser);
            tenth(&mut search.probe_hold, Duration::from_secs(2), quick_hold);
            search.probe_repeats = 1;
        }
        if let Some(worst) = phase.search_worst_case() {
            phase.estimated = worst;
        }
    }
    matrix.estimated = matrix.phases.iter().fold(Duration::ZERO, |sum, phase| {
        sum.saturating_add(phase.estimated)
    });
    matrix.runs = matrix
        .phases
        .iter()
        .filter(|phase| phase.search.is_none())
        .flat_map(|phase| {
            phase.points.iter().map(|p| headroom_compiler::matrix::Run {
                phase: phase.name.clone(),
                point: p.index,
                repeat: 1,
            })
        })
        .collect();
    matrix
}

fn tenth(duration: &mut Duration, floor: Duration, ceiling: Duration) {
    let scaled = Duration::from_micros(duration.as_micros() / 10);
    *duration = scaled.max(floor).min(ceiling).min(*duration);
}

/// A point made after the matrix was scaled (a search's probe), scaled the same way; its
/// run time is the caller's to count again.
pub fn shrink_point(point: &mut headroom_compiler::matrix::Point) {
    for scenario in &mut point.scenarios {
        shrink(scenario);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11, item 7: `--quick` estimates the quick run, not the full one. notes-api holds
    /// 2 minutes behind a 30 s ramp (a run is over 2.5 minutes); quick holds 5 s behind a 1 s
    /// ramp, so its listed runs take well under a minute each, and the estimate is their sum.
    /// Its `load` phase searches (issue 32): quick keeps it searching, coarser and shorter,
    /// and estimates it at its budget of quick runs.
    #[test]
    fn the_quick_estimate_is_of_the_quick_plan() {
        let text = include_str!("../../examples/notes-api.toml");
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        let full = headroom_compiler::Compiler::new()
            .compile(text, &prices)
            .matrix
            .expect("notes-api compiles");
        let quick = scale(&full);
        assert!(
            full.estimated > Duration::from_secs(150 * 4),
            "{:?}",
            full.estimated
        );
        let listed = &quick.phases[0];
        assert!(listed.search.is_none());
        let runs: Vec<Duration> = listed.points.iter().map(|point| point.run_time).collect();
        assert_eq!(runs.len(), 3);
        assert!(
            runs.iter().all(|r| *r < Duration::from_secs(10)),
            "{runs:?}"
        );
        let sum = runs
            .iter()
            .fold(Duration::ZERO, |sum, r| sum.saturating_add(*r));
        assert_eq!(listed.estimated, sum);
        let searched = &quick.phases[1];
        let search = searched.search.as_ref().expect("the load phase searches");
        assert_eq!(
            search.precision,
            headroom_spec::Percent::new(QUICK_PRECISION_PERCENT)
        );
        assert_eq!(search.probe_hold, Duration::from_secs(3));
        let per_run = searched.points[0].run_time;
        assert!(per_run < Duration::from_secs(10), "{per_run:?}");
        assert_eq!(
            searched.estimated,
            per_run.saturating_mul(u64::from(search.max_runs))
        );
        let phases = quick
            .phases
            .iter()
            .fold(Duration::ZERO, |sum, p| sum.saturating_add(p.estimated));
        assert_eq!(quick.estimated, phases);
        // The listed runs are the plan's; the search's are made as it goes.
        assert_eq!(quick.runs.len(), 3);
    }
}
