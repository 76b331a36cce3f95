//! What the dashboard is told, as JSON messages pushed to the browser: the runner's events,
//! and a finished run's figures read through the figure catalogue (the same computation as
//! the results, the run table and the page).

use headroom_figures::{Named, read};
use headroom_matrix::resolved::Scenario;
use headroom_matrix::slo::{ScenarioFigure, Statistic};
use headroom_runner::Event;
use headroom_runner::results::{ProbeOutcome, RunResult};
use serde::Serialize;

/// One message, `kind` naming it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Message {
    /// The matrix starts.
    Started {
        bench: String,
        run_id: String,
        runs: usize,
        estimated_s: f64,
    },
    /// A run starts: which, and what its scenarios mean to send.
    RunStarted {
        number: usize,
        runs: usize,
        phase: String,
        point: usize,
        at: String,
        repeat: u32,
        scenarios: Vec<ScenarioPlan>,
    },
    /// A second of a scenario of the running point closed.
    Second {
        number: usize,
        scenario: String,
        t_s: u64,
        requests: u64,
        errors: u64,
        p50_ms: Option<f64>,
        p95_ms: Option<f64>,
        p99_ms: Option<f64>,
        connections: u64,
        delivered: Option<u64>,
        expected: Option<u64>,
        seen_by_all_completed_p95_ms: Option<f64>,
    },
    /// The server was read.
    Server {
        number: usize,
        t_s: f64,
        rss_bytes: u64,
        cpu_cores: Option<f64>,
    },
    /// Once a second: the generator's CPU, and of a target held to limits its throttling.
    Tick {
        number: usize,
        elapsed_s: f64,
        generator_cores: Option<f64>,
        throttled: Option<f64>,
    },
    /// A run ended: its figures and SLO verdicts, as the results hold them.
    RunFinished {
        number: usize,
        phase: String,
        point: usize,
        at: String,
        repeat: u32,
        failure: Option<String>,
        figures: Vec<FinishedFigures>,
        slo: Vec<SloRow>,
    },
    /// A probe of a searched phase was judged.
    Probed {
        phase: String,
        load: String,
        verdict: String,
        why: Option<String>,
    },
    /// A searched phase's search ended.
    SearchEnded { phase: String, said: String },
    /// The run is over: where its results and page are, and the page itself.
    Finished {
        results: String,
        page: Option<String>,
        page_markdown: Option<String>,
    },
}

/// A scenario of a run as it starts: its name, kind and intended load in words.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScenarioPlan {
    name: String,
    kind: &'static str,
    intended: String,
}

/// A finished run's figures of one scenario, from the catalogue (`None`: not measured).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FinishedFigures {
    scenario: String,
    kind: String,
    requests: Option<f64>,
    p95_ms: Option<f64>,
    failed: Option<f64>,
    delivered: Option<f64>,
    seen_by_all_p95_ms: Option<f64>,
}

/// An SLO's verdict at a run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SloRow {
    name: String,
    rule: String,
    pass: Option<bool>,
}

/// What each scenario means to send, in words: `400/s`, `50 users`, `1,000 sockets`.
fn plan(scenario: &Scenario) -> ScenarioPlan {
    let count = headroom_spec::numbers::count;
    let (kind, intended) = match scenario {
        Scenario::Http(http) if http.executor.is_open() => (
            "http",
            format!(
                "{}/s",
                count(http.rate.map_or(0.0, |rate| rate.as_per_second()))
            ),
        ),
        Scenario::Http(http) => (
            "http",
            format!("{} users", count(http.vus.unwrap_or(0) as f64)),
        ),
        Scenario::Rooms(rooms) => (
            "rooms",
            format!("{} sockets", count(rooms.sockets() as f64)),
        ),
    };
    ScenarioPlan {
        name: scenario.name().to_owned(),
        kind,
        intended,
    }
}

/// A figure of a run in result units, `None` where it measured nothing.
fn figure(run: &RunResult, named: Named<'_>) -> Option<f64> {
    read(run, &named).ok().and_then(|reading| reading.value())
}

/// A finished run's figures per scenario, read as the catalogue defines them.
fn finished_figures(run: &RunResult) -> Vec<FinishedFigures> {
    run.scenarios
        .iter()
        .map(|(name, scenario)| {
            let of = |which| Named::scenario(name, which);
            let rooms = scenario.rooms.is_some();
            FinishedFigures {
                scenario: name.clone(),
                kind: scenario.kind.clone(),
                requests: (!rooms)
                    .then(|| figure(run, of(ScenarioFigure::Requests)))
                    .flatten(),
                p95_ms: (!rooms)
                    .then(|| figure(run, of(ScenarioFigure::Latency).at(Statistic::P95)))
                    .flatten()
                    .map(|s| s * 1000.0),
                failed: (!rooms)
                    .then(|| figure(run, of(ScenarioFigure::Failed)))
                    .flatten(),
                delivered: rooms
                    .then(|| figure(run, of(ScenarioFigure::Delivered)))
                    .flatten(),
                seen_by_all_p95_ms: rooms
                    .then(|| figure(run, of(ScenarioFigure::SeenByAll).at(Statistic::P95)))
                    .flatten()
                    .map(|s| s * 1000.0),
            }
        })
        .collect()
}

