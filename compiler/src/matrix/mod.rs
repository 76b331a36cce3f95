//! The run matrix: every phase expanded into points (the product of its axes), every point
//! resolved (variables substituted, defaults applied), in a deterministic order, with an
//! estimate of the wall time.

use std::collections::BTreeMap;

use headroom_spec::phase::MeasureDefaults;
use headroom_spec::placeholder::{self, PlaceholderName};
use headroom_spec::target::{ProcessMode, Step};
use headroom_spec::{
    Duration, Measure, OnFailure, Percent, RunOrder, Scenario, Series, Size, SteadyState, Target,
    VarValue,
};
use serde::{Deserialize, Serialize};

use crate::slo::SloRule;

mod emulation;
mod expansion;
mod phase_target;
mod point_checks;
pub mod resolved;
mod search;

pub use emulation::{emulate, emulated_name};
pub use expansion::expand;

/// Points one phase may have: the product of its axes, counted before they are expanded.
pub const MAX_POINTS_PER_PHASE: u64 = 10_000;
/// Requests one HTTP scenario may plan in one run (its rate over its ramps and hold).
pub const MAX_REQUESTS_PER_RUN: f64 = 50_000_000.0;
/// Sockets one rooms scenario may open in one run.
pub const MAX_SOCKETS_PER_RUN: f64 = 200_000.0;
/// The largest message a rooms scenario may send.
pub const MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// The version of the resolved plan's JSON shape.
pub const MATRIX_FORMAT: u32 = 1;

/// A spec resolved into the runs the runner executes (`headroom compile --json`, and `plan`
/// in a results file).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunMatrix {
    /// The version of this shape (1).
    pub format: u32,
    /// `[bench]`, with `people_per_unit` resolved to a number.
    pub bench: resolved::Bench,
    /// `[vars]`: every variable's default (with `run --set`'s values in place).
    pub vars: BTreeMap<String, VarValue>,
    /// The `[vars]` values set from outside the spec (`run --set NAME=VALUE`): levers the
    /// spec's text does not show.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, VarValue>,
    /// `[target]` as written (each point has it with the variables filled).
    pub target: Target,
    /// `[generator]`.
    #[serde(default)]
    pub generator: headroom_spec::Generator,
    /// The SLOs, parsed.
    pub slo: Vec<SloRule>,
    /// `[capacity]`, defaults applied.
    pub capacity: headroom_spec::Capacity,
    /// `[plan]`, when the spec prices instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<headroom_spec::Plan>,
    /// The gates `headroom compare` holds a results file of this spec to (`[compare]
    /// fail_on`), read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<headroom_spec::compare::GateRule>,
    /// The phases, in order, each with its points.
    pub phases: Vec<MatrixPhase>,
    /// Every run, in the order the runner executes them: phase, point, repeat.
    pub runs: Vec<Run>,
    /// Load, settle, scrapes and cool-down of every run; server start-up is not included.
    pub estimated: Duration,
}

/// One phase, resolved.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MatrixPhase {
    /// The phase's name in the spec.
    pub name: String,
    /// What the phase is for, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The swept variables and their values; points are their product, the last axis fastest.
    pub axes: Vec<Axis>,
    /// Runs per point.
    pub repeats: u32,
    /// The pause after each run.
    pub cooldown: Duration,
    /// What a failed run does to the rest of the phase.
    pub on_failure: OnFailure,
    /// The order of the runs when points repeat (files from before it was recorded ran
    /// `grouped`).
    #[serde(default = "grouped")]
    pub order: RunOrder,
    /// A fresh target per point, or one for the whole phase.
    pub process: ProcessMode,
    /// What is measured at every point of the phase.
    pub measure: ResolvedMeasure,
    /// The scenarios that run together at every point of this phase.
    pub scenarios: Vec<String>,
    /// Every point: the product of the axes, the last axis fastest.
    pub points: Vec<Point>,
    /// All runs of this phase.
    pub estimated: Duration,
    /// The instance whose shape this phase runs in (`[plan] emulate`, `run --emulate`): the
    /// ceiling phase again, every point held to the instance's vCPUs and memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulates: Option<EmulatedInstance>,
    /// The search of a phase that finds its ceiling instead of listing steps: its points are
    /// then its two ends until it runs, and the probes it made once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<PhaseSearch>,
}

/// One swept variable and its values, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Axis {
    /// The variable swept.
    pub variable: String,
    /// Its values, in the order they run.
    pub values: Vec<VarValue>,
}

