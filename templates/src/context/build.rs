//! The page context built from typed results: a phase each with its rows, the fits, the
//! ceilings, the caveats and the plots.

use super::caveats::{self, caveats, not_measured};
use super::ceiling::{self, ceiling};
use super::fits::fit_rows;
use super::levers::levers;
use super::rows::point_row;
use super::tally::RunTally;
use super::words::{latency_slos, scenario_texts, steady_state};
use super::{
    Inputs, LatencySlo, Machine, PageContext, Phase, axis, limits, plotted, rows, series, stack,
};
use headroom_pricing::plan::{Selection, ceiling_sweep};
use headroom_results::Results;
use headroom_spec::target::ProcessMode;

/// A phase each, with a row per point and a cell per scenario, every run counted in `tally`.
fn phases(results: &Results, tally: &mut RunTally) -> Vec<Phase> {
    let latency_slos = latency_slos(results);
    let mut phases = Vec::new();
    for phase in &results.phases {
        let mut scenario_names: Vec<String> = Vec::new();
        let mut points = Vec::new();
        for point in &phase.points {
            for run in &point.runs {
                tally.count(run);
                for name in run.scenarios.keys() {
                    if !scenario_names.contains(name) {
                        scenario_names.push(name.clone());
                    }
                }
            }
            points.push(point_row(point, &scenario_names));
        }
        let services = stack::services_of(phase);
        let series = series::series_of(results, phase);
        for (point, results) in points.iter_mut().zip(&phase.points) {
            point.services = rows::service_cells(results, &services);
            point.series = series::series_cells(results, &series);
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
            .matrix
            .phases
            .iter()
            .find(|p| p.name == phase.name)
            .and_then(|p| p.description.clone());
        let latency_slos: Vec<LatencySlo> = latency_slos
            .iter()
            .filter(|slo| scenario_names.contains(&slo.scenario))
            .cloned()
            .collect();
        for point in &mut points {
            for cell in &mut point.requests {
                cell.slos = judging_apart(&latency_slos, &cell.name);
            }
        }
        let leads_with_requests = latency_slos.iter().any(|slo| slo.request.is_some());
        let axis = axis::of(phase).map(|(axis, values)| {
            for (point, x) in points.iter_mut().zip(values) {
                point.x = Some(x);
            }
            axis
        });
        phases.push(Phase {
            name: phase.name.clone(),
            description,
            points,
            axis,
            series,
            scenarios: scenario_names,
            latency_slos,
            leads_with_requests,
            limits: limits::sentence(phase),
            service_limits: services
                .iter()
                .filter_map(|name| limits::service_sentence(phase, name))
                .collect(),
            services,
            kept_target: phase.target.as_ref().map(stack::kept_sentence),
        });
        if let Some(target) = &phase.target {
            tally.runs.not_run += u64::from(target.runs_not_run);
        }
    }
    phases
}

/// The SLOs that judge the request `cell` (`browse.list`) apart, as written without its
/// name: `p95 < 300ms`.
fn judging_apart(latency_slos: &[LatencySlo], cell: &str) -> Vec<String> {
    latency_slos
        .iter()
        .filter(|slo| {
            slo.request
                .as_ref()
                .is_some_and(|request| cell == format!("{}.{request}", slo.scenario))
        })
        .map(|slo| {
            let prefix = format!("{cell}.");
            let written = slo.expression.strip_prefix(&prefix);
            written.unwrap_or(&slo.expression).replace("latency.", "")
        })
        .collect()
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
        let mut tally = RunTally::default();
        let phases = phases(results, &mut tally);
        let sweeps = headroom_pricing::points::from_results(results);
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
        let phase_ceilings = ceiling::by_phase(results, &phases);
        let has_rooms = runs_rooms(&phases);
        let (mut runs, load_average, generator) = tally.finish();
        runs.kept_per_phase = results.matrix.target.process == ProcessMode::PerPhase
            && (results.matrix.target.command.is_some()
                || !results.matrix.target.services.is_empty());
        runs.external = results.matrix.target.url.is_some();
        let plots = plotted::plots(
            &inputs.bench,
            &fits,
            ceiling.as_ref(),
            &phase_ceilings,
            &phases,
            inputs.plan.as_ref(),
        );
        let scenarios = scenario_texts(results);
        let steady_state = steady_state(results);
        let stack = stack::sentences(results);
        let quick = results.quick;
        let (mut caveats, headline) = caveats(quick, &machine, load_average, &runs, &phases);
        if let Some(caveat) = limits::ignored_caveat(results) {
            caveats.push(caveat);
        }
        if let Some(caveat) = caveats::priced_from_other_tables(results, inputs.plan.as_ref()) {
            caveats.push(caveat);
        }
        let mut not_measured =
            not_measured(&fits, ceiling.as_ref(), inputs.plan.as_ref(), &inputs.bench);
        if let Some(unsampled) = caveats::process_unsampled(results) {
            not_measured.insert(0, unsampled);
        }
        PageContext {
            format: super::PAGE_CONTEXT_FORMAT,
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
            stack,
            levers: levers(results),
            phases,
            has_rooms,
            fits,
            ceiling,
            phase_ceilings,
            plan: inputs.plan,
            // Quick or competed, else a ceiling not measured, else the first caveat.
            headline_caveat: headline
                .or_else(|| not_measured.first().cloned())
                .or_else(|| caveats.first().cloned()),
            caveats,
            not_measured,
            reproduce: inputs.reproduce,
            compared: inputs.compared,
            plots,
        }
    }
}

/// Whether any point of `phases` runs a rooms scenario.
fn runs_rooms(phases: &[super::Phase]) -> bool {
    phases
        .iter()
        .flat_map(|p| &p.points)
        .flat_map(|p| &p.scenarios)
        .any(|c| c.kind == "rooms")
}
