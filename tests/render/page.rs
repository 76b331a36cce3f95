//! The page from the committed relay results: the Markdown and HTML pages, their plots, the
//! context a template sees, custom templates and their errors, and what the docs show of it.

use super::*;

#[test]
fn the_default_page_from_committed_results() {
    let (dir, out, _) = render_fixture("default", "capacity.md", &[]);
    let page = std::fs::read_to_string(&out).expect("page");
    insta::assert_snapshot!("relay-page", page);
    // Figures, not just text: the fit's prediction at 128 rooms against the measurement, and
    // the repeats' spread.
    assert!(page.contains("the line predicts"), "{page}");
    assert!(page.contains("| rooms = 128 | 3 |"), "{page}");
    // The plots are beside the page, and the page links them.
    for plot in ["memory.svg", "latency-edits.svg"] {
        assert!(dir.join(plot).is_file(), "{plot} not written");
        assert!(page.contains(&format!("]({plot})")), "{plot} not linked");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_html_page_is_one_file_with_its_plots_inline() {
    let (dir, out, stdout) = render_fixture("html", "capacity.html", &["--format", "html"]);
    assert_eq!(stdout, format!("page: {}\n", out.display()));
    // One file: no plot files beside it.
    let written: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let html = std::fs::read_to_string(&out).expect("page");
    assert_eq!(html.matches("<figure class=\"plot\"><svg ").count(), 2);
    assert!(!html.contains(".svg\""), "a plot is linked, not inline");
    assert!(html.contains("<td>rooms = 128</td>"));
    // Each inline plot is the same SVG the Markdown page gets as a file.
    for svg in html.split("<figure class=\"plot\">").skip(1) {
        let svg = &svg[..svg.find("</figure>").expect("figure closes")];
        roxmltree::Document::parse(svg).expect("an inline SVG is well-formed XML");
    }
    // The plots hold whole megabytes of SVG text otherwise; the snapshot is of the page around
    // them.
    let mut skeleton = String::new();
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg ") {
        let end = rest[start..].find("</svg>").expect("svg closes") + start + "</svg>".len();
        skeleton.push_str(&rest[..start]);
        skeleton.push_str("<svg>…</svg>");
        rest = &rest[end..];
    }
    skeleton.push_str(rest);
    insta::assert_snapshot!("relay-page-html", skeleton);
    let _ = std::fs::remove_dir_all(dir);
}

/// The texts of an SVG's `<text>` elements, trimmed, and its elements by name.
fn svg_parts(svg: &str) -> (Vec<String>, std::collections::BTreeMap<String, usize>) {
    let document = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    assert_eq!(document.root_element().tag_name().name(), "svg");
    let mut texts = Vec::new();
    let mut elements = std::collections::BTreeMap::new();
    for node in document.descendants().filter(|n| n.is_element()) {
        *elements
            .entry(node.tag_name().name().to_owned())
            .or_insert(0) += 1;
        if node.tag_name().name() == "text" {
            texts.push(node.text().unwrap_or("").trim().to_owned());
        }
    }
    (texts, elements)
}

/// Every one of `expected` is the whole text of some `<text>` element.
fn assert_has_texts(texts: &[String], expected: &[&str]) {
    for expected in expected {
        assert!(
            texts.iter().any(|t| t == expected),
            "no `{expected}` in {texts:?}"
        );
    }
}

/// The centres of the measured points of one fill colour, left to right (4 px dots: a
/// legend's dot is 3 px).
pub(super) fn circles(svg: &str, fill: &str) -> Vec<(f64, f64)> {
    let document = roxmltree::Document::parse(svg).expect("xml");
    let mut centres: Vec<(f64, f64)> = document
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some(fill))
        .filter(|n| n.attribute("r") == Some("4"))
        .filter_map(|n| {
            Some((
                n.attribute("cx")?.parse().ok()?,
                n.attribute("cy")?.parse().ok()?,
            ))
        })
        .collect();
    centres.sort_by(|a, b| a.0.total_cmp(&b.0));
    centres
}