/// `[measure]` with the phase's overrides and the defaults applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolvedMeasure {
    /// How often the server's process group is read during the load.
    pub sample_every: Duration,
    /// When and how the server is measured after the load.
    pub steady_state: SteadyState,
    /// The Prometheus series read at the steady state.
    pub series: Vec<Series>,
}

/// One point of a phase: the variables' values and what runs there.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    /// Its place in the phase, from 0.
    pub index: usize,
    /// The values of the swept variables at this point.
    pub at: BTreeMap<String, VarValue>,
    /// Every variable's value at this point (defaults, `set`, then the axes).
    pub vars: BTreeMap<String, VarValue>,
    /// The target with variables filled; `{port}` and `{env:…}` are left for the runner.
    pub target: resolved::Target,
    /// The scenarios with the point's values filled in: `[[scenario]]`'s shape
    /// (`schemas/spec.schema.json`), except that a count of the units variable is 0 at a
    /// baseline point, which a spec may not write literally.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub scenarios: Vec<resolved::Scenario>,
    /// One run of this point: ramps, hold, settle, scrapes and cool-down.
    pub run_time: Duration,
}

/// One run: a point of a phase, one repeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    /// The phase's name.
    pub phase: String,
    /// The point's index in its phase.
    pub point: usize,
    /// From 1.
    pub repeat: u32,
}

fn grouped() -> RunOrder {
    RunOrder::Grouped
}

impl MatrixPhase {
    /// Its runs in the order they run, as (position in `points`, repeat from 1), with
    /// `repeats` runs a point: in rounds when interleaved (A B A B), else point by point.
    /// A search's runs are made as it goes: none are known before.
    pub fn run_order(&self, repeats: u32) -> Vec<(usize, u32)> {
        if self.search.is_some() {
            return Vec::new();
        }
        let points = 0..self.points.len();
        match self.order {
            RunOrder::Interleaved => (1..=repeats)
                .flat_map(|repeat| points.clone().map(move |point| (point, repeat)))
                .collect(),
            RunOrder::Grouped => points
                .flat_map(|point| (1..=repeats).map(move |repeat| (point, repeat)))
                .collect(),
        }
    }
}

/// Where a variable's value at a point was written, for diagnostics about that value.
struct Origins {
    pointers: BTreeMap<String, String>,
}

impl Origins {
    /// The pointer to blame for a field: its variable's value if the spec wrote a variable.
    fn blame(&self, field: &str, var: Option<&str>) -> String {
        var.and_then(|name| self.pointers.get(name))
            .cloned()
            .unwrap_or_else(|| field.to_owned())
    }
}

fn resolve_measure(global: &Measure, phase: Option<&Measure>) -> ResolvedMeasure {
    let pick = |f: fn(&Measure) -> Option<Duration>| phase.and_then(f).or_else(|| f(global));
    ResolvedMeasure {
        sample_every: pick(|m| m.sample_every).unwrap_or(MeasureDefaults::SAMPLE_EVERY),
        steady_state: phase
            .and_then(|m| m.steady_state.clone())
            .or_else(|| global.steady_state.clone())
            .unwrap_or_default(),
        series: global
            .series
            .iter()
            .filter(|s| !phase.is_some_and(|m| m.series.iter().any(|o| o.name == s.name)))
            .chain(phase.into_iter().flat_map(|m| m.series.iter()))
            .cloned()
            .collect(),
    }
}

/// How long one run of a point takes: its longest scenario (ramp-up, hold, ramp-down), the
/// steady state's settle and scrapes, and the cooldown. `--quick` calls it again on the
/// scaled-down plan, so its estimate is the quick one.
pub fn run_time(
    scenarios: &[resolved::Scenario],
    measure: &ResolvedMeasure,
    cooldown: Duration,
) -> Duration {
    let load = scenarios
        .iter()
        .map(|s| {
            let stages = s.stages();
            stages
                .ramp_up
                .saturating_add(stages.hold.unwrap_or_default())
                .saturating_add(stages.ramp_down)
        })
        .max()
        .unwrap_or_default();
    let steady = &measure.steady_state;
    load.saturating_add(steady.settle)
        .saturating_add(
            steady
                .every
                .saturating_mul(u64::from(steady.scrapes.saturating_sub(1))),
        )
        .saturating_add(cooldown)
}

