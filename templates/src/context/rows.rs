//! A row per point: min, median and max over its repeats, per scenario.

use super::*;

pub(super) fn point_row(point: &PointResults, names: &[String]) -> Point {
    let runs = &point.runs;
    let rss: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.process.steady.as_ref())
        .map(|s| s.rss_bytes as f64)
        .collect();
    let mut scenarios = Vec::new();
    for name in names {
        let results: Vec<&ScenarioResult> = runs
            .iter()
            .filter_map(|r| r.scenarios.get(name))
            .filter(|s| s.skipped.is_none())
            .collect();
        let Some(first) = results.first() else {
            continue;
        };
        let kind = first.kind.clone();
        let rooms = kind == "rooms";
        let requests: Vec<f64> = results.iter().map(|s| s.requests as f64).collect();
        // Rooms: the time until everyone had a message; HTTP: the request latency.
        let quantile = |pick: fn(&Summary) -> f64| -> Option<Stat> {
            let values: Vec<f64> = results
                .iter()
                .filter_map(|s| {
                    let summary = if rooms {
                        &s.rooms.as_ref()?.seen_by_all
                    } else {
                        &s.latency
                    };
                    (summary.count > 0).then(|| pick(summary))
                })
                .collect();
            Stat::of(&values)
        };
        let errors: u64 = results.iter().map(|s| s.errors.total()).sum();
        let sum = |pick: fn(&MessageCounts) -> u64| -> Option<u64> {
            rooms.then(|| {
                results
                    .iter()
                    .filter_map(|s| s.rooms.as_ref())
                    .map(|r| pick(&r.messages))
                    .sum()
            })
        };
        scenarios.push(ScenarioCell {
            name: name.clone(),
            kind,
            requests: Stat::of(&requests),
            p95_ms: quantile(|s| s.p95_ms),
            p50_ms: quantile(|s| s.p50_ms),
            p99_ms: quantile(|s| s.p99_ms),
            errors,
            delivered: sum(|m| m.delivered),
            expected: sum(|m| m.expected),
        });
    }
    let mut slo_failed = Vec::new();
    let mut slo_unmeasured = Vec::new();
    let mut failures = Vec::new();
    for run in runs {
        for verdict in &run.slo {
            let list = match verdict.pass {
                Some(false) => &mut slo_failed,
                None => &mut slo_unmeasured,
                Some(true) => continue,
            };
            if !list.contains(&verdict.name) {
                list.push(verdict.name.clone());
            }
        }
        if let Some(failure) = &run.failure {
            failures.push(failure.kind().replace('_', " "));
        }
    }
    Point {
        variables: variables(&point.at),
        runs: runs.len(),
        rss_bytes: Stat::of(&rss),
        scenarios,
        slo_failed,
        slo_unmeasured,
        failures,
    }
}
