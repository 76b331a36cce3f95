//! The template context: everything a capacity page says, as data. Built from typed results
//! (`headroom-results`, never read by key) and the planner's report; its shape is
//! `schemas/page-context.schema.json`, so users can write pages of their own.

use headroom_pricing::plan::PlanReport;
use schemars::JsonSchema;
use serde::Serialize;

mod axis;
mod build;
mod caveats;
mod ceiling;
mod compared;
mod fits;
mod levers;
mod limits;
mod plotted;
mod rows;
mod series;
mod stack;
mod stat;
mod tally;
mod words;

pub use axis::Axis;
pub use compared::Compared;
pub use levers::{Lever, levers, set_flags};
pub use rows::Point;
pub use series::MeasuredSeries;
pub use stat::Stat;

/// What the page is about, from the spec.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Bench {
    /// `[bench] name`.
    pub name: String,
    /// `[bench] description`: what the bench answers.
    pub description: Option<String>,
    /// What one unit is (`room`, `user`).
    pub unit: String,
    /// How many people one unit holds (1 unless the spec says).
    pub people_per_unit: f64,
    /// The series memory is provisioned against, and the phase that sweeps it.
    pub memory_series: String,
    /// `[capacity] memory_phase`, when the spec names one.
    pub memory_phase: Option<String>,
    /// The variable that counts units (`rooms`), which picks the memory sweep when no phase is
    /// named, as the planner does.
    pub units_variable: Option<String>,
    /// The phase whose SLO verdicts give the ceiling.
    pub ceiling_phase: Option<String>,
}

impl Bench {
    /// The bench as the run matrix has it: `[bench]` and the `[capacity]` keys the page reads.
    pub fn of_matrix(matrix: &headroom_matrix::RunMatrix) -> Bench {
        let (bench, capacity) = (&matrix.bench, &matrix.capacity);
        Bench {
            name: bench.name.clone(),
            description: bench.description.clone(),
            unit: bench.unit.clone(),
            people_per_unit: bench.people_per_unit as f64,
            memory_series: capacity.memory.clone(),
            memory_phase: capacity.memory_phase.clone(),
            units_variable: capacity.units.clone(),
            ceiling_phase: capacity.ceiling_phase.clone(),
        }
    }
}

/// The inputs of a page besides the results text.
pub struct Inputs {
    /// What the bench is, from the spec.
    pub bench: Bench,
    /// The planner's report, when the spec prices instances.
    pub plan: Option<PlanReport>,
    /// The commands that reproduce the page, in order.
    pub reproduce: Vec<String>,
    /// The comparison with a baseline results file (`render --baseline`).
    pub compared: Option<Compared>,
}

/// The version of the page context's shape (schemas/page-context.schema.json, `render
/// --dump-context`); docs/contracts.md says what each version added.
pub const PAGE_CONTEXT_FORMAT: u32 = 1;

