//! The figures of one run that a comparison judges, each with the way that is better.
//!
//! Only what was measured: a latency summary of no requests, a process never sampled or a
//! failed run gives no figure (never a 0 to compare). A `[measure]` series is a figure
//! (`series.NAME`) when the spec says which way of it is better (`better = "lower"`).

use std::collections::BTreeMap;

use headroom_results::{RunResult, ScenarioResult, Summary};
use headroom_spec::{Better, Series};

use crate::verdict::Direction;

const MIB: f64 = 1024.0 * 1024.0;

/// A run's figures by name (`api.latency.p95`, `rss_mib`, `series.heap`), each with its better
/// direction; `series` are the `[measure]` series of the run's phase.
pub fn of_run(run: &RunResult, series: &[Series]) -> BTreeMap<String, (Direction, f64)> {
    let mut figures = BTreeMap::new();
    if run.failure.is_some() {
        return figures;
    }
    for (name, scenario) in &run.scenarios {
        if scenario.skipped.is_none() {
            scenario_figures(name, scenario, &mut figures);
        }
    }
    if let Some(steady) = &run.process.steady {
        figures.insert(
            "rss_mib".to_owned(),
            (Direction::LowerIsBetter, steady.rss_bytes as f64 / MIB),
        );
    }
    if let Some(cores) = run.process.hold_cpu_cores {
        figures.insert("cpu_cores".to_owned(), (Direction::LowerIsBetter, cores));
    }
    for one in series {
        let direction = match one.better {
            Some(Better::Lower) => Direction::LowerIsBetter,
            Some(Better::Higher) => Direction::HigherIsBetter,
            None => continue,
        };
        if let Some(value) = run.metrics.steady.get(&one.name) {
            figures.insert(format!("series.{}", one.name), (direction, *value));
        }
    }
    figures
}

fn scenario_figures(
    name: &str,
    scenario: &ScenarioResult,
    figures: &mut BTreeMap<String, (Direction, f64)>,
) {
    if let Some(rooms) = &scenario.rooms {
        percentiles(&format!("{name}.seen"), &rooms.seen, figures);
        percentiles(&format!("{name}.seen_by_all"), &rooms.seen_by_all, figures);
        let messages = &rooms.messages;
        if messages.expected > 0 {
            figures.insert(
                format!("{name}.delivered"),
                (
                    Direction::HigherIsBetter,
                    messages.delivered as f64 / messages.expected as f64,
                ),
            );
        }
        return;
    }
    percentiles(&format!("{name}.latency"), &scenario.latency, figures);
    if scenario.requests > 0 {
        figures.insert(
            format!("{name}.rate"),
            (Direction::HigherIsBetter, scenario.rate),
        );
        figures.insert(
            format!("{name}.errors"),
            (
                Direction::LowerIsBetter,
                scenario.errors.total() as f64 / scenario.requests as f64,
            ),
        );
    }
    // Each named request measured apart: `browse.list.latency.p95`, `browse.list.errors`.
    for (request, apart) in &scenario.by_request {
        percentiles(
            &format!("{name}.{request}.latency"),
            &apart.latency,
            figures,
        );
        if apart.requests > 0 {
            figures.insert(
                format!("{name}.{request}.errors"),
                (
                    Direction::LowerIsBetter,
                    apart.errors.total() as f64 / apart.requests as f64,
                ),
            );
        }
    }
}

/// p50, p90, p95 and p99 of a summary of at least one value, in milliseconds.
fn percentiles(prefix: &str, summary: &Summary, figures: &mut BTreeMap<String, (Direction, f64)>) {
    if summary.count == 0 {
        return;
    }
    for (quantile, value) in [
        ("p50", summary.p50_ms),
        ("p90", summary.p90_ms),
        ("p95", summary.p95_ms),
        ("p99", summary.p99_ms),
    ] {
        figures.insert(
            format!("{prefix}.{quantile}"),
            (Direction::LowerIsBetter, value),
        );
    }
}

#[cfg(test)]
mod tests {
    use headroom_results::{Failure, ProcessSample};

    use super::*;

    #[test]
    fn an_http_run_gives_its_latencies_rate_errors_memory_and_cpu() {
        let mut run = RunResult::started(1, 0);
        let mut api = ScenarioResult {
            kind: "http".to_owned(),
            requests: 200,
            rate: 50.0,
            ..ScenarioResult::default()
        };
        api.errors.timeout = 4;
        api.latency = Summary {
            count: 200,
            p50_ms: 2.0,
            p90_ms: 5.0,
            p95_ms: 7.0,
            p99_ms: 30.0,
            ..Summary::default()
        };
        // A named request measured apart: its own latencies and errors.
        api.by_request.insert(
            "list".to_owned(),
            headroom_results::RequestResult {
                requests: 100,
                ok: 100,
                latency: Summary {
                    count: 100,
                    p95_ms: 9.0,
                    ..Summary::default()
                },
                ..Default::default()
            },
        );
        run.scenarios.insert("api".to_owned(), api);
        // A scenario that did not run, and one that measured nothing: no figures.
        let skipped = ScenarioResult {
            skipped: Some("no such route".to_owned()),
            ..ScenarioResult::default()
        };
        run.scenarios.insert("off".to_owned(), skipped);
        run.scenarios
            .insert("idle".to_owned(), ScenarioResult::default());
        run.process.steady = Some(ProcessSample {
            rss_bytes: 64 * 1024 * 1024,
            ..ProcessSample::default()
        });
        run.process.hold_cpu_cores = Some(0.25);
        run.metrics.steady.insert("heap".to_owned(), 5e6);
        run.metrics.steady.insert("queue".to_owned(), 3.0);
        let series = |name: &str, better| Series {
            name: name.to_owned(),
            metric: Some(format!("app_{name}")),
            command: None,
            every: None,
            labels: BTreeMap::new(),
            unit: None,
            better,
        };
        // `heap` says lower is better: a figure; `queue` says nothing: none.
        let declared = [series("heap", Some(Better::Lower)), series("queue", None)];
        let figures = of_run(&run, &declared);
        let names: Vec<&str> = figures.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "api.errors",
                "api.latency.p50",
                "api.latency.p90",
                "api.latency.p95",
                "api.latency.p99",
                "api.list.errors",
                "api.list.latency.p50",
                "api.list.latency.p90",
                "api.list.latency.p95",
                "api.list.latency.p99",
                "api.rate",
                "cpu_cores",
                "rss_mib",
                "series.heap"
            ]
        );
        assert_eq!(figures["series.heap"], (Direction::LowerIsBetter, 5e6));
        assert_eq!(figures["api.errors"], (Direction::LowerIsBetter, 0.02));
        assert_eq!(figures["api.rate"], (Direction::HigherIsBetter, 50.0));
        assert_eq!(figures["api.latency.p95"], (Direction::LowerIsBetter, 7.0));
        assert_eq!(figures["rss_mib"], (Direction::LowerIsBetter, 64.0));
        assert_eq!(
            figures["api.list.latency.p95"],
            (Direction::LowerIsBetter, 9.0)
        );
        assert_eq!(figures["api.list.errors"], (Direction::LowerIsBetter, 0.0));
        // A failed run's figures are not compared.
        run.failure = Some(Failure::SpawnFailed {
            message: "no such program".to_owned(),
        });
        assert!(of_run(&run, &declared).is_empty());
    }
}
