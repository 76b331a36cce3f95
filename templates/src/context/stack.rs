//! What the page says of a stack (`[target.services]`), its setup and teardown steps, and the
//! series read by a command: how the measured figures came to be, in sentences.

use headroom_results::{PhaseTarget, Results};
use headroom_spec::target::{ProcessMode, Step, StepScope};

/// The stack, the steps and the command series in sentences; empty when the spec has none.
pub(super) fn sentences(results: &Results) -> Vec<String> {
    let target = &results.matrix.target;
    [
        stack_sentence(target),
        steps_sentence(target),
        series_sentence(results),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The stack's services in their start order, how they are started, and where the load goes.
fn stack_sentence(target: &headroom_spec::Target) -> Option<String> {
    if target.services.is_empty() {
        return None;
    }
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
    let when = match target.process {
        ProcessMode::PerPoint => "started fresh at every run",
        ProcessMode::PerPhase => "started once a phase and kept for all its runs",
    };
    Some(format!(
        "**The stack.** {}, {when} in that order, each ready before the next, and stopped in reverse; the load goes to `{front}`. Each is sampled apart.",
        services.join(", then ")
    ))
}

/// The setup and teardown steps, in the order they run, outside the figures.
fn steps_sentence(target: &headroom_spec::Target) -> Option<String> {
    if target.setup.is_empty() && target.teardown.is_empty() {
        return None;
    }
    let steps = |steps: &[Step], per: StepScope| -> Vec<String> {
        steps
            .iter()
            .filter(|step| step.per == per)
            .map(|step| format!("`{}` (up to {})", step.name, step.timeout))
            .collect()
    };
    let order = [
        (
            &target.setup,
            StepScope::Phase,
            "Before each phase's first run",
        ),
        (&target.setup, StepScope::Point, "Before each run's load"),
        (&target.teardown, StepScope::Point, "After each run's load"),
        (
            &target.teardown,
            StepScope::Phase,
            "After each phase's last run",
        ),
    ];
    let mut sentence = "**Steps outside the figures.**".to_owned();
    for (list, per, when) in order {
        let named = steps(list, per);
        if !named.is_empty() {
            sentence.push_str(&format!(" {when}: {}.", named.join(", then ")));
        }
    }
    sentence.push_str(" No sample, scrape or latency is taken while they run.");
    Some(sentence)
}

/// The `[measure]` series read by a command while the load ran.
fn series_sentence(results: &Results) -> Option<String> {
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
    (!series.is_empty()).then(|| {
        format!(
            "**Read by a command while the load ran.** {}.",
            series.join("; ")
        )
    })
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

/// What the target a phase kept did, in a sentence: kept for its runs, ready after how long,
/// its once-a-phase steps, how it ended or the failure that ended the phase.
pub(super) fn kept_sentence(target: &PhaseTarget) -> String {
    let started = target.log.is_some() || !target.services.is_empty();
    let mut sentence = if started {
        "One target served every run of this phase (`process = \"per-phase\"`)".to_owned()
    } else {
        "The external target served every run of this phase".to_owned()
    };
    let ready = target.ready_after_s.or_else(|| {
        target
            .services
            .values()
            .filter_map(|service| service.ready_after_s)
            .reduce(f64::max)
    });
    if let Some(ready) = ready {
        sentence.push_str(&format!(", ready {ready:.1} s after it started"));
    }
    sentence.push('.');
    if !target.steps.is_empty() {
        let steps: Vec<String> = target
            .steps
            .iter()
            .map(|step| {
                let exit = match &step.exit {
                    Some(exit) => exit.to_string(),
                    None => "killed at its timeout".to_owned(),
                };
                format!(
                    "{} `{}` ({:.1} s, {exit})",
                    step.when, step.name, step.seconds
                )
            })
            .collect();
        sentence.push_str(&format!(" Once for the phase: {}.", steps.join(", ")));
    }
    match &target.failure {
        Some(failure) => {
            sentence.push_str(&format!(" It failed: {}", failure.describe()));
            match target.runs_not_run {
                0 => sentence.push('.'),
                1 => sentence.push_str("; 1 run of the phase was not run."),
                n => sentence.push_str(&format!("; {n} runs of the phase were not run.")),
            }
        }
        None if started && target.interrupted => sentence
            .push_str(" It was stopped when the run was interrupted, before the phase's last run."),
        None if started => sentence.push_str(" It was stopped after the phase's last run."),
        None => {}
    }
    sentence
}
