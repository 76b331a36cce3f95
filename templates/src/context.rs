//! The template context: everything a capacity page says, as data. Built from typed results
//! (`headroom-results`, never read by key) and the planner's report; its shape is
//! `schemas/page-context.schema.json`, so users can write pages of their own.

use headroom_compiler::slo::FigureUnit;
use headroom_pricing::fit::fit;
use headroom_pricing::plan::{Report, Selection, ceiling_sweep, memory_sweep};
use headroom_pricing::points::{self, Sweep, Unit};
use headroom_results::{MessageCounts, PointResults, Results, ScenarioResult, Summary};
use headroom_spec::scenario::{HttpScenario, RoomsScenario, Stages};
use headroom_spec::{Param, Reducer, Scenario, VarValue};
use schemars::JsonSchema;
use serde::Serialize;

/// What the page is about, from the spec.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

/// The inputs of a page besides the results text.
pub struct Inputs {
    pub bench: Bench,
    pub plan: Option<Report>,
    /// The commands that reproduce the page, in order.
    pub reproduce: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PageContext {
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
    /// Every phase, with a row per point.
    pub phases: Vec<Phase>,
    /// Whether some phase ran a rooms scenario (the page explains its p95 then).
    pub has_rooms: bool,
    /// The memory regression: every bytes series of the memory sweep, the memory series first (empty without a memory sweep over the units).
    pub fits: Vec<FitRow>,
    /// Where the SLOs broke in the ceiling phase, step by step.
    pub ceiling: Option<Ceiling>,
    /// The planner's report (`schemas/plan.schema.json`), when the spec names instances.
    pub plan: Option<Report>,
    /// How to read the numbers, generated from what the results show.
    pub caveats: Vec<String>,
    /// What the page does not know, generated from the data.
    pub not_measured: Vec<String>,
    /// The commands that reproduce the page, in order.
    pub reproduce: Vec<String>,
    /// The plots drawn from this context (`headroom_templates::plots`), as the files written
    /// beside the page; the page links them by `file`.
    pub plots: Vec<Plot>,
}

/// A scenario of the bench, in words.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScenarioText {
    /// The scenario's name.
    pub name: String,
    /// `http` or `rooms`.
    pub kind: String,
    /// `HTTP, 25 virtual users thinking 1s each (ramping-vus): GET list, GET page (4:2); 1s up, 5s hold, 1s down`.
    pub text: String,
}

/// The generator's own use of the machine: how much headroom it had.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Plot {
    /// `memory` or `latency`.
    pub kind: String,
    /// The file name, relative to the page (`memory.svg`).
    pub file: String,
    /// The plot's title, also inside the SVG.
    pub title: String,
    /// For `latency`: the phase and scenario plotted.
    pub phase: Option<String>,
    /// For `latency`: the scenario plotted.
    pub scenario: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
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

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Spread {
    /// The lowest.
    pub min: f64,
    /// The highest.
    pub max: f64,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RunCounts {
    /// Runs in the results file.
    pub total: u64,
    /// Runs that failed (their figures are not fitted).
    pub failed: u64,
    /// Runs where the generator, not the server, may have set the latency.
    pub generator_bound: u64,
}

/// Lowest, median and highest over a point's repeats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct Stat {
    /// The lowest of the repeats.
    pub min: f64,
    /// The median of the repeats (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The highest of the repeats.
    pub max: f64,
    /// How many repeats had the figure.
    pub n: usize,
}

