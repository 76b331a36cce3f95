//! HTTP load: the open model (arrival rate) and the closed model (virtual users).
//!
//! Open model: every request has an intended start time drawn from the schedule (fixed or
//! Poisson gaps, ramps included), and its latency is measured from that time. A server that
//! stalls shows up in the tail instead of slowing the generator down (coordinated omission).
//! When `max_in_flight` requests are outstanding, a start is counted as dropped, never queued.
//!
//! Closed model: each virtual user sends, waits for the answer, thinks, and sends again; its
//! latency is measured from the moment the connection was ready.
//!
//! Request tasks send their samples to one collector task, which owns the histograms: the hot
//! path takes no lock.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use headroom_compiler::matrix::resolved::HttpScenario;
use headroom_spec::Rate;
use headroom_spec::scenario::{Arrivals, Expect};
use http_body_util::{BodyExt, Full};
use rand::Rng;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::http::{self, ErrorKind, Sender};
use crate::results::{RampCounts, ScenarioResult, Window, histogram_summary, serialize_histogram};

mod collect;

use collect::collect;

/// The length of one window of the per-window series.
const WINDOW: Duration = Duration::from_secs(1);

/// Every histogram has the results file's one shape, so repeats merge.
pub use headroom_results::histogram::new as histogram;

/// One request's fate, as the collector receives it.
enum Sample {
    Done {
        /// When it should have started (open model), or when the user began it (closed).
        intended: Instant,
        /// When the generator handed it over: `released - intended` is the generator's lag.
        released: Instant,
        /// When a connection was ready to send it on: `sent - released` is connection wait.
        sent: Instant,
        done: Instant,
        outcome: Result<(), Failed>,
    },
    Dropped {
        intended: Instant,
    },
}

#[derive(Clone, Copy)]
enum Failed {
    Kind(ErrorKind),
    Status,
}

/// A request ready to send: where, and what.
struct Prepared {
    authority: String,
    address: usize,
    method: hyper::Method,
    path: String,
    headers: Vec<(String, String)>,
    body: Bytes,
    expect: Vec<u16>,
    weight: u32,
}

/// Live figures for progress reports.
#[derive(Default)]
pub struct Live {
    /// Requests and messages sent so far.
    pub requests: AtomicU64,
    /// Errors so far.
    pub errors: AtomicU64,
    /// The p95 of the last whole window, in microseconds (0 before the first).
    pub window_p95_us: AtomicU64,
}

/// Runs one HTTP scenario to the end of its stages (or until `cancel` turns true).
pub async fn run(
    scenario: &HttpScenario,
    port: u16,
    headroom_bin: &Path,
    allowed: &http::Allowed,
    cancel: tokio::sync::watch::Receiver<bool>,
    live: Arc<Live>,
) -> Result<ScenarioResult, String> {
    let (requests, addresses) = prepare(scenario, port, headroom_bin, allowed).await?;
    let requests = Arc::new(requests);
    let addresses = Arc::new(addresses);
    let pools: Arc<Vec<std::sync::Mutex<Vec<Sender>>>> = Arc::new(
        addresses
            .iter()
            .map(|_| std::sync::Mutex::new(Vec::new()))
            .collect(),
    );
    let stages = Schedule::of(scenario);
    let (samples, inbox) = mpsc::unbounded_channel();
    let start = Instant::now();
    let measured = stages.measured(start);
    let collector = tokio::spawn(collect(inbox, start, measured.clone(), Arc::clone(&live)));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let client = Client {
        requests,
        addresses,
        pools,
        timeout: scenario.timeout.as_std(),
        connect_timeout: scenario.connect_timeout.as_std(),
    };
    if scenario.executor.is_open() {
        open_model(
            scenario, &stages, &client, start, samples, &in_flight, cancel,
        )
        .await;
    } else {
        // The compiler requires `vus` of a virtual-user executor.
        let peak = scenario
            .vus
            .ok_or("a virtual-user scenario without `vus` (a headroom bug)")?;
        closed_model(scenario, peak, &stages, &client, start, samples, cancel).await;
    }
    let mut result = collector
        .await
        .map_err(|e| format!("the load collector failed: {e}"))?;
    result.duration_s = start.elapsed().as_secs_f64();
    let window = (measured.end - measured.start).as_secs_f64();
    result.rate = result.requests as f64 / window.max(1e-9);
    Ok(result)
}

