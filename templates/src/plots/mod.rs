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
//! - scaling: the SLO ceiling per core count, carried to bigger boxes by the law or the range
//!   (`scaling.rs`).
//!
//! Every plot is as wide as the HTML page's column (960 px), its text at least the page's body
//! size there (16 px), and its legend in a strip under the chart (`legend.rs`), never over data.

use crate::PageError;
use crate::context::PageContext;

mod latency;
mod legend;
mod memory;
mod phase;
mod scale;
mod scaling;
mod search;
mod series;
mod style;

use latency::latency;
use memory::memory;
use scaling::scaling;
use search::search;
use series::series;

/// A drawn plot: its file name (relative to the page) and its SVG text.
pub struct Drawn {
    /// Its file name beside the page (`memory.svg`).
    pub file: String,
    /// The SVG text.
    pub svg: String,
}

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
                "scaling" => scaling(context, plot, &mut svg),
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

#[cfg(test)]
mod tests {
    use super::phase::step_labels;
    use super::style::band_outline;

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