/// Everything a capacity page says, as data (`schemas/page-context.schema.json`).
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct PageContext {
    /// The version of this shape ([`PAGE_CONTEXT_FORMAT`]); a template or reader refuses
    /// another.
    pub format: u32,
    /// What the bench is, from the spec.
    pub bench: Bench,
    /// The headroom that ran (from the results file).
    pub headroom_version: String,
    /// The spec's path, as the run was given it.
    pub spec_path: String,
    /// `--quick` results: scaled down, not figures to plan with.
    pub quick: bool,
    /// The machine the runs ran on.
    pub machine: Machine,
    /// The 1-minute load average over every run: lowest and highest seen.
    pub load_average: Option<Spread>,
    /// What the load generator used of the machine, over every run.
    pub generator: Option<Generator>,
    /// How many runs, failed runs and generator-bound runs.
    pub runs: RunCounts,
    /// Each scenario in words, as it ran at the first point that has it.
    pub scenarios: Vec<ScenarioText>,
    /// When the server was measured: one sentence per distinct steady-state rule.
    pub steady_state: Vec<String>,
    /// A stack's services, its setup and teardown steps and the series read by a command, a
    /// sentence each; empty for one target process with none.
    pub stack: Vec<String>,
    /// The values given from outside the spec: `--set` values and the variables `{env:…}`
    /// filled (by name only); what "How to reproduce" gives again.
    pub levers: Vec<Lever>,
    /// Every phase, with a row per point.
    pub phases: Vec<Phase>,
    /// Whether some phase ran a rooms scenario (the page explains its p95 then).
    pub has_rooms: bool,
    /// The memory regression: every bytes series of the memory sweep, the memory series first (empty without a memory sweep over the units).
    pub fits: Vec<FitRow>,
    /// Where the SLOs broke in the ceiling phase, step by step.
    pub ceiling: Option<Ceiling>,
    /// Every phase judged by SLOs, its ceiling beside the others' (a phase per CPU size, a
    /// phase per emulated instance).
    pub phase_ceilings: Vec<PhaseCeiling>,
    /// The planner's report (`schemas/plan.schema.json`), when the spec names instances.
    pub plan: Option<PlanReport>,
    /// How to read the numbers, generated from what the results show.
    pub caveats: Vec<String>,
    /// The one caveat the page's headline carries: quick results, other work on the machine,
    /// a ceiling not measured, else the first of `caveats`.
    pub headline_caveat: Option<String>,
    /// What the page does not know, generated from the data.
    pub not_measured: Vec<String>,
    /// The commands that reproduce the page, in order.
    pub reproduce: Vec<String>,
    /// What moved against a baseline results file (`render --baseline BASE`).
    pub compared: Option<Compared>,
    /// The plots drawn from this context (`headroom_templates::plots`), as the files written
    /// beside the page; the page links them by `file`.
    pub plots: Vec<Plot>,
}

/// A scenario of the bench, in words.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ScenarioText {
    /// The scenario's name.
    pub name: String,
    /// `http` or `rooms`.
    pub kind: String,
    /// `HTTP, 25 virtual users thinking 1s each (ramping-vus): GET list, GET page (4:2); 1s up, 5s hold, 1s down`.
    pub text: String,
}

/// The generator's own use of the machine: how much headroom it had.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, JsonSchema)]
pub struct Generator {
    /// CPU the generator used during the load, in cores: lowest and highest run.
    pub cpu_cores: Spread,
    /// The cores it could use; `null` when no run recorded it.
    pub cores_available: Option<u64>,
    /// The largest p99 of its schedule lag (actual minus intended send), in ms; `null` when no
    /// run recorded one.
    pub schedule_lag_p99_ms: Option<f64>,
}

/// A plot of the page: an SVG file beside it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Plot {
    /// `memory`, `latency`, `search` or `series`.
    pub kind: String,
    /// The file name, relative to the page (`memory.svg`).
    pub file: String,
    /// The plot's title, also inside the SVG.
    pub title: String,
    /// For `latency`, `search` and `series`: the phase plotted.
    pub phase: Option<String>,
    /// For `latency`: the scenario plotted.
    pub scenario: Option<String>,
    /// For `latency`: the named request of the scenario plotted apart, against its own SLOs.
    pub request: Option<String>,
    /// For `series`: the `[measure]` series plotted.
    pub series: Option<String>,
}

/// The machine the runs ran on.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, JsonSchema)]
pub struct Machine {
    /// The CPU's model name (empty when the machine names none).
    pub cpu_model: String,
    /// `null` when the results do not say (never shown as 0).
    pub logical_cores: Option<u64>,
    /// The machine's memory in bytes; `null` when the results do not say.
    pub memory_bytes: Option<u64>,
    /// The kernel release.
    pub kernel: String,
}

/// The smallest and largest of a figure.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, JsonSchema)]
pub struct Spread {
    /// The lowest.
    pub min: f64,
    /// The highest.
    pub max: f64,
}

