//! The `[measure]` series a phase read at the steady state (the server's own gauges, a
//! command's counts), point by point: the page's table of them and their plots.

use headroom_results::{PhaseResults, PointResults, Results};
use headroom_spec::phase::SeriesUnit;
use schemars::JsonSchema;
use serde::Serialize;

use super::Stat;

/// A `[measure]` series that some run of the phase read.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct MeasuredSeries {
    /// Its name in the spec and the results: `notes_memory`.
    pub name: String,
    /// What its values are: `bytes`, `seconds` or `count`.
    pub unit: String,
    /// Where it was read: ``the metric `demo_memory_bytes` {segment="notes"}``, `a command`.
    pub source: String,
}

/// One series at one point.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct SeriesCell {
    /// The series' name.
    pub name: String,
    /// Its steady-state value over the runs that did not fail; `null` where none read it.
    pub value: Option<Stat>,
}

/// The phase's `[measure]` series that some run read, in the spec's order.
pub(super) fn series_of(results: &Results, phase: &PhaseResults) -> Vec<MeasuredSeries> {
    let Some(planned) = results.matrix.phases.iter().find(|p| p.name == phase.name) else {
        return Vec::new();
    };
    let runs = || phase.points.iter().flat_map(|p| p.runs.iter());
    planned
        .measure
        .series
        .iter()
        .filter(|series| runs().any(|run| run.metrics.steady.contains_key(&series.name)))
        .map(|series| {
            let labels: Vec<String> = series
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            let source = match &series.metric {
                Some(metric) if labels.is_empty() => format!("the metric `{metric}`"),
                Some(metric) => format!("the metric `{metric}` {{{}}}", labels.join(", ")),
                None => "a command".to_owned(),
            };
            MeasuredSeries {
                name: series.name.clone(),
                unit: match series.effective_unit() {
                    SeriesUnit::Bytes => "bytes",
                    SeriesUnit::Seconds => "seconds",
                    SeriesUnit::Count => "count",
                }
                .to_owned(),
                source,
            }
        })
        .collect()
}

/// Each series' value at `point`, over its runs that did not fail (as fits and the planner
/// read them).
pub(super) fn series_cells(point: &PointResults, series: &[MeasuredSeries]) -> Vec<SeriesCell> {
    series
        .iter()
        .map(|series| {
            let values: Vec<f64> = point
                .runs
                .iter()
                .filter(|run| headroom_figures::figures_count(run))
                .filter_map(|run| run.metrics.steady.get(&series.name).copied())
                .collect();
            SeriesCell {
                name: series.name.clone(),
                value: Stat::of(&values),
            }
        })
        .collect()
}
