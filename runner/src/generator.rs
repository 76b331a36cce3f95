//! Whether the load generator, not the server, may have set a run's latency.

use std::collections::BTreeMap;

use crate::results::{GeneratorResult, MachinePauses, ScenarioResult};

/// A schedule lag p99 above this marks a run generator-bound, unless the machine's pauses
/// explain it.
pub(crate) const LAG_LIMIT_MS: f64 = 5.0;

/// Under this share of the cores it could use, the generator was idle: a lag it shows is not
/// its own load.
const IDLE_SHARE: f64 = 0.5;

/// The generator watched over a load: from its start, its own CPU and the machine's pauses.
pub(crate) struct Watching {
    started: std::time::Instant,
    cpu_before: f64,
    pause_meter: headroom_load::pauses::PauseMeter,
}

impl Watching {
    pub(crate) fn start() -> Watching {
        Watching {
            started: std::time::Instant::now(),
            cpu_before: crate::sample::own_cpu_s(),
            pause_meter: headroom_load::pauses::PauseMeter::start(),
        }
    }

    pub(crate) fn stop(self) -> Watched {
        Watched {
            seconds: self.started.elapsed().as_secs_f64(),
            cpu_s: crate::sample::own_cpu_s() - self.cpu_before,
            pauses: self.pause_meter.stop().map(|p| MachinePauses {
                count: p.count,
                longest_ms: p.longest_ms,
            }),
        }
    }
}

/// What the generator did over a load.
pub(crate) struct Watched {
    /// The load's length.
    pub(crate) seconds: f64,
    /// The CPU seconds this process used meanwhile.
    pub(crate) cpu_s: f64,
    /// The machine's pauses meanwhile; `None` when the meter could not run.
    pub(crate) pauses: Option<MachinePauses>,
}

pub(crate) fn generator(
    scenarios: &BTreeMap<String, ScenarioResult>,
    watched: &Watched,
    cores_left: Option<f64>,
) -> GeneratorResult {
    let Watched {
        seconds,
        cpu_s,
        pauses,
    } = *watched;
    let lag = scenarios
        .values()
        .map(|s| s.schedule_lag.p99_ms)
        .fold(0.0, f64::max);
    let cores_available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_cores = if seconds > 0.0 { cpu_s / seconds } else { 0.0 };
    let paused = (lag > LAG_LIMIT_MS)
        .then(|| {
            machine_paused(
                scenarios,
                lag,
                cpu_cores,
                cores_left.unwrap_or(cores_available as f64),
                pauses,
            )
        })
        .flatten();
    let reason = if lag > LAG_LIMIT_MS && paused.is_none() {
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
        pauses,
        paused,
        segments: Vec::new(),
    }
}

/// Whether a lag over the threshold is the machine's pauses, not the generator's load: the
/// generator was idle (under half the cores it could use), sent every arrival when it was due
/// or late (none skipped at `max_in_flight`, none waiting for a connection), and the machine
/// paused for at least half that lag. Then the caveat, in words.
fn machine_paused(
    scenarios: &BTreeMap<String, ScenarioResult>,
    lag: f64,
    cpu_cores: f64,
    cores: f64,
    pauses: Option<MachinePauses>,
) -> Option<String> {
    let pauses = pauses.filter(|p| p.count > 0 && p.longest_ms >= lag / 2.0)?;
    let idle = cpu_cores < IDLE_SHARE * cores;
    let all_sent =
        scenarios.values().all(|s| s.dropped == 0) && queued_at_limit(scenarios).is_none();
    (idle && all_sent).then(|| {
        format!(
            "the machine paused the generator: {} pauses, longest {:.0} ms (its schedule lag p99 of {lag:.1} ms is those pauses, not its load: it used {cpu_cores:.2} cores and sent every arrival)",
            pauses.count, pauses.longest_ms
        )
    })
}

/// Whether a run's generator fell behind its schedule while it was idle (under half the cores
/// it could use) and sent every arrival (none skipped, none waiting for a connection): its
/// lateness is the machine's scheduling, not its own limit, so the load did reach the server,
/// only late, and the lag adds to the latencies (counted from the intended send) instead of
/// making them someone else's.
pub(crate) fn lagged_while_idle(run: &crate::results::RunResult) -> bool {
    let generator = &run.generator;
    let cores = generator
        .cores_left
        .unwrap_or(generator.cores_available as f64);
    generator.schedule_lag_p99_ms > LAG_LIMIT_MS
        && cores >= 1.0
        && generator.cpu_cores < IDLE_SHARE * cores
        && run.scenarios.values().all(|s| s.dropped == 0)
        && queued_at_limit(&run.scenarios).is_none()
}

