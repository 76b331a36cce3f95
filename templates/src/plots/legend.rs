//! A plot's legend, in a strip of its own under the chart: it never covers data (plotters'
//! legend box sits inside the plotting area, where some series always are).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{FONT, INK, LEGEND_DOT, TEXT};

/// How an entry's sample is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A dot.
    Dot(RGBColor),
    /// A shaded area of the colour at this opacity.
    Area(RGBColor, f64),
}

/// One entry: its sample and its words.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub swatch: Swatch,
    pub label: String,
}

impl Entry {
    pub fn new(swatch: Swatch, label: impl Into<String>) -> Entry {
        Entry {
            swatch,
            label: label.into(),
        }
    }
}

/// The sample's width, the gap after it and between entries, and a row's height, in px.
const SAMPLE: i32 = 26;
const GAP: i32 = 8;
const BETWEEN: i32 = 28;
const ROW: i32 = 28;
const PADDING: i32 = 10;

/// Text as drawn: plotters writes a font size as `size / 1.24` px in SVG.
pub(super) fn text_px(size: f64) -> f64 {
    size / 1.24
}

/// A generous width of `text` at the legend's size (0.6 em a character: wider than the
/// average sans-serif letter, so entries never run into each other).
fn width_of(text: &str) -> i32 {
    (text.chars().count() as f64 * 0.6 * text_px(TEXT)).ceil() as i32
}

/// Each entry's top-left corner in a strip `width` px wide: left to right, a new row when
/// the next would not fit.
fn layout(entries: &[Entry], width: u32) -> Vec<(i32, i32)> {
    let width = width as i32;
    let (mut x, mut y) = (PADDING, PADDING);
    entries
        .iter()
        .map(|entry| {
            let wide = SAMPLE + GAP + width_of(&entry.label);
            if x > PADDING && x + wide > width - PADDING {
                x = PADDING;
                y += ROW;
            }
            let at = (x, y);
            x += wide + BETWEEN;
            at
        })
        .collect()
}

/// The strip's height for these entries in `width` px: 0 without entries.
pub(super) fn height(entries: &[Entry], width: u32) -> u32 {
    match layout(entries, width).last() {
        Some((_, y)) => (*y + ROW + PADDING) as u32,
        None => 0,
    }
}

/// Draws the entries into their strip.
pub(super) fn draw(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[Entry],
) -> Result<(), Box<dyn std::error::Error>> {
    let (width, _) = area.dim_in_pixel();
    let font = (FONT, TEXT).into_font().color(&INK);
    for (entry, (x, y)) in entries.iter().zip(layout(entries, width)) {
        let middle = y + ROW / 2;
        match entry.swatch {
            Swatch::Line(color) => area.draw(&PathElement::new(
                [(x, middle), (x + SAMPLE, middle)],
                color.stroke_width(3),
            ))?,
            Swatch::Dashed(color) => {
                for start in [x, x + 10, x + 20] {
                    area.draw(&PathElement::new(
                        [(start, middle), (start + 6, middle)],
                        color.stroke_width(3),
                    ))?;
                }
            }
            Swatch::Dot(color) => area.draw(&Circle::new(
                (x + SAMPLE / 2, middle),
                LEGEND_DOT,
                color.filled(),
            ))?,
            Swatch::Area(color, opacity) => area.draw(&Rectangle::new(
                [(x, middle - 8), (x + SAMPLE, middle + 8)],
                color.mix(opacity).filled(),
            ))?,
        }
        area.draw(&Text::new(
            entry.label.clone(),
            (x + SAMPLE + GAP, middle),
            font.clone().pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            )),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_wrap_into_rows_that_fit() {
        let entries: Vec<Entry> = (0..6)
            .map(|i| Entry::new(Swatch::Dot(INK), format!("entry number {i} of six")))
            .collect();
        let places = layout(&entries, 960);
        assert_eq!(places[0], (PADDING, PADDING));
        // Every entry ends inside the strip, and a row is full before the next begins.
        for (entry, (x, _)) in entries.iter().zip(&places) {
            assert!(x + SAMPLE + GAP + width_of(&entry.label) <= 960 - PADDING);
        }
        let rows: std::collections::BTreeSet<i32> = places.iter().map(|(_, y)| *y).collect();
        assert!(rows.len() >= 2, "{places:?}");
        assert_eq!(
            height(&entries, 960),
            (*rows.last().expect("a row") + ROW + PADDING) as u32
        );
        assert_eq!(height(&[], 960), 0);
    }
}