impl Stat {
    pub fn of(values: &[f64]) -> Option<Stat> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        Some(Stat {
            min: sorted[0],
            median: Reducer::Median.of(&sorted)?,
            max: sorted[sorted.len() - 1],
            n: sorted.len(),
        })
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Phase {
    /// The phase's name.
    pub name: String,
    /// What the phase is for, in words.
    pub description: Option<String>,
    /// A row per point, in order.
    pub points: Vec<Point>,
    /// The scenarios of the phase, in the order of the columns.
    pub scenarios: Vec<String>,
    /// The latency SLOs judged in the phase (the lines of its latency plots).
    pub latency_slos: Vec<LatencySlo>,
}

/// A latency SLO as a line to draw: `api.latency.p95 < 200ms` on scenario `api`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LatencySlo {
    /// The scenario the SLO judges.
    pub scenario: String,
    /// The SLO as written.
    pub expression: String,
    /// Its threshold in milliseconds.
    pub threshold_ms: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Point {
    /// The swept variables as people read them: `rooms = 16`.
    pub variables: String,
    /// How many runs (repeats) the point had.
    pub runs: usize,
    /// The steady-state resident set over the repeats, in bytes; `null` when no run measured it.
    pub rss_bytes: Option<Stat>,
    /// A cell per scenario of the phase, in `Phase.scenarios`' order.
    pub scenarios: Vec<ScenarioCell>,
    /// SLOs that failed at some run of the point.
    pub slo_failed: Vec<String>,
    /// SLOs whose figure was not measured at some run (no request sent): never a pass.
    pub slo_unmeasured: Vec<String>,
    /// Why runs failed, when some did.
    pub failures: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScenarioCell {
    /// The scenario's name.
    pub name: String,
    /// `http` or `rooms`.
    pub kind: String,
    /// HTTP: requests; rooms: messages sent.
    pub requests: Option<Stat>,
    /// HTTP: the request latency's p95; rooms: the time until everyone had a message, p95.
    pub p95_ms: Option<Stat>,
    /// The same latency's p50 and p99.
    pub p50_ms: Option<Stat>,
    /// The latency's p99 over the repeats, in milliseconds.
    pub p99_ms: Option<Stat>,
    /// Failed requests (rooms: sockets that failed), summed over the repeats.
    pub errors: u64,
    /// Rooms: frames delivered and expected, summed over the repeats.
    pub delivered: Option<u64>,
    /// Rooms: frames expected, summed over the repeats; `null` for HTTP.
    pub expected: Option<u64>,
}

/// The SLO ceiling as a page tells it: the last good step, the first bad one, what broke there,
/// and a cliff if the latency jumped.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ceiling {
    /// The phase whose verdicts give the ceiling.
    pub phase: String,
    /// Why this phase gives the ceiling (`capacity.ceiling_phase`, or the planner's rule).
    pub chosen_because: String,
    /// The last step before the first failing one (`rooms = 32`), if any passed.
    pub last_good: Option<String>,
    /// The first step where some SLO failed, if any did.
    pub first_bad: Option<String>,
    /// The SLOs that failed there, as written (`edits.seen_by_all.p95 < 2500ms`), with the
    /// value measured.
    pub broke: Vec<String>,
    /// The largest jump of the p95 between two steps, when it is 3× or more.
    pub cliff: Option<String>,
}

/// A least-squares line of one series over one sweep, and how it predicts the largest point.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

/// `rooms = 16, edit_rate = 0.45/s`, or `(one point)` for a phase without axes.
fn variables(at: &std::collections::BTreeMap<String, VarValue>) -> String {
    if at.is_empty() {
        return "(one point)".to_owned();
    }
    at.iter()
        .map(|(k, v)| match v {
            // Written as JSON writes it (`1.0`), as the results file shows it.
            VarValue::Float(x) => format!("{k} = {}", serde_json::Value::from(*x)),
            other => format!("{k} = {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value of the resolved plan as written (`30s`, `16`); a variable left is shown by name.
fn param<T: headroom_spec::ParamValue + std::fmt::Display>(param: &Param<T>) -> String {
    match param {
        Param::Value(value) => value.to_string(),
        Param::Var(name) => format!("{{{name}}}"),
    }
}

impl PageContext {
    /// The context of a page from typed results and the rest of the inputs.
    pub fn build(results: &Results, inputs: Inputs) -> PageContext {
        let environment = &results.environment;
        let machine = Machine {
            cpu_model: environment.cpu_model.clone(),
            logical_cores: environment.logical_cores.map(|c| c as u64),
            memory_bytes: environment.memory_bytes,
            kernel: environment.kernel.clone(),
        };
        let latency_slos = latency_slos(results);
        let mut runs = RunCounts::default();
        let mut loads = Vec::new();
        let mut generator_cores = Vec::new();
        let (mut generator_lag, mut generator_available) = (None::<f64>, None::<u64>);
        let mut phases = Vec::new();
        for phase in &results.phases {
            let mut scenario_names: Vec<String> = Vec::new();
            let mut points = Vec::new();
            for point in &phase.points {
                for run in &point.runs {
                    runs.total += 1;
                    if run.failure.is_some() {
                        runs.failed += 1;
                    }
                    if run.generator.bound {
                        runs.generator_bound += 1;
                    }
                    let generator = &run.generator;
                    generator_cores.push(generator.cpu_cores);
                    // The largest seen.
                    let lag = generator.schedule_lag_p99_ms;
                    generator_lag = Some(generator_lag.map_or(lag, |l| l.max(lag)));
                    let cores = generator.cores_available as u64;
                    generator_available = Some(generator_available.map_or(cores, |c| c.max(cores)));
                    loads.extend([run.load_average.min, run.load_average.max]);
                    for name in run.scenarios.keys() {
                        if !scenario_names.contains(name) {
                            scenario_names.push(name.clone());
                        }
                    }
                }
                points.push(point_row(point, &scenario_names));
            }
            // Every point gets a cell per scenario, in the same order.
            for point in &mut points {
                point.scenarios.sort_by_key(|cell| {
                    scenario_names
                        .iter()
                        .position(|n| *n == cell.name)
                        .unwrap_or(usize::MAX)
                });
            }
            let description = results
                .plan
                .phases
                .iter()
                .find(|p| p.name == phase.name)
                .and_then(|p| p.description.clone());
            let latency_slos = latency_slos
                .iter()
                .filter(|slo| scenario_names.contains(&slo.scenario))
                .cloned()
                .collect();
            phases.push(Phase {
                name: phase.name.clone(),
                description,
                points,
                scenarios: scenario_names,
                latency_slos,
            });
        }
        let sweeps = points::from_results(results);
        let selection = Selection {
            units: inputs.bench.units_variable.as_deref(),
            memory_series: &inputs.bench.memory_series,
            memory_phase: inputs.bench.memory_phase.as_deref(),
            ceiling_phase: inputs.bench.ceiling_phase.as_deref(),
        };
        let fits = fit_rows(&sweeps, selection, &inputs.bench);
        let ceiling = ceiling_sweep(&sweeps, selection).ok().and_then(|chosen| {
            ceiling(results, &phases, chosen.sweep.name.as_str(), chosen.because)
        });
        let has_rooms = phases
            .iter()
            .flat_map(|p| p.points.iter())
            .flat_map(|p| p.scenarios.iter())
            .any(|c| c.kind == "rooms");
        let load_average = Stat::of(&loads).map(|s| Spread {
            min: s.min,
            max: s.max,
        });
        let generator = Stat::of(&generator_cores).map(|cores| Generator {
            cpu_cores: Spread {
                min: cores.min,
                max: cores.max,
            },
            cores_available: generator_available,
            schedule_lag_p99_ms: generator_lag,
        });
        let plots = plots(&inputs.bench, &fits, ceiling.as_ref(), &phases);
        let scenarios = scenario_texts(results);
        let steady_state = steady_state(results);
        let quick = results.quick;
        let mut caveats = caveats(quick, &machine, load_average, &runs, &phases);
        // The spec's limits are recorded with the plan and not applied yet (W005): every figure
        // is the whole machine's. Read from the plan, not from the runs' notes' wording.
        let target = &results.plan.target;
        if target.limits.is_some() && target.command.is_some() {
            caveats.push("The spec's `[target] limits` were not applied: the target ran with the whole machine's CPUs and memory, not the instance size the limits describe. Read every figure as this machine's.".to_owned());
        }
        let not_measured =
            not_measured(&fits, ceiling.as_ref(), inputs.plan.as_ref(), &inputs.bench);
        PageContext {
            bench: inputs.bench,
            headroom_version: results.headroom_version.clone(),
            spec_path: results.spec.path.clone(),
            quick,
            machine,
            load_average,
            generator,
            runs,
            scenarios,
            steady_state,
            phases,
            has_rooms,
            fits,
            ceiling,
            plan: inputs.plan,
            caveats,
            not_measured,
            reproduce: inputs.reproduce,
            plots,
        }
    }
}

/// Each scenario in words, from the resolved plan in the results (its first appearance).
fn scenario_texts(results: &Results) -> Vec<ScenarioText> {
    let mut out: Vec<ScenarioText> = Vec::new();
    let scenarios = results
        .plan
        .phases
        .iter()
        .filter_map(|phase| phase.points.first())
        .flat_map(|point| point.scenarios.iter());
    for scenario in scenarios {
        if out.iter().any(|s| s.name == scenario.name()) {
            continue;
        }
        let (kind, text) = match scenario {
            Scenario::Http(http) => ("http", http_text(http)),
            Scenario::Rooms(rooms) => ("rooms", rooms_text(rooms)),
        };
        out.push(ScenarioText {
            name: scenario.name().to_owned(),
            kind: kind.to_owned(),
            text,
        });
    }
    out
}

/// `5s up, 20s hold, 0s down`.
fn stages_text(stages: &Stages) -> String {
    let mut parts = vec![format!("{} up", param(&stages.ramp_up))];
    if let Some(hold) = &stages.hold {
        parts.push(format!("{} hold", param(hold)));
    }
    parts.push(format!("{} down", param(&stages.ramp_down)));
    parts.join(", ")
}

fn http_text(scenario: &HttpScenario) -> String {
    let executor = scenario.executor.as_str();
    let load = match &scenario.vus {
        None => format!(
            "{} arrivals",
            scenario.rate.as_ref().map(param).unwrap_or_default()
        ),
        Some(vus) => format!(
            "{} virtual users{}",
            param(vus),
            scenario
                .think
                .as_ref()
                .map(|think| format!(" thinking {} between requests", param(think)))
                .unwrap_or_default()
        ),
    };
    let requests = &scenario.requests;
    let names: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.method.as_str(), r.name.as_deref().unwrap_or("")))
        .collect();
    let weights: Vec<String> = requests.iter().map(|r| r.weight.to_string()).collect();
    let mix = if requests.len() > 1 {
        format!(" (weighted {})", weights.join(":"))
    } else {
        String::new()
    };
    format!(
        "HTTP, {load} ({executor}): {}{mix}; {}",
        names.join(", "),
        stages_text(&scenario.stages)
    )
}

fn rooms_text(scenario: &RoomsScenario) -> String {
    let peers = match (&scenario.peers_per_room, &scenario.peers) {
        (Some(per_room), _) => format!("{} peers each", param(per_room)),
        (None, peers) => format!(
            "{} peers in all",
            peers.as_ref().map(param).unwrap_or_default()
        ),
    };
    let traffic = match &scenario.send {
        Some(send) if !scenario.idle => format!(
            "{} per {} (senders: {}), {} messages",
            param(&send.rate),
            send.per.as_str(),
            send.senders.as_str().replace('-', " "),
            param(&send.size)
        ),
        _ => "idle: no messages".to_owned(),
    };
    // `connect_over` is absent when it is the ramp-up (its default).
    let opened = match &scenario.connect_over {
        None => "the sockets opened over the ramp-up".to_owned(),
        Some(over) => format!("the sockets opened over {}", param(over)),
    };
    let rooms = param(&scenario.rooms);
    format!(
        "WebSocket rooms, {rooms} room{} of {peers}, {opened}; {traffic}; {}",
        if rooms == "1" { "" } else { "s" },
        stages_text(&scenario.stages)
    )
}

/// The phases' steady-state rules in words; phases that share a rule share a sentence.
fn steady_state(results: &Results) -> Vec<String> {
    let mut rules: Vec<(String, Vec<String>)> = Vec::new();
    for phase in &results.plan.phases {
        let rule = &phase.measure.steady_state;
        let sentence = format!(
            "after the load ends (rooms: once delivery has drained, sockets still open), wait {}, then read the server's memory and metrics {} times {} apart and keep the {}",
            rule.settle,
            rule.scrapes,
            rule.every,
            rule.reduce.as_str()
        );
        let name = phase.name.clone();
        match rules.iter_mut().find(|(s, _)| *s == sentence) {
            Some((_, phases)) => phases.push(name),
            None => rules.push((sentence, vec![name])),
        }
    }
    let all = rules.len() == 1;
    rules
        .into_iter()
        .map(|(sentence, phases)| {
            if all {
                format!("Every phase: {sentence}.")
            } else {
                let names: Vec<String> = phases.iter().map(|p| format!("`{p}`")).collect();
                format!("{}: {sentence}.", names.join(", "))
            }
        })
        .collect()
}

/// The spec's latency SLOs as lines to draw: the figure the page plots per scenario (HTTP
/// `latency`, rooms `seen_by_all`), thresholds in ms.
fn latency_slos(results: &Results) -> Vec<LatencySlo> {
    results
        .plan
        .slo
        .iter()
        .filter(|slo| slo.unit == FigureUnit::Latency)
        .filter(|slo| slo.figure == "latency" || slo.figure == "seen_by_all")
        .filter_map(|slo| {
            Some(LatencySlo {
                scenario: slo.scenario.clone()?,
                expression: slo.expression.clone(),
                threshold_ms: slo.threshold_value * 1000.0,
            })
        })
        .collect()
}

/// The plots a page has: memory over the memory sweep when there is a fit, and the latency
/// percentiles of each scenario over the ceiling phase (else the first sweep of several steps).
fn plots(bench: &Bench, fits: &[FitRow], ceiling: Option<&Ceiling>, phases: &[Phase]) -> Vec<Plot> {
    let mut plots = Vec::new();
    if let Some(fit) = fits.first() {
        plots.push(Plot {
            kind: "memory".to_owned(),
            file: "memory.svg".to_owned(),
            title: format!(
                "{} per {} over the `{}` phase",
                fit.series, bench.unit, fit.phase
            ),
            phase: Some(fit.phase.clone()),
            scenario: None,
        });
    }
    let phase = match ceiling {
        Some(ceiling) => phases.iter().find(|p| p.name == ceiling.phase),
        None => phases.iter().find(|p| p.points.len() > 1),
    };
    for phase in phase.into_iter().filter(|p| p.points.len() > 1) {
        for scenario in &phase.scenarios {
            let measured = phase
                .points
                .iter()
                .flat_map(|p| p.scenarios.iter())
                .any(|c| &c.name == scenario && c.p95_ms.is_some());
            if !measured {
                continue;
            }
            let slug: String = scenario
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            plots.push(Plot {
                kind: "latency".to_owned(),
                file: format!("latency-{slug}.svg"),
                title: format!("{scenario}: latency by step of the `{}` phase", phase.name),
                phase: Some(phase.name.clone()),
                scenario: Some(scenario.clone()),
            });
        }
    }
    plots
}

fn point_row(point: &PointResults, names: &[String]) -> Point {
    let runs = &point.runs;
    let rss: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.process.steady.as_ref())
        .map(|s| s.rss_bytes as f64)
        .collect();
    let mut scenarios = Vec::new();
    for name in names {
        let results: Vec<&ScenarioResult> = runs
            .iter()
            .filter_map(|r| r.scenarios.get(name))
            .filter(|s| s.skipped.is_none())
            .collect();
        let Some(first) = results.first() else {
            continue;
        };
        let kind = first.kind.clone();
        let rooms = kind == "rooms";
        let requests: Vec<f64> = results.iter().map(|s| s.requests as f64).collect();
        // Rooms: the time until everyone had a message; HTTP: the request latency.
        let quantile = |pick: fn(&Summary) -> f64| -> Option<Stat> {
            let values: Vec<f64> = results
                .iter()
                .filter_map(|s| {
                    let summary = if rooms {
                        &s.rooms.as_ref()?.seen_by_all
                    } else {
                        &s.latency
                    };
                    (summary.count > 0).then(|| pick(summary))
                })
                .collect();
            Stat::of(&values)
        };
        let errors: u64 = results.iter().map(|s| s.errors.total()).sum();
        let sum = |pick: fn(&MessageCounts) -> u64| -> Option<u64> {
            rooms.then(|| {
                results
                    .iter()
                    .filter_map(|s| s.rooms.as_ref())
                    .map(|r| pick(&r.messages))
                    .sum()
            })
        };
        scenarios.push(ScenarioCell {
            name: name.clone(),
            kind,
            requests: Stat::of(&requests),
            p95_ms: quantile(|s| s.p95_ms),
            p50_ms: quantile(|s| s.p50_ms),
            p99_ms: quantile(|s| s.p99_ms),
            errors,
            delivered: sum(|m| m.delivered),
            expected: sum(|m| m.expected),
        });
    }
    let mut slo_failed = Vec::new();
    let mut slo_unmeasured = Vec::new();
    let mut failures = Vec::new();
    for run in runs {
        for verdict in &run.slo {
            let list = match verdict.pass {
                Some(false) => &mut slo_failed,
                None => &mut slo_unmeasured,
                Some(true) => continue,
            };
            if !list.contains(&verdict.name) {
                list.push(verdict.name.clone());
            }
        }
        if let Some(failure) = &run.failure {
            failures.push(failure.kind().replace('_', " "));
        }
    }
    Point {
        variables: variables(&point.at),
        runs: runs.len(),
        rss_bytes: Stat::of(&rss),
        scenarios,
        slo_failed,
        slo_unmeasured,
        failures,
    }
}

/// The regression table: every bytes series of the memory phase (the memory series first),
/// the phase chosen as the planner chooses it.
fn fit_rows(sweeps: &[Sweep], selection: Selection, bench: &Bench) -> Vec<FitRow> {
    let Ok(chosen) = memory_sweep(sweeps, selection) else {
        return Vec::new();
    };
    let sweep = chosen.sweep;
    let mut series: Vec<_> = sweep
        .series
        .iter()
        .filter(|s| s.unit == Unit::Bytes)
        .collect();
    series.sort_by_key(|s| s.name != bench.memory_series);
    let mut rows = Vec::new();
    for s in series {
        let Ok(line) = fit(&s.points) else { continue };
        let largest = line.max_x;
        let at_largest: Vec<f64> = s
            .points
            .iter()
            .filter(|(x, _)| *x == largest)
            .map(|(_, y)| *y)
            .collect();
        rows.push(FitRow {
            phase: sweep.name.clone(),
            chosen_because: chosen.because.to_owned(),
            weak: line.is_weak(),
            series: s.name.clone(),
            unit: "bytes".to_owned(),
            x: sweep.x.clone(),
            n: line.n,
            intercept: line.intercept,
            slope: line.slope,
            r2: line.r2,
            slope_ci95: line.slope_ci95,
            largest_x: largest,
            predicted_at_largest: line.predict(largest),
            prediction_interval_at_largest: line.prediction_interval(largest),
            measured_at_largest: Stat::of(&at_largest).map_or(f64::NAN, |s| s.median),
            warnings: line.warnings(None),
            points: s.points.iter().map(|&(x, y)| [x, y]).collect(),
        });
    }
    rows
}

/// The ceiling phase step by step, as the page tells it (`name` as `ceiling_sweep` chose it).
fn ceiling(results: &Results, phases: &[Phase], name: &str, because: &str) -> Option<Ceiling> {
    // A phase whose runs were judged by SLOs at all: else there is no ceiling to tell.
    let judged = |name: &str| {
        results
            .phases
            .iter()
            .filter(|p| p.name == name)
            .flat_map(|p| p.points.iter())
            .flat_map(|p| p.runs.iter())
            .any(|r| !r.slo.is_empty())
    };
    let phase = phases.iter().find(|p| p.name == name)?;
    if !judged(&phase.name) {
        return None;
    }
    let first_bad = phase.points.iter().position(|p| !p.slo_failed.is_empty());
    let last_good = match first_bad {
        Some(0) => None,
        Some(i) => Some(phase.points[i - 1].variables.clone()),
        None => phase.points.last().map(|p| p.variables.clone()),
    };
    // What broke: the verdicts that failed at the first bad step, with their values.
    let mut broke = Vec::new();
    if let Some(index) = first_bad {
        let point = results
            .phases
            .iter()
            .find(|p| p.name == phase.name)
            .and_then(|p| p.points.get(index));
        for run in point.iter().flat_map(|p| p.runs.iter()) {
            for verdict in &run.slo {
                if verdict.pass != Some(false) {
                    continue;
                }
                let expression = verdict.expression.as_str();
                let measured = match verdict.value {
                    Some(v) => format!("measured {}", figure(v, expression)),
                    None => verdict.note.as_deref().unwrap_or("no value").to_owned(),
                };
                let line = format!("`{expression}`: {measured}");
                if !broke.contains(&line) {
                    broke.push(line);
                }
            }
        }
    }
    // A cliff: the largest step-to-step jump of the worst scenario p95.
    let worst: Vec<Option<f64>> = phase
        .points
        .iter()
        .map(|p| {
            p.scenarios
                .iter()
                .filter_map(|c| c.p95_ms.map(|s| s.median))
                .reduce(f64::max)
        })
        .collect();
    let cliff = worst
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| Some((i, w[0]?, w[1]?)))
        .filter(|(_, a, _)| *a > 0.0)
        .map(|(i, a, b)| (i, a, b, b / a))
        .filter(|(_, _, _, ratio)| *ratio >= 3.0)
        .max_by(|x, y| x.3.total_cmp(&y.3))
        .map(|(i, a, b, ratio)| {
            format!(
                "the p95 jumps {ratio:.1}× from {} ({}) to {} ({})",
                crate::format::duration_ms(a),
                phase.points[i].variables,
                crate::format::duration_ms(b),
                phase.points[i + 1].variables
            )
        });
    Some(Ceiling {
        phase: phase.name.clone(),
        chosen_because: because.to_owned(),
        last_good,
        first_bad: first_bad.map(|i| phase.points[i].variables.clone()),
        broke,
        cliff,
    })
}

/// A verdict's value in the unit its expression is written in: seconds as ms or s, fractions
/// as percentages, bytes as MiB.
fn figure(value: f64, expression: &str) -> String {
    let threshold = expression.rsplit(' ').next().unwrap_or("");
    if threshold.ends_with('%') {
        crate::format::percent(value)
    } else if threshold.ends_with("ms") || threshold.ends_with('s') || threshold.ends_with('m') {
        crate::format::duration_ms(value * 1000.0)
    } else if threshold.ends_with('B') {
        crate::format::mib(value, None)
    } else {
        format!("{value}")
    }
}

fn caveats(
    quick: bool,
    machine: &Machine,
    load: Option<Spread>,
    runs: &RunCounts,
    phases: &[Phase],
) -> Vec<String> {
    let mut out = Vec::new();
    if quick {
        out.push("These are `--quick` results: holds, steps and repeats were scaled down for a first look. Do not plan with them.".to_owned());
    }
    out.push("The server and the load generator ran on the same machine and shared its cores: read every latency as an upper bound and every ceiling as a lower bound.".to_owned());
    if let Some(load) = load
        && let Some(cores) = machine.logical_cores
        && cores > 0
        && load.max > cores as f64
    {
        out.push(format!(
            "The load average reached {:.1} on {} logical cores: something else competed for the machine during some runs.",
            load.max, cores
        ));
    }
    if runs.generator_bound > 0 {
        out.push(format!(
            "{} of {} runs were generator-bound (the generator lagged its schedule or used nearly every core): their latencies are the generator's as much as the server's.",
            runs.generator_bound, runs.total
        ));
    }
    if runs.failed > 0 {
        out.push(format!(
            "{} of {} runs failed; their points show why.",
            runs.failed, runs.total
        ));
    }
    let noisy: Vec<String> = phases
        .iter()
        .flat_map(|phase| {
            phase.points.iter().filter_map(move |point| {
                let rss = point.rss_bytes?;
                (rss.n > 1 && rss.min > 0.0 && rss.max / rss.min > 1.10)
                    .then(|| format!("{} at {}", phase.name, point.variables))
            })
        })
        .collect();
    if !noisy.is_empty() {
        out.push(format!(
            "The resident set varied by more than 10 % between repeats at {}: treat those points as noisy.",
            noisy.join("; ")
        ));
    }
    out
}

fn not_measured(
    fits: &[FitRow],
    ceiling: Option<&Ceiling>,
    plan: Option<&Report>,
    bench: &Bench,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(Ceiling {
        phase,
        last_good: Some(last),
        first_bad: None,
        ..
    }) = ceiling
    {
        out.push(format!(
            "The SLO ceiling is a lower bound: every step of `{phase}` passed, up to {last}. Where the SLOs break was not measured; sweep further to find it."
        ));
    }
    if fits.is_empty() {
        out.push(format!(
            "No sweep carries the memory series `{}`: there is no memory per {} and no memory ceiling.",
            bench.memory_series, bench.unit
        ));
    }
    // The planner already warns about the memory series' fit; the others are the page's own.
    for fit in fits {
        if plan.is_some() && fit.series == bench.memory_series {
            continue;
        }
        for warning in &fit.warnings {
            out.push(format!("{}: {warning}", fit.series));
        }
    }
    if let Some(plan) = plan {
        for warning in &plan.warnings {
            if !out.contains(warning) {
                out.push(warning.clone());
            }
        }
        if plan.slo_ceiling.is_none() {
            out.push(
                "No sweep found an SLO ceiling: the CPU side of the plan is unmeasured.".to_owned(),
            );
        }
    } else {
        out.push("No instances were priced: the spec's [plan] names none.".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(variables: &str, p95: f64, failed: bool) -> Point {
        Point {
            variables: variables.to_owned(),
            runs: 1,
            rss_bytes: None,
            scenarios: vec![ScenarioCell {
                name: "api".into(),
                kind: "http".into(),
                requests: None,
                p95_ms: Stat::of(&[p95]),
                p50_ms: None,
                p99_ms: None,
                errors: 0,
                delivered: None,
                expected: None,
            }],
            slo_failed: if failed {
                vec!["p95".into()]
            } else {
                Vec::new()
            },
            slo_unmeasured: Vec::new(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn the_ceiling_names_the_last_good_step_what_broke_and_the_cliff() {
        let phases = vec![Phase {
            name: "load".into(),
            description: None,
            scenarios: vec!["api".into()],
            latency_slos: Vec::new(),
            points: vec![
                step("rate = 100/s", 10.0, false),
                step("rate = 200/s", 12.0, false),
                step("rate = 400/s", 600.0, true),
            ],
        }];
        let verdict = |expression: &str, value: f64, pass: bool| headroom_results::SloVerdict {
            name: expression.split('.').nth(1).unwrap_or("slo").to_owned(),
            expression: expression.to_owned(),
            value: Some(value),
            threshold: 0.0,
            pass: Some(pass),
            note: None,
        };
        // The relay fixture's runs, re-judged: two steps pass, the third fails its p95.
        let mut results = Results::from_json(include_str!(
            "../../tests/fixtures/render/relay-results.json"
        ))
        .expect("the relay fixture reads");
        let mut phase = results.phases[0].clone();
        phase.name = "load".into();
        phase.points.truncate(3);
        for (index, point) in phase.points.iter_mut().enumerate() {
            point.runs.truncate(1);
            point.runs[0].slo = vec![
                verdict("api.latency.p95 < 200ms", 0.6, index < 2),
                verdict("api.failed < 1%", 0.0, true),
            ];
        }
        results.phases = vec![phase];
        let ceiling = ceiling(&results, &phases, "load", "named").expect("a ceiling");
        assert_eq!(ceiling.last_good.as_deref(), Some("rate = 200/s"));
        assert_eq!(ceiling.first_bad.as_deref(), Some("rate = 400/s"));
        assert_eq!(
            ceiling.broke,
            ["`api.latency.p95 < 200ms`: measured 600.0 ms"]
        );
        assert_eq!(
            ceiling.cliff.as_deref(),
            Some("the p95 jumps 50.0× from 12.0 ms (rate = 200/s) to 600.0 ms (rate = 400/s)")
        );
    }

    #[test]
    fn stats_over_repeats() {
        let stat = Stat::of(&[3.0, 1.0, 2.0, f64::NAN]).expect("values");
        assert_eq!(
            stat,
            Stat {
                min: 1.0,
                median: 2.0,
                max: 3.0,
                n: 3
            }
        );
        assert_eq!(Stat::of(&[4.0, 2.0]).map(|s| s.median), Some(3.0));
        assert!(Stat::of(&[]).is_none());
    }
}
