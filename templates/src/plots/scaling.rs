//! The ceiling per core count (`[plan] scale_cores`): each size measured as a dot, and the
//! ceiling carried to every whole core count up to twice the largest: the law's prediction
//! with its 95 % band, or the range (at least the largest smaller size's ceiling, at most
//! linear scaling from it) shaded between its bounds, the upper one dashed.

use super::legend::{self, Entry, Swatch};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::style::{
    CHART_HEIGHT, DOT, DrawResult, FITTED, FONT, INK, MEASURED, TITLE, WIDTH, X_LABEL_AREA,
    Y_LABEL_AREA, band_outline, house_style,
};
use crate::context::{PageContext, Plot};
use crate::format;

pub(super) fn scaling(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let scaled = context
        .plan
        .as_ref()
        .and_then(|plan| plan.scaled_ceilings.as_ref())
        .ok_or("the plan measured no core counts")?;
    let curve = &scaled.curve;
    let measured: Vec<(f64, f64)> = scaled
        .sizes
        .iter()
        .filter_map(|size| size.units.map(|units| (size.cores, units)))
        .collect();
    let top_x = curve
        .iter()
        .map(|p| p.cores)
        .chain(measured.iter().map(|m| m.0))
        .fold(1.0, f64::max);
    let top_y = curve
        .iter()
        .map(|p| p.high)
        .chain(measured.iter().map(|m| m.1))
        .fold(1.0, f64::max)
        * 1.08;
    let law = scaled.law.is_some();
    let unit = format::plural(&context.bench.unit);
    let entries = entries(law);
    let legend_height = legend::height(&entries, WIDTH);
    let root =
        SVGBackend::with_string(svg, (WIDTH, CHART_HEIGHT + legend_height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, legend_area) = root.split_vertically(CHART_HEIGHT);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&plot.title, (FONT, TITLE).into_font().color(&INK))
        .margin(14)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0.0..top_x + 0.5, 0.0..top_y)?;
    house_style(&mut chart.configure_mesh())
        .x_desc(format!(
            "cores (measured up to {}; past {} nothing is planned on without --extrapolate)",
            format::count(scaled.largest_cores),
            format::count(2.0 * scaled.largest_cores)
        ))
        .y_desc(format!("SLO ceiling, {unit}"))
        .x_labels(top_x as usize + 2)
        // Cores are whole: a tick between them is left unlabelled.
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 {
                format::count(*x)
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format::count(*y))
        .draw()?;
    draw_curve(&mut chart, curve, law)?;
    chart.draw_series(
        measured
            .iter()
            .map(|&(x, y)| Circle::new((x, y), DOT + 2, MEASURED.filled())),
    )?;
    legend::draw(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// The legend: the dots, then the law's line and band or the range's bounds.
fn entries(law: bool) -> [Entry; 3] {
    let dots = Entry::new(
        Swatch::Dot(MEASURED),
        "SLO ceiling measured at a core count",
    );
    if law {
        [
            dots,
            Entry::new(
                Swatch::Line(FITTED),
                "the Universal Scalability Law's prediction",
            ),
            Entry::new(Swatch::Area(FITTED, 0.2), "its 95 % prediction interval"),
        ]
    } else {
        [
            dots,
            Entry::new(
                Swatch::Line(FITTED),
                "at least: the largest smaller size's ceiling (priced on)",
            ),
            Entry::new(Swatch::Dashed(FITTED), "at most: linear scaling from it"),
        ]
    }
}

/// The carried ceiling: its band between low and high, its line, and the range's upper bound
/// dashed.
fn draw_curve<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    curve: &[headroom_pricing::plan::CurvePointJson],
    law: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let outline = band_outline(curve.iter().map(|p| (p.cores, p.low, p.high)));
    chart.draw_series([Polygon::new(outline, FITTED.mix(0.2).filled())])?;
    chart.draw_series(LineSeries::new(
        curve.iter().map(|p| (p.cores, p.ceiling)),
        FITTED.stroke_width(2),
    ))?;
    if !law {
        chart.draw_series(DashedLineSeries::new(
            curve.iter().map(|p| (p.cores, p.high)),
            6,
            4,
            FITTED.stroke_width(2),
        ))?;
    }
    Ok(())
}
