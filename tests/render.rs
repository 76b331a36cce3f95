//! `headroom render`: the capacity page from a committed results file, snapshot by snapshot,
//! custom templates, and template errors that name the template, the line and the variable.

mod common;

use std::path::PathBuf;

use common::headroom;

const RESULTS: &str = "tests/fixtures/render/relay-results.json";

/// A folder of the test's own under the temporary directory, emptied.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-render-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn the_default_page_from_committed_results() {
    let dir = scratch("default");
    let out = dir.join("capacity.md");
    let out_arg = out.display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    insta::assert_snapshot!("relay-page", page);
    // Figures, not just text: the fit's prediction at 128 rooms against the measurement, and
    // the repeats' spread.
    assert!(page.contains("the line predicts"), "{page}");
    assert!(page.contains("| rooms = 128 | 3 |"), "{page}");
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
    assert!(rss["min"].as_f64() <= rss["median"].as_f64());
    assert!(rss["median"].as_f64() <= rss["max"].as_f64());
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

#[test]
fn a_template_error_names_the_template_the_line_and_the_variable() {
    let dir = scratch("broken");
    std::fs::write(
        dir.join("page.md"),
        "# {{ bench.name }}\n\n{{ bench.colour }}\n",
    )
    .expect("template");
    let template = dir.display().to_string();
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--template",
        &template,
        "--out",
        "/dev/null",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("template `page.md`, line 3"), "{stderr}");
    assert!(stderr.contains("--dump-context"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
