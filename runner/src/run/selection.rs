//! Which phases run, whether this machine and this run can hold them, and what they add up to.

use super::{RunError, RunOptions};
use headroom_compiler::RunMatrix;
use headroom_compiler::matrix::MatrixPhase;

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

/// A search decides each probe on the SLO verdicts of the whole load, which a segment does not
/// have: refused with segments, and why.
pub(super) fn refuse_segmented_search(
    selected: &[&MatrixPhase],
    segment: headroom_load::stripe::Segment,
) -> Result<(), RunError> {
    if let Some(searching) = selected.iter().find(|p| p.search.is_some())
        && segment.count > 1
    {
        return Err(RunError::Search(format!(
            "phase `{}` searches its ceiling, and a segment judges no SLO: each probe's verdict needs the whole load's figures, which only `headroom merge` puts together after the run. Run the search on one machine (without `--segment`), or list the steps (`vary = {{ {} = [ … ] }}`) to run them in segments",
            searching.name,
            searching
                .search
                .as_ref()
                .map_or("x", |s| s.variable.as_str())
        )));
    }
    Ok(())
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
command = ["{headroom}", "demo-target", "--port", "{port}"]
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
        let two = headroom_load::stripe::Segment { index: 1, count: 2 };
        let Err(RunError::Search(why)) = refuse_segmented_search(&phases, two) else {
            panic!("a segmented search ran");
        };
        assert!(
            why.starts_with("phase `load` searches its ceiling, and a segment judges no SLO"),
            "{why}"
        );
        assert!(why.contains("vary = { rate = [ … ] }"), "{why}");
        let whole = headroom_load::stripe::Segment { index: 0, count: 1 };
        assert!(refuse_segmented_search(&phases, whole).is_ok());
    }
}
