//! The regression table of the memory sweep.

use super::stat::Stat;
use super::{Bench, FitRow};
use headroom_pricing::fit::fit;
use headroom_pricing::plan::{Selection, memory_sweep};
use headroom_pricing::points::{MeasuredSweep, Unit};

/// The regression table: every bytes series of the memory phase (the memory series first),
/// the phase chosen as the planner chooses it.
pub(super) fn fit_rows(
    sweeps: &[MeasuredSweep],
    selection: Selection,
    bench: &Bench,
) -> Vec<FitRow> {
    let Ok(chosen) = memory_sweep(sweeps, selection) else {
        return Vec::new();
    };
    let sweep = chosen.sweep;
    let mut series: Vec<_> = sweep
        .series
        .iter()
        .filter(|s| s.unit == Unit::Bytes)
        .collect();
    series.sort_by_key(|s| s.name != bench.memory_series);
    let mut rows = Vec::new();
    for s in series {
        let Ok(line) = fit(&s.points) else { continue };
        let largest = line.max_x;
        let at_largest: Vec<f64> = s
            .points
            .iter()
            .filter(|(x, _)| *x == largest)
            .map(|(_, y)| *y)
            .collect();
        rows.push(FitRow {
            phase: sweep.name.clone(),
            chosen_because: chosen.because.to_owned(),
            weak: line.is_weak(),
            series: s.name.clone(),
            unit: "bytes".to_owned(),
            x: sweep.x.clone(),
            n: line.n,
            intercept: line.intercept,
            slope: line.slope,
            r2: line.r2,
            slope_ci95: line.slope_ci95,
            largest_x: largest,
            predicted_at_largest: line.predict(largest),
            prediction_interval_at_largest: line.prediction_interval(largest),
            measured_at_largest: Stat::of(&at_largest).map_or(f64::NAN, |s| s.median),
            warnings: line.warnings(None),
            points: s.points.iter().map(|&(x, y)| [x, y]).collect(),
        });
    }
    rows
}