#[derive(Clone)]
struct Client {
    requests: Arc<Vec<Prepared>>,
    addresses: Arc<Vec<SocketAddr>>,
    pools: Arc<Vec<std::sync::Mutex<Vec<Sender>>>>,
    /// The most a request takes from its intended start.
    timeout: Duration,
    /// The most one connection attempt takes.
    connect_timeout: Duration,
}

impl Client {
    fn pick(&self) -> usize {
        let total: u32 = self.requests.iter().map(|r| r.weight).sum();
        let mut roll = rand::rng().random_range(0..total.max(1));
        for (i, request) in self.requests.iter().enumerate() {
            if roll < request.weight {
                return i;
            }
            roll -= request.weight;
        }
        0
    }

    /// A new connection to `address`, within the connect timeout and the request's `deadline`:
    /// a `connect` error when either passes first.
    async fn connect(&self, address: usize, deadline: Instant) -> Result<Sender, Failed> {
        let limit = deadline.min(Instant::now() + self.connect_timeout);
        match tokio::time::timeout_at(limit, http::connect(self.addresses[address])).await {
            Ok(Ok(sender)) => Ok(sender),
            Ok(Err(kind)) => Err(Failed::Kind(kind)),
            Err(_) => Err(Failed::Kind(ErrorKind::Connect)),
        }
    }

    /// Sends request `which` on a pooled connection (or a new one), all of it within the
    /// timeout from `intended`. Returns when it was sent (the connection ready) and how it
    /// ended; a request that never got a connection was "sent" when it gave up.
    async fn send(&self, which: usize, intended: Instant) -> (Instant, Result<(), Failed>) {
        let request = &self.requests[which];
        let deadline = intended + self.timeout;
        let pooled = self.pools[request.address]
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop());
        let mut sender = match pooled {
            Some(sender) => sender,
            None => match self.connect(request.address, deadline).await {
                Ok(sender) => sender,
                Err(failed) => return (Instant::now(), Err(failed)),
            },
        };
        // A reused HTTP/1 connection must be ready before the next request (hyper's contract).
        if sender.ready().await.is_err() {
            match self.connect(request.address, deadline).await {
                Ok(fresh) => sender = fresh,
                Err(failed) => return (Instant::now(), Err(failed)),
            }
        }
        let sent = Instant::now();
        let mut builder = hyper::Request::builder()
            .method(request.method.clone())
            .uri(request.path.as_str())
            .header(hyper::header::HOST, request.authority.as_str());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let Ok(built) = builder.body(Full::new(request.body.clone())) else {
            return (sent, Err(Failed::Kind(ErrorKind::Protocol)));
        };
        let exchange = async {
            let response = sender
                .send_request(built)
                .await
                .map_err(|_| Failed::Kind(ErrorKind::Protocol))?;
            let status = response.status().as_u16();
            response
                .into_body()
                .collect()
                .await
                .map_err(|_| Failed::Kind(ErrorKind::Protocol))?;
            Ok::<u16, Failed>(status)
        };
        let outcome = match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => Err(Failed::Kind(ErrorKind::Timeout)),
            Ok(Err(failed)) => Err(failed),
            Ok(Ok(status)) => {
                if let Ok(mut pool) = self.pools[request.address].lock() {
                    pool.push(sender);
                }
                let good = if request.expect.is_empty() {
                    (200..300).contains(&status)
                } else {
                    request.expect.contains(&status)
                };
                if good { Ok(()) } else { Err(Failed::Status) }
            }
        };
        (sent, outcome)
    }
}

