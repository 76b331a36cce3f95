//! The page's plots, drawn as SVG with plotters from the [`PageContext`] alone, so a page and
//! its plots always tell the same numbers (and `--dump-context` holds everything they show).
//!
//! - memory: the memory series per run over the memory sweep, the min–max band when repeated,
//!   the fitted line (solid over the measured range, dashed where it extrapolates) and each
//!   priced instance's usable memory as a horizontal line, reached at its memory ceiling.
//! - latency: p50, p95 and p99 per step of the ceiling phase (medians over repeats, min–max
//!   bands when repeated), each latency SLO as a horizontal line and the first failing step.
//! - search: a searched phase's probes in the order they ran, at their loads, marked by
//!   verdict, the final bracket shaded.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::PageError;
use crate::context::{PageContext, Plot, Stat};
use crate::format;

mod latency;
mod search;

use latency::latency;
use search::search;

const SIZE: (u32, u32) = (760, 440);
const MIB: f64 = 1_048_576.0;
const FONT: &str = "sans-serif";
/// Measured points are drawn 4 px wide, their legend's dot 3 px: tests tell them apart.
const DOT: u32 = 4;
const LEGEND_DOT: u32 = 3;

const INK: RGBColor = RGBColor(40, 40, 40);
const GRID: RGBColor = RGBColor(225, 225, 225);
const MEASURED: RGBColor = RGBColor(31, 119, 180);
const FITTED: RGBColor = RGBColor(255, 127, 14);
const SLO: RGBColor = RGBColor(214, 39, 40);
/// p50, p95, p99.
const PERCENTILES: [RGBColor; 3] = [
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];
/// One per priced instance, in turn.
const INSTANCES: [RGBColor; 4] = [
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
];

/// A drawn plot: its file name (relative to the page) and its SVG text.
pub struct Drawn {
    /// Its file name beside the page (`memory.svg`).
    pub file: String,
    /// The SVG text.
    pub svg: String,
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws every plot the context lists.
pub fn draw(context: &PageContext) -> Result<Vec<Drawn>, PageError> {
    context
        .plots
        .iter()
        .map(|plot| {
            let mut svg = String::new();
            let drawn = match plot.kind.as_str() {
                "memory" => memory(context, plot, &mut svg),
                "latency" => latency(context, plot, &mut svg),
                "search" => search(context, plot, &mut svg),
                other => Err(format!("no plot of kind `{other}`").into()),
            };
            drawn.map_err(|e| PageError::Plot {
                file: plot.file.clone(),
                detail: e.to_string(),
            })?;
            Ok(Drawn {
                file: plot.file.clone(),
                svg,
            })
        })
        .collect()
}

/// A usable-memory line: an instance, its usable memory and where the fit reaches it.
struct Usable {
    name: String,
    mib: f64,
    units: f64,
}

fn memory(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let fit = context
        .fits
        .first()
        .ok_or("the context has no memory fit")?;
    // The planner's fit of the same series when there is a plan: the lines meet its ceilings.
    let (intercept, slope) = context
        .plan
        .as_ref()
        .and_then(|plan| plan.fits.iter().find(|f| f.series == fit.series))
        .map_or((fit.intercept, fit.slope), |f| (f.intercept, f.slope));
    // Instances of the same memory share one line, named together.
    let mut usable: Vec<Usable> = Vec::new();
    for instance in context.plan.iter().flat_map(|plan| plan.instances.iter()) {
        let Some(units) = instance
            .ceilings
            .get(&headroom_pricing::plan::Resource::Memory)
            .and_then(|c| c.units)
        else {
            continue;
        };
        if !units.is_finite() || units < 0.0 {
            continue;
        }
        match usable.iter_mut().find(|u| (u.units - units).abs() < 0.5) {
            Some(same) => same.name = format!("{}, {}", same.name, instance.name),
            None => usable.push(Usable {
                name: instance.name.clone(),
                mib: (intercept + slope * units) / MIB,
                units,
            }),
        }
    }
    let line = Line {
        intercept,
        slope,
        measured_x: fit.largest_x,
        unit: &context.bench.unit,
        x: &fit.x,
        series: &fit.series,
    };
    let bands = bands(&fit.points);
    let furthest = usable.iter().map(|u| u.units).fold(0.0, f64::max);
    // Ceilings far past the measured range would squash the measurements into a corner: then
    // one panel shows what was measured and a second how far the line is carried.
    let split = furthest > 2.0 * line.measured_x;
    let size = if split { (1060, 440) } else { SIZE };
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&plot.title, (FONT, 18).into_font().color(&INK))?;
    if split {
        let (measured, carried) = root.split_horizontally(size.0 / 2);
        memory_panel(
            &measured,
            &line,
            &bands,
            &[],
            "measured",
            line.measured_x * 1.05,
        )?;
        memory_panel(
            &carried,
            &line,
            &bands,
            &usable,
            "carried to each instance's usable memory",
            furthest * 1.05,
        )?;
    } else {
        let x_max = furthest.max(line.measured_x) * 1.05;
        memory_panel(&root, &line, &bands, &usable, "", x_max)?;
    }
    root.present()?;
    Ok(())
}