fn fill(text: &mut String, vars: &BTreeMap<String, VarValue>) {
    *text = placeholder::fill(text, |name| match name {
        PlaceholderName::Name(name) => vars.get(name).map(ToString::to_string),
        PlaceholderName::Env(_)
        | PlaceholderName::Row(_)
        | PlaceholderName::Capture(_)
        | PlaceholderName::Port(_) => None,
    });
}

/// The target at a point: its strings with the point's variables filled, its limits resolved.
fn target_at(
    written: &Target,
    vars: &BTreeMap<String, VarValue>,
) -> Result<resolved::Target, String> {
    let filled = |text: &String| {
        let mut text = text.clone();
        fill(&mut text, vars);
        text
    };
    let mut ready = written.ready.clone();
    if let Some(http) = &mut ready.http {
        fill(http, vars);
    }
    Ok(resolved::Target {
        command: written
            .command
            .as_ref()
            .map(|argv| argv.iter().map(filled).collect()),
        cwd: written.cwd.as_ref().map(filled),
        env: written
            .env
            .iter()
            .map(|(key, value)| (key.clone(), filled(value)))
            .collect(),
        url: written.url.as_ref().map(filled),
        pid_file: written.pid_file.clone(),
        ready,
        metrics: written.metrics.as_ref().map(filled),
        stop: written.stop.clone(),
        process: written.process,
        limits: written
            .limits
            .as_ref()
            .map(|limits| resolved::Limits::at(limits, vars))
            .transpose()?,
        allow_hosts: written.allow_hosts.clone(),
        ca: written.ca.clone(),
        insecure_skip_verify: written.insecure_skip_verify,
        services: services_at(written, vars)?,
        front: front_of(written),
        setup: written
            .setup
            .iter()
            .map(|step| step_at(step, vars))
            .collect(),
        teardown: written
            .teardown
            .iter()
            .map(|step| step_at(step, vars))
            .collect(),
    })
}

/// The service the load goes to: the one named, or a stack's only service.
fn front_of(written: &Target) -> Option<String> {
    match (&written.front, written.services.len()) {
        (Some(front), _) => Some(front.clone()),
        (None, 1) => written.services.keys().next().cloned(),
        (None, _) => None,
    }
}

/// A setup or teardown step with the point's variables filled.
fn step_at(written: &Step, vars: &BTreeMap<String, VarValue>) -> Step {
    let mut step = written.clone();
    for arg in &mut step.command {
        fill(arg, vars);
    }
    for value in step.env.values_mut() {
        fill(value, vars);
    }
    if let Some(cwd) = &mut step.cwd {
        fill(cwd, vars);
    }
    step
}

