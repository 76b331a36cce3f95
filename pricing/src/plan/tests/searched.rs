//! A searched phase's SLO ceiling, as the planner prices it (issues 32 and 41).

use super::*;
use crate::PriceTable;

/// A searched phase's record: probes at `loads` with their verdicts, ending as `ending`.
fn searched(
    probes: &[(i64, bool)],
    pass: Option<i64>,
    fail: Option<i64>,
    ending: headroom_results::SearchEnding,
) -> MeasuredSweep {
    use headroom_results::{ProbeOutcome, ProbeStage, SearchProbe, SearchRecord};
    use headroom_spec::VarValue;
    let mut sweep = sweep_of(&[]);
    sweep.search = Some(SearchRecord {
        variable: "rooms".to_owned(),
        probes: probes
            .iter()
            .enumerate()
            .map(|(i, &(load, passed))| SearchProbe {
                point: i,
                load: VarValue::Integer(load),
                stage: ProbeStage::Confirm,
                hold_s: 30.0,
                runs: 3,
                passes: if passed { 3 } else { 0 },
                verdict: if passed {
                    ProbeOutcome::Pass
                } else {
                    ProbeOutcome::Fail
                },
                why: (!passed).then(|| "`api.latency.p95 < 200ms`: measured 240 ms".to_owned()),
            })
            .collect(),
        ending,
        said: "passes at 40, fails at 42 (within 5.0 %)".to_owned(),
        pass: pass.map(VarValue::Integer),
        unconfirmed: None,
        fail: fail.map(VarValue::Integer),
        precision: 0.05,
        precision_reached: pass.zip(fail).map(|(p, f)| (f - p) as f64 / p as f64),
        runs: 12,
        wall_s: 360.0,
        warm_start: None,
    });
    sweep
}

/// Issue 32: a searched phase's SLO ceiling is its bracket's last pass, with the first fail
/// above it (`fails_at`), why that failed, and what the search took; priced from the pass.
#[test]
fn a_searched_ceiling_is_its_last_pass_with_its_bracket() {
    use headroom_results::SearchEnding;
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    let sweep = searched(
        &[(40, true), (42, false)],
        Some(40),
        Some(42),
        SearchEnding::Converged,
    );
    model.slo = slo_ceiling(&sweep, "named");
    let slo = model.slo.clone().expect("judged");
    assert_eq!(
        (slo.units, slo.first_failing, slo.lower_bound),
        (Some(40.0), Some(42.0), false)
    );
    assert_eq!(slo.broke, ["`api.latency.p95 < 200ms`: measured 240 ms"]);
    let search = slo.search.as_ref().expect("the search");
    assert_eq!(search.spent(), "12 runs in 6.0 min");
    let plan = plan_instance(
        table.instance("m7g.large").expect("m7g.large"),
        &model,
        &table,
    );
    let ceiling = &plan.ceilings[&Resource::Slo];
    assert_eq!(ceiling.units, Some(40.0));
    assert_eq!(ceiling.fails_at, Some(42.0));
    assert_eq!(ceiling.reads(), "40 (fails at 42)");
    assert!(
        ceiling.note.starts_with(
            "searched in `load`: passes at 40, fails at 42 (±5.0 %, 5 % asked), 12 runs in 6.0 min"
        ),
        "{}",
        ceiling.note
    );
    // Every probe passed up to `to`: a lower bound, as a listed sweep's.
    let lower = searched(&[(64, true)], Some(64), None, SearchEnding::LowerBound);
    let slo = slo_ceiling(&lower, "").expect("judged");
    assert!(slo.lower_bound);
    assert_eq!(slo.first_failing, None);
    // `from` failing: the ceiling lies below it, not measured.
    let below = searched(&[(16, false)], None, Some(16), SearchEnding::BelowFrom);
    model.slo = slo_ceiling(&below, "named");
    let plan = plan_instance(
        table.instance("m7g.large").expect("m7g.large"),
        &model,
        &table,
    );
    let ceiling = &plan.ceilings[&Resource::Slo];
    assert_eq!((ceiling.units, ceiling.below), (None, Some(16.0)));
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("lower the search's `from`")),
        "{:?}",
        plan.warnings
    );
}

/// Issue 41: a search that confirmed no load at the full hold prices no SLO ceiling: its
/// exploring pass is said ("not confirmed"), kept apart, and the instance is not priced on it.
#[test]
fn a_search_that_confirmed_nothing_prices_no_slo_ceiling() {
    use headroom_results::SearchEnding;
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    let mut sweep = searched(
        &[(40, true), (80, false)],
        None,
        Some(80),
        SearchEnding::OutOfBudget,
    );
    let record = sweep.search.as_mut().expect("the record");
    record.unconfirmed = Some(headroom_spec::VarValue::Integer(40));
    record.said = "stopped by `max_runs = 2`: not confirmed: 40 passed a shorter probe that no full-hold probe confirmed, fails at 80".to_owned();
    model.slo = slo_ceiling(&sweep, "named");
    let slo = model.slo.clone().expect("judged");
    assert_eq!(slo.units, None);
    let search = slo.search.as_ref().expect("the search");
    assert_eq!(search.unconfirmed, Some(40.0));
    let plan = plan_instance(
        table.instance("m7g.large").expect("m7g.large"),
        &model,
        &table,
    );
    let ceiling = &plan.ceilings[&Resource::Slo];
    assert_eq!((ceiling.units, ceiling.below), (None, None));
    assert_eq!(
        ceiling.reads(),
        "not confirmed (40 passed a shorter probe only)"
    );
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("confirmed no load at the full hold")),
        "{:?}",
        plan.warnings
    );
    assert_eq!(plan.binding.resource, Resource::Slo);
    assert!(plan.not_priced.is_some(), "{plan:?}");
    assert_eq!(plan.per_unit_month, None);
}
