//! The latency plot: p50, p95 and p99 over the load of a phase, ordered by load and to scale
//! (log when the loads span decades): every run a faint dot, the median of the runs at a load
//! joined, their min–max shaded; each latency SLO a dashed line; the loads where an SLO or a run
//! failed shaded, and only those. A search probes some loads twice: they are one load here.

use super::legend::{self, Entry, Swatch};
use super::scale::{Scale, Ticked, tick_label};
use plotters::prelude::*;

use super::phase::{phase_of, step_labels};
use super::style::{
    CHART_HEIGHT, DOT, DrawResult, FONT, INK, PERCENTILES, RUN_DOT, SLO, TITLE, WIDTH,
    X_LABEL_AREA, Y_LABEL_AREA, band_outline, house_style,
};
use crate::context::Phase;
use crate::context::{PageContext, Plot, Stat};
use crate::format;

pub(super) fn latency(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let scenario = plot
        .scenario
        .as_deref()
        .ok_or("a latency plot names its scenario")?;
    let phase = phase_of(context, plot)?;
    let request = plot.request.as_deref();
    let across = Across::of(phase);
    let groups = groups(phase, scenario, request, &across);
    // Each plot against its own SLOs: a request's, or the scenario's mixed figure's.
    let slos: Vec<_> = phase
        .latency_slos
        .iter()
        .filter(|slo| slo.scenario == scenario && slo.request.as_deref() == request)
        .collect();
    // Latencies often span orders of magnitude (a 1 ms median, a 1 s SLO, a cliff): then a log
    // scale, with ticks at 1, 2 and 5 of each.
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.runs.iter().flatten().copied())
        .chain(slos.iter().map(|s| s.threshold_ms))
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let ys = match values.iter().copied().reduce(f64::max) {
        Some(high) => Scale::over(values.iter().copied().fold(high, f64::min), high),
        None => Scale::over(1.0, 10.0),
    };
    let y_ticks: Vec<(f64, String)> = ys
        .ticks()
        .into_iter()
        .map(|(at, _)| match ys.value_of(at) {
            0.0 => (at, "0".to_owned()),
            ms => (at, format::duration_ms(ms)),
        })
        .collect();
    let rooms = phase
        .points
        .iter()
        .flat_map(|p| p.scenarios.iter())
        .any(|c| c.name == scenario && c.kind == "rooms");

    let entries = entries(&groups, &slos);
    let legend_height = legend::height(&entries, WIDTH);
    let root =
        SVGBackend::with_string(svg, (WIDTH, CHART_HEIGHT + legend_height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, legend_area) = root.split_vertically(CHART_HEIGHT);
    let ticks = across.ticks();
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&plot.title, (FONT, TITLE).into_font().color(&INK))
        .margin(14)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            Ticked::new(across.range(), &ticks),
            Ticked::new(ys.range(), &y_ticks),
        )?;
    house_style(&mut chart.configure_mesh())
        .x_desc(across.title())
        .y_desc(format!(
            "{}{}",
            if rooms { "seen by everyone" } else { "latency" },
            if ys.log { " (log scale)" } else { "" }
        ))
        .x_label_formatter(&|x| tick_label(&ticks, *x))
        .y_label_formatter(&|y| tick_label(&y_ticks, *y))
        .draw()?;

    let range = across.range();
    draw_failed(&mut chart, &groups, range.clone(), ys.range())?;
    draw_percentiles(&mut chart, &groups, &ys)?;
    for slo in &slos {
        let y = ys.at(slo.threshold_ms);
        chart.draw_series(DashedLineSeries::new(
            [(range.start, y), (range.end, y)],
            8,
            5,
            SLO.stroke_width(2),
        ))?;
    }
    legend::draw(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// The legend: the percentiles, the runs where a load ran more than once, the SLOs and the
/// loads that failed, named.
fn entries(groups: &[Group], slos: &[&crate::context::LatencySlo]) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (name, color) in ["p50", "p95", "p99"].into_iter().zip(PERCENTILES) {
        entries.push(Entry::new(
            Swatch::Line(color),
            format!("{name}, median of runs"),
        ));
    }
    if groups.iter().any(|g| g.runs.iter().any(|r| r.len() > 1)) {
        entries.push(Entry::new(
            Swatch::Dot(INK),
            "each run, where a load ran more than once",
        ));
        entries.push(Entry::new(
            Swatch::Area(INK, 0.18),
            "min–max over those runs",
        ));
    }
    for slo in slos {
        entries.push(Entry::new(
            Swatch::Dashed(SLO),
            format!("SLO {}", slo.expression),
        ));
    }
    let failed: Vec<&Group> = groups.iter().filter(|g| g.failed).collect();
    if !failed.is_empty() {
        let loads: Vec<&str> = failed.iter().map(|g| g.label.as_str()).collect();
        entries.push(Entry::new(
            Swatch::Area(SLO, 0.15),
            format!("an SLO or a run failed: {}", loads.join(", ")),
        ));
    }
    entries
}