/// How many runs ran, failed, and were bound by the generator.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, JsonSchema)]
pub struct RunCounts {
    /// Runs in the results file.
    pub total: u64,
    /// Runs that failed (their figures are not fitted).
    pub failed: u64,
    /// Runs where the generator, not the server, may have set the latency.
    pub generator_bound: u64,
    /// Runs whose generator lagged because the machine paused it (idle, every arrival sent):
    /// a caveat, not a bound.
    pub machine_paused: u64,
    /// The longest of those runs' pauses, in milliseconds; null when no run was paused.
    pub longest_pause_ms: Option<f64>,
    /// Runs over whose hold other processes or the hypervisor took a notable share of the
    /// machine (0.25 cores of other processes, or 0.1 stolen): the server had less of it.
    pub machine_competed: u64,
    /// The most cores other processes used over a run's hold; null where none was read.
    pub most_others_cores: Option<f64>,
    /// The most cores the hypervisor took over a run's hold; null where none was read.
    pub most_stolen_cores: Option<f64>,
    /// Each phase kept one target for all its runs (`process = "per-phase"`), where a fresh
    /// one started at every run otherwise.
    pub kept_per_phase: bool,
    /// The target was external (`url`): headroom started and stopped nothing.
    pub external: bool,
    /// Runs left out because the target kept for their phase was gone or never came up.
    pub not_run: u64,
    /// Runs in which requests intended outside the run's hold failed (issue 41: said, never
    /// dropped silently).
    pub failed_outside_hold: u64,
    /// Those requests, by why, over every run.
    pub outside_hold_errors: headroom_results::ErrorCounts,
}

/// One phase as the page shows it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Phase {
    /// The phase's name.
    pub name: String,
    /// What the phase is for, in words.
    pub description: Option<String>,
    /// A row per point, in the order they ran.
    pub points: Vec<Point>,
    /// The one numeric variable the points sweep, which plots order them by; `null` when
    /// they sweep several, or words.
    pub axis: Option<Axis>,
    /// The `[measure]` series its runs read, in the spec's order.
    pub series: Vec<MeasuredSeries>,
    /// The scenarios of the phase, in the order of the columns.
    pub scenarios: Vec<String>,
    /// The latency SLOs judged in the phase (the lines of its latency plots).
    pub latency_slos: Vec<LatencySlo>,
    /// Some latency SLO of the phase judges a named request apart: the page leads with the
    /// requests' figures, each against its own threshold, and the scenarios' mixed ones follow.
    pub leads_with_requests: bool,
    /// The shape its target ran in (`[target] limits`), and the throttling the kernel
    /// counted, in a sentence; absent without limits.
    pub limits: Option<String>,
    /// A stack's services (`[target.services]`), in the order of `Point.services`; empty for
    /// one target process.
    pub services: Vec<String>,
    /// The shape each service ran in and its throttling, a sentence each (services with
    /// `limits` only).
    pub service_limits: Vec<String>,
    /// The target the phase kept for all its runs (`process = "per-phase"`), or its external
    /// target's once-a-phase steps: how it came up, its steps, how it ended, in a sentence.
    pub kept_target: Option<String>,
}

/// A latency SLO as a line to draw: `api.latency.p95 < 200ms` on scenario `api`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct LatencySlo {
    /// The scenario the SLO judges.
    pub scenario: String,
    /// The named request of the scenario it judges apart (`api.slow.latency.p95`), if any.
    pub request: Option<String>,
    /// The SLO as written.
    pub expression: String,
    /// Its threshold in milliseconds.
    pub threshold_ms: f64,
}

/// The SLO ceiling as a page tells it: the last good step, the first bad one, what broke there,
/// and a cliff if the latency jumped.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Ceiling {
    /// The phase whose verdicts give the ceiling.
    pub phase: String,
    /// Why this phase gives the ceiling (`capacity.ceiling_phase`, or the planner's rule).
    pub chosen_because: String,
    /// The last step before the first failing one (`rooms = 32`), if any passed.
    pub last_good: Option<String>,
    /// The first step where some SLO failed or was not measured, or a run failed, if any did
    /// (`headroom_figures::verdict::breaks_the_step`, as the planner reads a step).
    pub first_bad: Option<String>,
    /// Whether no SLO was over its threshold at the first bad step, only runs that failed or
    /// figures that never came (the server answered nothing as expected there): then lower
    /// steps are not the advice.
    pub nothing_measured: bool,
    /// What broke there: the runs that failed, and the SLOs that failed or were not measured,
    /// as written (`edits.seen_by_all.p95 < 2500ms`), with the value measured or why none.
    pub broke: Vec<String>,
    /// The largest jump of the p95 between two steps, when it is 3× or more.
    pub cliff: Option<String>,
    /// How the phase found its ceiling when it searched: `last_good` and `first_bad` are then
    /// its bracket.
    pub search: Option<SearchStory>,
}

