//! Whether the load generator, not the server, may have set a run's latency.

use std::collections::BTreeMap;

use crate::results::{GeneratorResult, ScenarioResult};

/// A schedule lag p99 above this marks a run generator-bound.
pub(crate) const LAG_LIMIT_MS: f64 = 5.0;

pub(crate) fn generator(
    scenarios: &BTreeMap<String, ScenarioResult>,
    cpu_s: f64,
    seconds: f64,
    cores_left: Option<f64>,
) -> GeneratorResult {
    let lag = scenarios
        .values()
        .map(|s| s.schedule_lag.p99_ms)
        .fold(0.0, f64::max);
    let cores_available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_cores = if seconds > 0.0 { cpu_s / seconds } else { 0.0 };
    let reason = if lag > LAG_LIMIT_MS {
        Some(format!(
            "the generator's schedule lag p99 was {lag:.1} ms (over {LAG_LIMIT_MS} ms): its latencies are not the server's"
        ))
    } else if let Some(left) = cores_left.filter(|left| *left < 1.0) {
        Some(format!(
            "the generator had {left:.2} of the {cores_available} cores beside the target's limits (less than one): its latencies are not the server's"
        ))
    } else if let Some(left) = cores_left
        && cpu_cores > 0.9 * left
    {
        Some(format!(
            "the generator used {cpu_cores:.2} of the {left:.2} cores beside the target's limits: its latencies are not the server's"
        ))
    } else if let Some(reason) = queued_at_limit(scenarios) {
        Some(reason)
    } else if cpu_cores > 0.9 * cores_available as f64 {
        Some(format!(
            "the generator used {cpu_cores:.2} of {cores_available} cores: its latencies are not the server's"
        ))
    } else {
        None
    };
    GeneratorResult {
        schedule_lag_p99_ms: lag,
        cpu_cores,
        cores_available,
        cores_left,
        threads: None,
        bound: reason.is_some(),
        reason,
        segments: Vec::new(),
    }
}

/// Over this share of a scenario's requests waiting for one of its `max_connections`, the
/// latency is the limit's as much as the server's.
const QUEUED_LIMIT: f64 = 0.01;

/// The first HTTP scenario whose requests often waited for a free connection, in words.
fn queued_at_limit(scenarios: &BTreeMap<String, ScenarioResult>) -> Option<String> {
    scenarios.iter().find_map(|(name, scenario)| {
        let queued = scenario.connections.as_ref()?.queued_at_limit;
        let requests = scenario.requests + scenario.ramps.as_ref().map_or(0, |r| r.requests);
        (queued as f64 > QUEUED_LIMIT * requests.max(1) as f64).then(|| {
            format!(
                "{queued} of the {requests} requests of `{name}` waited in the generator for one of its `max_connections` connections: raise `max_connections`, or its latencies are the limit's as much as the server's"
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_bound_when_it_lags() {
        let mut scenarios = BTreeMap::new();
        let mut lagging = ScenarioResult::default();
        lagging.schedule_lag.p99_ms = 12.0;
        scenarios.insert("a".to_owned(), lagging);
        let verdict = generator(&scenarios, 0.1, 10.0, None);
        assert!(verdict.bound);
        assert!(!generator(&BTreeMap::new(), 0.1, 10.0, None).bound);
    }

    /// Issue 15: requests waiting for a connection the spec's limit keeps from opening are
    /// the generator's wait, not the server's.
    #[test]
    fn the_generator_is_bound_when_requests_wait_for_its_connection_limit() {
        let mut scenario = ScenarioResult {
            requests: 1_000,
            connections: Some(crate::results::Connections {
                opened: 50,
                queued_at_limit: 10,
            }),
            ..ScenarioResult::default()
        };
        let mut scenarios = BTreeMap::from([("api".to_owned(), scenario.clone())]);
        assert!(
            !generator(&scenarios, 0.1, 10.0, None).bound,
            "1 % is not over 1 %"
        );
        scenario.connections = Some(crate::results::Connections {
            opened: 50,
            queued_at_limit: 200,
        });
        scenarios.insert("api".to_owned(), scenario);
        let verdict = generator(&scenarios, 0.1, 10.0, None);
        assert_eq!(
            verdict.reason.as_deref(),
            Some(
                "200 of the 1000 requests of `api` waited in the generator for one of its `max_connections` connections: raise `max_connections`, or its latencies are the limit's as much as the server's"
            )
        );
    }

    /// Issue 14: a target limited to all but half a core leaves the generator less than one.
    #[test]
    fn the_generator_is_bound_with_less_than_a_core_beside_the_target() {
        let squeezed = generator(&BTreeMap::new(), 0.1, 10.0, Some(0.5));
        assert!(squeezed.bound);
        let reason = squeezed.reason.expect("a reason");
        assert!(
            reason.starts_with("the generator had 0.50 of the "),
            "{reason}"
        );
        assert!(!generator(&BTreeMap::new(), 0.1, 10.0, Some(1.0)).bound);
        // 0.95 cores of the one left is the generator's limit, not the server's.
        assert!(generator(&BTreeMap::new(), 9.5, 10.0, Some(1.0)).bound);
    }
}
