//! The ceiling phase step by step: the last good step, what broke, the cliff.

use super::*;

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
    let (first_bad, last_good) = first_bad_and_last_good(phase);
    // What broke: the verdicts that failed at the first bad step, with their values.
    let mut broke = Vec::new();
    if let Some(index) = first_bad {
        let point = results
            .phases
            .iter()
            .find(|p| p.name == phase.name)
            .and_then(|p| p.points.get(index));
        for run in point.iter().flat_map(|p| p.runs.iter()) {
            if let Some(failure) = &run.failure {
                let line = format!("a run failed: {}", failure.describe());
                if !broke.contains(&line) {
                    broke.push(line);
                }
            }
            for verdict in &run.slo {
                if verdict.pass != Some(false) {
                    continue;
                }
                let line = headroom_figures::text::slo_sentence(verdict, &results.matrix.slo);
                if !broke.contains(&line) {
                    broke.push(line);
                }
            }
        }
    }
    // A cliff: the largest step-to-step jump of the worst scenario p95.
    let worst: Vec<Option<f64>> = phase
        .points
        .iter()
        .map(|p| {
            p.scenarios
                .iter()
                .filter_map(|c| c.p95_ms.map(|s| s.median))
                .reduce(f64::max)
        })
        .collect();
    let cliff = worst
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
        });
    // Nothing over a threshold there, only runs that failed: no ceiling below it to sweep for.
    let nothing_measured = first_bad.is_some_and(|i| phase.points[i].slo_failed.is_empty());
    Some(Ceiling {
        phase: phase.name.clone(),
        chosen_because: because.to_owned(),
        nothing_measured,
        last_good,
        first_bad: first_bad.map(|i| phase.points[i].variables.clone()),
        broke,
        cliff,
    })
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
        let (first_bad, last_good) = first_bad_and_last_good(phase);
        out.push(PhaseCeiling {
            phase: phase.name.clone(),
            measured_in,
            last_good,
            first_bad: first_bad.map(|i| phase.points[i].variables.clone()),
        });
    }
    out
}

/// The index of the first step where an SLO failed or a run failed (a server that answered
/// nothing passed nothing), and the step before it (the last step, when none failed; none,
/// when the first failed).
fn first_bad_and_last_good(phase: &Phase) -> (Option<usize>, Option<String>) {
    let first_bad = phase
        .points
        .iter()
        .position(|p| !p.slo_failed.is_empty() || !p.failures.is_empty());
    let last_good = match first_bad {
        Some(0) => None,
        Some(i) => Some(phase.points[i - 1].variables.clone()),
        None => phase.points.last().map(|p| p.variables.clone()),
    };
    (first_bad, last_good)
}
