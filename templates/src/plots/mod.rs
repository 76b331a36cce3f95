//! The page's plots, drawn as SVG with plotters from the [`PageContext`] alone, so a page and
//! its plots always tell the same numbers (and `--dump-context` holds everything they show).
//!
//! - memory: the memory series per run over the memory sweep, the fit and each priced
//!   instance's usable memory (`memory.rs`).
//! - latency: p50, p95 and p99 over the load of a phase, ordered by load, each latency SLO
//!   and the loads that failed (`latency.rs`).
//! - search: a searched phase's probes in the order they ran, at their loads, marked by
//!   verdict, the final bracket shaded (`search.rs`).
//! - series: a `[measure]` series over the variable its phase swept (`series.rs`).
//!
//! Every plot is as wide as the HTML page's column (960 px), its text at least the page's body
//! size there (16 px), and its legend in a strip under the chart (`legend.rs`), never over data.

use plotters::chart::MeshStyle;
use plotters::prelude::*;

use crate::PageError;
use crate::context::{PageContext, Phase, Plot};

mod latency;
mod legend;
mod memory;
mod scale;
mod search;
mod series;

use latency::latency;
use memory::memory;
use search::search;
use series::series;

/// The HTML page's column: a plot drawn this wide shows at its own size there.
const WIDTH: u32 = 960;
/// A chart's height above its legend; a panel's, when a plot has two.
const CHART_HEIGHT: u32 = 520;
const PANEL_HEIGHT: u32 = 460;
/// Font sizes as plotters takes them (it writes `size / 1.24` px): 20 is 16.1 px, the page's
/// body text; titles a little larger.
const TEXT: f64 = 20.0;
const TITLE: f64 = 24.0;
/// Room under a chart for its tick labels and axis title, and left of it.
const X_LABEL_AREA: u32 = 64;
const Y_LABEL_AREA: u32 = 110;
const MIB: f64 = 1_048_576.0;
const FONT: &str = "sans-serif";
/// Measured points are drawn 4 px wide, their legend's dot 3 px, a single run's 2 px: tests
/// tell them apart.
const DOT: u32 = 4;
const LEGEND_DOT: u32 = 3;
const RUN_DOT: u32 = 2;

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
                "series" => series(context, plot, &mut svg),
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

/// The phase a latency or series plot names, from the context.
fn phase_of<'a>(
    context: &'a PageContext,
    plot: &Plot,
) -> Result<&'a Phase, Box<dyn std::error::Error>> {
    let name = plot
        .phase
        .as_deref()
        .ok_or_else(|| format!("a {} plot names its phase", plot.kind))?;
    let phase = context.phases.iter().find(|p| p.name == name);
    Ok(phase.ok_or_else(|| format!("no phase `{name}` in the context"))?)
}

/// The look every plot's mesh shares: grid lines at the ticks only, text at body size.
fn house_style<'m, 'a, 'b, 'c, X: Ranged, Y: Ranged>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>> {
    mesh.light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .label_style((FONT, TEXT).into_font().color(&INK))
        .axis_desc_style((FONT, TEXT).into_font().color(&INK))
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
            format!("{} (a step each, in the order run)", pairs[0].0),
            pairs.iter().map(|(_, v)| v.to_string()).collect(),
        ),
        _ => ("step".to_owned(), steps.map(str::to_owned).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_labelled_by_value_under_one_variable() {
        let (title, labels) = step_labels(["rooms = 1", "rooms = 16"].into_iter());
        assert_eq!(title, "rooms (a step each, in the order run)");
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
}
