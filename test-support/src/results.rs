//! A results file read as its types, the way every test reads one: a field renamed in
//! `headroom-results` fails to compile where a test reads it, never a `["key"]` that quietly
//! reads null.

use headroom_results::{
    Results, RoomsResult, RunResult, ScenarioResult, ServiceResult, SloVerdict,
};

/// `text` read as results, failing the test with the reason when it does not read.
pub fn typed_text(text: &str) -> Results {
    Results::from_json(text).unwrap_or_else(|e| panic!("results that read as their types: {e}"))
}

/// A results value (as read and schema-checked) as its types.
pub fn typed(results: &serde_json::Value) -> Results {
    typed_text(&results.to_string())
}

/// The relay fixture ([`crate::fixtures::RELAY_RESULTS`]) as its types.
pub fn relay() -> Results {
    typed_text(crate::fixtures::RELAY_RESULTS)
}

/// `results` written back as the JSON a results file holds, for a test that edits a file
/// through its types and hands it to the binary.
pub fn to_text(results: &Results) -> String {
    serde_json::to_string_pretty(results).unwrap_or_else(|e| panic!("results as JSON: {e}"))
}

/// Every run of every point of every phase, in the file's order.
pub fn typed_runs(results: &Results) -> Vec<&RunResult> {
    results
        .phases
        .iter()
        .flat_map(|phase| phase.points.iter())
        .flat_map(|point| point.runs.iter())
        .collect()
}

/// Every run of every point of every phase, to edit, in the file's order.
pub fn typed_runs_mut(results: &mut Results) -> Vec<&mut RunResult> {
    results
        .phases
        .iter_mut()
        .flat_map(|phase| phase.points.iter_mut())
        .flat_map(|point| point.runs.iter_mut())
        .collect()
}

/// The verdict of the SLO named `name` in `run`.
pub fn slo<'a>(run: &'a RunResult, name: &str) -> &'a SloVerdict {
    run.slo
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no verdict {name}: {:?}", run.slo))
}

/// The scenario `name`'s result in `run`, failing the test with the names there are.
pub fn scenario<'a>(run: &'a RunResult, name: &str) -> &'a ScenarioResult {
    run.scenarios.get(name).unwrap_or_else(|| {
        let names: Vec<&String> = run.scenarios.keys().collect();
        panic!("no scenario {name} among {names:?}")
    })
}

/// The service `name` of a stack in `run`.
pub fn service<'a>(run: &'a RunResult, name: &str) -> &'a ServiceResult {
    run.services.get(name).unwrap_or_else(|| {
        let names: Vec<&String> = run.services.keys().collect();
        panic!("no service {name} among {names:?}")
    })
}

/// The steady-state value of the scraped series `name` in `run`.
pub fn steady_series(run: &RunResult, name: &str) -> f64 {
    run.metrics
        .steady
        .get(name)
        .copied()
        .unwrap_or_else(|| panic!("no series {name}: {:?}", run.metrics.steady))
}

/// A rooms scenario's result in `run`.
pub fn rooms_in<'a>(run: &'a RunResult, name: &str) -> &'a RoomsResult {
    scenario(run, name)
        .rooms
        .as_ref()
        .unwrap_or_else(|| panic!("scenario {name} is not a rooms scenario"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_fixture_reads_and_writes_back_the_same() {
        let relay = relay();
        assert_eq!(typed_runs(&relay).len(), 12);
        let again = typed_text(&to_text(&relay));
        assert_eq!(to_text(&again), to_text(&relay));
    }
}
