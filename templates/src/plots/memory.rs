//! The memory plot: the memory series per run over the memory sweep, the min–max band when
//! repeated, the fitted line (solid over the measured range, dashed where it extrapolates) and
//! each priced instance's usable memory as a line across, reached at its memory ceiling. When
//! the ceilings lie far past the measurements, a first panel shows what was measured and a
//! second, on log scales, how far the line is carried: the measured range stays readable.

use super::legend::{self, Entry, Swatch};
use super::scale::{Scale, Ticked, tick_label};
use plotters::prelude::*;

use super::style::{
    CHART_HEIGHT, DOT, DrawResult, FITTED, FONT, INK, INSTANCES, MEASURED, MIB, PANEL_HEIGHT, TEXT,
    TITLE, WIDTH, X_LABEL_AREA, Y_LABEL_AREA, band_outline, house_style,
};
use crate::context::{PageContext, Plot, Stat};
use crate::format;

/// A usable-memory line: an instance, its usable memory and where the fit reaches it.
struct Usable {
    name: String,
    mib: f64,
    units: f64,
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
    /// The line's MiB at `x`.
    fn mib(&self, x: f64) -> f64 {
        (self.intercept + self.slope * x) / MIB
    }
}

pub(super) fn memory(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
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
    let line = Line {
        intercept,
        slope,
        measured_x: fit.largest_x,
        unit: &context.bench.unit,
        x: &fit.x,
        series: &fit.series,
    };
    let usable = usable_lines(context, &line);
    let bands = bands(&fit.points);
    let panels = panels(&line, &bands, &usable);
    let extrapolates = panels.iter().any(|p| p.extrapolates(&line));
    let entries = entries(&line, &bands, &usable, extrapolates);
    let legend_height = legend::height(&entries, WIDTH);
    let charts = if panels.len() > 1 {
        2 * PANEL_HEIGHT
    } else {
        CHART_HEIGHT
    };
    let root = SVGBackend::with_string(svg, (WIDTH, charts + legend_height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (charts, legend_area) = root.split_vertically(charts);
    let charts = charts.titled(&plot.title, (FONT, TITLE).into_font().color(&INK))?;
    if let [measured, carried] = panels.as_slice() {
        let (upper, lower) = charts.split_vertically(PANEL_HEIGHT - 30);
        memory_panel(&upper, &line, &bands, measured)?;
        memory_panel(&lower, &line, &bands, carried)?;
    } else {
        for panel in &panels {
            memory_panel(&charts, &line, &bands, panel)?;
        }
    }
    legend::draw(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// One panel, or two when the ceilings lie far past the measurements (they would squash the
/// measurements into a corner): one shows what was measured, a second how far the line is
/// carried, on log scales where it spans decades.
fn panels<'a>(line: &Line<'_>, bands: &[Band], usable: &'a [Usable]) -> Vec<Panel<'a>> {
    let furthest = usable.iter().map(|u| u.units).fold(0.0, f64::max);
    let measured_y = bands.iter().map(|b| b.stat.max).fold(0.0, f64::max);
    let top = |x: f64| line.mib(x).max(measured_y);
    if furthest <= 2.0 * line.measured_x {
        let x_high = furthest.max(line.measured_x);
        let highest_y = usable.iter().map(|u| u.mib).fold(top(x_high), f64::max);
        return vec![Panel {
            caption: "",
            xs: Scale::over(0.0, x_high),
            ys: Scale::over(0.0, highest_y),
            usable,
        }];
    }
    let lowest_x = bands
        .iter()
        .map(|b| b.x)
        .filter(|x| *x > 0.0)
        .fold(line.measured_x, f64::min);
    let highest_y = usable.iter().map(|u| u.mib).fold(top(furthest), f64::max);
    let lowest_y = bands
        .iter()
        .map(|b| b.stat.min)
        .chain([line.mib(lowest_x)])
        .filter(|y| *y > 0.0)
        .fold(highest_y, f64::min);
    vec![
        Panel {
            caption: "measured",
            xs: Scale::over(0.0, line.measured_x),
            ys: Scale::over(0.0, top(line.measured_x)),
            usable: &[],
        },
        Panel {
            caption: "carried to each instance's usable memory",
            xs: Scale::over(lowest_x, furthest),
            ys: Scale::over(lowest_y, highest_y),
            usable,
        },
    ]
}

/// Each instance's usable memory and where the line reaches it; instances of the same memory
/// share one line, named together.
fn usable_lines(context: &PageContext, line: &Line<'_>) -> Vec<Usable> {
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
                mib: line.mib(units),
                units,
            }),
        }
    }
    usable
}

/// The legend: what each mark of both panels is.
fn entries(line: &Line<'_>, bands: &[Band], usable: &[Usable], extrapolates: bool) -> Vec<Entry> {
    let mut entries = Vec::new();
    if extrapolates {
        entries.push(Entry::new(
            Swatch::Area(MEASURED, 0.15),
            format!(
                "measured range: up to {} {}",
                format::count(line.measured_x),
                line.x
            ),
        ));
    }
    if bands.iter().any(|b| b.stat.n > 1) {
        entries.push(Entry::new(
            Swatch::Area(MEASURED, 0.25),
            "min–max over repeats",
        ));
    }
    entries.push(Entry::new(
        Swatch::Dot(MEASURED),
        format!("{} measured (median of runs)", line.series),
    ));
    entries.push(Entry::new(
        Swatch::Line(FITTED),
        format!(
            "fit: {} {} {} per {}",
            format::mib(line.intercept, None),
            if line.slope < 0.0 { "−" } else { "+" },
            format::size(line.slope.abs()),
            line.unit
        ),
    ));
    if extrapolates {
        entries.push(Entry::new(Swatch::Dashed(FITTED), "fit, extrapolated"));
    }
    for (index, u) in usable.iter().enumerate() {
        entries.push(Entry::new(
            Swatch::Line(INSTANCES[index % INSTANCES.len()]),
            format!(
                "{}: {} usable, reached at {} {}",
                u.name,
                format::mib(u.mib * MIB, Some(0)),
                format::count(u.units),
                format::plural(line.unit)
            ),
        ));
    }
    entries
}

