//! Issue 43: plots a reader trusts. Latency ordered by load and to scale, the fail band over
//! exactly the loads that failed; no text over data in any plot; in the HTML page, plots as wide
//! as the column and their text at least the body's size (measured in headless Chromium).

use super::page::circles;
use super::*;
use common::plots::{assert_plots_read_well, check};

fn render(test: &str, spec: &str, results: &str, page: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let dir = scratch(test);
    let out = dir.join(page);
    let out_arg = out.display().to_string();
    let mut args = vec!["render", spec, "--results", results, "--out", &out_arg];
    args.extend_from_slice(extra);
    let (code, _, stderr) = headroom(&args);
    assert_eq!(code, 0, "{stderr}");
    (dir, out)
}

/// The fixtures' pages: relay (memory split in two panels, rooms latency), routes (a request's
/// plot apart), the known-answer search (a search plot, probes twice at one load).
#[test]
fn no_text_covers_data_in_any_plot_of_the_committed_results() {
    for (test, spec, results, plots) in [
        ("read-relay", "examples/relay.toml", RESULTS, 2),
        (
            "read-routes",
            "tests/fixtures/render/routes.toml",
            "tests/fixtures/render/routes-results.json",
            3,
        ),
        (
            "read-search",
            "tests/fixtures/run/search-known.toml",
            "tests/fixtures/render/search-results.json",
            2,
        ),
    ] {
        let (dir, _) = render(test, spec, results, "capacity.md", &[]);
        assert!(assert_plots_read_well(&dir) >= plots, "{spec}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The check itself finds a legend drawn over a line and text too small to read.
#[test]
fn the_check_finds_text_over_a_line_and_small_text() {
    let over = r##"<svg width="960" height="400" viewBox="0 0 960 400" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="960" height="400" fill="#FFFFFF"/>
<text x="100" y="100" font-size="16.1">p95, median of runs</text>
<polyline fill="none" stroke="#1F77B4" points="50,95 400,96 700,300"/>
<circle cx="600" cy="300" r="4" fill="#1F77B4"/>
<text x="800" y="380" font-size="9.7">1,000</text>
</svg>"##;
    let found = check(over);
    assert_eq!(found.overlaps, ["`p95, median of runs` over a line"]);
    assert_eq!(found.small, ["`1,000` at 9.7 px"]);
    // Moved under the data, the same legend is clear.
    let clear = over.replace(
        "y=\"100\" font-size=\"16.1\"",
        "y=\"360\" font-size=\"16.1\"",
    );
    assert!(check(&clear).overlaps.is_empty());
}

/// The horizontal extents of the red bands.
fn fail_bands(svg: &str) -> Vec<(f64, f64)> {
    let document = roxmltree::Document::parse(svg).expect("xml");
    document
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#D62728"))
        .filter_map(|n| {
            let x: f64 = n.attribute("x")?.parse().ok()?;
            let width: f64 = n.attribute("width")?.parse().ok()?;
            Some((x, x + width))
        })
        .collect()
}

/// The search probed 25/s to 800/s, 412.5/s twice (a pass, then a fail) and 400/s twice: the
/// latency plot puts the 11 loads in order on a log scale, one dot each, and shades the six
/// from 412.5/s up, where some run failed, and none of the five that passed.
#[test]
fn latency_is_drawn_by_load_with_the_failed_loads_shaded() {
    let (dir, _) = render(
        "by-load",
        "tests/fixtures/run/search-known.toml",
        "tests/fixtures/render/search-results.json",
        "capacity.md",
        &[],
    );
    let plot = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("latency-"))
        })
        .expect("a latency plot");
    let svg = std::fs::read_to_string(&plot).expect("plot");
    assert!(
        svg.contains("rate (/s, log scale)"),
        "the axis is the load, to scale"
    );
    let p95 = circles(&svg, "#1F77B4");
    assert_eq!(p95.len(), 11, "one dot a load: {p95:?}");
    // Log scale: 25 → 50 → 100 → 200 → 400 lie at equal steps.
    let steps: Vec<f64> = p95[..5].windows(2).map(|w| w[1].0 - w[0].0).collect();
    for step in &steps {
        assert!((step - steps[0]).abs() <= 1.5, "{steps:?}");
    }
    let bands = fail_bands(&svg);
    assert!(!bands.is_empty(), "the failed loads are shaded");
    let shaded = |x: f64| bands.iter().any(|(from, to)| x > *from && x < *to);
    for (i, (x, _)) in p95.iter().enumerate() {
        assert_eq!(
            shaded(*x),
            i >= 5,
            "load {i} (from the lowest): {p95:?} {bands:?}"
        );
    }
    assert!(
        svg.contains("an SLO or a run failed: 412.5/s, 425/s, 450/s, 500/s, 600/s, 800/s"),
        "the legend names the failed loads"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 43: in the HTML page, a plot is as wide as the column and its smallest text at least
/// the body's, as Chromium lays the page out.
#[test]
fn the_html_page_shows_plots_column_wide_with_text_at_body_size() {
    let (dir, out) = render(
        "html-sizes",
        "tests/fixtures/run/search-known.toml",
        "tests/fixtures/render/search-results.json",
        "capacity.html",
        &["--format", "html"],
    );
    if let Some(plots) = common::plots::assert_html_page_reads_well(&out, None) {
        assert_eq!(plots, 3, "memory, the search and latency");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 43: a `[measure]` series is on the page (a table in its phase's section) and gets a
/// plot over the variable its phase swept. The relay fixture given the demo's own gauge of the
/// rooms' state, 220 KiB a room, read at the steady state of every run of its memory phase.
#[test]
fn a_measured_series_gets_a_table_and_a_plot() {
    let dir = scratch("series");
    let results = edited_results(&dir, |results| {
        let series: headroom_spec::phase::Series = serde_json::from_value(serde_json::json!({
            "name": "room_state", "metric": "demo_memory_bytes",
            "labels": { "segment": "rooms" }, "unit": "bytes"
        }))
        .expect("a series");
        results.matrix.phases[0].measure.series = vec![series];
        for point in &mut results.phases[0].points {
            let rooms = point
                .at
                .get("rooms")
                .and_then(|v| v.quantity())
                .expect("a number")
                .0;
            for (repeat, run) in point.runs.iter_mut().enumerate() {
                let bytes = rooms * 220.0 * 1024.0 + repeat as f64 * 4096.0;
                run.metrics.steady.insert("room_state".into(), bytes);
            }
        }
    });
    let out = dir.join("capacity.md");
    let (results_arg, out_arg) = (results.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &results_arg,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    assert!(
        page.contains("The `[measure]` series at the steady state, the median over the runs that did not fail (`room_state`: the metric `demo_memory_bytes` {segment=\"rooms\"}):"),
        "{page}"
    );
    // 128 rooms at 220 KiB: 27.5 MiB, the three repeats 0, 4 and 8 KiB apart.
    assert!(
        page.contains("| rooms = 128 | 27.5 MiB (27.5 MiB–27.5 MiB) |"),
        "{page}"
    );
    assert!(
        page.contains("![room_state over the `memory` phase](series-room-state-memory.svg)"),
        "{page}"
    );
    let svg = std::fs::read_to_string(dir.join("series-room-state-memory.svg")).expect("the plot");
    assert!(svg.contains("room_state (MiB)"), "in MiB");
    let medians = circles(&svg, "#1F77B4");
    let points = page.matches("| rooms = ").count() / 3;
    assert!(medians.len() >= 3, "{medians:?} ({points})");
    // They rise (up the page: smaller y) as rooms grow, left to right.
    assert!(medians.windows(2).all(|w| w[1].1 < w[0].1), "{medians:?}");
    assert!(assert_plots_read_well(&dir) >= 3);
    let _ = std::fs::remove_dir_all(dir);
}
