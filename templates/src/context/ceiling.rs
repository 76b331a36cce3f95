//! The ceiling phase step by step: the last good step, what broke, the cliff.

use super::{Ceiling, Phase, PhaseCeiling, ProbeRow, SearchStory};
use headroom_results::Results;
use headroom_spec::VarValue;

/// What broke at the step `index` of `phase`: each failed run and each verdict that breaks
/// the step, in one sentence with its value, once.
fn what_broke(results: &Results, phase: &str, index: usize) -> Vec<String> {
    let mut broke = Vec::new();
    let point = results
        .phases
        .iter()
        .find(|p| p.name == phase)
        .and_then(|p| p.points.get(index));
    for run in point.iter().flat_map(|p| p.runs.iter()) {
        if let Some(failure) = &run.failure {
            let line = format!("a run failed: {}", failure.describe());
            if !broke.contains(&line) {
                broke.push(line);
            }
        }
        for verdict in &run.slo {
            if !headroom_figures::verdict::breaks_the_step(verdict) {
                continue;
            }
            let line = headroom_figures::text::slo_sentence(verdict, &results.matrix.slo);
            if !broke.contains(&line) {
                broke.push(line);
            }
        }
    }
    broke
}

/// A cliff: the largest step-to-step jump of the worst scenario p95, when it is 3× or more.
fn cliff(phase: &Phase) -> Option<String> {
    let worst: Vec<Option<f64>> = phase
        .points
        .iter()
        .map(|p| {
            p.scenarios
                .iter()
                .filter_map(|c| c.p95_ms.as_ref().map(|s| s.median))
                .reduce(f64::max)
        })
        .collect();
    worst
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| Some((i, w[0]?, w[1]?)))
        .filter(|(_, a, _)| *a > 0.0)
        .map(|(i, a, b)| (i, a, b, b / a))
        .filter(|(_, _, _, ratio)| *ratio >= 3.0)
        .max_by(|x, y| x.3.total_cmp(&y.3))
        .map(|(i, a, b, ratio)| {
            format!(
                "the p95 jumps {ratio:.1}× from {} ({}) to {} ({})",
                crate::format::duration_ms(a),
                phase.points[i].variables,
                crate::format::duration_ms(b),
                phase.points[i + 1].variables
            )
        })
}

/// The ceiling phase step by step, as the page tells it (`name` as `ceiling_sweep` chose it).
pub(super) fn ceiling(
    results: &Results,
    phases: &[Phase],
    name: &str,
    because: &str,
) -> Option<Ceiling> {
    // A phase whose runs were judged by SLOs at all: else there is no ceiling to tell.
    let judged = |name: &str| {
        results
            .phases
            .iter()
            .filter(|p| p.name == name)
            .flat_map(|p| p.points.iter())
            .flat_map(|p| p.runs.iter())
            .any(|r| !r.slo.is_empty())
    };
    let phase = phases.iter().find(|p| p.name == name)?;
    if !judged(&phase.name) {
        return None;
    }
    let written = results.phases.iter().find(|p| p.name == phase.name);
    if let Some(record) = written.and_then(|p| p.search.as_ref()) {
        return Some(searched(record, because, &phase.name));
    }
    let (first_bad, last_good) = first_bad_and_last_good(phase);
    let broke = first_bad.map_or_else(Vec::new, |index| what_broke(results, &phase.name, index));
    let cliff = cliff(phase);
    // Nothing over a threshold there, only runs that failed or figures that never came: no
    // ceiling below it to sweep for.
    let nothing_measured = first_bad.is_some_and(|i| phase.points[i].slo_failed.is_empty());
    Some(Ceiling {
        phase: phase.name.clone(),
        chosen_because: because.to_owned(),
        nothing_measured,
        last_good,
        first_bad: first_bad.map(|i| phase.points[i].variables.clone()),
        broke,
        cliff,
        search: None,
    })
}

/// `variable = value`, as every point is labelled.
fn label(variable: &str, value: &VarValue) -> String {
    headroom_spec::vars::point_label(&std::collections::BTreeMap::from([(
        variable.to_owned(),
        value.clone(),
    )]))
}

