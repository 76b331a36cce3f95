//! `headroom render`: the capacity page from a committed results file, snapshot by snapshot,
//! custom templates, and template errors that name the template, the line and the variable.

mod common;

use std::path::{Path, PathBuf};

use common::headroom;

const RESULTS: &str = "tests/fixtures/render/relay-results.json";

/// A folder of the test's own under the temporary directory, emptied.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-render-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Renders the fixture's page into a scratch folder of the test's own, `extra` flags added;
/// the folder, the page's path and what `render` printed.
fn render_fixture(test: &str, page: &str, extra: &[&str]) -> (PathBuf, PathBuf, String) {
    let dir = scratch(test);
    let out = dir.join(page);
    let out_arg = out.display().to_string();
    let mut args = vec![
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--out",
        &out_arg,
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = headroom(&args);
    assert_eq!(code, 0, "{stderr}");
    (dir, out, stdout)
}

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
fn circles(svg: &str, fill: &str) -> Vec<(f64, f64)> {
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
            "carried to each instance's usable memory",
            "fit: 7.3 MiB + 497.4 KiB per room",
            "fit, extrapolated",
            "rss measured (median of runs)",
            "min–max over repeats",
            "t4g.medium: 3,584 MiB usable, reached at 7,363 rooms",
            "t4g.large: 7,680 MiB usable, reached at 15,796 rooms",
        ],
    );
    // The measured medians, 3 points in each panel; in the left one they rise (smaller y on
    // the page) as rooms grow, along the fitted line.
    let blue = circles(&memory, "#1F77B4");
    assert_eq!(blue.len(), 2 * 3, "{blue:?}");
    let left = &blue[..3];
    assert!(left.iter().all(|c| c.0 < 530.0), "{blue:?}");
    assert!(left[0].1 > left[1].1 && left[1].1 > left[2].1, "{left:?}");

    // Latency: p50, p95 and p99 of "seen by everyone" per step of the rooms phase, the SLO
    // line and the steps where the SLO failed.
    let latency = std::fs::read_to_string(dir.join("latency-edits.svg")).expect("latency");
    let (texts, elements) = svg_parts(&latency);
    assert_has_texts(
        &texts,
        &[
            "edits: latency by step of the `rooms` phase",
            "p50",
            "p95",
            "p99",
            "SLO edits.seen_by_all.p95 < 2500ms",
            "SLOs fail from rooms = 16",
            "rooms (a step each, not to scale)",
            "seen by everyone (log scale)",
            "16",
            "64",
            "128",
        ],
    );
    // A line per percentile with a point per step (3 steps).
    for colour in ["#2CA02C", "#1F77B4", "#9467BD"] {
        assert_eq!(circles(&latency, colour).len(), 3, "{colour}");
    }
    assert!(elements["polyline"] >= 3, "{elements:?}");
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
    let context: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    common::assert_matches_schema("page-context.schema.json", &context);
    // The memory phase ran three repeats a point: min, median and max are there.
    let rss = &context["phases"][0]["points"][2]["rss_bytes"];
    assert_eq!(rss["n"], 3, "{rss}");
    assert!(common::number(&rss["min"]) <= common::number(&rss["median"]));
    assert!(common::number(&rss["median"]) <= common::number(&rss["max"]));
    assert_eq!(context["fits"][0]["series"], "rss");
    assert!(
        context["plan"]["instances"]
            .as_array()
            .is_some_and(|i| i.len() == 2)
    );
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
    assert_eq!(page, "relay: 0.49 MiB per room\n");
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

/// The relay fixture edited by `edit`, written into `dir`.
fn edited_results(dir: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(common::root().join(RESULTS)).expect("fixture");
    let mut results: serde_json::Value = serde_json::from_str(&text).expect("json");
    edit(&mut results);
    let path = dir.join("edited-results.json");
    std::fs::write(&path, results.to_string()).expect("write");
    path
}

