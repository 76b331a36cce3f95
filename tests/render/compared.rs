//! A page compared with a baseline, and a results file of format 1 read, rendered and compared.

use super::*;

/// The relay fixture with every point run five times (copies of its first run, the RSS
/// scaled by `scale` and spread by ±2 %) and every SLO of the `rooms` phase passed, so the
/// plan prices: for comparisons with repeats enough to call.
fn five_repeats(path: &Path, scale: f64) {
    let mut results = relay();
    rooms_pass(&mut results);
    for point in results.phases.iter_mut().flat_map(|p| p.points.iter_mut()) {
        let first = point.runs[0].clone();
        point.runs = [1.0, 1.01, 0.99, 1.02, 0.98]
            .iter()
            .zip(1..)
            .map(|(jitter, repeat)| {
                let mut run = first.clone();
                run.repeat = repeat;
                let steady = run.process.steady.as_mut().expect("a steady sample");
                steady.rss_bytes = (steady.rss_bytes as f64 * scale * jitter) as u64;
                run
            })
            .collect();
    }
    std::fs::write(path, to_text(&results)).expect("write");
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
    // Its format-2 form: the same figures, written by this headroom's types.
    let mut edited = results.clone();
    edited.format = headroom_results::RESULTS_FORMAT;
    let new = dir.join("format-2.json");
    std::fs::write(&new, to_text(&edited)).expect("written");
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
    let report: headroom_compare::report::Report = common::contract("compare.schema.json", &table);
    let figures: std::collections::BTreeSet<&str> =
        report.figures.iter().map(|f| f.figure.as_str()).collect();
    for figure in ["rss", "edits.seen_by_all.p95", "edits.delivered"] {
        assert!(figures.contains(figure), "{figure} in {figures:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