/// The fitted line and what it is drawn against.
struct Line<'a> {
    intercept: f64,
    slope: f64,
    measured_x: f64,
    unit: &'a str,
    x: &'a str,
    series: &'a str,
}

impl Line<'_> {
    fn at(&self, x: f64) -> (f64, f64) {
        (x, (self.intercept + self.slope * x) / MIB)
    }
}

/// One memory chart over `0..x_max`: measurements, band, the line (dashed past the measured
/// range) and the usable-memory lines given.
fn memory_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    line: &Line<'_>,
    bands: &[Band],
    usable: &[Usable],
    caption: &str,
    x_max: f64,
) -> DrawResult {
    let x_max = x_max.max(1.0);
    let y_max = usable
        .iter()
        .map(|u| u.mib)
        .chain(bands.iter().map(|b| b.stat.max))
        .chain([line.at(x_max).1])
        .fold(1.0, f64::max)
        * 1.08;
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72);
    if !caption.is_empty() {
        builder.caption(caption, (FONT, 14).into_font().color(&INK));
    }
    let mut chart = builder.build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_desc(line.x)
        .y_desc(format!("{} (MiB)", line.series))
        .x_label_formatter(&|x| axis_number(*x, x_max))
        .y_label_formatter(&|y| axis_number(*y, y_max))
        .draw()?;
    draw_measured(&mut chart, line, bands, x_max, y_max)?;
    draw_usable(&mut chart, line, usable, x_max)?;
    // Memory grows to the right: the lower right is the empty corner.
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 12).into_font().color(&INK))
        .background_style(WHITE.mix(0.85))
        .border_style(GRID)
        .draw()?;
    Ok(())
}

/// A memory chart: MiB over units.
type MemoryChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The measured range (shaded when the line goes past it), the min–max band, the medians and
/// the fit, dashed where it extrapolates.
fn draw_measured(
    chart: &mut MemoryChart<'_, '_>,
    line: &Line<'_>,
    bands: &[Band],
    x_max: f64,
    y_max: f64,
) -> DrawResult {
    let extrapolates = x_max > line.measured_x * 1.06;
    // The measured range, shaded, so what the line extrapolates is plain to see.
    if extrapolates {
        chart
            .draw_series([Rectangle::new(
                [(0.0, 0.0), (line.measured_x, y_max)],
                MEASURED.mix(0.08).filled(),
            )])?
            .label(format!(
                "measured range: up to {} {}",
                format::count(line.measured_x),
                line.x
            ))
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], MEASURED.mix(0.15).filled())
            });
    }
    if bands.iter().any(|b| b.stat.n > 1) {
        let outline = band_outline(bands.iter().map(|b| (b.x, b.stat.min, b.stat.max)));
        chart
            .draw_series([Polygon::new(outline, MEASURED.mix(0.25).filled())])?
            .label("min–max over repeats")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], MEASURED.mix(0.25).filled())
            });
    }
    chart
        .draw_series(
            bands
                .iter()
                .map(|b| Circle::new((b.x, b.stat.median), DOT, MEASURED.filled())),
        )?
        .label(format!("{} measured (median of runs)", line.series))
        .legend(|(x, y)| Circle::new((x + 10, y), LEGEND_DOT, MEASURED.filled()));
    chart
        .draw_series(LineSeries::new(
            [line.at(0.0), line.at(line.measured_x.min(x_max))],
            FITTED.stroke_width(2),
        ))?
        .label(format!(
            "fit: {} + {} per {}",
            format::mib(line.intercept, None),
            format::size(line.slope),
            line.unit
        ))
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], FITTED.stroke_width(2)));
    if extrapolates {
        chart
            .draw_series(DashedLineSeries::new(
                [line.at(line.measured_x), line.at(x_max)],
                6,
                4,
                FITTED.stroke_width(2),
            ))?
            .label("fit, extrapolated")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 8, y)], FITTED.stroke_width(2)));
    }
    Ok(())
}