/// A second of run `number`'s `scenario`.
fn second(
    number: usize,
    scenario: &str,
    window: &headroom_runner::results::Window,
    gauges: &headroom_runner::live::Gauges,
) -> Message {
    let answered = window.requests > window.errors;
    let rooms = gauges.rooms.as_ref();
    Message::Second {
        number,
        scenario: scenario.to_owned(),
        t_s: window.t_s,
        requests: window.requests,
        errors: window.errors,
        p50_ms: answered.then_some(window.p50_ms),
        p95_ms: answered.then_some(window.p95_ms),
        p99_ms: answered.then_some(window.p99_ms),
        connections: gauges.connections,
        delivered: rooms.map(|r| r.delivered),
        expected: rooms.map(|r| r.expected),
        seen_by_all_completed_p95_ms: rooms.and_then(|r| r.seen_by_all_completed_p95_ms),
    }
}

/// A probe of `phase`'s search, judged.
fn probed(phase: &str, probe: &headroom_runner::results::SearchProbe) -> Message {
    Message::Probed {
        phase: phase.to_owned(),
        load: probe.load.to_string(),
        verdict: match probe.verdict {
            ProbeOutcome::Pass => "passes",
            ProbeOutcome::Fail => "fails",
            ProbeOutcome::Split => "split",
            ProbeOutcome::GeneratorBound => "generator-bound",
            ProbeOutcome::Unjudged => "not judged",
        }
        .to_owned(),
        why: probe.why.clone(),
    }
}

/// Follows the runner's events: which run is in flight, and the message each event makes.
pub(crate) struct Messages {
    /// The bench's name, heading the page.
    bench: String,
    /// What names this invocation.
    run_id: String,
    /// The run in flight.
    current: Option<InFlight>,
}

/// The run in flight: its number and where it is.
struct InFlight {
    number: usize,
    phase: String,
    point: usize,
    /// The point's variables in words.
    at: String,
    repeat: u32,
}

impl Messages {
    /// Following a run of `bench`, named `run_id`.
    pub(crate) fn new(bench: &str, run_id: &str) -> Messages {
        Messages {
            bench: bench.to_owned(),
            run_id: run_id.to_owned(),
            current: None,
        }
    }

    /// The message `event` makes, if any.
    pub(crate) fn of(&mut self, event: &Event<'_>) -> Option<Message> {
        let number = self.current.as_ref().map_or(0, |current| current.number);
        Some(match event {
            Event::Started { runs, estimated_s } => Message::Started {
                bench: self.bench.clone(),
                run_id: self.run_id.clone(),
                runs: *runs,
                estimated_s: *estimated_s,
            },
            Event::RunStarted {
                phase,
                point,
                repeat,
                number,
                runs,
            } => {
                let at = crate::live::point_words(&point.at);
                self.current = Some(InFlight {
                    number: *number,
                    phase: (*phase).to_owned(),
                    point: point.index,
                    at: at.clone(),
                    repeat: *repeat,
                });
                Message::RunStarted {
                    number: *number,
                    runs: *runs,
                    phase: (*phase).to_owned(),
                    point: point.index,
                    at,
                    repeat: *repeat,
                    scenarios: point.scenarios.iter().map(plan).collect(),
                }
            }
            Event::Second {
                scenario,
                window,
                gauges,
                ..
            } => second(number, scenario, window, gauges),
            Event::Sampled {
                service: None,
                sample,
                ..
            } => Message::Server {
                number,
                t_s: sample.t_s,
                rss_bytes: sample.rss_bytes,
                cpu_cores: sample.cpu_pct.map(|pct| pct / 100.0),
            },
            Event::Progress {
                elapsed_s,
                generator_cores,
                throttled,
                ..
            } => Message::Tick {
                number,
                elapsed_s: *elapsed_s,
                generator_cores: *generator_cores,
                throttled: *throttled,
            },
            Event::RunFinished { result, .. } => finished(self.current.take()?, result),
            Event::Probed { phase, probe } => probed(phase, probe),
            Event::SearchEnded { phase, record, .. } => Message::SearchEnded {
                phase: (*phase).to_owned(),
                said: record.said.clone(),
            },
            _ => return None,
        })
    }
}

/// The run that was in flight, finished: how it went, its figures and its verdicts.
fn finished(run: InFlight, result: &headroom_runner::results::RunResult) -> Message {
    Message::RunFinished {
        number: run.number,
        phase: run.phase,
        point: run.point,
        at: run.at,
        repeat: run.repeat,
        failure: result.failure.as_ref().map(|f| f.describe()),
        figures: finished_figures(result),
        slo: result
            .slo
            .iter()
            .map(|verdict| SloRow {
                name: verdict.name.clone(),
                rule: verdict.expression.clone(),
                pass: verdict.pass,
            })
            .collect(),
    }
}
