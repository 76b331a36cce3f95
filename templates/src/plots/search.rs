//! The search path: every probe in the order it ran, at the load it probed (a log scale: the
//! search doubles), marked by its verdict; confirmations drawn larger; the final bracket shaded.

use super::*;
use crate::context::SearchStory;
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
    let values = || story.probes.iter().map(|p| p.value).filter(|v| *v > 0.0);
    let y_max = values().fold(1.0, f64::max) * 1.6;
    let y_min = values().fold(y_max, f64::min) / 1.6;
    let n = story.probes.len() as f64;
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&plot.title, (FONT, 18).into_font().color(&INK))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(0.5..n + 0.5, (y_min..y_max).log_scale())?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_desc("probe, in the order it ran")
        .y_desc(format!("{} (log scale)", story.variable))
        .x_labels(story.probes.len().min(20))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format::count(*y))
        .draw()?;
    if let (Some(pass), Some(fail)) = (story.pass, story.fail) {
        chart
            .draw_series([Rectangle::new(
                [(0.5, pass), (n + 0.5, fail)],
                SLO.mix(0.12).filled(),
            )])?
            .label(format!(
                "the bracket: passes at {}, fails at {}",
                format::count(pass),
                format::count(fail)
            ))
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], SLO.mix(0.2).filled()));
    }
    chart.draw_series(LineSeries::new(
        story.probes.iter().map(|p| (p.number as f64, p.value)),
        GRID.stroke_width(2),
    ))?;
    for (verdict, color, name) in [
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
    ] {
        let probes: Vec<_> = story
            .probes
            .iter()
            .filter(|p| p.verdict == verdict)
            .collect();
        if probes.is_empty() {
            continue;
        }
        chart
            .draw_series(probes.iter().map(|p| {
                let size = if p.stage == ProbeStage::Confirm {
                    DOT + 3
                } else {
                    DOT
                };
                Circle::new((p.number as f64, p.value), size, color.filled())
            }))?
            .label(name)
            .legend(move |(x, y)| Circle::new((x + 10, y), LEGEND_DOT, color.filled()));
    }
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
