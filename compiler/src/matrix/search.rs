//! A phase that searches its ceiling (`vary = { rate = { search = … } }`): what the runner
//! needs to make each probe's point when the search asks for it. Before it runs, such a phase's
//! points are its two ends (`from`, `to`), resolved and checked like any point; the runner
//! records the probes it made in their place.

use headroom_matrix::{MatrixPhase, PhaseSearch, Point, run_time};
use headroom_spec::{Duration, Scenario, Spec, Target};
use std::collections::BTreeMap;

use super::resolve::{scenario_at, target_at};

/// The point of a search at `load` (its `index` among the probes): `phase`'s first point with
/// the variable at `load`, its scenarios and target resolved again from what the spec wrote
/// (`written_target`). An emulated instance's limits stay, as do a core count's pinning.
pub fn probe_point(
    phase: &MatrixPhase,
    written_target: &Target,
    index: usize,
    load: f64,
) -> Result<Point, String> {
    let search = phase
        .search
        .as_ref()
        .ok_or_else(|| format!("phase `{}` does not search", phase.name))?;
    let first = phase
        .points
        .first()
        .ok_or_else(|| format!("phase `{}` has no point", phase.name))?;
    let value = search.ends()?.value(load);
    let mut vars = first.vars.clone();
    vars.insert(search.variable.clone(), value.clone());
    let at = BTreeMap::from([(search.variable.clone(), value)]);
    let scenarios = search
        .scenarios
        .iter()
        .map(|scenario| scenario_at(scenario, search.hold, &vars))
        .collect::<Result<Vec<_>, _>>()?;
    let mut target = target_at(written_target, &vars)?;
    if phase.emulates.is_some() || phase.scales.is_some() {
        target.limits.clone_from(&first.target.limits);
    }
    let run_time = run_time(&scenarios, &phase.measure, phase.cooldown);
    Ok(Point {
        index,
        at,
        vars,
        target,
        scenarios,
        run_time,
    })
}

/// The search of `phase` resolved, when it searches: its ends with `to` lowered to the
/// units' cap, its probe hold defaulted (a quarter of the longest hold, at least 5 s and at
/// most the hold).
pub(super) fn phase_search(
    spec: &Spec,
    phase: &headroom_spec::Phase,
    scenarios: &[&Scenario],
    first: &Point,
) -> Option<PhaseSearch> {
    let (variable, search) = phase
        .vary
        .iter()
        .find_map(|(name, sweep)| sweep.search().map(|search| (name, search)))?;
    let ends = search.ends().ok()?;
    let cap = spec
        .capacity
        .cap
        .filter(|_| spec.capacity.units.as_deref() == Some(variable.as_str()))
        .map(|cap| cap as f64)
        .filter(|cap| *cap < ends.to && *cap > ends.from);
    let longest_hold = first
        .scenarios
        .iter()
        .filter_map(|scenario| scenario.stages().hold)
        .max()
        .unwrap_or(Duration::from_secs(5));
    let quarter = Duration::from_micros(longest_hold.as_micros() / 4);
    let probe_hold = search
        .probe_hold
        .unwrap_or_else(|| quarter.max(Duration::from_secs(5)).min(longest_hold));
    Some(PhaseSearch {
        variable: variable.clone(),
        from: search.from.clone(),
        to: cap.map_or_else(|| search.to.clone(), |cap| ends.value(cap)),
        capped: cap.is_some(),
        precision: search.precision,
        probe_hold,
        probe_repeats: search.probe_repeats,
        max_runs: search.max_runs,
        max_time: search.max_time,
        hold: phase.hold,
        scenarios: scenarios.iter().map(|&s| s.clone()).collect(),
    })
}
