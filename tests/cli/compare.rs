//! `compare`: each figure judged from its repeats, a lever compared inside one file, and a
//! tiny significant change that is no meaningful change.

use headroom_compare::report::{Better, COMPARE_FORMAT, FigureReport, Report, VerdictWord};
use headroom_compare::verdict::Basis;
use headroom_spec::compare::GateRule;
use headroom_test_support::results::{relay, to_text, typed_text};

use super::*;

/// The row of `name` in a `compare --format json` report.
fn figure<'a>(report: &'a Report, name: &str) -> &'a FigureReport {
    report
        .figures
        .iter()
        .find(|f| f.figure == name)
        .unwrap_or_else(|| panic!("no {name} row: {report:?}"))
}

/// The relay fixture's first point (one room) with five repeats, the steady RSS of each scaled
/// by one of `scales`, written to `name` under the tests' scratch folder; `cpu` renames the
/// machine's CPU.
fn relay_with_rss(name: &str, scales: &[f64], cpu: Option<&str>) -> String {
    let mut results = relay();
    results.phases.truncate(1);
    let points = &mut results.phases[0].points;
    points.truncate(1);
    let first = points[0].runs[0].clone();
    points[0].runs = scales
        .iter()
        .zip(1..)
        .map(|(scale, repeat)| {
            let mut run = first.clone();
            run.repeat = repeat;
            let steady = run.process.steady.as_mut().expect("a steady sample");
            steady.rss_bytes = (steady.rss_bytes as f64 * scale) as u64;
            run
        })
        .collect();
    if let Some(cpu) = cpu {
        results.environment.cpu_model = cpu.to_owned();
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, to_text(&results)).expect("written");
    path.display().to_string()
}

/// Issue 16: `compare` judges every figure of every matched point from its repeats. A file
/// against itself at three repeats cannot tell (and says how many repeats can); 20 % more
/// memory in each of five repeats is worse, the latencies of identical copies within noise;
/// from another machine, no figure is called.
#[test]
fn compare_judges_each_figure_from_its_repeats() {
    let fixture = common::fixtures::RELAY_RESULTS_PATH;
    let same = transcript(&["compare", fixture, fixture]);
    let base = relay_with_rss("compare-base.json", &[1.0, 1.01, 0.99, 1.02, 0.98], None);
    let more = [1.2, 1.21, 1.19, 1.22, 1.18];
    let new = relay_with_rss("compare-new.json", &more, None);
    let elsewhere = relay_with_rss("compare-elsewhere.json", &more, Some("Another CPU"));
    let output = |args: &[&str], label: &str| {
        let (code, stdout, stderr) = headroom(args);
        format!("$ headroom compare {label}\nexit code: {code}\n{stdout}{stderr}")
    };
    let worse = output(&["compare", &base, &new], "BASE NEW");
    let unlike = output(&["compare", &base, &elsewhere], "BASE ELSEWHERE");
    assert!(worse.contains("worse (p 0.008)"), "{worse}");
    assert!(unlike.contains("cross-hardware"), "{unlike}");
    assert!(!unlike.contains("worse (p"), "{unlike}");
    insta::assert_snapshot!("compare", format!("{same}\n{worse}\n{unlike}"));
    // The gate: memory 20 % worse beyond noise fails a 10 % rule (exit 2), passes a 25 % one;
    // the latencies of identical copies pass any.
    let gated = |rules: &[&str], format: &str| {
        let mut args = vec!["compare", base.as_str(), new.as_str(), "--format", format];
        for rule in rules {
            args.extend(["--fail-on", rule]);
        }
        headroom(&args)
    };
    let (code, markdown, _) = gated(&["rss +10%", "seen_by_all.p95 +10%"], "md");
    assert_eq!(code, 2, "{markdown}");
    insta::assert_snapshot!("compare-md", markdown);
    let (code, json, _) = gated(&["rss +25%"], "json");
    assert_eq!(code, 0, "{json}");
    let report: Report = common::contract("compare.schema.json", &json);
    assert_eq!(report.format, COMPARE_FORMAT);
    assert!(!report.failed);
    let rss = figure(&report, "rss");
    assert_eq!(
        (rss.verdict, rss.better),
        (VerdictWord::Worse, Better::Lower)
    );
    assert_eq!(rss.base.as_ref().expect("a base side").repeats, 5);
    // Repeats that spread (here 0.7x to 1.3x) make the figure noisy, with the advice.
    let scattered = relay_with_rss("compare-noisy.json", &[1.0, 1.3, 0.7, 1.2, 0.8], None);
    let (code, noisy, _) = headroom(&["compare", &base, &scattered]);
    assert_eq!(code, 0);
    assert!(noisy.contains("within noise (p 1.00), noisy"), "{noisy}");
    assert!(
        noisy.contains("noisy: 1 of the figures have repeats that spread more than 10 %"),
        "{noisy}"
    );
}