/// The loads that failed, each shaded from halfway to its neighbours (to the axis' end past the
/// last): a load that passed is never shaded.
fn draw_failed(
    chart: &mut LatencyChart<'_, '_>,
    groups: &[Group],
    range: std::ops::Range<f64>,
    height: std::ops::Range<f64>,
) -> DrawResult {
    for (index, group) in groups.iter().enumerate() {
        if !group.failed {
            continue;
        }
        let from = index
            .checked_sub(1)
            .map_or(range.start, |before| (groups[before].at + group.at) / 2.0);
        let to = groups
            .get(index + 1)
            .map_or(range.end, |after| (group.at + after.at) / 2.0);
        chart.draw_series([Rectangle::new(
            [(from, height.start), (to, height.end)],
            SLO.mix(0.09).filled(),
        )])?;
    }
    Ok(())
}

/// Where the points lie across: at their values on a number line, or a step each in the order
/// they ran when the phase sweeps several variables or words.
enum Across {
    Numbers { scale: Scale, title: String },
    Steps { labels: Vec<String>, title: String },
}

impl Across {
    fn of(phase: &Phase) -> Across {
        let numbers: Option<Vec<f64>> = phase.points.iter().map(|p| p.x).collect();
        if let (Some(axis), Some(values)) = (&phase.axis, numbers)
            && !values.is_empty()
        {
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let scale = Scale::over(low, high);
            let title = axis.title(scale.log);
            return Across::Numbers { scale, title };
        }
        let mut steps: Vec<&str> = Vec::new();
        for point in &phase.points {
            if !steps.contains(&point.variables.as_str()) {
                steps.push(&point.variables);
            }
        }
        let (title, labels) = step_labels(steps.into_iter());
        Across::Steps { labels, title }
    }

