//! The plots a page lists: memory over its sweep, and latency per step, a judged request's
//! apart before its scenario's mixed one.

use super::*;

/// The plots a page has: memory over the memory sweep when there is a fit, and the latency
/// percentiles of each scenario over the ceiling phase (else the first sweep of several steps).
pub(super) fn plots(
    bench: &Bench,
    fits: &[FitRow],
    ceiling: Option<&Ceiling>,
    phases: &[Phase],
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
        });
    }
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
            let slug = |text: &str| -> String {
                text.chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect()
            };
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
                        "{scenario}.{request}: latency by step of the `{}` phase",
                        phase.name
                    ),
                    phase: Some(phase.name.clone()),
                    scenario: Some(scenario.clone()),
                    request: Some(request.clone()),
                });
            }
            plots.push(Plot {
                kind: "latency".to_owned(),
                file: format!("latency-{}.svg", slug(scenario)),
                title: format!("{scenario}: latency by step of the `{}` phase", phase.name),
                phase: Some(phase.name.clone()),
                scenario: Some(scenario.clone()),
                request: None,
            });
        }
    }
    plots
}
