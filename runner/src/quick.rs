//! `--quick`: the same matrix, smaller. For CI and a first look, never for figures to plan with
//! (the results say `"quick": true`).

use headroom_matrix::RunMatrix;
use headroom_matrix::resolved::Scenario;
use headroom_matrix::run_time;
use headroom_spec::Duration;

/// A search under `--quick` stops once its bracket is within this share, or the precision
/// asked when that is coarser.
pub const QUICK_PRECISION_PERCENT: f64 = 10.0;

/// A quick ramp-up, whatever the spec's (longer only while sockets open at the spec's rate).
/// Two seconds even where the spec ramps over none (a constant load's ramp-up is at the
/// load): a server's first seconds (connections opening, caches and JITs warming) are its
/// start-up burst, which a quick hold of a few seconds would otherwise be judged on.
const QUICK_RAMP: Duration = Duration::from_secs(2);

/// Quick is a smaller version of the same measurement, not another one (issue 41). Holds
/// shrink to a tenth (between 2 s and 5 s), repeats to one, every axis to its first, middle
/// and last values. Ramps take 2 s ([`QUICK_RAMP`]), but sockets open no faster than the spec
/// opens them at any point of the phase (its connect rate), and the ramp lasts as long as
/// they take. A search keeps searching, coarser: to
/// [`QUICK_PRECISION_PERCENT`], its probes held a tenth as long (2 s at least) and run once.
pub fn scale(matrix: &RunMatrix) -> RunMatrix {
    let mut matrix = matrix.clone();
    for phase in &mut matrix.phases {
        let connect_rate = connect_rate(phase);
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
                shrink(scenario, connect_rate);
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
            phase.points.iter().map(|p| headroom_matrix::Run {
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

/// A point made after the matrix was scaled (a search's probe), scaled the same way (at
/// `connect_rate`, the unscaled phase's: [`connect_rate`]); its run time is the caller's to
/// count again.
pub fn shrink_point(point: &mut headroom_matrix::Point, connect_rate: Option<f64>) {
    for scenario in &mut point.scenarios {
        shrink(scenario, connect_rate);
    }
}

/// The fastest the spec opens sockets at any point of `phase` (a search's at its two ends),
/// sockets a second: its rooms' sockets over their `connect_over` (the ramp-up when unset).
/// `None` without rooms, or where they all open at once.
pub fn connect_rate(phase: &headroom_matrix::MatrixPhase) -> Option<f64> {
    phase
        .points
        .iter()
        .flat_map(|point| point.scenarios.iter())
        .filter_map(|scenario| match scenario {
            Scenario::Rooms(rooms) => {
                let over = rooms.connect_over.unwrap_or(rooms.stages.ramp_up);
                (over.as_micros() > 0).then(|| rooms.sockets() as f64 / over.as_secs_f64())
            }
            Scenario::Http(_) => None,
        })
        .reduce(f64::max)
}

fn shrink(scenario: &mut Scenario, connect_rate: Option<f64>) {
    // Sockets open at the spec's connect rate: no faster than it opens them anywhere.
    let opening = match (&*scenario, connect_rate) {
        (Scenario::Rooms(rooms), Some(rate)) if rate > 0.0 => {
            let over = rooms.connect_over.unwrap_or(rooms.stages.ramp_up);
            let at_rate = Duration::from_micros((rooms.sockets() as f64 / rate * 1e6) as u64);
            let mut quick = over;
            tenth(&mut quick, at_rate, over);
            Some(quick)
        }
        _ => None,
    };
    let stages = scenario.stages_mut();
    stages.ramp_up = QUICK_RAMP.max(opening.unwrap_or(Duration::ZERO));
    tenth(
        &mut stages.ramp_down,
        Duration::ZERO,
        Duration::from_secs(1),
    );
    if let Some(hold) = &mut stages.hold {
        tenth(hold, Duration::from_secs(2), Duration::from_secs(5));
    }
    if let Scenario::Rooms(rooms) = scenario {
        if let (Some(over), Some(opening)) = (&mut rooms.connect_over, opening) {
            *over = opening;
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
    /// 2 minutes behind a 30 s ramp (a run is over 2.5 minutes); quick holds 5 s behind a 2 s
    /// ramp, its 1,000 sockets opening over 2 s as the spec opens them (issue 41: no faster
    /// than its connect rate), so its listed runs take well under a minute each, and the
    /// estimate is their sum.
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
            runs.iter().all(|r| *r < Duration::from_secs(15)),
            "{runs:?}"
        );
        let stages = |name: &str| {
            let scenario = listed.points[0]
                .scenarios
                .iter()
                .find(|s| s.name() == name)
                .expect("the scenario");
            *scenario.stages()
        };
        assert_eq!(stages("browse").ramp_up, Duration::from_secs(2));
        assert_eq!(stages("sockets").ramp_up, Duration::from_secs(2));
        assert_eq!(stages("sockets").hold, Some(Duration::from_secs(5)));
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
        assert!(per_run < Duration::from_secs(15), "{per_run:?}");
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

    /// Issue 41: quick opens sockets no faster than the spec does anywhere in the phase. The
    /// chat example opens up to 12,800 over 10 s (1,280 a second): a quick probe of 100 people
    /// opens them over a tenth of that (1 s), one of 1,600 over 1.25 s (at 1,280 a second), one
    /// of 12,800 over the spec's 10 s; the ramp-up takes quick's 2 s, or as long as the sockets
    /// take.
    #[test]
    fn quick_sockets_open_at_the_specs_connect_rate() {
        let text = include_str!("../../examples/chat.toml");
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        let full = headroom_compiler::Compiler::new()
            .compile(text, &prices)
            .matrix
            .expect("chat compiles");
        let phase = &full.phases[0];
        let rate = connect_rate(phase).expect("rooms");
        assert!((rate - 12_800.0 / 10.0).abs() < 1e-6, "{rate}");
        for (people, over, ramp) in [
            (100.0, 1.0, 2.0),
            (1_600.0, 1.25, 2.0),
            (12_800.0, 10.0, 10.0),
        ] {
            let mut point = headroom_compiler::matrix::probe_point(phase, &full.target, 0, people)
                .expect("a probe");
            shrink_point(&mut point, Some(rate));
            let Scenario::Rooms(rooms) = &point.scenarios[0] else {
                panic!("rooms");
            };
            let seconds = |s: f64| Duration::from_micros((s * 1e6) as u64);
            assert_eq!(rooms.connect_over, Some(seconds(over)), "{people}");
            assert_eq!(rooms.stages.ramp_up, seconds(ramp), "{people}");
        }
    }
}
