//! What the page says about `[target] limits`: the shape each phase ran in and its
//! throttling, or that the limits were ignored.

use headroom_results::{Results, RunLimits};

use super::rows::variables;

/// The shape a phase's target ran in and the most it was throttled, in a sentence:
/// `Measured in 0.5 CPU, 2GiB memory, no swap (cgroup v1); the CPU quota stopped the target in
/// up to 35 % of its periods (at people = 800).`
pub(super) fn sentence(phase: &headroom_results::PhaseResults) -> Option<String> {
    sentence_of(phase, "Measured in", "the target", |run| {
        run.limits.as_ref()
    })
}

/// The same of one service of a stack: `` `db` ran in 0.5 CPU, 512MiB memory, no swap …``.
pub(super) fn service_sentence(
    phase: &headroom_results::PhaseResults,
    service: &str,
) -> Option<String> {
    let ran_in = format!("`{service}` ran in");
    sentence_of(phase, &ran_in, "it", |run| {
        run.services.get(service)?.limits.as_ref()
    })
}

/// The sentence, `opening` and `subject` its words, `pick` the limits of a run.
fn sentence_of(
    phase: &headroom_results::PhaseResults,
    opening: &str,
    subject: &str,
    pick: impl Fn(&headroom_results::RunResult) -> Option<&RunLimits>,
) -> Option<String> {
    let runs = || {
        phase
            .points
            .iter()
            .flat_map(|p| p.runs.iter().map(move |r| (p, r)))
    };
    if runs().any(|(_, r)| matches!(pick(r), Some(RunLimits::Ignored))) {
        return Some("`[target] limits` were ignored (--ignore-limits): measured with the whole machine, not the instance size.".to_owned());
    }
    let applied: Vec<_> = runs()
        .filter_map(|(p, r)| match pick(r) {
            Some(RunLimits::Applied(applied)) => Some((p, applied)),
            _ => None,
        })
        .collect();
    let mut shapes: Vec<String> = applied.iter().map(|(_, a)| a.describe()).collect();
    shapes.dedup();
    let mut sentence = match shapes.as_slice() {
        [] => return None,
        [shape] => format!("{opening} {shape}"),
        _ => "Measured in a shape per point (the results file has each)".to_owned(),
    };
    let worst = applied
        .iter()
        .filter_map(|(p, a)| Some((*p, a.throttled_share()?)))
        .filter(|(_, share)| *share > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    // Throttling is a CPU quota's: without one there is nothing to say about it.
    if applied.iter().all(|(_, a)| a.cpus.is_none()) {
        sentence.push('.');
        return Some(sentence);
    }
    match worst {
        Some((point, share)) => sentence.push_str(&format!(
            "; the CPU quota stopped {subject} in up to {:.0} % of its periods (at {}).",
            share * 100.0,
            variables(&point.at)
        )),
        None => sentence.push_str(&format!("; the CPU quota never stopped {subject}.")),
    }
    Some(sentence)
}

/// The caveat of results whose limits were ignored (`--ignore-limits`): every figure is the
/// whole machine's, whatever instance the page prices.
pub(super) fn ignored_caveat(results: &Results) -> Option<String> {
    let ignored = results
        .phases
        .iter()
        .flat_map(|p| p.points.iter())
        .flat_map(|p| p.runs.iter())
        .any(|r| {
            let ignored = |limits: Option<&RunLimits>| matches!(limits, Some(RunLimits::Ignored));
            ignored(r.limits.as_ref()) || r.services.values().any(|s| ignored(s.limits.as_ref()))
        });
    ignored.then(|| "The spec's `[target] limits` were ignored (--ignore-limits): the target ran with the whole machine's CPUs and memory, not the instance size the limits describe. Read every figure as this machine's.".to_owned())
}