    fn title(&self) -> &str {
        match self {
            Across::Numbers { title, .. } | Across::Steps { title, .. } => title,
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        match self {
            Across::Numbers { scale, .. } => scale.range(),
            Across::Steps { labels, .. } => -0.5..labels.len() as f64 - 0.5,
        }
    }

    fn ticks(&self) -> Vec<(f64, String)> {
        match self {
            Across::Numbers { scale, .. } => scale.ticks(),
            Across::Steps { labels, .. } => labels
                .iter()
                .enumerate()
                .map(|(i, label)| (i as f64, label.clone()))
                .collect(),
        }
    }
}

/// The runs at one load (a step, when the points are not on a number line): where it lies,
/// every run's p50, p95 and p99, and whether an SLO or a run failed there.
struct Group {
    at: f64,
    label: String,
    runs: [Vec<f64>; 3],
    failed: bool,
}

/// The phase's points grouped by load, lowest first (by step, in the order they ran), each
/// with the runs of `scenario` (or its `request`).
fn groups(phase: &Phase, scenario: &str, request: Option<&str>, across: &Across) -> Vec<Group> {
    let mut groups: Vec<(Group, String)> = Vec::new();
    for point in &phase.points {
        let key = point.variables.clone();
        let index = match groups.iter().position(|(_, k)| *k == key) {
            Some(index) => index,
            None => {
                let at = match across {
                    Across::Numbers { scale, .. } => scale.at(point.x.unwrap_or(f64::NAN)),
                    Across::Steps { .. } => groups.len() as f64,
                };
                let label = match (&phase.axis, point.x) {
                    (Some(axis), Some(x)) => format!("{}{}", format::number(x), axis.unit),
                    _ => point.variables.clone(),
                };
                let runs = [Vec::new(), Vec::new(), Vec::new()];
                groups.push((
                    Group {
                        at,
                        label,
                        runs,
                        failed: false,
                    },
                    key,
                ));
                groups.len() - 1
            }
        };
        let group = &mut groups[index].0;
        for (runs, stat) in group
            .runs
            .iter_mut()
            .zip(percentiles(point, scenario, request))
        {
            runs.extend(stat.iter().flat_map(|s| s.values.iter().copied()));
        }
        group.failed |= !point.slo_failed.is_empty() || !point.failures.is_empty();
    }
    let mut groups: Vec<Group> = groups.into_iter().map(|(g, _)| g).collect();
    groups.sort_by(|a, b| a.at.total_cmp(&b.at));
    groups
}

/// [p50, p95, p99] of `scenario` (or its `request`) at a point, where measured.
fn percentiles(
    point: &crate::context::Point,
    scenario: &str,
    request: Option<&str>,
) -> [Option<Stat>; 3] {
    match request {
        Some(request) => {
            let name = format!("{scenario}.{request}");
            let cell = point.requests.iter().find(|c| c.name == name);
            [
                cell.and_then(|c| c.p50_ms.clone()),
                cell.and_then(|c| c.p95_ms.clone()),
                cell.and_then(|c| c.p99_ms.clone()),
            ]
        }
        None => {
            let cell = point.scenarios.iter().find(|c| c.name == scenario);
            [
                cell.and_then(|c| c.p50_ms.clone()),
                cell.and_then(|c| c.p95_ms.clone()),
                cell.and_then(|c| c.p99_ms.clone()),
            ]
        }
    }
}

/// A latency chart: loads (or steps) across, milliseconds up, each in its scale's coordinate.
type LatencyChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// p50, p95 and p99 per load: the medians joined, the min–max band and each run's dot where a
/// load ran more than once. A value under a log axis is drawn at its foot.
fn draw_percentiles(chart: &mut LatencyChart<'_, '_>, groups: &[Group], ys: &Scale) -> DrawResult {
    let floor = |v: f64| ys.at(v);
    for (which, color) in PERCENTILES.into_iter().enumerate() {
        let measured: Vec<(f64, Stat)> = groups
            .iter()
            .filter_map(|g| Some((g.at, Stat::of(&g.runs[which])?)))
            .collect();
        if measured.is_empty() {
            continue;
        }
        if measured.iter().any(|(_, s)| s.n > 1) {
            let outline = band_outline(
                measured
                    .iter()
                    .map(|(x, s)| (*x, floor(s.min), floor(s.max))),
            );
            chart.draw_series([Polygon::new(outline, color.mix(0.18).filled())])?;
            chart.draw_series(
                measured
                    .iter()
                    .filter(|(_, s)| s.n > 1)
                    .flat_map(|(x, s)| s.values.iter().map(move |v| (*x, *v)))
                    .map(|(x, v)| Circle::new((x, floor(v)), RUN_DOT, color.mix(0.5).filled())),
            )?;
        }
        chart.draw_series(LineSeries::new(
            measured.iter().map(|(x, s)| (*x, floor(s.median))),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            measured
                .iter()
                .map(|(x, s)| Circle::new((*x, floor(s.median)), DOT, color.filled())),
        )?;
    }
    Ok(())
}