/// Issue 16: a spec's committed gates (`[compare] fail_on`, in the results' plan) are held
/// with no flag; a gate or rule that names no figure, the wrong way or an old name is an error
/// that says so.
#[test]
fn compare_holds_committed_gates_and_refuses_wrong_rules() {
    let base = relay_with_rss(
        "compare-gates-base.json",
        &[1.0, 1.01, 0.99, 1.02, 0.98],
        None,
    );
    let more = [1.2, 1.21, 1.19, 1.22, 1.18];
    let new = relay_with_rss("compare-gates-new.json", &more, None);
    let gated = |rules: &[&str], format: &str| {
        let mut args = vec!["compare", base.as_str(), new.as_str(), "--format", format];
        for rule in rules {
            args.extend(["--fail-on", rule]);
        }
        headroom(&args)
    };
    let mut committed = typed_text(&std::fs::read_to_string(&new).expect("new"));
    let gate = |rule: &str, figure: &str, threshold: f64| GateRule {
        rule: rule.to_owned(),
        figure: figure.to_owned(),
        threshold,
    };
    committed.matrix.gates = vec![gate("rss +10%", "rss", 0.1)];
    let committed_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-committed.json");
    std::fs::write(&committed_path, to_text(&committed)).expect("written");
    let (code, out, _) = headroom(&["compare", &base, &committed_path.display().to_string()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("gate `rss +10%` at memory: rooms = 1 (rss): +20.0 %, worse: FAILED"),
        "{out}"
    );
    // A committed gate that names no figure is an error that says whose spec holds it.
    committed.matrix.gates = vec![gate("usd_per_unit +5%", "usd_per_unit", 0.05)];
    std::fs::write(&committed_path, to_text(&committed)).expect("written");
    let (code, _, stderr) = headroom(&["compare", &base, &committed_path.display().to_string()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: a gate of the spec behind {} (`[compare] fail_on`): fix or remove it there: gate `usd_per_unit +5%` names no figure of these files",
            committed_path.display()
        )),
        "{stderr}"
    );
    // A rule that names no figure, or the better way, is a usage error that says so.
    let (code, _, stderr) = gated(&["usd_per_unit +5%"], "table");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("names no figure of these files; they have: edits.delivered"),
        "{stderr}"
    );
    let (code, _, stderr) = gated(&["rss -5%"], "table");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("`rss` is worse when higher: write its threshold as +5%"),
        "{stderr}"
    );
    // Issue 31: figures are named as SLOs name them; an old name is refused with the new one.
    let (code, _, stderr) = gated(&["rss_mib +10%"], "table");
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "gate `rss_mib +10%`: `rss_mib` is now `rss` (figures are named as SLOs name them): write `rss +10%`"
        ),
        "{stderr}"
    );
}