/// Each instance's usable memory, a line across, crossed where the fit reaches it.
fn draw_usable(
    chart: &mut MemoryChart<'_, '_>,
    line: &Line<'_>,
    usable: &[Usable],
    x_max: f64,
) -> DrawResult {
    for (index, u) in usable.iter().enumerate() {
        let color = INSTANCES[index % INSTANCES.len()];
        chart
            .draw_series(LineSeries::new(
                [(0.0, u.mib), (x_max, u.mib)],
                color.stroke_width(2),
            ))?
            .label(format!(
                "{}: {} usable, reached at {} {}",
                u.name,
                format::mib(u.mib * MIB, Some(0)),
                format::count(u.units),
                format::plural(line.unit)
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series([Cross::new((u.units, u.mib), 6, color.stroke_width(2))])?;
    }
    Ok(())
}

/// The measurements of one x: min, median and max over its runs.
struct Band {
    x: f64,
    stat: Stat,
}

/// Every run's `[x, bytes]` grouped by x, in MiB.
fn bands(points: &[[f64; 2]]) -> Vec<Band> {
    let mut xs: Vec<f64> = points.iter().map(|p| p[0]).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.into_iter()
        .filter_map(|x| {
            let ys: Vec<f64> = points
                .iter()
                .filter(|p| p[0] == x)
                .map(|p| p[1] / MIB)
                .collect();
            Some(Band {
                x,
                stat: Stat::of(&ys)?,
            })
        })
        .collect()
}

/// A band's polygon: along the maxima, back along the minima.
fn band_outline<X: Clone>(points: impl Iterator<Item = (X, f64, f64)>) -> Vec<(X, f64)> {
    let points: Vec<_> = points.collect();
    let upper = points.iter().map(|(x, _, max)| (x.clone(), *max));
    let lower = points.iter().rev().map(|(x, min, _)| (x.clone(), *min));
    upper.chain(lower).collect()
}

/// The steps' tick labels and the axis title: `16` under `rooms` when every step sets one
/// variable of the same name, else the whole `a = 1, b = 2`.
fn step_labels<'a>(steps: impl Iterator<Item = &'a str> + Clone) -> (String, Vec<String>) {
    let single: Option<Vec<(&str, &str)>> = steps
        .clone()
        .map(|s| (!s.contains(", ")).then(|| s.split_once(" = "))?)
        .collect();
    match single {
        Some(pairs) if pairs.windows(2).all(|w| w[0].0 == w[1].0) && !pairs.is_empty() => (
            format!("{} (a step each, not to scale)", pairs[0].0),
            pairs.iter().map(|(_, v)| v.to_string()).collect(),
        ),
        _ => ("step".to_owned(), steps.map(str::to_owned).collect()),
    }
}

/// An axis tick: thousands grouped, one decimal on small axes.
fn axis_number(value: f64, axis_max: f64) -> String {
    if axis_max < 10.0 {
        format!("{value:.1}")
    } else {
        format::count(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_labelled_by_value_under_one_variable() {
        let (title, labels) = step_labels(["rooms = 1", "rooms = 16"].into_iter());
        assert_eq!(title, "rooms (a step each, not to scale)");
        assert_eq!(labels, ["1", "16"]);
        let (title, labels) = step_labels(["a = 1, b = 2", "a = 2, b = 2"].into_iter());
        assert_eq!(title, "step");
        assert_eq!(labels, ["a = 1, b = 2", "a = 2, b = 2"]);
    }

    #[test]
    fn a_band_goes_along_the_maxima_and_back_along_the_minima() {
        let outline = band_outline([(1.0, 0.5, 2.0), (2.0, 1.5, 3.0)].into_iter());
        assert_eq!(outline, [(1.0, 2.0), (2.0, 3.0), (2.0, 1.5), (1.0, 0.5)]);
    }

    #[test]
    fn runs_group_into_bands_by_x() {
        let b = bands(&[[2.0, 3.0 * MIB], [1.0, MIB], [2.0, 5.0 * MIB]]);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].x, b[0].stat.n), (1.0, 1));
        assert_eq!((b[1].x, b[1].stat.min, b[1].stat.max), (2.0, 3.0, 5.0));
    }
}