async fn prepare(
    scenario: &HttpScenario,
    port: u16,
    headroom_bin: &Path,
    allowed: &http::Allowed,
) -> Result<(Vec<Prepared>, Vec<SocketAddr>), String> {
    let mut prepared = Vec::new();
    let mut authorities: Vec<String> = Vec::new();
    let mut addresses = Vec::new();
    for request in &scenario.requests {
        let url = crate::target::fill(&request.url, port, headroom_bin)?;
        let (authority, path) = http::parse_url(&url)
            .ok_or_else(|| format!("`{url}` is not an http:// URL the runner can load"))?;
        let address = match authorities.iter().position(|a| *a == authority) {
            Some(i) => i,
            None => {
                let resolved = http::resolve(&authority, &url, &request.url, allowed).await?;
                authorities.push(authority.clone());
                addresses.push(resolved);
                authorities.len() - 1
            }
        };
        let headers = request
            .headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), crate::target::fill(v, port, headroom_bin)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let body = match &request.body {
            Some(body) => Bytes::from(crate::target::fill(body, port, headroom_bin)?),
            None => Bytes::new(),
        };
        let method = hyper::Method::from_bytes(request.method.as_str().as_bytes())
            .map_err(|e| e.to_string())?;
        let expect = match &request.expect {
            None => Vec::new(),
            Some(Expect::One(status)) => vec![*status],
            Some(Expect::Any(statuses)) => statuses.clone(),
        };
        prepared.push(Prepared {
            authority,
            address,
            method,
            path,
            headers,
            body,
            expect,
            weight: request.weight,
        });
    }
    Ok((prepared, addresses))
}

/// Ramp-up, hold and ramp-down, and the load at any moment of them.
pub struct Schedule {
    ramp_up: f64,
    hold: f64,
    ramp_down: f64,
}

impl Schedule {
    /// The stages of a scenario, in seconds.
    pub fn of(scenario: &HttpScenario) -> Schedule {
        let stages = &scenario.stages;
        Schedule {
            ramp_up: stages.ramp_up.as_secs_f64(),
            hold: stages.hold.map_or(0.0, |hold| hold.as_secs_f64()),
            ramp_down: stages.ramp_down.as_secs_f64(),
        }
    }

    /// Ramp-up, hold and ramp-down together.
    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.ramp_up + self.hold + self.ramp_down)
    }

    /// When the measured figures are taken, for a run that started at `start`: the hold, or
    /// the whole run when there is no hold (a scenario that only ramps).
    pub fn measured(&self, start: Instant) -> std::ops::Range<Instant> {
        if self.hold > 0.0 {
            let from = start + Duration::from_secs_f64(self.ramp_up);
            from..from + Duration::from_secs_f64(self.hold)
        } else {
            start..start + self.total()
        }
    }

    /// The load at `t` seconds: `start` at the ends of the ramps, `peak` during the hold.
    pub fn at(&self, t: f64, start: f64, peak: f64) -> f64 {
        if t < self.ramp_up {
            start + (peak - start) * t / self.ramp_up
        } else if t < self.ramp_up + self.hold {
            peak
        } else if self.ramp_down > 0.0 {
            peak + (start - peak) * ((t - self.ramp_up - self.hold) / self.ramp_down).min(1.0)
        } else {
            peak
        }
    }
}

fn per_second(rate: Option<&Rate>) -> f64 {
    rate.map_or(0.0, |r| r.as_per_second())
}

