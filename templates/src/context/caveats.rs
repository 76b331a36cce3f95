//! What a reader must know before trusting the figures, and what was not measured.

use super::{Bench, Ceiling, FitRow, Machine, Phase, RunCounts, Spread};
use headroom_pricing::plan::PlanReport;
use headroom_results::Results;

/// The caveats, and the one the page's headline carries: `--quick` results, else other work
/// on the machine (`None` when neither: the caller falls back to what was not measured).
pub(super) fn caveats(
    quick: bool,
    machine: &Machine,
    load: Option<Spread>,
    runs: &RunCounts,
    phases: &[Phase],
) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut headline = None;
    if quick {
        let line = "These are `--quick` results: holds, steps and repeats were scaled down for a first look. Do not plan with them.";
        headline = Some(line.to_owned());
        out.push(line.to_owned());
    }
    out.push("The server and the load generator ran on the same machine and shared its cores: read every latency as an upper bound and every ceiling as a lower bound.".to_owned());
    if let Some(load) = load
        && let Some(cores) = machine.logical_cores
        && cores > 0
        && load.max > cores as f64
    {
        let line = format!(
            "The load average reached {:.1} on {} logical cores: something else competed for the machine during some runs.",
            load.max, cores
        );
        headline.get_or_insert_with(|| line.clone());
        out.push(line);
    }
    if runs.generator_bound > 0 {
        out.push(format!(
            "{} of {} runs were generator-bound (the generator lagged its schedule, used nearly every core, or had less than one beside the target's limits): their latencies are the generator's as much as the server's.",
            runs.generator_bound, runs.total
        ));
    }
    if runs.machine_paused > 0 {
        let longest = runs
            .longest_pause_ms
            .map_or_else(String::new, |ms| format!(" (up to {ms:.0} ms)"));
        out.push(format!(
            "In {} of {} runs the machine paused the generator{longest} while it was idle and sent every arrival: their schedule lag is the machine's pauses, a caveat on their tails, not a generator bound.",
            runs.machine_paused, runs.total
        ));
    }
    let took = what_the_machine_and_the_ramps_took(runs);
    if runs.machine_competed > 0
        && let Some(competed) = took.first()
    {
        headline.get_or_insert_with(|| competed.clone());
    }
    out.extend(took);
    out.extend(phases.iter().filter_map(saturated));
    if runs.kept_per_phase {
        out.push("Each phase kept one target for all its runs (`process = \"per-phase\"`): a run inherited what the phase's earlier runs left (warm caches, rows, memory), so a point's figures depend on the points that ran before it.".to_owned());
    }
    if runs.not_run > 0 {
        out.push(format!(
            "{} runs were not run: the target kept for their phase never came up or died; the phase says why.",
            runs.not_run
        ));
    }
    if runs.failed > 0 {
        out.push(format!(
            "{} of {} runs failed; their points show why.",
            runs.failed, runs.total
        ));
    }
    out.extend(noisy(phases));
    (out, headline)
}

/// The points whose repeats spread more than 10 % (RSS or a scenario's p95), as one caveat.
fn noisy(phases: &[Phase]) -> Option<String> {
    let noisy: Vec<String> = phases
        .iter()
        .flat_map(|phase| {
            phase.points.iter().filter_map(move |point| {
                let mut figures = Vec::new();
                if point.rss_bytes.as_ref().is_some_and(|rss| rss.noisy) {
                    figures.push("RSS".to_owned());
                }
                for cell in &point.scenarios {
                    if cell.p95_ms.as_ref().is_some_and(|p95| p95.noisy) {
                        figures.push(format!("{} p95", cell.name));
                    }
                }
                (!figures.is_empty()).then(|| {
                    format!(
                        "{} in `{}` ({})",
                        point.variables,
                        phase.name,
                        figures.join(", ")
                    )
                })
            })
        })
        .collect();
    (!noisy.is_empty()).then(|| {
        format!(
            "The repeats spread more than 10 % (standard deviation over mean) at {}: those medians are noisy; add repeats (the phase's `repeats`, or `headroom run --repeat N`) before planning with them.",
            noisy.join("; ")
        )
    })
}

/// Other work on the machine over the holds, and requests that failed outside the holds.
fn what_the_machine_and_the_ramps_took(runs: &RunCounts) -> Vec<String> {
    let mut out = Vec::new();
    if runs.machine_competed > 0 {
        let mut took = Vec::new();
        if let Some(cores) = runs.most_others_cores.filter(|c| *c > 0.0) {
            took.push(format!("other processes up to {cores:.2} cores"));
        }
        if let Some(cores) = runs.most_stolen_cores.filter(|c| *c > 0.0) {
            took.push(format!("the hypervisor up to {cores:.2}"));
        }
        out.push(format!(
            "In {} of {} runs other work took a share of the machine over the hold ({}): their server had less of it than a quiet machine gives, so their latencies read high and their ceilings low.",
            runs.machine_competed,
            runs.total,
            took.join(", ")
        ));
    }
    if runs.failed_outside_hold > 0 {
        let errors = &runs.outside_hold_errors;
        out.push(format!(
            "In {} of {} runs, {} requests intended outside the hold (its ramps, or the load held while the others arrived) failed ({}): in no latency figure, but counted in their scenario's `failed` share.",
            runs.failed_outside_hold,
            runs.total,
            crate::format::count(errors.total() as f64),
            errors.describe()
        ));
    }
    out
}

