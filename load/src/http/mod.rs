//! HTTP load: the open model (arrival rate) and the closed model (virtual users), on load
//! threads of their own.
//!
//! Open model: every request has an intended start time drawn from the schedule (fixed or
//! Poisson gaps, ramps included), released on time to the microsecond ([`pacer`]), and its
//! latency is measured from that time. A server that stalls shows up in the tail instead of
//! slowing the generator down (coordinated omission). A released request waits in line for a
//! free connection when `max_connections` are busy (that wait is counted, from the intended
//! start); when `max_in_flight` requests are outstanding, a start is counted as dropped.
//!
//! Closed model: each virtual user has its own connection; it sends, waits for the answer,
//! thinks, and sends again; its latency is measured from the moment the connection was ready.
//!
//! The hold is the run's ([`crate::hold`]): the scenario says it is at its load when its
//! ramp-up ends, and holds its peak until the run's hold ends (later than its own hold when
//! another scenario arrived at its load later), then ramps down. A request counts in the
//! figures when its intended start falls in the run's hold, whenever it ends.
//!
//! The load runs on `threads` OS threads, each a single-threaded tokio runtime with its share
//! of the arrivals or the users (wrk's shape): a request never crosses threads, and each
//! thread records into its own histograms ([`recorder`]), merged exactly at the end.

use std::sync::Arc;
use std::time::Duration;

use headroom_matrix::resolved::HttpScenario;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::hold::{Member, RunHold};
use crate::live::Live;
use crate::reach::Reach;
use crate::results::ScenarioResult;

mod checks;
mod client;
mod closed;
mod deadline;
mod flow;
mod h2;
mod job;
mod open;
mod pacer;
mod recorder;
mod schedule;
mod wire;

use client::Client;
use job::{Job, Share, WAIT_FOR_OTHERS};
use recorder::{Part, Recorder, Windows};
pub use schedule::Schedule;

/// The load starts this long after its threads are asked to start, so each is ready for its
/// first arrival.
const STARTUP: Duration = Duration::from_millis(20);

/// Every histogram has the results file's one shape, so repeats merge.
pub use headroom_results::histogram::new as histogram;

/// Runs one HTTP scenario to the end of its stages (or until `cancel` turns true), on
/// `threads` load threads (fewer when there are fewer users or connections to share); it is
/// `member` of the run's hold.
pub async fn run(
    scenario: &HttpScenario,
    reach: &Reach,
    cancel: watch::Receiver<bool>,
    live: Arc<Live>,
    mut member: Member,
) -> Result<ScenarioResult, String> {
    let rows = rows_for(scenario, &reach.spec_dir)?;
    let mut client = Client::prepare(
        scenario,
        reach.port,
        &reach.headroom_bin,
        &reach.allowed,
        &reach.trust,
        rows,
    )
    .await?;
    let clients = scenario.vus.unwrap_or(scenario.max_connections);
    let config = reach.source_addresses.as_ref();
    client.sources = crate::source::Sources::optional(config, &client.targets(), clients)?;
    let client = Arc::new(client);
    let threads = load_threads(scenario, reach)?;
    let schedule = Schedule::of(scenario);
    let start = reach.start_at.unwrap_or_else(|| Instant::now() + STARTUP);
    let hold = Arc::clone(member.hold());
    member.at_load(start + Duration::from_secs_f64(schedule.ramp_up + arriving_s(scenario)));
    let windows = Arc::new(Windows::new(threads, &scenario.name));
    // Several requests: each is measured apart too (one request's figures are the scenario's).
    let names: Vec<Option<String>> = scenario.requests.iter().map(|r| r.name.clone()).collect();
    let apart = measured_apart(&names);
    let scenario = Arc::new(scenario.clone());
    let mut parts = Vec::new();
    for index in 0..threads {
        let job = Job {
            scenario: Arc::clone(&scenario),
            streams: client.streams(),
            client: Arc::clone(&client),
            schedule,
            start,
            hold: Arc::clone(&hold),
            cancel: cancel.clone(),
            segment: reach.segment,
            seed: crate::stripe::derive_seed(reach.seed, &scenario.name),
            mix_seed: crate::stripe::derive_seed(reach.seed, &format!("{} mix", scenario.name)),
            think_seed: crate::stripe::derive_seed(reach.seed, &format!("{} think", scenario.name)),
        };
        let share = Share { index, threads };
        let recorder = Recorder::new(
            start,
            Arc::clone(&hold),
            apart,
            Arc::clone(&windows),
            Arc::clone(&live),
        );
        let (done, part) = oneshot::channel();
        std::thread::Builder::new()
            .name(format!("headroom-load-{index}"))
            .spawn(move || {
                let _ = done.send(job.run(share, recorder));
            })
            .map_err(|e| format!("cannot start a load thread: {e}"))?;
        parts.push(part);
    }
    let mut finished = Vec::new();
    for part in parts {
        finished.push(part.await.map_err(|_| THREAD_FAILED.to_owned())??);
    }
    let mut result = recorder::merge(finished, windows.finish(&live), &names);
    result.duration_s = start.elapsed().as_secs_f64();
    result.rate = result.requests as f64 / hold.length().as_secs_f64().max(1e-9);
    // Cancelled, it held its load until now; else until its schedule said (its last arrival
    // may come a gap before the hold's end).
    let stopped = (*cancel.borrow()).then(Instant::now);
    result.held = held(&hold, start, &schedule, stopped);
    if !scenario.executor.is_open() {
        result.users = Some(crate::results::Users {
            users: reach.segment.of(scenario.vus.unwrap_or(0)),
            think_mean_s: scenario.think.map_or(0.0, |think| think.mean_s()),
        });
    }
    result.source_addresses = client.sources.as_ref().map(crate::source::Sources::used);
    Ok(result)
}

