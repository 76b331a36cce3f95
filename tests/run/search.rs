//! Issue 32: a phase that searches its ceiling, against targets whose ceiling is known.

use super::*;
use headroom_runner::results::{ProbeStage, SearchEnding, SearchRecord};

/// The searched phase's record, its probes each a point of the phase (and of the results'
/// matrix), in order.
fn search_of(results: &headroom_runner::results::Results, phase: &str) -> SearchRecord {
    let ran = results
        .phases
        .iter()
        .find(|p| p.name == phase)
        .expect("the phase ran");
    let record = ran.search.clone().expect("the phase's search record");
    assert_eq!(ran.points.len(), record.probes.len(), "{record:?}");
    let planned = results
        .matrix
        .phases
        .iter()
        .find(|p| p.name == phase)
        .expect("the phase in the matrix");
    assert_eq!(planned.points.len(), record.probes.len());
    for (probe, point) in record.probes.iter().zip(&ran.points) {
        assert_eq!(probe.point, point.index);
        assert_eq!(point.at.get(&record.variable), Some(&probe.load));
        assert_eq!(point.runs.len() as u32, probe.runs);
    }
    let runs: u32 = record.probes.iter().map(|p| p.runs).sum();
    assert_eq!(record.runs, runs);
    record
}

/// The deterministic known answer: the demo target answers `answer` requests a second and
/// 503s the rest (a bucket of a tenth of a second's). Sent evenly at r over a hold of T
/// seconds, the first 503 comes past answer·(1 + 0.1/T): the search, from 16× below, brackets
/// that rate to 5 %, both ends confirmed at the full hold. Exploring probes held 2 s see a
/// higher edge (answer·1.05), so a pass they find above the truth is overturned by its
/// confirmation: the bracket is the full hold's.
#[test]
fn a_search_brackets_a_known_ceiling() {
    let spec_path = root().join("tests/fixtures/run/search-known.toml");
    let spec: headroom_spec::Spec =
        toml::from_str(&std::fs::read_to_string(&spec_path).expect("fixture")).expect("spec");
    let answer = match spec.vars.get("answer") {
        Some(headroom_spec::VarValue::Integer(n)) => *n as f64,
        other => panic!("the fixture's answer rate: {other:?}"),
    };
    let hold = spec.phases[0].hold.expect("the phase's hold").as_secs_f64();
    let truth = answer * (1.0 + 0.1 / hold);
    let (output, results) = run_fixture("search-known", &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let record = search_of(&typed(&results), "load");
    common::say(&format!(
        "search: {} ({} runs, {:.0} s); truth {truth:.1}/s",
        record.said, record.runs, record.wall_s
    ));
    assert_eq!(record.ending, SearchEnding::Converged, "{}", record.said);
    let pass = record.pass_number().expect("a last pass");
    let fail = record.fail_number().expect("a first fail");
    assert!(
        pass <= truth && truth < fail,
        "{pass} … {fail}, truth {truth}"
    );
    assert!((fail - pass) / pass <= 0.05, "{pass} … {fail}");
    assert_eq!(record.precision_reached, Some((fail - pass) / pass));
    // From 16× below: four doublings pass before the first fail.
    assert_eq!(record.probes[0].load.to_string(), "25/s");
    let confirmed: Vec<_> = record
        .probes
        .iter()
        .filter(|p| p.stage == ProbeStage::Confirm)
        .collect();
    assert!(confirmed.len() >= 2, "{:?}", record.probes);
    for end in [pass, fail] {
        assert!(
            confirmed
                .iter()
                .any(|p| p.load.to_string() == format!("{end}/s") && p.hold_s == hold),
            "{end} was not confirmed at the full hold: {:?}",
            record.probes
        );
    }
    assert!(
        record
            .probes
            .iter()
            .all(|p| p.stage == ProbeStage::Confirm || p.hold_s == 2.0)
    );
    assert!(record.runs <= 20, "{}", record.runs);
    clean("search-known");
}