/// One memory chart: its caption, its scales and the usable-memory lines it shows.
struct Panel<'a> {
    caption: &'a str,
    xs: Scale,
    ys: Scale,
    usable: &'a [Usable],
}

impl Panel<'_> {
    /// Whether the chart reaches past the measurements (a tenth past: more than its margin),
    /// where the line is dashed and the measured range shaded.
    fn extrapolates(&self, line: &Line<'_>) -> bool {
        self.xs.bounds().1 > line.measured_x * 1.1
    }
}

/// A memory chart: units across, MiB up, each in its scale's coordinate.
type MemoryChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// One memory chart: the measured range (shaded when the line goes past it), the band, the
/// medians, the fit (dashed where it extrapolates) and the usable-memory lines given.
fn memory_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    line: &Line<'_>,
    bands: &[Band],
    panel: &Panel<'_>,
) -> DrawResult {
    let (xs, ys) = (panel.xs, panel.ys);
    let (x_ticks, y_ticks) = (xs.ticks(), ys.ticks());
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(14)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA);
    if !panel.caption.is_empty() {
        let caption = if xs.log || ys.log {
            format!("{} (log scales)", panel.caption)
        } else {
            panel.caption.to_owned()
        };
        builder.caption(caption, (FONT, TEXT).into_font().color(&INK));
    }
    let mut chart = builder.build_cartesian_2d(
        Ticked::new(xs.range(), &x_ticks),
        Ticked::new(ys.range(), &y_ticks),
    )?;
    house_style(&mut chart.configure_mesh())
        .x_desc(line.x)
        .y_desc(format!("{} (MiB)", line.series))
        .x_label_formatter(&|x| tick_label(&x_ticks, *x))
        .y_label_formatter(&|y| tick_label(&y_ticks, *y))
        .draw()?;
    draw_measured(&mut chart, line, bands, panel)?;
    let range = xs.range();
    for (index, u) in panel.usable.iter().enumerate() {
        let color = INSTANCES[index % INSTANCES.len()];
        chart.draw_series(LineSeries::new(
            [(range.start, ys.at(u.mib)), (range.end, ys.at(u.mib))],
            color.stroke_width(2),
        ))?;
        chart.draw_series([Cross::new(
            (xs.at(u.units), ys.at(u.mib)),
            6,
            color.stroke_width(2),
        )])?;
    }
    Ok(())
}

/// The measured range (shaded when the chart goes past it), the min–max band, the medians and
/// the fit, dashed where it extrapolates.
fn draw_measured(
    chart: &mut MemoryChart<'_, '_>,
    line: &Line<'_>,
    bands: &[Band],
    panel: &Panel<'_>,
) -> DrawResult {
    let (xs, ys) = (panel.xs, panel.ys);
    let (x_low, x_high) = xs.bounds();
    let (y_low, y_high) = ys.bounds();
    let at = |x: f64, y: f64| (xs.at(x), ys.at(y));
    let extrapolates = panel.extrapolates(line);
    if extrapolates {
        chart.draw_series([Rectangle::new(
            [at(x_low, y_low), at(line.measured_x, y_high)],
            MEASURED.mix(0.08).filled(),
        )])?;
    }
    if bands.iter().any(|b| b.stat.n > 1) {
        let outline = band_outline(bands.iter().map(|b| (b.x, b.stat.min, b.stat.max)));
        let outline: Vec<_> = outline.into_iter().map(|(x, y)| at(x, y)).collect();
        chart.draw_series([Polygon::new(outline, MEASURED.mix(0.25).filled())])?;
    }
    chart.draw_series(
        bands
            .iter()
            .map(|b| Circle::new(at(b.x, b.stat.median), DOT, MEASURED.filled())),
    )?;
    // On a log scale the line bends: drawn through many points.
    let along = |from: f64, to: f64| -> Vec<(f64, f64)> {
        let count = if xs.log { 64 } else { 1 };
        (0..=count)
            .map(|i| {
                let x = if xs.log {
                    from * (to / from).powf(i as f64 / count as f64)
                } else {
                    from + (to - from) * i as f64 / count as f64
                };
                at(x, line.mib(x))
            })
            .collect()
    };
    chart.draw_series(LineSeries::new(
        along(x_low, line.measured_x.min(x_high)),
        FITTED.stroke_width(2),
    ))?;
    if extrapolates {
        chart.draw_series(DashedLineSeries::new(
            along(line.measured_x, x_high),
            6,
            4,
            FITTED.stroke_width(2),
        ))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_group_into_bands_by_x() {
        let b = bands(&[[2.0, 3.0 * MIB], [1.0, MIB], [2.0, 5.0 * MIB]]);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].x, b[0].stat.n), (1.0, 1));
        assert_eq!((b[1].x, b[1].stat.min, b[1].stat.max), (2.0, 3.0, 5.0));
    }
}
