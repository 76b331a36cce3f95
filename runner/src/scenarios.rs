//! A point's scenarios in flight: started together, watched every second (progress, the
//! target's death, Ctrl-C), and judged for having measured anything at all.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use headroom_matrix::Point;
use headroom_matrix::resolved::Scenario;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::event::Event;
use crate::results::{Failure, RunResult, ScenarioResult};
use headroom_load::handover::Handover;
use headroom_load::http;
use headroom_load::reach::Reach;

/// The first scenario of the point that had load to send (sockets to open, users or a rate
/// above 0) and measured nothing: no request completed, or no socket opened.
pub(crate) fn nothing_measured(
    point: &Point,
    results: &BTreeMap<String, ScenarioResult>,
) -> Option<Failure> {
    for scenario in &point.scenarios {
        let Some(result) = results.get(scenario.name()) else {
            continue;
        };
        if result.skipped.is_some() {
            continue;
        }
        let why = match (scenario, &result.rooms) {
            (_, Some(rooms)) if rooms.sockets.planned > 0 && rooms.sockets.opened == 0 => {
                let failed = headroom_results::ConnectFailures {
                    rejected: 0,
                    ..rooms.sockets.failed.clone()
                };
                let mut causes: Vec<String> = failed.describe().into_iter().collect();
                causes.extend(rooms.rejections());
                format!(
                    "none of its {} sockets opened ({})",
                    rooms.sockets.planned,
                    causes.join(", ")
                )
            }
            (Scenario::Http(http), None) => {
                let load = if http.executor.is_open() {
                    http.rate.is_some_and(|r| r.as_per_second() > 0.0)
                } else {
                    http.vus.is_some_and(|v| v > 0)
                };
                if !load {
                    continue;
                }
                if result.requests == 0 && result.dropped == 0 {
                    "no request completed during the hold".to_owned()
                } else if result.requests > 0 && result.ok == 0 {
                    // Failures only: no answer to take a latency from, nothing of the server's.
                    format!(
                        "none of its {} requests got an expected answer ({})",
                        headroom_spec::numbers::count(result.requests as f64),
                        result.errors.describe()
                    )
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        return Some(Failure::NothingMeasured {
            scenario: scenario.name().to_owned(),
            why,
        });
    }
    None
}

pub(crate) type ScenarioOutcomes = Vec<(String, Result<ScenarioResult, String>)>;

/// Where the runner's load loop watches the target and Ctrl-C while scenarios run.
pub(crate) struct Watch<'a> {
    pub(crate) stack: &'a mut crate::stack::Stack,
    pub(crate) live: &'a headroom_load::live::Live,
    /// The server's readings as they are taken.
    pub(crate) fresh: &'a crate::sample::Fresh,
    pub(crate) abort: &'a watch::Sender<bool>,
    pub(crate) load_started: Instant,
    /// `load_started` in Unix milliseconds.
    pub(crate) load_started_ms: u64,
    /// The generator's CPU time at the last tick, and when.
    pub(crate) generator_cpu: Option<(Instant, f64)>,
    /// The cgroup holding the target to its limits, and its counters at the last tick.
    pub(crate) cgroup: Option<(&'a crate::cgroup::Cgroup, crate::cgroup::Counters)>,
}

impl Watch<'_> {
    /// Every second: progress (the seconds closed, the server's readings), and the target's
    /// death ends the load.
    pub(crate) fn tick(
        &mut self,
        result: &mut RunResult,
        on_event: &mut (dyn FnMut(Event<'_>) + Send),
    ) {
        self.report(on_event);
        if result.failure.is_none()
            && let Some(died) = self
                .stack
                .died()
                .or_else(|| self.stack.external_gone(self.load_started))
        {
            result.failure = Some(died);
            let _ = self.abort.send(true);
        }
    }

    /// Awaits `work` (the steady state), reporting at every tick meanwhile: the seconds that
    /// closed before it and the server's readings during it reach the watchers as they come,
    /// not in a burst once it is over.
    pub(crate) async fn reporting<T>(
        &mut self,
        work: impl std::future::Future<Output = T>,
        ticker: &mut tokio::time::Interval,
        on_event: &mut (dyn FnMut(Event<'_>) + Send),
    ) -> T {
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return done,
                _ = ticker.tick() => self.report(on_event),
            }
        }
    }

    /// The seconds closed, the server's readings and the progress, to the watchers.
    pub(crate) fn report(&mut self, on_event: &mut (dyn FnMut(Event<'_>) + Send)) {
        self.tell(on_event);
        let now = (Instant::now(), crate::sample::own_cpu_s());
        let generator_cores = self
            .generator_cpu
            .map(|(at, cpu)| (now.1 - cpu).max(0.0) / (now.0 - at).as_secs_f64().max(1e-3));
        self.generator_cpu = Some(now);
        let throttled = self.cgroup.as_mut().and_then(|(cgroup, before)| {
            let counters = cgroup.counters();
            let periods = counters.cpu_periods.saturating_sub(before.cpu_periods);
            let throttled = counters
                .throttled_periods
                .saturating_sub(before.throttled_periods);
            *before = counters;
            (periods > 0).then(|| throttled as f64 / periods as f64)
        });
        on_event(Event::Progress {
            generator_cores,
            throttled,
            elapsed_s: self.load_started.elapsed().as_secs_f64(),
            requests: self.live.requests.load(Ordering::Relaxed),
            errors: self.live.errors.load(Ordering::Relaxed),
            p95_ms: match self.live.window_p95_us.load(Ordering::Relaxed) {
                0 => None,
                micros => Some(micros as f64 / 1000.0),
            },
        });
    }

    /// The seconds closed and the server's readings taken since the last call.
    pub(crate) fn tell(&self, on_event: &mut (dyn FnMut(Event<'_>) + Send)) {
        for second in self.live.take_seconds() {
            on_event(Event::Second {
                scenario: &second.scenario,
                unix_ms: self.load_started_ms + (second.window.t_s + 1) * 1000,
                window: &second.window,
                gauges: &second.gauges,
            });
        }
        for (service, sample) in self.fresh.take() {
            on_event(Event::Sampled {
                service: service.as_deref(),
                unix_ms: self.load_started_ms + (sample.t_s * 1000.0) as u64,
                sample: &sample,
            });
        }
    }

    pub(crate) fn cancelled(&mut self, result: &mut RunResult, cancel: &watch::Receiver<bool>) {
        if *cancel.borrow() {
            result.failure = Some(Failure::Interrupted);
            let _ = self.abort.send(true);
        }
    }
}

/// The point's scenarios started together, each a member of the run's hold (`members`, one
/// per scenario, in order); their outcomes by name, in order.
pub(crate) async fn run_scenarios(
    scenarios: Vec<Scenario>,
    reach: Reach,
    abort: watch::Receiver<bool>,
    live: Arc<headroom_load::live::Live>,
    handover: Handover,
    members: Vec<headroom_load::hold::Member>,
) -> ScenarioOutcomes {
    let reach = Arc::new(reach);
    let mut running = Vec::new();
    for (scenario, member) in scenarios.into_iter().zip(members) {
        let name = scenario.name().to_owned();
        let (reach, abort, live, side) = (
            Arc::clone(&reach),
            abort.clone(),
            Arc::clone(&live),
            handover.for_scenario(),
        );
        let task = match scenario {
            Scenario::Http(http) => tokio::spawn(async move {
                // Arrives when the load ends (dropped with the task).
                let _side = side;
                http::run(&http, &reach, abort, live, member).await
            }),
            Scenario::Rooms(rooms) => tokio::spawn(async move {
                headroom_load::rooms::run(&rooms, &reach, abort, live, side, member).await
            }),
        };
        running.push((name, task));
    }
    drop(handover);
    let mut outcomes = Vec::new();
    for (name, task) in running {
        let outcome = task
            .await
            .unwrap_or_else(|e| Err(format!("the scenario's task failed: {e}")));
        outcomes.push((name, outcome));
    }
    outcomes
}
