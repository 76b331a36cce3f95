//! Issue 32: a phase that searches its ceiling, compiled: its ends checked as points, its
//! budget the estimate's worst case, and every way it cannot run refused at its key.

use super::*;

/// `spec_with`'s phase searching `users` instead of listing them, with `search` as written
/// and `slo` as the spec's SLOs (none when empty).
fn searching(search: &str, phase_extra: &str, tail: &str) -> String {
    spec_with("", tail).replace(
        "vary = { users = [10, 20, 40] }",
        &format!("vary = {{ users = {{ search = {{ {search} }} }} }}\n{phase_extra}"),
    )
}

/// A search as written, the phase's other keys, the spec's tail, and the refusals expected.
type Case<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a str)]);

const SLO: &str = "\n[slo]\np95 = \"browse.latency.p95 < 200ms\"";

#[test]
fn a_search_compiles_to_its_two_ends_and_its_budget() {
    let compilation = compile(&searching("from = 10, to = 640", "", SLO));
    // A search of a closed model's users is noted (issue 41), and nothing else is said.
    let codes: Vec<Code> = compilation.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::ClosedModelSearch]);
    assert!(
        not_notes(&compilation).is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = compilation.matrix.expect("a plan");
    let phase = &matrix.phases[0];
    let search = phase.search.as_ref().expect("the search");
    assert_eq!(search.variable, "users");
    assert_eq!(search.precision, headroom_spec::Percent::new(5.0));
    // A quarter of the 10 s hold is under 5 s: probes hold 5 s.
    assert_eq!(search.probe_hold, headroom_spec::Duration::from_secs(5));
    let ends: Vec<String> = phase
        .points
        .iter()
        .map(|p| p.at["users"].to_string())
        .collect();
    assert_eq!(ends, ["10", "640"]);
    // Its runs are made as it goes: none listed; its estimate is the budget's worst case.
    assert!(matrix.runs.is_empty(), "{:?}", matrix.runs);
    let per_run = phase.points[1].run_time;
    assert_eq!(phase.estimated, per_run.saturating_mul(30));
    let probe = headroom_compiler::matrix::probe_point(phase, &matrix.target, 7, 437.0)
        .expect("a probe's point");
    assert_eq!(probe.index, 7);
    assert_eq!(probe.at["users"], headroom_spec::VarValue::Integer(437));
    assert_eq!(probe.vars["users"], headroom_spec::VarValue::Integer(437));
}

#[test]
fn a_search_stops_at_the_units_cap() {
    let capped = compile(&searching(
        "from = 10, to = 640",
        "",
        &format!("cap = 300{SLO}"),
    ));
    assert!(not_notes(&capped).is_empty(), "{:?}", capped.diagnostics);
    let matrix = capped.matrix.expect("a plan");
    let search = matrix.phases[0].search.as_ref().expect("search");
    assert_eq!(search.to, headroom_spec::VarValue::Integer(300));
    assert!(search.capped);
    let past = compile(&searching(
        "from = 400, to = 640",
        "",
        &format!("cap = 300{SLO}"),
    ));
    assert_eq!(
        codes_at(&past),
        [
            ("N001", "/phase/0/vary/users/search"),
            ("E046", "/phase/0/vary/users/search/from")
        ]
    );
}

/// Searches that cannot run, each with the key it is refused at.
const CANNOT_RUN: [Case<'static>; 11] = [
    (
        "from = 0, to = 640",
        "",
        SLO,
        &[("E028", "/phase/0/vary/users")],
    ),
    (
        "from = 100, to = 10",
        "",
        SLO,
        &[("E028", "/phase/0/vary/users")],
    ),
    (
        "from = 10, to = 640, precision = \"100%\"",
        "",
        SLO,
        &[("E005", "/phase/0/vary/users/search/precision")],
    ),
    (
        "from = 10, to = 640, max_runs = 5",
        "",
        SLO,
        &[("E046", "/phase/0/vary/users/search/max_runs")],
    ),
    (
        "from = 10, to = 640, probe_hold = \"20s\"",
        "",
        SLO,
        &[("E046", "/phase/0/vary/users/search/probe_hold")],
    ),
    (
        "from = 10, to = 640, probe_hold = \"0s\"",
        "",
        SLO,
        &[("E046", "/phase/0/vary/users/search/probe_hold")],
    ),
    (
        "from = 10, to = 640, max_time = \"0s\"",
        "",
        SLO,
        &[("E046", "/phase/0/vary/users/search/max_time")],
    ),
    (
        "from = 10, to = 640, max_time = \"30d\"",
        "",
        SLO,
        &[("E046", "/phase/0/vary/users/search/max_time")],
    ),
    (
        "from = 10, to = 640",
        "order = \"grouped\"",
        SLO,
        &[("E021", "/phase/0/order")],
    ),
    (
        "from = 10, to = 640",
        "on_failure = \"stop\"",
        SLO,
        &[("E021", "/phase/0/on_failure")],
    ),
    (
        "from = 10, to = 640",
        "",
        "",
        &[("E046", "/phase/0/vary/users/search")],
    ),
];

/// Each search that cannot run is refused at the key to change, with the fix.
#[test]
fn a_search_that_cannot_run_is_refused_at_its_key() {
    for (search, extra, tail, expected) in CANNOT_RUN {
        let compilation = compile(&searching(search, extra, tail));
        let found: Vec<_> = codes_at(&compilation)
            .into_iter()
            .filter(|(code, _)| !code.starts_with('W') && !code.starts_with('N'))
            .collect();
        assert_eq!(
            found, expected,
            "{search} {extra}: {:?}",
            compilation.diagnostics
        );
        assert!(compilation.matrix.is_none(), "{search} {extra}");
        for diagnostic in &compilation.diagnostics {
            assert!(diagnostic.span.is_some(), "{diagnostic:?}");
            assert!(diagnostic.hint.is_some(), "{diagnostic:?}");
        }
    }
}

/// The diagnostics that are not notes.
fn not_notes(compilation: &headroom_compiler::Compilation) -> Vec<&headroom_compiler::Diagnostic> {
    compilation
        .diagnostics
        .iter()
        .filter(|d| d.severity() != headroom_compiler::Severity::Note)
        .collect()
}