/// What a load thread that ended without its part says.
const THREAD_FAILED: &str = "a load thread failed (a headroom bug)";

/// The load threads a scenario runs on: the run's `threads`, but no more than its units to
/// share (an open model's connections, a closed model's users, this segment's share of them).
fn load_threads(scenario: &HttpScenario, reach: &Reach) -> Result<usize, String> {
    let units = if scenario.executor.is_open() {
        scenario.max_connections.min(scenario.max_in_flight)
    } else {
        // The compiler requires `vus` of a virtual-user executor.
        scenario
            .vus
            .ok_or("a virtual-user scenario without `vus` (a headroom bug)")?
    };
    let units = reach.segment.of(units);
    Ok(reach
        .threads
        .max(1)
        .min(usize::try_from(units.max(1)).unwrap_or(usize::MAX)))
}

/// How many of the requests are measured apart: all of them when there are several and one
/// has a name (one request's figures are the scenario's), else none.
fn measured_apart(names: &[Option<String>]) -> usize {
    if names.len() > 1 && names.iter().any(Option::is_some) {
        names.len()
    } else {
        0
    }
}

/// How long after its ramp-up a scenario's load has arrived: a closed model's users that
/// start spread each wait a random part of a mean think time before their first request, so
/// the last of them sends a mean think time after it became active; an open model's arrivals
/// are at their rate at once.
fn arriving_s(scenario: &HttpScenario) -> f64 {
    match (scenario.executor.is_open(), scenario.start, scenario.think) {
        (false, headroom_spec::think::UserStart::Spread, Some(think)) => think.mean_s(),
        _ => 0.0,
    }
}

/// The part of the run's hold this scenario held its peak: from its ramp-up's end to where the
/// run's hold ended (or `WAIT_FOR_OTHERS` past its own, or when it was `stopped` by a
/// cancel), within the run's hold; `None` when the run's hold was never decided.
fn held(
    hold: &RunHold,
    start: Instant,
    schedule: &Schedule,
    stopped: Option<Instant>,
) -> Option<crate::results::Interval> {
    let window = hold.window()?;
    let peak_from = start + Duration::from_secs_f64(schedule.ramp_up);
    let peak_to = peak_from + Duration::from_secs_f64(schedule.hold) + WAIT_FOR_OTHERS;
    let from = window.start.max(peak_from);
    let to = window.end.min(peak_to);
    let to = stopped.map_or(to, |stopped| to.min(stopped)).max(from);
    let (from_s, to_s) = hold.seconds(&(from..to));
    Some(crate::results::Interval { from_s, to_s })
}

/// The scenario's data file, read before the load; with `mode = "unique"`, a row for every
/// virtual user or the run fails now.
fn rows_for(
    scenario: &HttpScenario,
    spec_dir: &std::path::Path,
) -> Result<Option<flow::Rows>, String> {
    let Some(source) = &scenario.data else {
        return Ok(None);
    };
    let rows = flow::Rows::read(source, spec_dir)?;
    let users = scenario.vus.unwrap_or(0);
    if source.mode == headroom_spec::scenario::DataMode::Unique && users > rows.len() as u64 {
        return Err(format!(
            "data file `{}` has {} rows for {users} virtual users, and `mode = \"unique\"` gives each its own: add rows, or use `mode = \"sequential\"`",
            source.file,
            rows.len()
        ));
    }
    Ok(Some(rows))
}

impl Job {
    /// One load thread: a single-threaded runtime running its share to the end.
    fn run(self, share: Share, recorder: Recorder) -> Result<Part, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start a load thread's runtime: {e}"))?;
        let local = tokio::task::LocalSet::new();
        let recorder = std::rc::Rc::new(std::cell::RefCell::new(recorder));
        let job = std::rc::Rc::new(self);
        local.block_on(&runtime, {
            let (job, recorder) = (std::rc::Rc::clone(&job), std::rc::Rc::clone(&recorder));
            async move {
                if job.scenario.executor.is_open() {
                    open::run(job, share, recorder).await;
                } else {
                    closed::run(job, share, recorder).await;
                }
            }
        });
        // Every task (and its connections) ends with the runtime.
        drop(local);
        drop(runtime);
        let recorder = std::rc::Rc::try_unwrap(recorder)
            .map_err(|_| "a load thread's recorder is still in use (a headroom bug)".to_owned())?
            .into_inner();
        Ok(recorder.finish())
    }
}

#[cfg(test)]
mod tests;
