//! Whether the load generator, not the server, may have set a run's latency.

use std::collections::BTreeMap;

use crate::results::{GeneratorResult, ScenarioResult};

/// A schedule lag p99 above this marks a run generator-bound.
pub(crate) const LAG_LIMIT_MS: f64 = 5.0;

pub(crate) fn generator(
    scenarios: &BTreeMap<String, ScenarioResult>,
    cpu_s: f64,
    seconds: f64,
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
        bound: reason.is_some(),
        reason,
    }
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
        let verdict = generator(&scenarios, 0.1, 10.0);
        assert!(verdict.bound);
        assert!(!generator(&BTreeMap::new(), 0.1, 10.0).bound);
    }
}
