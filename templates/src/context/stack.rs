//! What the page says of a stack (`[target.services]`), its setup and teardown steps, and the
//! series read by a command: how the measured figures came to be, in sentences.

use headroom_results::Results;

/// The stack, the steps and the command series in sentences; empty when the spec has none.
pub(super) fn sentences(results: &Results) -> Vec<String> {
    let target = &results.matrix.target;
    let mut said = Vec::new();
    if !target.services.is_empty() {
        let order = headroom_spec::target::start_order(&target.services).unwrap_or_default();
        let services: Vec<String> = order
            .iter()
            .map(|name| {
                let after = &target.services[*name].after;
                if after.is_empty() {
                    format!("`{name}`")
                } else {
                    let after: Vec<String> = after.iter().map(|a| format!("`{a}`")).collect();
                    format!("`{name}` (after {})", after.join(", "))
                }
            })
            .collect();
        let front = target
            .front
            .clone()
            .or_else(|| target.services.keys().next().cloned())
            .unwrap_or_default();
        said.push(format!(
            "**The stack.** {}, started fresh at every run in that order, each ready before the next, and stopped in reverse; the load goes to `{front}`. Each is sampled apart.",
            services.join(", then ")
        ));
    }
    let steps = |steps: &[headroom_spec::target::Step]| -> Vec<String> {
        steps
            .iter()
            .map(|step| format!("`{}` (up to {})", step.name, step.timeout))
            .collect()
    };
    let (setup, teardown) = (steps(&target.setup), steps(&target.teardown));
    if !setup.is_empty() || !teardown.is_empty() {
        let mut sentence = "**Steps outside the figures.**".to_owned();
        if !setup.is_empty() {
            sentence.push_str(&format!(
                " Before each run's load: {}.",
                setup.join(", then ")
            ));
        }
        if !teardown.is_empty() {
            sentence.push_str(&format!(" After it: {}.", teardown.join(", then ")));
        }
        sentence.push_str(" No sample, scrape or latency is taken while they run.");
        said.push(sentence);
    }
    let mut series: Vec<String> = Vec::new();
    for phase in &results.matrix.phases {
        for s in phase.measure.series.iter().filter(|s| s.command.is_some()) {
            let every = s.every.unwrap_or(phase.measure.sample_every);
            let words = format!(
                "`{}` every {every} ({} of its readings)",
                s.name,
                phase.measure.steady_state.reduce.as_str()
            );
            if !series.contains(&words) {
                series.push(words);
            }
        }
    }
    if !series.is_empty() {
        said.push(format!(
            "**Read by a command while the load ran.** {}.",
            series.join("; ")
        ));
    }
    said
}

/// The services of a phase's stack, in the order they first appear in its runs.
pub(super) fn services_of(phase: &headroom_results::PhaseResults) -> Vec<String> {
    let mut services: Vec<String> = Vec::new();
    for run in phase.points.iter().flat_map(|p| p.runs.iter()) {
        for name in run.services.keys() {
            if !services.contains(name) {
                services.push(name.clone());
            }
        }
    }
    services
}