/// A stack's services at a point, in start order: each after every service its `after`
/// names (then by name). A cycle or an unknown name is the checks' to report; here it fails.
fn services_at(
    written: &Target,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Vec<resolved::Service>, String> {
    let order = headroom_spec::target::start_order(&written.services)
        .map_err(|name| format!("the services' `after` lists go round in a circle at `{name}`"))?;
    order
        .into_iter()
        .map(|name| {
            let service = &written.services[name];
            let filled = |text: &String| {
                let mut text = text.clone();
                fill(&mut text, vars);
                text
            };
            let mut ready = service.ready.clone();
            if let Some(http) = &mut ready.http {
                fill(http, vars);
            }
            Ok(resolved::Service {
                name: name.clone(),
                command: service.command.iter().map(filled).collect(),
                cwd: service.cwd.as_ref().map(filled),
                env: service
                    .env
                    .iter()
                    .map(|(key, value)| (key.clone(), filled(value)))
                    .collect(),
                ready,
                stop: service.stop.clone(),
                limits: service
                    .limits
                    .as_ref()
                    .map(|limits| resolved::Limits::at(limits, vars))
                    .transpose()?,
                after: service.after.clone(),
            })
        })
        .collect()
}

/// A scenario at a point: every parameter its value there, its strings filled; a phase's
/// `hold` replaces the scenario's.
fn scenario_at(
    written: &Scenario,
    phase_hold: Option<Duration>,
    vars: &BTreeMap<String, VarValue>,
) -> Result<resolved::Scenario, String> {
    let filled = |text: &String| {
        let mut text = text.clone();
        fill(&mut text, vars);
        text
    };
    let stages = |stages: &headroom_spec::Stages| -> Result<resolved::Stages, String> {
        Ok(resolved::Stages {
            ramp_up: resolved::value(&stages.ramp_up, vars)?,
            hold: match phase_hold {
                Some(hold) => Some(hold),
                None => resolved::optional(stages.hold.as_ref(), vars)?,
            },
            ramp_down: resolved::value(&stages.ramp_down, vars)?,
        })
    };
    Ok(match written {
        Scenario::Http(http) => resolved::Scenario::Http(resolved::HttpScenario {
            name: http.name.clone(),
            executor: http.executor,
            rate: resolved::optional(http.rate.as_ref(), vars)?,
            start_rate: resolved::optional(http.start_rate.as_ref(), vars)?,
            vus: resolved::optional(http.vus.as_ref(), vars)?,
            start_vus: http.start_vus,
            think: http
                .think
                .as_ref()
                .map(|think| resolved::ThinkTime::at(think, vars))
                .transpose()?,
            start: http.start.unwrap_or_default(),
            arrivals: http.arrivals,
            max_in_flight: http.max_in_flight,
            max_connections: http.max_connections.unwrap_or(http.max_in_flight),
            timeout: http.timeout,
            connect_timeout: http.connect_timeout,
            http_version: http.http_version,
            data: http.data.clone(),
            stages: stages(&http.stages)?,
            requests: http
                .requests
                .iter()
                .map(|request| headroom_spec::scenario::Request {
                    url: filled(&request.url),
                    headers: request
                        .headers
                        .iter()
                        .map(|(key, value)| (key.clone(), filled(value)))
                        .collect(),
                    body: request.body.as_ref().map(filled),
                    ..request.clone()
                })
                .collect(),
        }),
        Scenario::Rooms(rooms) => resolved::Scenario::Rooms(resolved::RoomsScenario {
            name: rooms.name.clone(),
            url: filled(&rooms.url),
            rooms: resolved::value(&rooms.rooms, vars)?,
            peers_per_room: resolved::optional(rooms.peers_per_room.as_ref(), vars)?,
            peers: resolved::optional(rooms.peers.as_ref(), vars)?,
            join: rooms.join.as_ref().map(filled),
            idle: rooms.idle,
            send: rooms
                .send
                .as_ref()
                .map(|send| resolved::Messages::at(send, filled(&send.template), vars))
                .transpose()?,
            ping: rooms.ping.clone(),
            reload: rooms
                .reload
                .as_ref()
                .map(|reload| resolved::Reload::at(reload, filled(&reload.url), vars))
                .transpose()?,
            deadline: rooms.deadline,
            connect_timeout: rooms.connect_timeout,
            connect_over: resolved::optional(rooms.connect_over.as_ref(), vars)?,
            stages: stages(&rooms.stages)?,
        }),
    })
}
/// The instance a phase runs in the shape of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmulatedInstance {
    /// The instance type (`t4g.medium`).
    pub instance: String,
    /// The phase it runs again (`[capacity] ceiling_phase`).
    pub of_phase: String,
    /// The instance's vCPUs.
    pub vcpu: u32,
    /// The CPUs the server gets: every vCPU, or at the baseline their sustained share.
    pub cpus: f64,
    /// The memory the server gets: the instance's less `[capacity] reserve`.
    pub memory: Size,
    /// At a burstable instance's sustained baseline (no credits), not its full vCPUs.
    pub baseline: bool,
}

/// The search of a phase, resolved: its ends (`to` lowered to `[capacity] cap` when the
/// variable counts units), its budget, and the scenarios as written, to resolve probes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseSearch {
    /// The variable searched.
    pub variable: String,
    /// The first value probed.
    pub from: VarValue,
    /// The highest value probed.
    pub to: VarValue,
    /// `to` is `[capacity] cap`, lower than the `to` written.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// The bracket's width, over its last pass, at which the search stops.
    pub precision: Percent,
    /// The hold of a probe that brackets or bisects.
    pub probe_hold: Duration,
    /// Runs of a probe that brackets or bisects (the ends found run the phase's `repeats`).
    pub probe_repeats: u32,
    /// The most runs the search may take.
    pub max_runs: u32,
    /// The most wall time it may take: no probe starts past it.
    pub max_time: Duration,
    /// The phase's `hold`, overriding the scenarios' own, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Duration>,
    /// The phase's scenarios as the spec writes them (`[[scenario]]`'s shape), each probe's
    /// resolved from them at its value.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub scenarios: Vec<Scenario>,
}