async fn open_model(
    scenario: &HttpScenario,
    schedule: &Schedule,
    client: &Client,
    start: Instant,
    samples: mpsc::UnboundedSender<Sample>,
    in_flight: &Arc<AtomicUsize>,
    cancel: tokio::sync::watch::Receiver<bool>,
) {
    let peak = per_second(scenario.rate.as_ref());
    let (from, to) = if scenario.executor.is_ramping() {
        (per_second(scenario.start_rate.as_ref()), peak)
    } else {
        (peak, peak)
    };
    let total = schedule.total().as_secs_f64();
    let max_in_flight = usize::try_from(scenario.max_in_flight).unwrap_or(usize::MAX);
    let client = Arc::new(client.clone());
    let mut t = 0.0f64;
    while t < total && !*cancel.borrow() {
        let rate = schedule.at(t, from, to);
        if rate <= 0.0 {
            // Nothing to send yet: look again a little later on the ramp.
            t += 0.01;
            continue;
        }
        let intended = start + Duration::from_secs_f64(t);
        tokio::time::sleep_until(intended).await;
        if in_flight.load(Ordering::Relaxed) >= max_in_flight {
            let _ = samples.send(Sample::Dropped { intended });
        } else {
            in_flight.fetch_add(1, Ordering::Relaxed);
            let (client, samples, in_flight) =
                (Arc::clone(&client), samples.clone(), Arc::clone(in_flight));
            tokio::spawn(async move {
                let released = Instant::now();
                let which = client.pick();
                let (sent, outcome) = client.send(which, intended).await;
                let _ = samples.send(Sample::Done {
                    intended,
                    released,
                    sent,
                    done: Instant::now(),
                    outcome,
                });
                in_flight.fetch_sub(1, Ordering::Relaxed);
            });
        }
        t += match scenario.arrivals {
            Arrivals::Fixed => 1.0 / rate,
            // Exponential gaps: -ln(U)/rate, U in (0, 1].
            Arrivals::Poisson => -(1.0 - rand::rng().random::<f64>()).ln() / rate,
        };
    }
    // Every request in flight ends by its timeout; wait that long at most.
    let deadline = Instant::now() + client.timeout + Duration::from_millis(100);
    while in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn closed_model(
    scenario: &HttpScenario,
    peak: u64,
    schedule: &Schedule,
    client: &Client,
    start: Instant,
    samples: mpsc::UnboundedSender<Sample>,
    cancel: tokio::sync::watch::Receiver<bool>,
) {
    let peak = peak as f64;
    // Ramping starts from `start_vus`, none unless the spec says.
    let from = if scenario.executor.is_ramping() {
        scenario.start_vus.map_or(0.0, |v| v as f64)
    } else {
        peak
    };
    let think = scenario.think.map_or(Duration::ZERO, |d| d.as_std());
    let total = schedule.total();
    let schedule = Arc::new(Schedule {
        ramp_up: schedule.ramp_up,
        hold: schedule.hold,
        ramp_down: schedule.ramp_down,
    });
    let client = Arc::new(client.clone());
    let mut users = tokio::task::JoinSet::new();
    for user in 0..peak as u64 {
        let (client, samples, schedule, cancel) = (
            Arc::clone(&client),
            samples.clone(),
            Arc::clone(&schedule),
            cancel.clone(),
        );
        users.spawn(async move {
            let end = start + total;
            loop {
                let now = Instant::now();
                if now >= end || *cancel.borrow() {
                    break;
                }
                let active = schedule.at((now - start).as_secs_f64(), from, peak);
                if (user as f64) >= active.round() {
                    tokio::time::sleep(Duration::from_millis(20).min(end - now)).await;
                    continue;
                }
                let which = client.pick();
                let began = Instant::now();
                let (sent, outcome) = client.send(which, began).await;
                // A user's latency runs from its connection ready: its own think and connect
                // are not the server's answer time.
                let _ = samples.send(Sample::Done {
                    intended: sent,
                    released: sent,
                    sent,
                    done: Instant::now(),
                    outcome,
                });
                // No think: the next request starts in this same turn (a zero sleep would still
                // wait for the timer's next tick).
                if !think.is_zero() {
                    let now = Instant::now();
                    if now < end {
                        tokio::time::sleep(think.min(end - now)).await;
                    }
                }
            }
        });
    }
    while users.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests;