/// One phase judged by SLOs, in the side-by-side table of the ceilings: what it ran in, its
/// last step that passed and its first that failed.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct PhaseCeiling {
    /// The phase.
    pub phase: String,
    /// The shape its target ran in (`0.5 CPU, 2GiB memory, no swap (cgroup v1)`), or `the
    /// whole machine`.
    pub measured_in: String,
    /// The last step before the first failing one, if any passed.
    pub last_good: Option<String>,
    /// The first step where some SLO failed, if any did.
    pub first_bad: Option<String>,
    /// How it searched, when it did (`last_good` and `first_bad` are its bracket).
    pub search: Option<SearchStory>,
}

/// A least-squares line of one series over one sweep, and how it predicts the largest point.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct FitRow {
    /// The phase the points come from (the memory sweep, as the planner chooses it).
    pub phase: String,
    /// Why this phase is the memory sweep (`capacity.memory_phase`, or the planner's rule).
    pub chosen_because: String,
    /// Too weak to plan with unflagged: see `warnings`.
    pub weak: bool,
    /// The series fitted (`rss`, a `[measure]` series of bytes).
    pub series: String,
    /// The series' unit: `bytes` (the page fits the memory sweep's byte series).
    pub unit: String,
    /// The variable on the x axis (the units variable).
    pub x: String,
    /// Points fitted: every run, repeats included.
    pub n: usize,
    /// The line at x = 0, in bytes.
    pub intercept: f64,
    /// Bytes per unit of x.
    pub slope: f64,
    /// `null` when the series does not vary (R² is 0/0 there).
    pub r2: Option<f64>,
    /// The slope's 95 % confidence interval (Student t, n − 2 degrees of freedom).
    pub slope_ci95: [f64; 2],
    /// The largest x measured.
    pub largest_x: f64,
    /// What the line gives at `largest_x`, in bytes.
    pub predicted_at_largest: f64,
    /// Where 95 % of single runs at `largest_x` would fall, by the fit (its prediction
    /// interval, in bytes): a measurement outside it says the line does not hold there.
    pub prediction_interval_at_largest: [f64; 2],
    /// The median measured at the largest x.
    pub measured_at_largest: f64,
    /// Why the fit is weak or a prediction an extrapolation, in words.
    pub warnings: Vec<String>,
    /// Every run's measurement, `[x, y]`.
    pub points: Vec<[f64; 2]>,
}

/// A search as the page tells it: its bracket, its precision, what it took, every probe.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SearchStory {
    /// The variable searched.
    pub variable: String,
    /// How it ended: `converged`, `lower_bound`, `below_from`, `split`, `generator_bound`,
    /// `unjudged`, `out_of_budget`.
    pub ending: headroom_results::SearchEnding,
    /// How it ended, in words.
    pub said: String,
    /// The last pass, as a number (for the plot).
    pub pass: Option<f64>,
    /// The first fail above it, as a number.
    pub fail: Option<f64>,
    /// `(fail − pass) / pass` as a fraction, when both are known.
    pub within: Option<f64>,
    /// When the bracket's top is a load whose runs split rather than failed: how many
    /// passed (`1 of 3 runs passed`).
    pub top_split: Option<String>,
    /// The precision asked, as a fraction.
    pub precision: f64,
    /// Runs it took.
    pub runs: u32,
    /// What it took, in words (`13 runs in 1.5 min`).
    pub took: String,
    /// Where it started from another instance's bracket, in words.
    pub warm_start: Option<String>,
    /// Every probe, in the order it ran.
    pub probes: Vec<ProbeRow>,
}

/// One probe of a search, as the page's table and plot show it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ProbeRow {
    /// From 1, in the order the probes ran.
    pub number: usize,
    /// Its value as written (`800/s`, `437`).
    pub load: String,
    /// Its value as a number.
    pub value: f64,
    /// `explore` or `confirm`.
    pub stage: headroom_results::ProbeStage,
    /// Each run's hold, in seconds.
    pub hold_s: f64,
    /// Its runs.
    pub runs: u32,
    /// Of them, those that passed every SLO.
    pub passes: u32,
    /// `pass`, `fail`, `split`, `generator_bound` or `unjudged`.
    pub verdict: headroom_results::ProbeOutcome,
    /// Why, in words.
    pub why: Option<String>,
}

#[cfg(test)]
mod tests;