#[test]
fn the_plots_hold_their_series() {
    let (dir, _, stdout) = render_fixture("plots", "capacity.md", &[]);
    assert!(stdout.contains("plots: "), "{stdout}");

    // Memory: the fit of the fixture (7.3 MiB + 497.4 KiB a room), the three measured sweep
    // points, and each priced instance's usable memory where the line reaches it.
    let memory = std::fs::read_to_string(dir.join("memory.svg")).expect("memory.svg");
    let (texts, _) = svg_parts(&memory);
    assert_has_texts(
        &texts,
        &[
            "rss per room over the `memory` phase",
            "measured",
            "carried to each instance's usable memory (log scales)",
            "fit: 7.3 MiB + 497.4 KiB per room",
            "fit, extrapolated",
            "rss measured (median of runs)",
            "min–max over repeats",
            "t4g.medium: 3,584 MiB usable, reached at 7,363 rooms",
            "t4g.large: 7,680 MiB usable, reached at 15,796 rooms",
        ],
    );
    // The measured medians, 3 points in each panel; in the upper one ("measured") they rise
    // (smaller y on the page) as rooms grow, along the fitted line.
    let blue = circles(&memory, "#1F77B4");
    assert_eq!(blue.len(), 2 * 3, "{blue:?}");
    let upper: Vec<_> = blue.iter().filter(|c| c.1 < 460.0).collect();
    assert_eq!(upper.len(), 3, "{blue:?}");
    assert!(
        upper[0].1 > upper[1].1 && upper[1].1 > upper[2].1,
        "{upper:?}"
    );

    // Latency: p50, p95 and p99 of "seen by everyone" over the rooms of the rooms phase, to
    // scale, the SLO line and the loads where the SLO failed.
    let latency = std::fs::read_to_string(dir.join("latency-edits.svg")).expect("latency");
    let (texts, elements) = svg_parts(&latency);
    assert_has_texts(
        &texts,
        &[
            "edits: latency over the `rooms` phase",
            "p50, median of runs",
            "p95, median of runs",
            "p99, median of runs",
            "SLO edits.seen_by_all.p95 < 2500ms",
            "an SLO or a run failed: 16, 64, 128",
            "rooms",
            // 2.3 s to 8 s: less than a decade, a linear scale.
            "seen by everyone",
            "2.00 s",
        ],
    );
    // A line per percentile with a point per load (3 loads), left to right as rooms grow.
    for colour in ["#2CA02C", "#1F77B4", "#9467BD"] {
        assert_eq!(circles(&latency, colour).len(), 3, "{colour}");
    }
    assert!(
        elements.get("polyline").is_some_and(|&n| n >= 3),
        "{elements:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_context_matches_its_committed_schema() {
    let (code, stdout, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--dump-context",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let context: headroom_templates::PageContext =
        common::contract("page-context.schema.json", &stdout);
    assert_eq!(context.format, headroom_templates::PAGE_CONTEXT_FORMAT);
    // The memory phase ran three repeats a point: min, median and max are there.
    let rss = context.phases[0].points[2]
        .rss_bytes
        .as_ref()
        .expect("the point's memory");
    assert_eq!(rss.n, 3, "{rss:?}");
    assert!(rss.min <= rss.median && rss.median <= rss.max, "{rss:?}");
    assert_eq!(context.fits[0].series, "rss");
    let plan = context.plan.expect("the page's plan");
    assert_eq!(plan.instances.len(), 2);
}

#[test]
fn a_template_folder_overrides_the_default_page() {
    let dir = scratch("custom");
    std::fs::write(
        dir.join("page.md"),
        "{{ bench.name }}: {% for fit in fits %}{{ fit.slope | mib(2) }} per {{ bench.unit }}{% endfor %}\n",
    )
    .expect("template");
    let out = dir.join("page-out.md");
    let (template, out_arg) = (dir.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--template",
        &template,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    // The fixture's slope, 497.4 KiB a room, through the `mib(2)` filter.
    // The template's text, then the mark that makes the page headroom's to replace.
    assert_eq!(
        page,
        "relay: 0.49 MiB per room\n<!-- written by headroom -->\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A template that fails says which, where and what in the user's terms: the undefined
/// expression, a recursion named as one, a loop stopped by the fuel limit (issue 12).
#[test]
fn a_template_error_names_the_template_the_line_and_the_variable() {
    let dir = scratch("broken");
    let template = dir.display().to_string();
    let mut transcripts = Vec::new();
    for text in [
        "# {{ bench.name }}\n\n{{ bench.colour }}\n",
        "# {{ bench.name }}\n{% include \"page.md\" %}\n",
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}\n",
    ] {
        std::fs::write(dir.join("page.md"), text).expect("template");
        let args = [
            "render",
            "examples/relay.toml",
            "--results",
            RESULTS,
            "--template",
            &template,
            "--out",
            "/dev/null",
        ];
        let (code, _, stderr) = headroom(&args);
        assert_eq!(code, 1, "{stderr}");
        // The fixture predates edits of the example: that note is not what this test shows.
        let errors: String = stderr
            .lines()
            .filter(|line| !line.starts_with("note: examples/relay.toml changed since"))
            .map(|line| format!("{line}\n"))
            .collect();
        transcripts.push(format!("--- page.md\n{text}--- stderr\n{errors}"));
    }
    insta::assert_snapshot!("template-errors", transcripts.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

/// docs/templates.md shows an excerpt of the relay page and its two plots: they are what
/// `render` makes of the fixture today. `UPDATE_DOCS=1` redraws the plots in docs/images.
#[test]
fn the_docs_show_what_the_page_says() {
    let (dir, out, _) = render_fixture("docs", "capacity.md", &[]);
    let page = std::fs::read_to_string(&out).expect("page");
    let docs = std::fs::read_to_string(common::root().join("docs/templates.md")).expect("docs");
    let excerpt = docs
        .split_once("```markdown\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(excerpt, _)| excerpt)
        .expect("docs/templates.md has a ```markdown excerpt");
    assert!(
        excerpt.lines().count() > 20 && page.contains(excerpt),
        "docs/templates.md's excerpt is no longer what the page says; copy it from\n{page}"
    );
    for (drawn, committed) in [
        ("memory.svg", "docs/images/relay-memory.svg"),
        ("latency-edits.svg", "docs/images/relay-latency-edits.svg"),
    ] {
        let drawn = std::fs::read_to_string(dir.join(drawn)).expect("plot");
        let path = common::root().join(committed);
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &drawn).expect("write docs image");
        }
        let committed_text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed_text == drawn,
            "{committed} is not the plot render draws today; run UPDATE_DOCS=1 cargo test --test render"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `--out /dev/stdout`: the page is streamed, nothing is written beside it (not even into
/// `/dev`), and the note says where the plots went.
#[test]
fn a_page_streamed_to_stdout_writes_no_files() {
    let (code, stdout, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--out",
        "/dev/stdout",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("# Capacity: relay\n"), "{stdout}");
    assert!(!stdout.contains("page: "), "{stdout}");
    assert!(stderr.contains("the plots are not written"), "{stderr}");
    assert!(!std::path::Path::new("/dev/memory.svg").exists());
    assert!(!std::path::Path::new("/dev/stdout.tmp").exists());
}

/// Issue 30: where SLOs judge requests apart (a fast route under 10 ms, a slow one under
/// 35 ms), the page leads with each request's figures against its own threshold, the
/// scenario's mixed figures after them; each judged request has its own latency plot with its
/// own SLO line, and the mixed plot carries no request's line. From committed results (one
/// run of tests/fixtures/render/routes.toml), so the page is the same every time.
#[test]
fn per_request_slos_lead_the_page_and_its_plots() {
    let dir = scratch("routes");
    let out = dir.join("capacity.md");
    let out_arg = out.display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "tests/fixtures/render/routes.toml",
        "--results",
        "tests/fixtures/render/routes-results.json",
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let start = page.find("### rate").unwrap_or_else(|| panic!("{page}"));
    let end = page[start..]
        .find("## Memory")
        .map_or(page.len(), |e| start + e);
    let section = &page[start..end];
    insta::assert_snapshot!("routes-page-phase", section);
    let leads = section
        .find("| point | request |")
        .expect("the requests' table");
    let mixed = section
        .find("| point | runs | RSS")
        .expect("the mixed table");
    assert!(leads < mixed, "{section}");
    assert!(
        section.contains("| rate = 400/s | `api.notes` |"),
        "{section}"
    );
    assert!(section.contains("| p95 < 35ms |"), "{section}");
    // A plot per judged request, each with its own line; the mixed one with none of theirs.
    let svg = |file: &str| std::fs::read_to_string(dir.join(file)).expect(file);
    let notes = svg("latency-api-notes.svg");
    assert!(
        notes.contains("api.notes.latency.p95 &lt; 35ms")
            || notes.contains("api.notes.latency.p95 < 35ms"),
        "the notes plot draws its SLO"
    );
    assert!(
        !notes.contains("api.health.latency"),
        "and no other request's"
    );
    let health = svg("latency-api-health.svg");
    assert!(
        health.contains("api.health.latency.p95"),
        "the health plot draws its SLO"
    );
    let mixed_plot = svg("latency-api.svg");
    assert!(
        !mixed_plot.contains("api.notes.latency"),
        "the mixed plot has no request's line"
    );
    let first_plot = page
        .find("latency-api-")
        .expect("a request's plot is linked");
    assert!(
        first_plot
            < page
                .find("(latency-api.svg)")
                .expect("the mixed plot is linked")
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 32: a phase that searched its ceiling, on the page: the bracket and how it was found,
/// every probe, the search's plot, what broke at the bracket's top. From the committed results
/// of the known-answer fixture (the demo answers 400 requests a second: over its 10 s hold the
/// first 503 comes past 404/s).
#[test]
fn a_searched_ceiling_on_the_page() {
    let dir = scratch("searched");
    let out = dir.join("capacity.md");
    let out_arg = out.display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "tests/fixtures/run/search-known.toml",
        "--results",
        "tests/fixtures/render/search-results.json",
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let start = page
        .find("## The SLO ceiling")
        .unwrap_or_else(|| panic!("{page}"));
    let end = page[start..]
        .find("\n## ")
        .map_or(page.len(), |e| start + e + 1);
    let section = &page[start..end];
    insta::assert_snapshot!("search-page-ceiling", section);
    assert!(
        section.contains("it passes at rate = 400/s and fails at rate = 412.5/s"),
        "{section}"
    );
    let svg = std::fs::read_to_string(dir.join("search-load.svg")).expect("the search plot");
    let (texts, elements) = svg_parts(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t == "How the `load` phase searched its ceiling"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("the bracket: passes at 400, fails at 412")),
        "{texts:?}"
    );
    // A dot per probe, and one per legend entry (passed, failed).
    assert!(
        elements.get("circle").copied().unwrap_or(0) >= 13 + 2,
        "{elements:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
