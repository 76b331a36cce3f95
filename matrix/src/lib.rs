//! The run matrix: a spec resolved into phases, points and runs (`headroom compile --json`,
//! and `plan` in a results file). The compiler makes it; the runner, the load generator and
//! the results file read it, so it lives apart from the validator: a crate of types, their
//! arithmetic and the figure names SLOs read ([`slo`]).

#![warn(missing_docs)]

use std::collections::BTreeMap;

use headroom_spec::search::SearchEnds;
use headroom_spec::target::ProcessMode;
use headroom_spec::{
    Duration, OnFailure, Percent, RunOrder, Scenario, Series, Size, SteadyState, Target, VarValue,
};
use serde::{Deserialize, Serialize};

use crate::slo::SloRule;

pub mod resolved;
pub mod slo;

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
    /// The core count this phase runs the ceiling phase at (`[plan] scale_cores`): every
    /// point's server pinned to that many whole cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scales: Option<ScaledCores>,
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

/// The ceiling phase run at a core count (`[plan] scale_cores`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScaledCores {
    /// The phase it runs again (`[capacity] ceiling_phase`).
    pub of_phase: String,
    /// The whole cores the server is pinned to.
    pub cores: u32,
}

impl ScaledCores {
    /// The phase's name: `load@1-core`, `load@3-cores`.
    pub fn phase_name(of_phase: &str, cores: u32) -> String {
        let plural = if cores == 1 { "core" } else { "cores" };
        format!("{of_phase}@{cores}-{plural}")
    }
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

impl EmulatedInstance {
    /// The shape in words: `2 vCPU, 3.5GiB`, or `0.4 CPU (its 20 % baseline of 2 vCPU), 3.5GiB`.
    pub fn describe(&self) -> String {
        if self.baseline {
            format!(
                "{} CPU (its {:.0} % baseline of {} vCPU), {}",
                self.cpus,
                self.cpus / f64::from(self.vcpu) * 100.0,
                self.vcpu,
                self.memory
            )
        } else {
            format!("{} vCPU, {}", self.vcpu, self.memory)
        }
    }
}

impl PhaseSearch {
    /// The ends as numbers (checked when the spec compiled).
    pub fn ends(&self) -> Result<SearchEnds, String> {
        headroom_spec::search::Search {
            from: self.from.clone(),
            to: self.to.clone(),
            precision: self.precision,
            probe_hold: Some(self.probe_hold),
            probe_repeats: self.probe_repeats,
            max_runs: self.max_runs,
            max_time: self.max_time,
        }
        .ends()
        .map_err(|error| error.to_string())
    }
}

impl MatrixPhase {
    /// The longest a search phase may take: its budget of runs at the full hold, or its
    /// `max_time` when that is shorter (a probe started before it may end after: one run more).
    pub fn search_worst_case(&self) -> Option<Duration> {
        let search = self.search.as_ref()?;
        let longest = self
            .points
            .iter()
            .map(|point| point.run_time)
            .max()
            .unwrap_or_default();
        let by_runs = longest.saturating_mul(u64::from(search.max_runs));
        let by_time = search.max_time.saturating_add(longest);
        Some(by_runs.min(by_time))
    }
}
