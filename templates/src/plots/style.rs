//! The house style every plot shares: its size, text, colours and mesh.

use plotters::chart::MeshStyle;
use plotters::prelude::*;

/// The HTML page's column: a plot drawn this wide shows at its own size there.
pub(super) const WIDTH: u32 = 960;
/// A chart's height above its legend; a panel's, when a plot has two.
pub(super) const CHART_HEIGHT: u32 = 520;
pub(super) const PANEL_HEIGHT: u32 = 460;
/// Font sizes as plotters takes them (it writes `size / 1.24` px): 20 is 16.1 px, the page's
/// body text; titles a little larger.
pub(super) const TEXT: f64 = 20.0;
pub(super) const TITLE: f64 = 24.0;
/// Room under a chart for its tick labels and axis title, and left of it.
pub(super) const X_LABEL_AREA: u32 = 64;
pub(super) const Y_LABEL_AREA: u32 = 110;
pub(super) const MIB: f64 = 1_048_576.0;
pub(super) const FONT: &str = "sans-serif";
/// Measured points are drawn 4 px wide, their legend's dot 3 px, a single run's 2 px: tests
/// tell them apart.
pub(super) const DOT: u32 = 4;
pub(super) const LEGEND_DOT: u32 = 3;
pub(super) const RUN_DOT: u32 = 2;

pub(super) const INK: RGBColor = RGBColor(40, 40, 40);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(super) const MEASURED: RGBColor = RGBColor(31, 119, 180);
pub(super) const FITTED: RGBColor = RGBColor(255, 127, 14);
pub(super) const SLO: RGBColor = RGBColor(214, 39, 40);
/// p50, p95, p99.
pub(super) const PERCENTILES: [RGBColor; 3] = [
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(148, 103, 189),
];
/// One per priced instance, in turn.
pub(super) const INSTANCES: [RGBColor; 4] = [
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
];

pub(super) type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The look every plot's mesh shares: grid lines at the ticks only, text at body size.
pub(super) fn house_style<'m, 'a, 'b, 'c, X: Ranged, Y: Ranged>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>> {
    mesh.light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .label_style((FONT, TEXT).into_font().color(&INK))
        .axis_desc_style((FONT, TEXT).into_font().color(&INK))
}

/// A band's polygon: along the maxima, back along the minima.
pub(super) fn band_outline<X: Clone>(points: impl Iterator<Item = (X, f64, f64)>) -> Vec<(X, f64)> {
    let points: Vec<_> = points.collect();
    let upper = points.iter().map(|(x, _, max)| (x.clone(), *max));
    let lower = points.iter().rev().map(|(x, min, _)| (x.clone(), *min));
    upper.chain(lower).collect()
}