/// `render` of the relay fixture edited by `edit`: the page, stderr and the results path.
fn render_edited(
    test: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (String, String, String) {
    let dir = scratch(test);
    let path = edited_results(&dir, edit);
    let out = dir.join("capacity.md");
    let (path_arg, out_arg) = (path.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &path_arg,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let _ = std::fs::remove_dir_all(dir);
    (page, stderr, path_arg)
}

/// The page `render` makes of the relay fixture edited by `edit`.
fn page_of_edited_results(test: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    render_edited(test, edit).0
}

/// The relay fixture with every SLO verdict of its `rooms` phase turned to a pass: a sweep
/// that never failed, for pages that price. Written into `dir`.
fn results_where_rooms_pass(dir: &std::path::Path) -> PathBuf {
    edited_results(dir, |results| {
        for phase in results["phases"].as_array_mut().expect("phases") {
            if phase["name"] != "rooms" {
                continue;
            }
            for point in phase["points"].as_array_mut().expect("points") {
                for run in point["runs"].as_array_mut().expect("runs") {
                    for verdict in run["slo"].as_array_mut().expect("verdicts") {
                        verdict["pass"] = serde_json::Value::Bool(true);
                    }
                }
            }
        }
    })
}

/// Issue 11, the headline: `headroom plan SPEC` with neither --results nor --points reads the
/// spec's own results file, the one the page is rendered from, and says the same thing.
#[test]
fn plan_and_the_page_give_the_same_answer_from_the_same_results() {
    let dir = scratch("same-answer");
    std::fs::copy(
        common::root().join("examples/relay.toml"),
        dir.join("relay.toml"),
    )
    .expect("spec");
    std::fs::create_dir_all(dir.join("results/relay")).expect("results dir");
    std::fs::copy(
        common::root().join(RESULTS),
        dir.join("results/relay/results.json"),
    )
    .expect("results");
    let (code, plan, stderr) = common::headroom_in(&dir, &["plan", "relay.toml", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&plan).expect("plan json");
    let (code, context, stderr) =
        common::headroom_in(&dir, &["render", "relay.toml", "--dump-context"]);
    assert_eq!(code, 0, "{stderr}");
    let context: serde_json::Value = serde_json::from_str(&context).expect("context json");
    assert_eq!(plan, context["plan"]);
    // And that answer is the right one: the SLOs failed at the first step of `rooms`.
    assert_eq!(plan["slo_ceiling"]["phase"], "rooms");
    assert_eq!(plan["slo_ceiling"]["units"], serde_json::Value::Null);
    assert_eq!(plan["slo_ceiling"]["first_failing"].as_f64(), Some(16.0));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 13: the page's cost table is `plan --json`, figure for figure. The page and `plan`
/// call one planner over the same results; each cell of each instance's row is the JSON's
/// figure as the page writes it (dollars to the cent, units as counts).
#[test]
fn the_pages_cost_table_is_plan_json_figure_for_figure() {
    let dir = scratch("cost-table");
    let results = results_where_rooms_pass(&dir);
    let out = dir.join("capacity.md");
    let (results_arg, out_arg) = (results.display().to_string(), out.display().to_string());
    let (code, json, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &results_arg,
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&json).expect("plan json");
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
    let table = page.split("## Cost per room").nth(1).expect("a cost table");
    let header: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("| instance"))
        .expect("header")
        .split('|')
        .map(str::trim)
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
    };
    let dollars = |x: &serde_json::Value| format!("${:.2}", x.as_f64().expect("a figure"));
    let count = |x: &serde_json::Value| format!("{}", x.as_f64().expect("a figure"));
    let instances = plan["instances"].as_array().expect("instances");
    assert_eq!(instances.len(), 2, "{plan}");
    for instance in instances {
        let name = instance["name"].as_str().expect("name");
        let row: Vec<&str> = table
            .lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row for {name} in {table}"))
            .split('|')
            .map(str::trim)
            .collect();
        // Something is priced here, so the figures compared are numbers, not blanks.
        assert!(instance["planned_units"].is_number(), "{instance}");
        assert_eq!(row[column("per month")], dollars(&instance["usd_month"]));
        assert_eq!(
            row[column("binding ceiling")],
            format!(
                "{} ({})",
                instance["binding"]["reads"].as_str().expect("reads"),
                instance["binding"]["resource"].as_str().expect("resource")
            )
        );
        assert_eq!(
            row[column("planned rooms")],
            count(&instance["planned_units"])
        );
        assert_eq!(
            row[column("per room-month")],
            dollars(&instance["usd_per_unit_month"])
        );
        assert_eq!(
            row[column("all in / month")],
            dollars(&instance["all_in"]["usd_month"])
        );
        assert_eq!(
            row[column("all in per room")],
            dollars(&instance["all_in"]["usd_per_unit_month"])
        );
    }
    // The figures themselves: the cap of 128 rooms binds; $24.53 / 128 = $0.19.
    assert_eq!(instances[0]["planned_units"].as_f64(), Some(128.0));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11, item 1: every SLO already fails at the first step of the ceiling phase. The SLO
/// ceiling is "< 16, not measured": no planned rooms, no cost per room, the table says why, and
/// `plan --check` exits 2.
#[test]
fn a_ceiling_below_the_first_step_is_not_priced() {
    let (_, stdout, _) = headroom(&["plan", "examples/relay.toml", "--results", RESULTS]);
    assert!(stdout.contains("< 16, not measured (slo)"), "{stdout}");
    assert!(
        stdout.contains("t4g.medium: not priced: the SLO ceiling lies below 16, the first step"),
        "{stdout}"
    );
    assert!(!stdout.contains("$0.19"), "{stdout}");
    // The fixture is `--quick` results of an older relay.toml, which `--check` refuses
    // outright: the gate is held here on full results of the spec as it is.
    let dir = scratch("below-first-step");
    let full = edited_results(&dir, |results| {
        results["quick"] = serde_json::Value::Bool(false);
        let spec =
            std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("the spec");
        results["spec"]["hash"] = headroom_results::spec_hash(&spec).into();
    });
    let full = full.display().to_string();
    let (code, json, said) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &full,
        "--json",
        "--check",
    ]);
    assert!(!said.contains("warning: reading"), "{said}");
    assert_eq!(code, 2, "--check exits 2 when nothing can be priced");
    let report: serde_json::Value = serde_json::from_str(&json).expect("json");
    for instance in report["instances"].as_array().expect("instances") {
        assert_eq!(instance["planned_units"], serde_json::Value::Null);
        assert_eq!(instance["usd_per_unit_month"], serde_json::Value::Null);
        assert_eq!(
            instance["all_in"]["usd_per_unit_month"],
            serde_json::Value::Null
        );
        assert_eq!(instance["binding"]["resource"], "slo");
        assert_eq!(instance["ceilings"]["slo"]["below"].as_f64(), Some(16.0));
        assert!(instance["not_priced"].is_string(), "{instance}");
    }
    let (code, _, _) = headroom(&["plan", "examples/relay.toml", "--results", RESULTS]);
    assert_eq!(code, 0, "without --check the plan is printed and exits 0");
    let _ = std::fs::remove_dir_all(dir);
}

/// A unit of several people: the cost table gains per-person columns, each the per-unit figure
/// divided by the people in a unit, and says so.
#[test]
fn a_unit_of_several_people_is_priced_per_person_too() {
    let dir = scratch("people");
    let passing = results_where_rooms_pass(&dir);
    let passing = passing.display().to_string();
    let spec = std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("spec");
    let (before, after) = spec
        .split_once("people_per_unit = 1")
        .expect("the relay example counts one person a room");
    let spec_path = dir.join("relay.toml");
    std::fs::write(&spec_path, format!("{before}people_per_unit = 4{after}")).expect("spec");
    let out = dir.join("capacity.md");
    let (spec_arg, out_arg) = (spec_path.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        &spec_arg,
        "--results",
        &passing,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    assert!(
        page.contains("| per room-month | per person-month | all in / month | all in per room | all in per person |"),
        "{page}"
    );
    // t4g.medium: $24.53 over 128 rooms of 4 people is $0.048 a person; all in, $42.26 is $0.083.
    assert!(
        page.contains("| 128 | $0.19 | $0.048 | $42.26 | $0.33 | $0.083 |"),
        "{page}"
    );
    assert!(
        page.contains("\"per person\" divides that by 4, the people in a room"),
        "{page}"
    );
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

/// Issue 11, item 10: `[plan] budget_usd_per_month` is not silently ignored: `plan` lists what
/// the budget holds, as `--budget` does.
#[test]
fn the_specs_budget_is_planned_with() {
    let dir = scratch("budget");
    let spec = std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("spec");
    let spec = spec.replacen("[plan]\n", "[plan]\nbudget_usd_per_month = 100\n", 1);
    let spec_path = dir.join("relay.toml");
    std::fs::write(&spec_path, spec).expect("spec");
    let passing = results_where_rooms_pass(&dir);
    let (spec_arg, results_arg) = (
        spec_path.display().to_string(),
        passing.display().to_string(),
    );
    let (code, stdout, stderr) = headroom(&["plan", &spec_arg, "--results", &results_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("With 100.00 a month, the most rooms first:"),
        "{stdout}"
    );
    // 128 rooms a t4g.medium ($42.26 all in, the database counted once): two hold 256.
    assert!(
        stdout.contains("┆ t4g.medium ┆     2 ┆   256 ┆"),
        "{stdout}"
    );
    let (_, json, _) = headroom(&["plan", &spec_arg, "--results", &results_arg, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert!(report["for_budget"].is_array(), "{report}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Every run of the results, to edit.
fn each_run(results: &mut serde_json::Value, mut edit: impl FnMut(&mut serde_json::Value)) {
    for phase in results["phases"].as_array_mut().expect("phases") {
        for point in phase["points"].as_array_mut().expect("points") {
            for run in point["runs"].as_array_mut().expect("runs") {
                edit(run);
            }
        }
    }
}

/// Issue 14: runs whose limits were ignored (--ignore-limits) say so on the page, in plain
/// words, under each phase and among the caveats.
#[test]
fn limits_that_were_ignored_are_on_the_page() {
    let page = page_of_edited_results("limits-ignored", |results| {
        each_run(results, |run| {
            run["limits"] = serde_json::json!({"status": "ignored"});
        });
    });
    assert!(
        page.contains("- The spec's `[target] limits` were ignored (--ignore-limits): the target ran with the whole machine's CPUs and memory, not the instance size the limits describe. Read every figure as this machine's."),
        "{page}"
    );
    assert!(
        page.contains("`[target] limits` were ignored (--ignore-limits): measured with the whole machine, not the instance size."),
        "{page}"
    );
}

/// Issue 14: a phase measured in a cgroup says in what shape, and the worst throttling.
#[test]
fn the_shape_a_phase_was_measured_in_is_on_the_page() {
    let mut share = 0;
    let page = page_of_edited_results("limits-applied", |results| {
        each_run(results, |run| {
            share += 10;
            run["limits"] = serde_json::json!({
                "status": "applied", "cgroup": "v1", "cpus": 0.5, "memory_bytes": 1073741824u64,
                "swap_off": true, "pinned_cpus": "1", "cpu_periods": 100, "throttled_periods": share,
                "throttled_s": 1.0, "memory_peak_bytes": 1048576, "oom_kills": 0
            });
        });
    });
    assert!(
        page.contains("Measured in 0.5 CPU, 1GiB memory, no swap (cgroup v1, pinned to cores 1); the CPU quota stopped the target in up to "),
        "{page}"
    );
    assert!(!page.contains("were ignored"), "{page}");
    // Memory alone: no CPU quota, so nothing is said of throttling.
    let page = page_of_edited_results("limits-memory", |results| {
        each_run(results, |run| {
            run["limits"] = serde_json::json!({
                "status": "applied", "cgroup": "v2", "memory_bytes": 268435456u64,
                "swap_off": false, "cpu_periods": 0, "throttled_periods": 0,
                "throttled_s": 0.0, "oom_kills": 0
            });
        });
    });
    assert!(
        page.contains("\nMeasured in 256MiB memory (cgroup v2).\n"),
        "{page}"
    );
    assert!(!page.contains("CPU quota"), "{page}");
}

/// A results file that does not record the machine's cores or memory gets a page that says
/// so, never "0 logical cores, 0 B of RAM".
#[test]
fn machine_facts_that_were_not_recorded_are_not_zero() {
    let page = page_of_edited_results("unrecorded", |results| {
        let environment = results["environment"].as_object_mut().expect("environment");
        environment.remove("logical_cores");
        environment.remove("memory_bytes");
    });
    assert!(
        page.contains("an unrecorded number of logical cores, an unrecorded amount of RAM"),
        "{page}"
    );
}

/// Issue 11, item 2, the results path: a ceiling phase in which every step passed is a lower
/// bound (`≥ 128`, `lower_bound: true`, `first_failing: null`), and so is its ceiling.
#[test]
fn a_results_sweep_that_passed_everything_is_a_lower_bound() {
    let dir = scratch("lower-bound");
    let passing = results_where_rooms_pass(&dir).display().to_string();
    let (code, json, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &passing,
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&json).expect("json");
    let slo = &report["slo_ceiling"];
    assert_eq!(slo["phase"], "rooms");
    assert_eq!(slo["lower_bound"], true, "{slo}");
    assert_eq!(slo["first_failing"], serde_json::Value::Null, "{slo}");
    assert_eq!(common::number(&slo["units"]), 128.0, "{slo}");
    let ceiling = &report["instances"][0]["ceilings"]["slo"];
    assert_eq!(ceiling["reads"], "≥ 128", "{ceiling}");
    assert_eq!(ceiling["lower_bound"], true);
    let _ = std::fs::remove_dir_all(dir);
}

/// Results of an earlier version of the spec render with one note saying so (the page's own
/// plan read the results too and once said it a second time).
#[test]
fn results_of_an_edited_spec_are_noted_once() {
    let (_, stderr, path) = render_edited("edited-spec", |results| {
        results["spec"]["hash"] = serde_json::Value::from("an earlier version");
    });
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("changed since"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].starts_with(&format!("warning: reading {path}, run on ")),
        "{stderr}"
    );
    assert!(
        said[0].ends_with(
            "from a different spec (examples/relay.toml changed since they were written)"
        ),
        "{stderr}"
    );
}

/// A run that ended before its load (never ready) measured neither the generator nor the load
/// average: its zeros do not become the page's lowest figures.
#[test]
fn a_run_that_never_loaded_adds_no_zeros() {
    let page = page_of_edited_results("never-loaded", |results| {
        let run = &mut results["phases"][0]["points"][0]["runs"][0];
        run["failure"] = serde_json::json!({
            "kind": "never_ready", "waited_s": 30.0, "check": "GET /healthz", "stderr_tail": []
        });
        run["scenarios"] = serde_json::json!({});
        run["load_average"] = serde_json::json!({"min": 0.0, "max": 0.0});
        run["generator"] = serde_json::json!({
            "schedule_lag_p99_ms": 0.0, "cpu_cores": 0.0, "cores_available": 0, "bound": false
        });
    });
    // The fixture's other runs: load average 0.96 to 1.33, generator 0.0034 to 0.013 cores.
    assert!(
        page.contains("The 1-minute load average was between 1.0 and 1.3 during the runs."),
        "{page}"
    );
    assert!(
        page.contains("The load generator used 0.00 to 0.01 of the 2 cores it could use"),
        "{page}"
    );
    assert!(page.contains("1 of 12 runs failed"), "{page}");
}

/// Issue 13: results are read through their types. A file of another format is named as one
/// (both versions), and a field that does not fit is named by its place, by `plan` and
/// `render` alike; nothing renders blanks.
#[test]
fn results_of_another_format_or_shape_are_refused_by_name() {
    let dir = scratch("other-format");
    let other_format = edited_results(&dir, |results| {
        results["format"] = serde_json::Value::from(3);
    });
    let other_format_arg = other_format.display().to_string();
    let (code, _, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &other_format_arg,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: {other_format_arg}: a results file of format 3, and this headroom reads formats 1 and 2: re-run `headroom run` with this headroom, or read it with the headroom that wrote it\n"
        )
    );
    let misshapen = edited_results(&dir, |results| {
        results["phases"][0]["points"][1]["runs"][0]["process"]["steady"]["rss_bytes"] =
            serde_json::Value::from("lots");
    });
    let misshapen_arg = misshapen.display().to_string();
    let out = dir.join("page.md").display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &misshapen_arg,
        "--out",
        &out,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {misshapen_arg}: results of format 1 with a field that does not fit at `phases[0].points[1].runs[0].process.steady.rss_bytes`: invalid type: string \"lots\", expected u64"
        )),
        "{stderr}"
    );
    assert!(!dir.join("page.md").exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// A runner-up that is a lower bound (every step passed) trails by at least what it shows:
/// "slo trails at ≥ 128 (at least +0 %)", not a "+0 %" that reads as a tie.
#[test]
fn a_lower_bound_runner_up_trails_by_at_least() {
    let dir = scratch("at-least");
    let results = results_where_rooms_pass(&dir);
    let results_arg = results.display().to_string();
    let (code, stdout, stderr) =
        headroom(&["plan", "examples/relay.toml", "--results", &results_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("t4g.medium: cap binds at 128; slo trails at ≥ 128 (at least +0 %)"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The relay fixture with every point run five times (copies of its first run, the RSS
/// scaled by `scale` and spread by ±2 %) and every SLO of the `rooms` phase passed, so the
/// plan prices: for comparisons with repeats enough to call.
fn five_repeats(path: &Path, scale: f64) {
    let text = std::fs::read_to_string(common::root().join(RESULTS)).expect("fixture");
    let mut results: serde_json::Value = serde_json::from_str(&text).expect("json");
    for phase in results["phases"].as_array_mut().expect("phases") {
        let rooms = phase["name"] == "rooms";
        for point in phase["points"].as_array_mut().expect("points") {
            let first = point["runs"][0].clone();
            let runs: Vec<serde_json::Value> = [1.0, 1.01, 0.99, 1.02, 0.98]
                .iter()
                .enumerate()
                .map(|(i, jitter)| {
                    let mut run = first.clone();
                    run["repeat"] = serde_json::json!(i + 1);
                    let rss = &mut run["process"]["steady"]["rss_bytes"];
                    *rss =
                        serde_json::json!((rss.as_f64().expect("bytes") * scale * jitter) as u64);
                    if rooms {
                        for verdict in run["slo"].as_array_mut().expect("verdicts") {
                            verdict["pass"] = serde_json::Value::Bool(true);
                        }
                    }
                    run
                })
                .collect();
            point["runs"] = serde_json::Value::Array(runs);
        }
    }
    std::fs::write(path, results.to_string()).expect("write");
}

/// Issue 16: `render --baseline BASE` gives the page a "compared with" section: the cost per
/// room before and after, the figures called better or worse (20 % more memory at every
/// point, in five repeats a side), and how many were within noise, not listed.
#[test]
fn a_baseline_gives_the_page_a_compared_with_section() {
    let dir = scratch("baseline");
    let (base, new) = (dir.join("base.json"), dir.join("new.json"));
    five_repeats(&base, 1.0);
    five_repeats(&new, 1.2);
    let out = dir.join("capacity.md");
    let [base_arg, new_arg, out_arg] = [&base, &new, &out].map(|p| p.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &new_arg,
        "--baseline",
        &base_arg,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let start = page.find("## Compared with").expect("the section");
    let end = page
        .find("## What was not measured")
        .expect("the next section");
    let section = page[start..end].replace(&dir.display().to_string(), "SCRATCH");
    insta::assert_snapshot!("relay-page-compared", section);
    // The reproduce commands say how the section was made.
    assert!(page.contains(&format!("--baseline {base_arg}")), "{page}");
    // Without a baseline, no section.
    let (_, plain, _) = render_fixture("no-baseline", "capacity.md", &[]);
    let plain = std::fs::read_to_string(plain).expect("page");
    assert!(!plain.contains("## Compared with"));
    let _ = std::fs::remove_dir_all(dir);
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

/// Issue 31: a results file of format 1, committed before format 2, still reads (as format 1),
/// renders the same page as its format-2 form, and compares with its format-2 form by the
/// catalogue's names.
#[test]
fn a_format_1_file_reads_renders_and_compares() {
    let old = "tests/fixtures/format-1/relay-results.json";
    let results = headroom_results::Results::read(Path::new(old)).expect("format 1 reads");
    assert_eq!(results.format, 1);
    assert_eq!(headroom_results::RESULTS_FORMAT, 2);
    let dir = scratch("format-1");
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(old).expect("fixture")).expect("JSON");
    edited["format"] = serde_json::Value::from(2);
    let new = dir.join("format-2.json");
    std::fs::write(&new, edited.to_string()).expect("written");
    let new_arg = new.display().to_string();
    let mut pages = Vec::new();
    for (file, page) in [(old, "old.md"), (new_arg.as_str(), "new.md")] {
        let out = dir.join(page).display().to_string();
        let (code, _, stderr) = headroom(&[
            "render",
            "examples/relay.toml",
            "--results",
            file,
            "--out",
            &out,
        ]);
        assert_eq!(code, 0, "{stderr}");
        let page = std::fs::read_to_string(&out).expect("page");
        // The page ends with the commands that reproduce it, which name the file read.
        let reproduce = page
            .find("## How to reproduce")
            .expect("a reproduce section");
        pages.push(page[..reproduce].to_owned());
    }
    assert_eq!(pages[0], pages[1], "format 1 and 2 render alike");
    assert!(pages[0].contains("| rooms = 128 | 3 |"), "{}", pages[0]);
    let (code, table, stderr) = headroom(&["compare", old, &new_arg, "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&table).expect("JSON");
    let figures: std::collections::BTreeSet<&str> = report["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .filter_map(|f| f["figure"].as_str())
        .collect();
    for figure in ["rss", "edits.seen_by_all.p95", "edits.delivered"] {
        assert!(figures.contains(figure), "{figure} in {figures:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