/// Issue 16: `compare --by` on one file whose phases sweep a lever prints the levers table:
/// each value against the phase's first, and says its repeats were not interleaved.
#[test]
fn compare_by_a_lever_inside_one_file() {
    let fixture = common::fixtures::RELAY_RESULTS_PATH;
    let levers = transcript(&["compare", fixture, "--by", "rooms"]);
    assert!(levers.contains("rooms 1 → 32"), "{levers}");
    assert!(levers.contains("not interleaved"), "{levers}");
    let wrong = transcript(&["compare", fixture, "--by", "fanout"]);
    assert!(wrong.contains("exit code: 1"), "{wrong}");
    // One file is one machine: the cross-hardware flag would do nothing, and is refused.
    let (code, _, stderr) = headroom(&[
        "compare",
        fixture,
        "--by",
        "rooms",
        "--allow-cross-hardware",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("cannot be used with '--allow-cross-hardware'"),
        "{stderr}"
    );
    insta::assert_snapshot!("compare-by", format!("{levers}\n{wrong}"));
}

/// Issue 30: a change that is real (the repeats rank wholly apart, p 0.008) and tiny (0.4 %)
/// reads "no meaningful change" under the default minimum effect of 3 %, and better with
/// `--min-effect 0.1%`; the compact table counts a figure's unchanged points in one row, and
/// `--all` lists them.
#[test]
fn a_tiny_significant_change_is_no_meaningful_change() {
    let base = relay_with_rss("tiny-base.json", &[1.0, 1.0005, 0.9995, 1.001, 0.999], None);
    let less = [0.996, 0.9965, 0.9955, 0.997, 0.995];
    let new = relay_with_rss("tiny-new.json", &less, None);
    let (code, table, said) = headroom(&["compare", &base, &new]);
    assert_eq!(code, 0, "{said}");
    let row = table
        .lines()
        .find(|l| l.contains("rss"))
        .unwrap_or_else(|| panic!("no rss row in\n{table}"));
    assert!(row.contains("-0.4 %"), "{row}");
    assert!(row.contains("no meaningful change (p 0.008)"), "{row}");
    assert!(table.contains("a change of the medians under 3 % is no meaningful change"));
    let (_, json, _) = headroom(&["compare", &base, &new, "--format", "json"]);
    let report: Report = common::contract("compare.schema.json", &json);
    let rss = figure(&report, "rss");
    assert_eq!(rss.verdict, VerdictWord::NoMeaningfulChange, "{rss:?}");
    assert!(rss.p_value.expect("a p-value") < 0.05, "{rss:?}");
    assert_eq!(report.method.min_effect, 0.03);
    let (_, table, _) = headroom(&["compare", &base, &new, "--min-effect", "0.1%"]);
    let row = table.lines().find(|l| l.contains("rss")).expect("a row");
    assert!(row.contains("better (p 0.008)"), "{row}");
    // The relay fixture's six points: a row per figure by default, a row per point with --all.
    let fixture = common::fixtures::RELAY_RESULTS_PATH;
    let (_, compact, _) = headroom(&["compare", fixture, fixture]);
    let (_, all, _) = headroom(&["compare", fixture, fixture, "--all"]);
    let rows = |table: &str, figure: &str| {
        table
            .lines()
            .filter(|l| l.contains(&format!(" {figure} ")))
            .count()
    };
    // Two phases of three points: a row for each phase's figure, or one for each point.
    assert_eq!(rows(&compact, "rss"), 2, "{compact}");
    assert_eq!(rows(&all, "rss"), 6, "{all}");
    assert!(compact.contains("memory: 3 points"), "{compact}");
}

/// Issue 32: two searched SLO ceilings are compared by their brackets, not by a rank test on
/// copies of one number: brackets apart are a change (better when the new last pass is at or
/// above the base's first fail), brackets that overlap are no change the searches can tell.
#[test]
fn searched_ceilings_are_compared_by_their_brackets() {
    let base = "tests/fixtures/render/search-results.json";
    let text = std::fs::read_to_string(common::root().join(base)).expect("the fixture");
    let moved = |name: &str, pass: &str, fail: &str| {
        let mut results = headroom_test_support::results::typed_text(&text);
        let record = results.phases[0].search.as_mut().expect("a search");
        record.pass = Some(headroom_spec::VarValue::Text(pass.to_owned()));
        record.fail = Some(headroom_spec::VarValue::Text(fail.to_owned()));
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&path, to_text(&results)).expect("written");
        path.display().to_string()
    };
    let row_of = |new: &str| {
        let (code, stdout, stderr) = headroom(&["compare", "--format", "json", base, new]);
        assert_eq!(code, 0, "{stderr}");
        let report: Report = common::contract("compare.schema.json", &stdout);
        report
            .figures
            .into_iter()
            .find(|f| f.point == "searched" && f.figure == "ceiling.slo.units")
            .unwrap_or_else(|| panic!("no searched ceiling row in {stdout}"))
    };
    let higher = row_of(&moved("search-higher.json", "500/s", "520/s"));
    assert_eq!(higher.basis, Basis::Search, "{higher:?}");
    assert_eq!(higher.verdict, VerdictWord::Better, "{higher:?}");
    let bracket = higher.base.as_ref().expect("a base bracket");
    assert_eq!((bracket.min, bracket.max), (400.0, 412.5), "{higher:?}");
    let lower = row_of(&moved("search-lower.json", "300/s", "400/s"));
    assert_eq!(lower.verdict, VerdictWord::Worse, "{lower:?}");
    let overlapping = row_of(&moved("search-overlapping.json", "405/s", "420/s"));
    assert_eq!(
        overlapping.verdict,
        VerdictWord::WithinNoise,
        "{overlapping:?}"
    );
    // In the table, each side reads as its bracket.
    let (_, table, _) = headroom(&[
        "compare",
        base,
        &moved("search-table.json", "500/s", "520/s"),
    ]);
    assert!(
        table.contains("passes at 400, fails at 412 (×1 at each end)"),
        "{table}"
    );
    assert!(table.contains("better: the brackets are apart"), "{table}");
}

/// Issue 57: two results of different benches are refused, naming both (their points measure
/// different servers or loads); `--allow-other-bench` compares them, saying so.
#[test]
fn compare_refuses_two_benches_unless_allowed() {
    let base = relay_with_rss("bench-a.json", &[1.0, 1.0, 1.0], None);
    let mut other = relay();
    other.phases.truncate(1);
    other.matrix.bench.name = "chat".to_owned();
    let renamed = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-b.json");
    std::fs::write(&renamed, to_text(&other)).expect("written");
    let renamed = renamed.display().to_string();
    let (code, _, stderr) = headroom(&["compare", &base, &renamed]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{base} holds bench `relay` and {renamed} bench `chat`: compare two results of one bench (a base and its change), or add --allow-other-bench if `relay` was renamed `chat`"
        )),
        "{stderr}"
    );
    let (code, _, stderr) = headroom(&["compare", &base, &renamed, "--allow-other-bench"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("note: comparing bench `relay`"), "{stderr}");
}
