//! The figures of one run that a comparison judges, each with the way that is better: the
//! figure catalogue's (`headroom_figures`), named and computed as an SLO names and reads
//! them (`api.latency.p95`, `api.failed`, `rss`, `cpu`, `edits.seen_by_all.p95`), in the
//! catalogue's units (seconds, shares, bytes, cores, per second).
//!
//! Only what was measured: a latency of no requests, a process never sampled or a failed run
//! gives no figure (never a 0 to compare), and a time that never came (a `seen_by_all`
//! statistic among messages that never reached everyone) is not a number to rank: that
//! repeat does not count, as a run that did not measure the figure. A `[measure]` series is
//! a figure (`heap`) when the spec says which way of it is better (`better = "lower"`).

use std::collections::BTreeMap;

use headroom_figures::catalogue::{self, COMPARED_STATISTICS};
use headroom_figures::{Named, read};
use headroom_matrix::slo::{PointFigure, ScenarioFigure};
use headroom_results::{RunResult, ScenarioResult};
use headroom_spec::{Better, Series};

use crate::verdict::Direction;

/// A run's figures by name (`api.latency.p95`, `rss`, `heap`), each with its better
/// direction; `series` are the `[measure]` series of the run's phase.
pub fn of_run(run: &RunResult, series: &[Series]) -> BTreeMap<String, (Direction, f64)> {
    let mut figures = BTreeMap::new();
    if !headroom_figures::figures_count(run) {
        return figures;
    }
    let mut add = |named: Named<'_>, better: Option<Better>| {
        let direction = match better {
            Some(Better::Lower) => Direction::LowerIsBetter,
            Some(Better::Higher) => Direction::HigherIsBetter,
            None => return,
        };
        let distribution = named.definition().is_distribution();
        let at = if distribution {
            COMPARED_STATISTICS.iter().map(|s| named.at(*s)).collect()
        } else {
            vec![named]
        };
        for named in at {
            if let Some(value) = read(run, &named).ok().and_then(|r| r.value()) {
                figures.insert(named.name(), (direction, value));
            }
        }
    };
    for (name, scenario) in &run.scenarios {
        if scenario.skipped.is_none() {
            for named in scenario_figures(name, scenario) {
                add(named, named.definition().better);
            }
        }
    }
    for point in [PointFigure::Rss, PointFigure::Cpu] {
        add(Named::point(point), catalogue::of_point(point).better);
    }
    for one in series {
        add(Named::point(PointFigure::Series(&one.name)), one.better);
    }
    figures
}

/// The scenario figures a comparison judges: the load's speed, its failures and its
/// delivery. The others (the share of sockets that failed, connect times, …) are defined
/// alike and named alike in SLOs; a comparison leaves them out to keep its table to what
/// decides a change.
const JUDGED_HTTP: [ScenarioFigure; 3] = [
    ScenarioFigure::Latency,
    ScenarioFigure::Rate,
    ScenarioFigure::Failed,
];
const JUDGED_REQUEST: [ScenarioFigure; 2] = [ScenarioFigure::Latency, ScenarioFigure::Failed];
const JUDGED_ROOMS: [ScenarioFigure; 3] = [
    ScenarioFigure::Seen,
    ScenarioFigure::SeenByAll,
    ScenarioFigure::Delivered,
];

/// The figures of a scenario a comparison judges: its own, and each named request's.
fn scenario_figures<'a>(name: &'a str, scenario: &'a ScenarioResult) -> Vec<Named<'a>> {
    if let Some(rooms) = &scenario.rooms {
        let mut judged = JUDGED_ROOMS.map(|f| Named::scenario(name, f)).to_vec();
        // A Socket.IO scenario that asks acks: the sender's wait is a figure of its own.
        if rooms.socket_io.as_ref().is_some_and(|s| s.acks_asked > 0) {
            judged.push(Named::scenario(name, ScenarioFigure::Ack));
        }
        return judged;
    }
    let own = JUDGED_HTTP.map(|f| Named::scenario(name, f));
    let apart = scenario
        .by_request
        .keys()
        .flat_map(|request| JUDGED_REQUEST.map(|f| Named::scenario(name, f).of_request(request)));
    own.into_iter().chain(apart).collect()
}

#[cfg(test)]
mod tests {
    use headroom_results::{Failure, ProcessSample, Summary};

    use super::*;

    /// An HTTP run: a scenario with a named request measured apart, one skipped and one that
    /// measured nothing, the process's memory and CPU and two metrics series.
    fn http_run() -> RunResult {
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
        run
    }

    #[test]
    fn an_http_run_gives_its_latencies_rate_failures_memory_and_cpu_by_their_slo_names() {
        let mut run = http_run();
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
                "api.failed",
                "api.latency.p50",
                "api.latency.p90",
                "api.latency.p95",
                "api.latency.p99",
                "api.list.failed",
                "api.list.latency.p50",
                "api.list.latency.p90",
                "api.list.latency.p95",
                "api.list.latency.p99",
                "api.rate",
                "cpu",
                "heap",
                "rss",
            ]
        );
        assert_eq!(figures["heap"], (Direction::LowerIsBetter, 5e6));
        assert_eq!(figures["api.failed"], (Direction::LowerIsBetter, 0.02));
        assert_eq!(figures["api.rate"], (Direction::HigherIsBetter, 50.0));
        assert_eq!(
            figures["api.latency.p95"],
            (Direction::LowerIsBetter, 0.007)
        );
        assert_eq!(
            figures["rss"],
            (Direction::LowerIsBetter, 64.0 * 1024.0 * 1024.0)
        );
        assert_eq!(figures["cpu"], (Direction::LowerIsBetter, 0.25));
        assert_eq!(
            figures["api.list.latency.p95"],
            (Direction::LowerIsBetter, 0.009)
        );
        assert_eq!(figures["api.list.failed"], (Direction::LowerIsBetter, 0.0));
        // A failed run's figures are not compared.
        run.failure = Some(Failure::SpawnFailed {
            message: "no such program".to_owned(),
        });
        assert!(of_run(&run, &declared).is_empty());
    }

    /// A Socket.IO rooms run that asked acks: its ack wait is judged beside its delivery.
    #[test]
    fn a_socket_io_run_that_asks_acks_is_judged_on_its_ack_wait() {
        let mut run = RunResult::started(1, 0);
        let mut rooms = headroom_results::RoomsResult::default();
        rooms.messages.sent = 10;
        rooms.messages.expected = 90;
        rooms.messages.delivered = 90;
        rooms.socket_io = Some(headroom_results::SocketIoFigures {
            acks_asked: 10,
            acks_received: 10,
            ack: Summary {
                count: 10,
                p95_ms: 4.0,
                ..Summary::default()
            },
            ..Default::default()
        });
        let chat = ScenarioResult {
            kind: "rooms".to_owned(),
            requests: 10,
            rooms: Some(rooms),
            ..ScenarioResult::default()
        };
        run.scenarios.insert("chat".to_owned(), chat);
        let figures = of_run(&run, &[]);
        assert_eq!(
            figures.get("chat.ack.p95"),
            Some(&(Direction::LowerIsBetter, 0.004)),
            "{figures:?}"
        );
        assert_eq!(
            figures.get("chat.delivered"),
            Some(&(Direction::HigherIsBetter, 1.0))
        );
    }
}
