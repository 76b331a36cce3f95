//! The page's plots as a reader sees them, checked from their SVG elements' boxes: no text (a
//! legend entry, a tick label, a title) over a data mark (a dot, a line, a band), and no text
//! smaller than the HTML page's body (16 px) at the width the page shows a plot (960 px).

use std::path::Path;

/// The HTML page's column and body text, in px (templates/page/page.html).
const COLUMN: f64 = 960.0;
const BODY_TEXT: f64 = 16.0;

/// A box: left, top, right, bottom.
#[derive(Debug, Clone, Copy)]
struct Area(f64, f64, f64, f64);

impl Area {
    fn overlaps(&self, other: &Area) -> bool {
        self.0 < other.2 && other.0 < self.2 && self.1 < other.3 && other.1 < self.3
    }

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        x > self.0 && x < self.2 && y > self.1 && y < self.3
    }

    /// Whether the segment from `a` to `b` crosses the box (Liang–Barsky clipping).
    fn crossed_by(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut enter, mut leave) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.0),
            (dx, self.2 - a.0),
            (-dy, a.1 - self.1),
            (dy, self.3 - a.1),
        ] {
            if p == 0.0 {
                if q <= 0.0 {
                    return false;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    enter = enter.max(t);
                } else {
                    leave = leave.min(t);
                }
            }
        }
        enter < leave
    }
}

fn number(node: roxmltree::Node<'_, '_>, name: &str) -> f64 {
    node.attribute(name)
        .and_then(|v| v.trim_end_matches("px").parse().ok())
        .unwrap_or(0.0)
}

/// A text's box, from its anchor, its baseline shift and its size (0.55 em a character, about
/// a sans-serif letter's width); a text turned a quarter is a tall box.
fn text_box(node: roxmltree::Node<'_, '_>) -> Area {
    let (x, y, size) = (
        number(node, "x"),
        number(node, "y"),
        number(node, "font-size"),
    );
    let width = node.text().unwrap_or("").trim().chars().count() as f64 * 0.55 * size;
    let (top, bottom) = match node.attribute("dy") {
        Some("0.76em") => (y, y + size),
        Some("-0.5ex") => (y - size, y),
        Some("0.5ex") => (y - size / 2.0, y + size / 2.0),
        _ => (y - 0.8 * size, y + 0.2 * size),
    };
    let (left, right) = match node.attribute("text-anchor") {
        Some("middle") => (x - width / 2.0, x + width / 2.0),
        Some("end") => (x - width, x),
        _ => (x, x + width),
    };
    if node
        .attribute("transform")
        .is_some_and(|t| t.starts_with("rotate"))
    {
        return Area(x - size, y - width / 2.0, x + size, y + width / 2.0);
    }
    Area(left, top, right, bottom)
}

