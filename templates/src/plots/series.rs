//! A `[measure]` series over the variable its phase swept: every run a faint dot, the median
//! of the runs at a value joined, their min–max shaded; to scale, log where the values span
//! decades.

use super::legend::{self, Entry, Swatch};
use super::scale::{Scale, Ticked, tick_label};
use plotters::prelude::*;

use super::phase::phase_of;
use super::style::{
    CHART_HEIGHT, DOT, DrawResult, FONT, INK, MEASURED, MIB, RUN_DOT, TITLE, WIDTH, X_LABEL_AREA,
    Y_LABEL_AREA, band_outline, house_style,
};
use crate::context::{PageContext, Plot, Stat};

pub(super) fn series(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let name = plot
        .series
        .as_deref()
        .ok_or("a series plot names its series")?;
    let phase = phase_of(context, plot)?;
    let phase_name = phase.name.as_str();
    let axis = phase
        .axis
        .as_ref()
        .ok_or_else(|| format!("phase `{phase_name}` swept no number"))?;
    let measured = phase
        .series
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("phase `{phase_name}` read no series `{name}`"))?;
    let (divisor, unit) = match measured.unit.as_str() {
        "bytes" => (MIB, "MiB"),
        "seconds" => (0.001, "ms"),
        _ => (1.0, ""),
    };
    let stats = runs_by_value(phase, name, divisor);
    if stats.is_empty() {
        return Err(format!("no run of `{phase_name}` read `{name}`").into());
    }
    let (xs, ys) = scales(&stats);
    let repeated = stats.iter().any(|(_, s)| s.n > 1);

    let entries = entries(name, &measured.source, repeated);
    let legend_height = legend::height(&entries, WIDTH);
    let root =
        SVGBackend::with_string(svg, (WIDTH, CHART_HEIGHT + legend_height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, legend_area) = root.split_vertically(CHART_HEIGHT);
    let (x_ticks, y_ticks) = (xs.ticks(), ys.ticks());
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&plot.title, (FONT, TITLE).into_font().color(&INK))
        .margin(14)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            Ticked::new(xs.range(), &x_ticks),
            Ticked::new(ys.range(), &y_ticks),
        )?;
    house_style(&mut chart.configure_mesh())
        .x_desc(axis.title(xs.log))
        .y_desc(if unit.is_empty() {
            name.to_owned()
        } else {
            format!("{name} ({unit})")
        })
        .x_label_formatter(&|x| tick_label(&x_ticks, *x))
        .y_label_formatter(&|y| tick_label(&y_ticks, *y))
        .draw()?;
    draw_runs(&mut chart, &stats, xs, ys)?;
    legend::draw(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// The scales: the variable's values across; the series up from 0 (a gauge that barely
/// moves reads as barely moving, not as a swing) to the highest run.
fn scales(stats: &[(f64, Stat)]) -> (Scale, Scale) {
    let lowest = stats
        .iter()
        .map(|(_, s)| s.min)
        .fold(f64::INFINITY, f64::min);
    let highest = stats
        .iter()
        .map(|(_, s)| s.max)
        .fold(f64::NEG_INFINITY, f64::max);
    let xs = Scale::over(stats[0].0, stats[stats.len() - 1].0);
    (xs, Scale::over(lowest.min(0.0), highest))
}

/// The legend: the medians' line, and where a value ran more than once its runs and their
/// min–max.
fn entries(name: &str, source: &str, repeated: bool) -> Vec<Entry> {
    let mut entries = vec![Entry::new(
        Swatch::Line(MEASURED),
        format!("{name}, median of runs ({source})"),
    )];
    if repeated {
        entries.push(Entry::new(
            Swatch::Dot(INK),
            "each run, where a value ran more than once",
        ));
        entries.push(Entry::new(
            Swatch::Area(MEASURED, 0.25),
            "min–max over those runs",
        ));
    }
    entries
}

/// A series chart: the variable across, the series up, each in its scale's coordinate.
type SeriesChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// The medians joined and dotted; where a value ran more than once, its runs as faint dots and
/// their min–max shaded.
fn draw_runs(
    chart: &mut SeriesChart<'_, '_>,
    stats: &[(f64, Stat)],
    xs: Scale,
    ys: Scale,
) -> DrawResult {
    let repeated = stats.iter().any(|(_, s)| s.n > 1);
    let point = |x: f64, y: f64| (xs.at(x), ys.at(y));
    if repeated {
        let outline = band_outline(stats.iter().map(|(x, s)| (*x, s.min, s.max)));
        let outline: Vec<_> = outline.into_iter().map(|(x, y)| point(x, y)).collect();
        chart.draw_series([Polygon::new(outline, MEASURED.mix(0.25).filled())])?;
        chart.draw_series(
            stats
                .iter()
                .filter(|(_, s)| s.n > 1)
                .flat_map(|(x, s)| s.values.iter().map(move |v| (*x, *v)))
                .map(|(x, v)| Circle::new(point(x, v), RUN_DOT, MEASURED.mix(0.5).filled())),
        )?;
    }
    chart.draw_series(LineSeries::new(
        stats.iter().map(|(x, s)| point(*x, s.median)),
        MEASURED.stroke_width(2),
    ))?;
    chart.draw_series(
        stats
            .iter()
            .map(|(x, s)| Circle::new(point(*x, s.median), DOT, MEASURED.filled())),
    )?;
    Ok(())
}

/// The series' runs at each value of the phase's variable, lowest first, over `divisor` (MiB,
/// ms).
fn runs_by_value(phase: &crate::context::Phase, name: &str, divisor: f64) -> Vec<(f64, Stat)> {
    let mut at: Vec<(f64, Vec<f64>)> = Vec::new();
    for point in &phase.points {
        let (Some(x), Some(value)) = (
            point.x,
            point
                .series
                .iter()
                .find(|c| c.name == name)
                .and_then(|c| c.value.as_ref()),
        ) else {
            continue;
        };
        let runs = value.values.iter().map(|v| v / divisor);
        match at.iter_mut().find(|(seen, _)| *seen == x) {
            Some((_, values)) => values.extend(runs),
            None => at.push((x, runs.collect())),
        }
    }
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.iter()
        .filter_map(|(x, values)| Some((*x, Stat::of(values)?)))
        .collect()
}
