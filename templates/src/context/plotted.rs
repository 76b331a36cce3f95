//! The plots a page lists: memory over its sweep, and latency per step, a judged request's
//! apart before its scenario's mixed one.

use super::{Bench, Ceiling, FitRow, Phase, PhaseCeiling, Plot};

/// A file name's part from a name: `latency-{slug}.svg`.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The plots a page has: memory over the memory sweep when there is a fit, each searched
/// phase's search path, the latency percentiles of each scenario over the ceiling phase
/// (else the first sweep of several steps), each series, and the ceiling per core count.
pub(super) fn plots(
    bench: &Bench,
    fits: &[FitRow],
    ceiling: Option<&Ceiling>,
    phase_ceilings: &[PhaseCeiling],
    phases: &[Phase],
    plan: Option<&headroom_pricing::plan::PlanReport>,
) -> Vec<Plot> {
    let mut plots = Vec::new();
    if let Some(fit) = fits.first() {
        plots.push(Plot {
            kind: "memory".to_owned(),
            file: "memory.svg".to_owned(),
            title: format!(
                "{} per {} over the `{}` phase",
                fit.series, bench.unit, fit.phase
            ),
            phase: Some(fit.phase.clone()),
            scenario: None,
            request: None,
            series: None,
        });
    }
    plots.extend(search_plots(ceiling, phase_ceilings));
    plots.extend(latency_plots(ceiling, phases));
    plots.extend(series_plots(phases));
    plots.extend(scaling_plot(plan));
    plots
}

/// The SLO ceiling per core count, when the plan measured several (`[plan] scale_cores`).
fn scaling_plot(plan: Option<&headroom_pricing::plan::PlanReport>) -> Option<Plot> {
    plan.and_then(|plan| plan.scaled_ceilings.as_ref())?;
    Some(Plot {
        kind: "scaling".to_owned(),
        file: "scaling.svg".to_owned(),
        title: "The SLO ceiling per core count, carried to bigger boxes".to_owned(),
        phase: None,
        scenario: None,
        request: None,
        series: None,
    })
}

/// A plot of each searched phase's search path, once each.
fn search_plots(ceiling: Option<&Ceiling>, phase_ceilings: &[PhaseCeiling]) -> Vec<Plot> {
    let mut plots = Vec::new();
    let searched = ceiling
        .filter(|c| c.search.is_some())
        .map(|c| c.phase.clone())
        .into_iter()
        .chain(
            phase_ceilings
                .iter()
                .filter(|c| c.search.is_some())
                .map(|c| c.phase.clone()),
        );
    let mut seen = Vec::new();
    for phase in searched {
        if seen.contains(&phase) {
            continue;
        }
        plots.push(Plot {
            kind: "search".to_owned(),
            file: format!("search-{}.svg", slug(&phase)),
            title: format!("How the `{phase}` phase searched its ceiling"),
            phase: Some(phase.clone()),
            scenario: None,
            request: None,
            series: None,
        });
        seen.push(phase);
    }
    plots
}

/// The latency percentiles of each measured scenario over the ceiling phase (else the first
/// phase of several steps): the requests an SLO judges apart first, then the scenario's.
fn latency_plots(ceiling: Option<&Ceiling>, phases: &[Phase]) -> Vec<Plot> {
    let mut plots = Vec::new();
    let phase = match ceiling {
        Some(ceiling) => phases.iter().find(|p| p.name == ceiling.phase),
        None => phases.iter().find(|p| p.points.len() > 1),
    };
    for phase in phase.into_iter().filter(|p| p.points.len() > 1) {
        for scenario in &phase.scenarios {
            let measured = phase
                .points
                .iter()
                .flat_map(|p| p.scenarios.iter())
                .any(|c| &c.name == scenario && c.p95_ms.is_some());
            if !measured {
                continue;
            }
            // The requests an SLO judges apart lead, each against its own threshold.
            let mut judged: Vec<&String> = phase
                .latency_slos
                .iter()
                .filter(|slo| &slo.scenario == scenario)
                .filter_map(|slo| slo.request.as_ref())
                .collect();
            judged.dedup();
            for request in judged {
                plots.push(Plot {
                    kind: "latency".to_owned(),
                    file: format!("latency-{}-{}.svg", slug(scenario), slug(request)),
                    title: format!(
                        "{scenario}.{request}: latency over the `{}` phase",
                        phase.name
                    ),
                    phase: Some(phase.name.clone()),
                    scenario: Some(scenario.clone()),
                    request: Some(request.clone()),
                    series: None,
                });
            }
            plots.push(Plot {
                kind: "latency".to_owned(),
                file: format!("latency-{}.svg", slug(scenario)),
                title: format!("{scenario}: latency over the `{}` phase", phase.name),
                phase: Some(phase.name.clone()),
                scenario: Some(scenario.clone()),
                request: None,
                series: None,
            });
        }
    }
    plots
}

/// A plot per `[measure]` series of each phase that swept a number (two points or more with
/// the series read): the series over the phase's variable.
fn series_plots(phases: &[Phase]) -> Vec<Plot> {
    let mut plots = Vec::new();
    for phase in phases.iter().filter(|p| p.axis.is_some()) {
        for series in &phase.series {
            let read = phase
                .points
                .iter()
                .flat_map(|p| p.series.iter())
                .filter(|cell| cell.name == series.name && cell.value.is_some())
                .count();
            if read < 2 {
                continue;
            }
            plots.push(Plot {
                kind: "series".to_owned(),
                file: format!("series-{}-{}.svg", slug(&series.name), slug(&phase.name)),
                title: format!("{} over the `{}` phase", series.name, phase.name),
                phase: Some(phase.name.clone()),
                scenario: None,
                request: None,
                series: Some(series.name.clone()),
            });
        }
    }
    plots
}