/// Over this share of a scenario's requests waiting for one of its `max_connections`, the
/// latency is the limit's as much as the server's.
const QUEUED_LIMIT: f64 = 0.01;

/// The first HTTP scenario whose requests often waited for a free connection, in words.
fn queued_at_limit(scenarios: &BTreeMap<String, ScenarioResult>) -> Option<String> {
    scenarios.iter().find_map(|(name, scenario)| {
        let queued = scenario.connections.as_ref()?.queued_at_limit;
        let requests = scenario.requests + scenario.outside_hold.as_ref().map_or(0, |r| r.requests);
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

    fn watched(cpu_s: f64, seconds: f64, pauses: Option<MachinePauses>) -> Watched {
        Watched {
            seconds,
            cpu_s,
            pauses,
        }
    }

    #[test]
    fn the_generator_is_bound_when_it_lags() {
        let mut scenarios = BTreeMap::new();
        let mut lagging = ScenarioResult::default();
        lagging.schedule_lag.p99_ms = 12.0;
        scenarios.insert("a".to_owned(), lagging);
        let verdict = generator(&scenarios, &watched(0.1, 10.0, None), None);
        assert!(verdict.bound);
        assert!(!generator(&BTreeMap::new(), &watched(0.1, 10.0, None), None).bound);
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
            !generator(&scenarios, &watched(0.1, 10.0, None), None).bound,
            "1 % is not over 1 %"
        );
        scenario.connections = Some(crate::results::Connections {
            opened: 50,
            queued_at_limit: 200,
        });
        scenarios.insert("api".to_owned(), scenario);
        let verdict = generator(&scenarios, &watched(0.1, 10.0, None), None);
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
        let squeezed = generator(&BTreeMap::new(), &watched(0.1, 10.0, None), Some(0.5));
        assert!(squeezed.bound);
        let reason = squeezed.reason.expect("a reason");
        assert!(
            reason.starts_with("the generator had 0.50 of the "),
            "{reason}"
        );
        assert!(!generator(&BTreeMap::new(), &watched(0.1, 10.0, None), Some(1.0)).bound);
        // 0.95 cores of the one left is the generator's limit, not the server's.
        assert!(generator(&BTreeMap::new(), &watched(9.5, 10.0, None), Some(1.0)).bound);
    }

    /// Issue 32: a lag over the threshold with the generator idle, every arrival sent and the
    /// machine paused for as long is the machine's pause, a caveat; the same lag with the
    /// generator busy, an arrival skipped, or no pause to explain it is a bound.
    #[test]
    fn a_machine_pause_is_a_caveat_not_a_bound() {
        let mut lagging = ScenarioResult::default();
        lagging.schedule_lag.p99_ms = 6.4;
        let scenarios = BTreeMap::from([("api".to_owned(), lagging.clone())]);
        let paused = Some(MachinePauses {
            count: 3,
            longest_ms: 21.0,
        });
        let idle = generator(&scenarios, &watched(0.4, 10.0, paused), None);
        assert!(!idle.bound, "{idle:?}");
        assert_eq!(
            idle.paused.as_deref(),
            Some(
                "the machine paused the generator: 3 pauses, longest 21 ms (its schedule lag p99 of 6.4 ms is those pauses, not its load: it used 0.04 cores and sent every arrival)"
            )
        );
        assert_eq!(idle.pauses, paused);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let busy = generator(&scenarios, &watched(10.0 * cores * 0.6, 10.0, paused), None);
        assert!(busy.bound && busy.paused.is_none(), "{busy:?}");
        let short = Some(MachinePauses {
            count: 3,
            longest_ms: 2.5,
        });
        assert!(generator(&scenarios, &watched(0.4, 10.0, short), None).bound);
        assert!(generator(&scenarios, &watched(0.4, 10.0, None), None).bound);
        lagging.dropped = 1;
        let skipped = BTreeMap::from([("api".to_owned(), lagging)]);
        assert!(generator(&skipped, &watched(0.4, 10.0, paused), None).bound);
    }
}
