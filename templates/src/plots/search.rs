//! The search path: every probe in the order it ran, at the load it probed (a log scale: the
//! search doubles), marked by its verdict; confirmations drawn larger; the final bracket shaded.

use super::legend::{self, Entry, Swatch};
use super::scale::{Scale, Ticked, tick_label};
use plotters::prelude::*;

use super::style::{
    CHART_HEIGHT, DOT, DrawResult, FONT, GRID, INK, SLO, TITLE, WIDTH, X_LABEL_AREA, Y_LABEL_AREA,
    house_style,
};
use crate::context::SearchStory;
use crate::context::{PageContext, Plot};
use crate::format;
use headroom_results::{ProbeOutcome, ProbeStage};

const PASSED: RGBColor = RGBColor(44, 160, 44);
const SPLIT: RGBColor = RGBColor(255, 127, 14);
const UNJUDGED: RGBColor = RGBColor(127, 127, 127);

pub(super) fn search(context: &PageContext, plot: &Plot, svg: &mut String) -> DrawResult {
    let phase = plot
        .phase
        .as_deref()
        .ok_or("a search plot names its phase")?;
    let story =
        story_of(context, phase).ok_or_else(|| format!("phase `{phase}` did not search"))?;
    // The search doubles from its start: its loads span decades, on a log scale then.
    let values = || story.probes.iter().map(|p| p.value).filter(|v| *v > 0.0);
    let high = values().fold(1.0, f64::max);
    let ys = Scale::over(values().fold(high, f64::min), high);
    let y_ticks = ys.ticks();
    let n = story.probes.len() as f64;
    let entries = entries(story);
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
        .build_cartesian_2d(0.5..n + 0.5, Ticked::new(ys.range(), &y_ticks))?;
    house_style(&mut chart.configure_mesh())
        .x_desc("probe, in the order it ran")
        .y_desc(if ys.log {
            format!("{} (log scale)", story.variable)
        } else {
            story.variable.clone()
        })
        .x_labels(story.probes.len().min(20))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick_label(&y_ticks, *y))
        .draw()?;
    if let (Some(pass), Some(fail)) = (story.pass, story.fail) {
        chart.draw_series([Rectangle::new(
            [(0.5, ys.at(pass)), (n + 0.5, ys.at(fail))],
            SLO.mix(0.12).filled(),
        )])?;
    }
    chart.draw_series(LineSeries::new(
        story
            .probes
            .iter()
            .map(|p| (p.number as f64, ys.at(p.value))),
        GRID.stroke_width(2),
    ))?;
    for (verdict, color, _) in VERDICTS {
        chart.draw_series(
            story
                .probes
                .iter()
                .filter(|p| p.verdict == verdict)
                .map(|p| {
                    let size = if p.stage == ProbeStage::Confirm {
                        DOT + 3
                    } else {
                        DOT
                    };
                    Circle::new((p.number as f64, ys.at(p.value)), size, color.filled())
                }),
        )?;
    }
    legend::draw(&legend_area, &entries)?;
    root.present()?;
    Ok(())
}

/// Each verdict's colour and words, in the legend's order.
const VERDICTS: [(ProbeOutcome, RGBColor, &str); 5] = [
    (ProbeOutcome::Pass, PASSED, "passed"),
    (ProbeOutcome::Fail, SLO, "failed"),
    (
        ProbeOutcome::Split,
        SPLIT,
        "split: some runs passed, some failed",
    ),
    (
        ProbeOutcome::GeneratorBound,
        UNJUDGED,
        "not judged: the generator could not send it",
    ),
    (ProbeOutcome::Unjudged, UNJUDGED, "not judged"),
];

/// The legend: the bracket, the verdicts drawn, and what a larger dot is.
fn entries(story: &SearchStory) -> Vec<Entry> {
    let mut entries = Vec::new();
    if let (Some(pass), Some(fail)) = (story.pass, story.fail) {
        entries.push(Entry::new(
            Swatch::Area(SLO, 0.2),
            format!(
                "the bracket: passes at {}, fails at {}",
                format::count(pass),
                format::count(fail)
            ),
        ));
    }
    for (verdict, color, name) in VERDICTS {
        if story.probes.iter().any(|p| p.verdict == verdict) {
            entries.push(Entry::new(Swatch::Dot(color), name));
        }
    }
    if story.probes.iter().any(|p| p.stage == ProbeStage::Confirm) {
        entries.push(Entry::new(
            Swatch::Dot(INK),
            "larger: a confirmation (the load run again at full length)",
        ));
    }
    entries
}

/// The search of `phase` as the context tells it: the ceiling's, or a phase's in the
/// side-by-side table (an emulated instance's).
fn story_of<'a>(context: &'a PageContext, phase: &str) -> Option<&'a SearchStory> {
    context
        .ceiling
        .as_ref()
        .filter(|c| c.phase == phase)
        .and_then(|c| c.search.as_ref())
        .or_else(|| {
            context
                .phase_ceilings
                .iter()
                .find(|c| c.phase == phase)
                .and_then(|c| c.search.as_ref())
        })
}
