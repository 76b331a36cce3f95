//! Which phases run, whether this machine and this run can hold them, and what they add up to.

use super::{RunError, RunOptions};
use crate::split::{Split, unsplittable};
use headroom_load::stripe::Segment;
use headroom_matrix::MatrixPhase;
use headroom_matrix::RunMatrix;

/// The phases asked for (all when none is named), each named one checked to exist, and their
/// points checked against this machine before any target starts: a point past its file limit
/// would fail half-way, its sockets unopened and its /proc unreadable.
pub(super) fn select_phases<'p>(
    matrix: &'p RunMatrix,
    options: &RunOptions,
) -> Result<Vec<&'p MatrixPhase>, RunError> {
    let names: Vec<&str> = matrix.phases.iter().map(|p| p.name.as_str()).collect();
    for wanted in &options.phases {
        if !names.contains(&wanted.as_str()) {
            return Err(RunError::UnknownPhase(wanted.clone(), names.join(", ")));
        }
    }
    let selected: Vec<&MatrixPhase> = matrix
        .phases
        .iter()
        .filter(|p| options.phases.is_empty() || options.phases.contains(&p.name))
        .collect();
    let selected_names: Vec<&str> = selected.iter().map(|p| p.name.as_str()).collect();
    if let Some(why) =
        crate::machine::refusal(matrix, &selected_names, &crate::machine::Machine::read())
    {
        return Err(RunError::Machine(why));
    }
    Ok(selected)
}

/// The run's own check of the segment rule (`crate::split`), on the phases selected: the CLI
/// says it first, with its flags; a library caller gets the same refusal.
pub(super) fn refuse_unsplittable(
    matrix: &RunMatrix,
    selected: &[&MatrixPhase],
    segment: Segment,
    barrier: bool,
) -> Result<(), RunError> {
    let split = Split {
        segments: segment.count,
        barrier,
        check: false,
    };
    match unsplittable(matrix, selected.iter().copied(), split) {
        Some(why) => Err(RunError::Unsplittable { segment, why }),
        None => Ok(()),
    }
}

/// The runs of the selected phases (a search's counted at its budget) and their estimated
/// seconds.
pub(super) fn planned(selected: &[&MatrixPhase], options: &RunOptions) -> (usize, f64) {
    let repeats = |phase: &MatrixPhase| options.repeats.unwrap_or(phase.repeats);
    // A search's runs are not known before it runs: counted at its budget.
    let runs: usize = selected
        .iter()
        .map(|p| match &p.search {
            Some(search) => search.max_runs as usize,
            None => p.points.len() * repeats(p) as usize,
        })
        .sum();
    let estimated_s: f64 = selected
        .iter()
        .map(|p| match &p.search {
            Some(_) => p.estimated.as_secs_f64(),
            None => p
                .points
                .iter()
                .map(|point| point.run_time.as_secs_f64() * repeats(p) as f64)
                .sum(),
        })
        .sum();
    (runs, estimated_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32: a search decides each probe on the whole load's verdicts, which a segment
    /// does not have: a segmented run of a searching phase is refused before anything runs,
    /// and says why and what to do; the whole load (one segment) runs it.
    #[test]
    fn a_search_is_refused_with_segments() {
        let text = r#"
[bench]
name = "searching"
[vars]
rate = "25/s"
[target]
url = "http://127.0.0.1:8080"
[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/" }]
[[phase]]
name = "load"
hold = "10s"
vary = { rate = { search = { from = "25/s", to = "3200/s" } } }
[slo]
refused = "api.failed == 0%"
"#;
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        let matrix = headroom_compiler::Compiler::new()
            .compile(text, &prices)
            .matrix
            .expect("the fixture compiles");
        let phases: Vec<&MatrixPhase> = matrix.phases.iter().collect();
        let two = Segment { index: 1, count: 2 };
        let refused = refuse_unsplittable(&matrix, &phases, two, false);
        let Err(RunError::Unsplittable { why, .. }) = refused else {
            panic!("a segmented search ran: {refused:?}");
        };
        let why = why.to_string();
        assert!(
            why.starts_with("phase `load` searches its ceiling, and a segment judges no SLO"),
            "{why}"
        );
        assert!(why.contains("vary = { rate = [ … ] }"), "{why}");
        let whole = Segment { index: 0, count: 1 };
        assert!(refuse_unsplittable(&matrix, &phases, whole, false).is_ok());
    }
}