/// The server's memory and CPU, when no run sampled its process (an external target without
/// `pid_file`): the RSS column reads "–" and no memory or CPU per unit is fitted.
pub(super) fn process_unsampled(results: &Results) -> Option<String> {
    let mut runs = results
        .phases
        .iter()
        .flat_map(|p| p.points.iter())
        .flat_map(|p| p.runs.iter())
        .filter(|run| run.failure.is_none())
        .peekable();
    runs.peek()?;
    let sampled = runs
        .clone()
        .any(|run| run.process.steady.is_some() || run.process.hold_cpu_cores.is_some());
    if sampled {
        return None;
    }
    let why = if results.matrix.target.url.is_some() && results.matrix.target.pid_file.is_none() {
        "the target is external and the spec gives no `pid_file` in [target] to find its process"
    } else {
        "no run could read its process"
    };
    Some(format!(
        "The server's memory and CPU: {why}, so the RSS column reads \"–\" and there is no memory or CPU per unit."
    ))
}

/// The plan priced from other price tables than the spec priced from when it ran (a table
/// refreshed or edited since, or `--prices` given to `render`): which, by their digests, so a
/// reader knows the dollars are not the run's. `None` when the tables are the same, or the
/// results (written before they recorded them) do not say.
pub(super) fn priced_from_other_tables(
    results: &Results,
    plan: Option<&headroom_pricing::plan::PlanReport>,
) -> Option<String> {
    let plan = plan?;
    if results.price_tables.is_empty() || plan.price_tables.is_empty() {
        return None;
    }
    let digests = |tables: &[headroom_results::TableSource]| -> Vec<String> {
        tables.iter().map(|t| t.sha256.clone()).collect()
    };
    if digests(&results.price_tables) == digests(&plan.price_tables) {
        return None;
    }
    let named = |tables: &[headroom_results::TableSource]| -> String {
        tables
            .iter()
            .map(|t| {
                // The first 12 characters, as the page's own line shows them (a digest read
                // from a results file is not known to be hex).
                let short: String = t.sha256.chars().take(12).collect();
                format!("{} (sha256 `{short}`)", t.name)
            })
            .collect::<Vec<_>>()
            .join(", then ")
    };
    Some(format!(
        "The costs are priced from other price tables than the run's: the run priced from {}; this page from {}.",
        named(&results.price_tables),
        named(&plan.price_tables)
    ))
}

/// A phase where the server looks bound at a whole number of cores: over its last steps its
/// CPU stays flat (within 5 %) near a whole number of cores (within 10 %) while the worst
/// p95 climbs (doubles or more). Said from the measurements, never assumed.
pub(super) fn saturated(phase: &Phase) -> Option<String> {
    let steps: Vec<(&str, f64, f64)> = phase
        .points
        .iter()
        .filter_map(|p| {
            let cpu = p.cpu_cores.as_ref()?.median;
            let p95 = p
                .scenarios
                .iter()
                .filter_map(|c| c.p95_ms.as_ref().map(|s| s.median))
                .reduce(f64::max)?;
            Some((p.variables.as_str(), cpu, p95))
        })
        .collect();
    // The longest run of last steps whose CPU stays within 5 % of the last one's.
    let &(_, last_cpu, last_p95) = steps.last()?;
    let cores = last_cpu.round();
    if cores < 1.0 || (last_cpu - cores).abs() > 0.1 * cores {
        return None;
    }
    let flat = steps
        .iter()
        .rev()
        .take_while(|(_, cpu, _)| (cpu - last_cpu).abs() <= 0.05 * last_cpu)
        .count();
    if flat < 2 {
        return None;
    }
    let (first, first_cpu, first_p95) = steps[steps.len() - flat];
    if first_p95 <= 0.0 || last_p95 < 2.0 * first_p95 {
        return None;
    }
    let low = steps[steps.len() - flat..]
        .iter()
        .map(|s| s.1)
        .fold(f64::INFINITY, f64::min);
    let high = steps[steps.len() - flat..]
        .iter()
        .map(|s| s.1)
        .fold(first_cpu, f64::max);
    let (last, ..) = steps[steps.len() - 1];
    Some(format!(
        "In `{}`, the server looks bound at {} core{}, measured: from {first} to {last} its CPU stays at {low:.2}–{high:.2} cores while the worst p95 climbs from {} to {}: more load there only waits. If it was meant to use more cores, it does not; `[target] cores = {}` plans it as it is.",
        phase.name,
        cores,
        if cores == 1.0 { "" } else { "s" },
        crate::format::duration_ms(first_p95),
        crate::format::duration_ms(last_p95),
        cores
    ))
}

pub(super) fn not_measured(
    fits: &[FitRow],
    ceiling: Option<&Ceiling>,
    plan: Option<&PlanReport>,
    bench: &Bench,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(Ceiling {
        phase,
        last_good: Some(last),
        first_bad: None,
        ..
    }) = ceiling
    {
        out.push(format!(
            "The SLO ceiling is a lower bound: every step of `{phase}` passed, up to {last}. Where the SLOs break was not measured; sweep further to find it."
        ));
    }
    if fits.is_empty() {
        out.push(format!(
            "No sweep carries the memory series `{}`: there is no memory per {} and no memory ceiling.",
            bench.memory_series, bench.unit
        ));
    }
    // The planner already warns about the memory series' fit; the others are the page's own.
    for fit in fits {
        if plan.is_some() && fit.series == bench.memory_series {
            continue;
        }
        for warning in &fit.warnings {
            out.push(format!("{}: {warning}", fit.series));
        }
    }
    if let Some(plan) = plan {
        for warning in &plan.warnings {
            if !out.contains(warning) {
                out.push(warning.clone());
            }
        }
        if plan.slo_ceiling.is_none() {
            out.push(
                "No sweep found an SLO ceiling: the CPU side of the plan is unmeasured.".to_owned(),
            );
        }
    } else {
        out.push("No instances were priced: the spec's [plan] names none.".to_owned());
    }
    out
}