/// A searched phase's ceiling: its bracket, why its fail failed, and the search's story.
fn searched(record: &headroom_results::SearchRecord, because: &str, phase: &str) -> Ceiling {
    let broke = record.fail_why().map(str::to_owned).into_iter().collect();
    Ceiling {
        phase: phase.to_owned(),
        chosen_because: because.to_owned(),
        nothing_measured: false,
        last_good: record.pass.as_ref().map(|v| label(&record.variable, v)),
        first_bad: record.boundary().map(|p| label(&record.variable, &p.load)),
        broke,
        cliff: None,
        search: Some(story(record)),
    }
}

/// A search as the page tells it.
pub(super) fn story(record: &headroom_results::SearchRecord) -> SearchStory {
    SearchStory {
        variable: record.variable.clone(),
        ending: record.ending,
        said: record.said.clone(),
        pass: record.pass_number(),
        fail: record.fail_number(),
        within: record.precision_reached,
        top_split: record
            .boundary()
            .filter(|p| p.verdict == headroom_results::ProbeOutcome::Split)
            .map(|p| format!("{} of {} runs passed", p.passes, p.runs)),
        precision: record.precision,
        runs: record.runs,
        took: headroom_pricing::plan::search_spent(record.runs, record.wall_s),
        warm_start: record.warm_start.as_ref().map(|warm| {
            format!(
                "it started at {}, `{}`'s last pass ({}) scaled by the vCPU ratio ({})",
                warm.start, warm.from_phase, warm.its_pass, warm.scale
            )
        }),
        probes: record
            .probes
            .iter()
            .enumerate()
            .map(|(i, probe)| ProbeRow {
                number: i + 1,
                load: probe.load.to_string(),
                value: probe.load_number().unwrap_or_default(),
                stage: probe.stage,
                hold_s: probe.hold_s,
                runs: probe.runs,
                passes: probe.passes,
                verdict: probe.verdict,
                why: probe.why.clone(),
            })
            .collect(),
    }
}

/// Every phase whose runs were judged by SLOs, with what it ran in and where its SLOs broke.
pub(super) fn by_phase(results: &Results, phases: &[Phase]) -> Vec<PhaseCeiling> {
    let mut out = Vec::new();
    for phase in phases {
        let Some(written) = results.phases.iter().find(|p| p.name == phase.name) else {
            continue;
        };
        let runs = || written.points.iter().flat_map(|p| p.runs.iter());
        if !runs().any(|r| !r.slo.is_empty()) {
            continue;
        }
        let measured_in = runs()
            .find_map(|run| match &run.limits {
                Some(headroom_results::RunLimits::Applied(applied)) => Some(applied.describe()),
                Some(headroom_results::RunLimits::Ignored) => {
                    Some("the whole machine (limits ignored)".to_owned())
                }
                None => None,
            })
            .unwrap_or_else(|| "the whole machine".to_owned());
        let (last_good, first_bad) = match &written.search {
            Some(record) => (
                record.pass.as_ref().map(|v| label(&record.variable, v)),
                record.boundary().map(|p| label(&record.variable, &p.load)),
            ),
            None => {
                let (first_bad, last_good) = first_bad_and_last_good(phase);
                (
                    last_good,
                    first_bad.map(|i| phase.points[i].variables.clone()),
                )
            }
        };
        out.push(PhaseCeiling {
            phase: phase.name.clone(),
            measured_in,
            last_good,
            first_bad,
            search: written.search.as_ref().map(story),
        });
    }
    out
}

/// The index of the first step where an SLO failed or a run failed (a server that answered
/// nothing passed nothing), and the step before it (the last step, when none failed; none,
/// when the first failed).
fn first_bad_and_last_good(phase: &Phase) -> (Option<usize>, Option<String>) {
    let first_bad = phase.points.iter().position(|p| {
        !p.slo_failed.is_empty() || !p.slo_unmeasured.is_empty() || !p.failures.is_empty()
    });
    let last_good = match first_bad {
        Some(0) => None,
        Some(i) => Some(phase.points[i - 1].variables.clone()),
        None => phase.points.last().map(|p| p.variables.clone()),
    };
    (first_bad, last_good)
}
