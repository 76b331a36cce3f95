//! The latency plot: p50, p95 and p99 per step of the ceiling phase (medians over repeats,
//! min–max bands when repeated), each latency SLO as a line, the failing steps shaded.

use super::*;

pub(super) fn latency(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let phase_name = plot
        .phase
        .as_deref()
        .ok_or("a latency plot names its phase")?;
    let scenario = plot
        .scenario
        .as_deref()
        .ok_or("a latency plot names its scenario")?;
    let phase = context
        .phases
        .iter()
        .find(|p| p.name == phase_name)
        .ok_or_else(|| format!("no phase `{phase_name}` in the context"))?;
    let (x_desc, labels) = step_labels(phase.points.iter().map(|p| p.variables.as_str()));
    let request = plot.request.as_deref();
    let steps = latency_steps(phase, scenario, request);
    // Each plot against its own SLOs: a request's, or the scenario's mixed figure's.
    let slos: Vec<_> = phase
        .latency_slos
        .iter()
        .filter(|slo| slo.scenario == scenario && slo.request.as_deref() == request)
        .collect();
    let first_bad = context
        .ceiling
        .as_ref()
        .filter(|c| c.phase == phase.name)
        .and_then(|c| c.first_bad.as_ref())
        .and_then(|bad| phase.points.iter().position(|p| &p.variables == bad));
    // A log scale: latencies span orders of magnitude (a 1 ms median, a 1 s SLO, a cliff).
    let values = || {
        steps
            .iter()
            .flatten()
            .flatten()
            .flat_map(|s| [s.min, s.max])
            .chain(slos.iter().map(|s| s.threshold_ms))
            .filter(|v| *v > 0.0 && v.is_finite())
    };
    let y_max = values().fold(1.0, f64::max) * 1.5;
    let y_min = values().fold(y_max, f64::min).max(0.001) / 1.5;
    let rooms = phase
        .points
        .iter()
        .flat_map(|p| p.scenarios.iter())
        .any(|c| c.name == scenario && c.kind == "rooms");
    let n = steps.len();
    // One segment per step, the point at its centre: steps are often geometric (1, 4, 16…),
    // and a ceiling falls between two of them.
    let x_range = (0..n as i32 - 1).into_segmented();

    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&plot.title, (FONT, 18).into_font().color(&INK))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(x_range, (y_min..y_max).log_scale())?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_desc(x_desc)
        .y_desc(if rooms {
            "seen by everyone (log scale)"
        } else {
            "latency (log scale)"
        })
        .x_labels(n)
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_label_formatter(&|y| format::duration_ms(*y))
        .draw()?;

    // The steps past the ceiling, shaded.
    if let Some(bad) = first_bad {
        chart
            .draw_series([Rectangle::new(
                [
                    (SegmentValue::Exact(bad as i32), y_min),
                    (SegmentValue::Last, y_max),
                ],
                SLO.mix(0.07).filled(),
            )])?
            .label(format!("SLOs fail from {}", phase.points[bad].variables))
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], SLO.mix(0.15).filled()));
    }
    draw_percentiles(&mut chart, &steps, y_min)?;
    draw_slo_lines(&mut chart, &slos)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 13).into_font().color(&INK))
        .background_style(WHITE.mix(0.85))
        .border_style(GRID)
        .draw()?;
    root.present()?;
    Ok(())
}

/// [p50, p95, p99] of `scenario` per step of `phase`, where measured.
fn latency_steps(
    phase: &crate::context::Phase,
    scenario: &str,
    request: Option<&str>,
) -> Vec<[Option<Stat>; 3]> {
    phase
        .points
        .iter()
        .map(|point| match request {
            Some(request) => {
                let name = format!("{scenario}.{request}");
                let cell = point.requests.iter().find(|c| c.name == name);
                [
                    cell.and_then(|c| c.p50_ms),
                    cell.and_then(|c| c.p95_ms),
                    cell.and_then(|c| c.p99_ms),
                ]
            }
            None => {
                let cell = point.scenarios.iter().find(|c| c.name == scenario);
                [
                    cell.and_then(|c| c.p50_ms),
                    cell.and_then(|c| c.p95_ms),
                    cell.and_then(|c| c.p99_ms),
                ]
            }
        })
        .collect()
}

/// A latency chart: steps, one segment each, over a log scale of milliseconds.
type LatencyChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
        LogCoord<f64>,
    >,
>;

/// p50, p95 and p99 per step: the medians joined, the min–max band when repeated. A value
/// under the axis is drawn at its floor, `y_min`.
fn draw_percentiles(
    chart: &mut LatencyChart<'_, '_>,
    steps: &[[Option<Stat>; 3]],
    y_min: f64,
) -> DrawResult {
    let floor = |v: f64| v.max(y_min);
    let at = |i: usize| SegmentValue::CenterOf(i as i32);
    for (which, (name, color)) in ["p50", "p95", "p99"].iter().zip(PERCENTILES).enumerate() {
        let measured: Vec<(usize, Stat)> = steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, s[which]?)))
            .collect();
        if measured.is_empty() {
            continue;
        }
        if measured.iter().any(|(_, s)| s.n > 1) {
            let outline = band_outline(
                measured
                    .iter()
                    .map(|(x, s)| (at(*x), floor(s.min), floor(s.max))),
            );
            chart.draw_series([Polygon::new(outline, color.mix(0.18).filled())])?;
        }
        chart
            .draw_series(LineSeries::new(
                measured.iter().map(|(x, s)| (at(*x), floor(s.median))),
                color.stroke_width(2),
            ))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(
            measured
                .iter()
                .map(|(x, s)| Circle::new((at(*x), floor(s.median)), DOT, color.filled())),
        )?;
    }
    Ok(())
}

/// Each latency SLO, a dashed line across at its threshold.
fn draw_slo_lines(
    chart: &mut LatencyChart<'_, '_>,
    slos: &[&crate::context::LatencySlo],
) -> DrawResult {
    for slo in slos {
        chart
            .draw_series(DashedLineSeries::new(
                [
                    (SegmentValue::Exact(0), slo.threshold_ms),
                    (SegmentValue::Last, slo.threshold_ms),
                ],
                8,
                5,
                SLO.stroke_width(2),
            ))?
            .label(format!("SLO {}", slo.expression))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], SLO.stroke_width(2)));
    }
    Ok(())
}