fn points(node: roxmltree::Node<'_, '_>) -> Vec<(f64, f64)> {
    node.attribute("points")
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|pair| {
            let (x, y) = pair.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// A data mark: a dot, band or area by its box, or a line by its points.
enum Mark {
    Box(&'static str, Area),
    Line(Vec<(f64, f64)>),
}

/// What one plot's check found: its texts and marks, and each text over a mark.
pub struct Checked {
    pub texts: usize,
    pub marks: usize,
    pub overlaps: Vec<String>,
    pub small: Vec<String>,
}

/// Checks one plot's SVG text.
pub fn check(svg: &str) -> Checked {
    let document = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = document.root_element();
    let (width, height) = (number(root, "width"), number(root, "height"));
    let scale = COLUMN / width;
    let mut texts = Vec::new();
    let mut small = Vec::new();
    for node in document.descendants().filter(|n| n.has_tag_name("text")) {
        let words = node.text().unwrap_or("").trim().to_owned();
        if words.is_empty() {
            continue;
        }
        let shown = number(node, "font-size") * scale;
        if shown < BODY_TEXT - 0.01 {
            small.push(format!("`{words}` at {shown:.1} px"));
        }
        texts.push((words, text_box(node)));
    }
    // The marks: dots (a legend's 3 px dot sits beside its words by design), lines and paths,
    // shaded bands and areas; the background and the grid's lines are not marks.
    let mut marks: Vec<Mark> = Vec::new();
    for node in document.descendants().filter(|n| n.is_element()) {
        match node.tag_name().name() {
            "circle" if node.attribute("r") != Some("3") => {
                let (x, y, r) = (number(node, "cx"), number(node, "cy"), number(node, "r"));
                marks.push(Mark::Box("a dot", Area(x - r, y - r, x + r, y + r)));
            }
            "polyline" => marks.push(Mark::Line(points(node))),
            "polygon" => {
                let corners = points(node);
                let xs = corners.iter().map(|p| p.0);
                let ys = corners.iter().map(|p| p.1);
                let area = Area(
                    xs.clone().fold(f64::INFINITY, f64::min),
                    ys.clone().fold(f64::INFINITY, f64::min),
                    xs.fold(f64::NEG_INFINITY, f64::max),
                    ys.fold(f64::NEG_INFINITY, f64::max),
                );
                marks.push(Mark::Box("a band", area));
            }
            "rect" => {
                let (x, y) = (number(node, "x"), number(node, "y"));
                let (w, h) = (number(node, "width"), number(node, "height"));
                if w >= width && h >= height {
                    continue;
                }
                marks.push(Mark::Box("an area", Area(x, y, x + w, y + h)));
            }
            _ => {}
        }
    }
    let mut overlaps = Vec::new();
    for (words, area) in &texts {
        for mark in &marks {
            let (over, kind) = match mark {
                Mark::Box(kind, mark) => (area.overlaps(mark), *kind),
                Mark::Line(line) => (
                    line.iter().any(|p| area.contains(*p))
                        || line.windows(2).any(|w| area.crossed_by(w[0], w[1])),
                    "a line",
                ),
            };
            if over {
                overlaps.push(format!("`{words}` over {kind}"));
                break;
            }
        }
    }
    Checked {
        texts: texts.len(),
        marks: marks.len(),
        overlaps,
        small,
    }
}

/// Every plot (`*.svg`) in `dir` reads well: no text over a mark, none under the body size.
/// Returns how many plots it checked.
pub fn assert_plots_read_well(dir: &Path) -> usize {
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("the page's folder") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        let svg = std::fs::read_to_string(&path).expect("a plot");
        let found = check(&svg);
        assert!(
            found.texts > 3 && found.marks > 3,
            "{}: nothing drawn?",
            path.display()
        );
        assert!(
            found.overlaps.is_empty() && found.small.is_empty(),
            "{}: text over data: {:?}; text under {BODY_TEXT} px: {:?}",
            path.display(),
            found.overlaps,
            found.small
        );
        checked += 1;
    }
    checked
}

/// What Chromium shows of a capacity page: the body's text size and column width, the first
/// section's title, and each plot's shown width and smallest text.
const MEASURE_THE_PAGE: &str = r#"(() => {
    const style = getComputedStyle(document.body);
    const body = parseFloat(style.fontSize);
    const column = document.body.clientWidth - parseFloat(style.paddingLeft)
        - parseFloat(style.paddingRight);
    const first = document.querySelector('h2');
    const plots = [...document.querySelectorAll('figure.plot svg')].map(svg => {
        const shown = svg.getBoundingClientRect().width;
        const scale = shown / svg.viewBox.baseVal.width;
        const sizes = [...svg.querySelectorAll('text')]
            .filter(t => t.textContent.trim())
            .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
        return { shown, smallest: Math.min(...sizes) };
    });
    return { body, column, first: first ? first.textContent.trim() : null, plots };
})()"#;

/// What `MEASURE_THE_PAGE` returns: the body's font size and the column's width (px), the
/// first section's title, and each plot's width and smallest text.
#[derive(Debug, serde::Deserialize)]
struct PageMeasured {
    body: f64,
    column: f64,
    first: Option<String>,
    plots: Vec<PlotMeasured>,
}

/// A plot as laid out: its width and its smallest text (px).
#[derive(Debug, serde::Deserialize)]
struct PlotMeasured {
    shown: f64,
    smallest: f64,
}

/// Issue 43: the HTML page `html`, as headless Chromium lays it out in a 1400 px window (the
/// page's full 960 px column): it opens with "The answer", every plot is as wide as the column
/// and its smallest text at least the body's. With `UPDATE_DOCS=1`, its picture is written to
/// `picture` (a path in the repository). Returns how many plots it measured, or `None` when
/// Chromium could not be had (said, with why).
pub fn assert_html_page_reads_well(html: &Path, picture: Option<&str>) -> Option<usize> {
    let binary = match super::browser::installed() {
        Ok(binary) => binary,
        Err(why) => {
            super::say(&format!(
                "skipped the page in Chromium: not installed ({why})"
            ));
            return None;
        }
    };
    let url = format!("file://{}", html.display());
    let mut browser = super::browser::Browser::open(&binary, &url);
    // The page is shown once Chromium has loaded it whole.
    let loaded =
        headroom_test_support::harness::wait_until(std::time::Duration::from_secs(20), || {
            browser.evaluate("document.readyState === 'complete' && !!document.querySelector('h1')")
                == serde_json::Value::Bool(true)
        });
    assert!(loaded, "Chromium never loaded {url}");
    let value = browser.evaluate(MEASURE_THE_PAGE);
    let measured: PageMeasured =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{e}: {value}"));
    let (body, column) = (measured.body, measured.column);
    assert_eq!(body, BODY_TEXT, "{measured:?}");
    assert!(column >= COLUMN - 1.0, "the full column: {measured:?}");
    assert_eq!(
        measured.first.as_deref(),
        Some("The answer"),
        "the page opens with its answer"
    );
    let plots = &measured.plots;
    for plot in plots {
        assert!(plot.shown >= column - 1.0, "fills the column: {measured:?}");
        assert!(plot.smallest >= body - 0.05, "body-size text: {measured:?}");
    }
    if let Some(picture) = picture
        && std::env::var_os("UPDATE_DOCS").is_some()
    {
        let png = browser.screenshot_of_the_page();
        std::fs::write(super::root().join(picture), png).expect("the picture");
    }
    Some(plots.len())
}
