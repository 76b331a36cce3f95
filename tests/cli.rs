//! The `headroom` binary from the outside: transcripts of what it prints and its exit codes.
//!
//! Snapshots live in `tests/snapshots/`; review changes with `cargo insta review`.

mod common;

use std::path::Path;

use common::headroom;
use headroom_compiler::Code;

fn transcript(args: &[&str]) -> String {
    let (code, stdout, stderr) = headroom(args);
    format!(
        "$ headroom {}\nexit code: {code}\n----- stdout -----\n{stdout}----- stderr -----\n{stderr}",
        args.join(" ")
    )
}

fn fixture(code: Code) -> String {
    format!(
        "tests/fixtures/diagnostics/{}-{}.toml",
        code.as_str(),
        code.slug()
    )
}

/// One fixture per diagnostic code, each snapshot with the exact rendering (caret included)
/// and the JSON form. The JSON is also checked here: the fixture shows its own code, at a
/// 1-based line and column that point at the caret.
#[test]
fn every_code_has_a_fixture_with_its_rendering_and_json() {
    assert!(Code::ALL.len() >= 25);
    for &code in Code::ALL {
        let path = fixture(code);
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(&path).exists(),
            "no fixture {path}"
        );
        let human = transcript(&["--color", "never", "validate", &path]);
        let json = transcript(&["validate", "--format", "json", &path]);
        insta::assert_snapshot!(
            format!("{}-{}", code.as_str(), code.slug()),
            format!("{human}\n{json}")
        );

        let (exit, stdout, _) = headroom(&["validate", "--format", "json", &path]);
        let expected_exit = if code.severity() == headroom_compiler::Severity::Error {
            1
        } else {
            0
        };
        assert_eq!(exit, expected_exit, "{path}");
        let diagnostics: Vec<serde_json::Value> =
            serde_json::from_str(&stdout).expect("json array");
        let own: Vec<&serde_json::Value> = diagnostics
            .iter()
            .filter(|d| d["code"] == code.as_str())
            .collect();
        assert!(!own.is_empty(), "{path} does not show {}", code.as_str());
        assert_eq!(
            own.len(),
            diagnostics.len(),
            "{path} shows other codes too: {stdout}"
        );
        for d in &own {
            assert_eq!(d["file"], path.as_str());
            for key in ["severity", "message", "pointer"] {
                assert!(d[key].is_string(), "{path}: {key}");
            }
        }
        // The caret's line and column in the JSON match the `-->` line of the rendering.
        if let (Some(line), Some(column)) = (own[0]["line"].as_u64(), own[0]["column"].as_u64()) {
            assert!(
                human.contains(&format!("--> {path}:{line}:{column}")),
                "{path}: {line}:{column} not in\n{human}"
            );
        }
    }
}

#[test]
fn every_example_validates() {
    let examples = [
        "examples/chat.toml",
        "examples/members.toml",
        "examples/notes-api.toml",
        "examples/pad.toml",
        "examples/relay.toml",
    ];
    let mut args = vec!["validate"];
    args.extend(examples);
    insta::assert_snapshot!("validate-examples", transcript(&args));
}

#[test]
fn compile_prints_the_matrix() {
    insta::assert_snapshot!(
        "compile-relay",
        transcript(&["compile", "examples/relay.toml"])
    );
    insta::assert_snapshot!(
        "compile-chat",
        transcript(&["compile", "examples/chat.toml"])
    );
}

#[test]
fn compile_json_is_the_resolved_plan() {
    let (exit, stdout, _) = headroom(&["compile", "--json", "examples/relay.toml"]);
    assert_eq!(exit, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("plan json");
    assert_eq!(plan["runs"].as_array().map(Vec::len), Some(42));
    let rooms: Vec<i64> = plan["phases"][0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            p["scenarios"][0]["rooms"]
                .as_i64()
                .expect("rooms resolved to a number")
        })
        .collect();
    assert_eq!(rooms, [1, 4, 16, 32, 64, 128]);
    // `{port}` stays for the runner; variables are filled.
    assert_eq!(
        plan["phases"][1]["points"][2]["scenarios"][0]["send"]["rate"],
        "4/s"
    );
    assert_eq!(
        plan["phases"][0]["points"][0]["scenarios"][0]["url"],
        "ws://127.0.0.1:{port}/rooms/{room}?peer={peer}"
    );
}

#[test]
fn a_missing_file_is_a_usage_error_and_the_others_are_still_checked() {
    let (exit, stdout, stderr) =
        headroom(&["validate", "examples/nope.toml", "examples/relay.toml"]);
    assert_eq!(exit, 1);
    assert!(
        stderr.contains("cannot read spec `examples/nope.toml`"),
        "{stderr}"
    );
    assert_eq!(stdout, "examples/relay.toml: valid (0 warnings)\n");
}

#[test]
fn schema_prints_the_committed_schema() {
    let (exit, stdout, _) = headroom(&["schema"]);
    assert_eq!(exit, 0);
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/spec.schema.json"),
    )
    .expect("committed schema");
    assert_eq!(stdout, committed);
}

/// Issue 31: `headroom figures` prints the figure catalogue, the table docs/spec.md shows.
#[test]
fn figures_prints_the_catalogue_the_docs_show() {
    let (exit, stdout, _) = headroom(&["figures"]);
    assert_eq!(exit, 0);
    assert_eq!(stdout, headroom_figures::catalogue::markdown());
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec.md"))
        .expect("docs/spec.md");
    assert!(
        docs.contains(&stdout),
        "docs/spec.md lists the same figures"
    );
    assert!(
        stdout.contains("| `cpu` | cores (% of one) | the point: the server's process tree | the CPU time (user and system) the target's process tree used over the hold"),
        "{stdout}"
    );
}

#[test]
fn every_example_starts_with_its_schema_line() {
    for entry in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")).expect("examples")
    {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("example");
            assert!(
                text.starts_with("#:schema ../schemas/spec.schema.json\n"),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn a_spec_can_bring_its_own_price_table() {
    let runs: Vec<String> = ["own", "missing", "broken"]
        .iter()
        .map(|which| {
            transcript(&[
                "validate",
                &format!("tests/fixtures/prices/with-{which}-prices.toml"),
            ])
        })
        .collect();
    insta::assert_snapshot!("own-price-table", runs.join("\n"));
    let (exit, _, _) = headroom(&["validate", "tests/fixtures/prices/with-own-prices.toml"]);
    assert_eq!(exit, 0);
}

#[test]
fn every_command_has_help_with_an_example() {
    for command in [
        vec!["--help"],
        vec!["validate", "--help"],
        vec!["compile", "--help"],
        vec!["schema", "--help"],
        vec!["figures", "--help"],
        vec!["demo-target", "--help"],
        vec!["run", "--help"],
        vec!["fit", "--help"],
        vec!["compare", "--help"],
        vec!["prices", "--help"],
        vec!["plan", "--help"],
        vec!["render", "--help"],
    ] {
        let (exit, stdout, _) = headroom(&command);
        assert_eq!(exit, 0);
        assert!(stdout.contains("Example"), "{command:?}:\n{stdout}");
        insta::assert_snapshot!(
            format!("help-{}", command[0].trim_start_matches('-')),
            stdout
        );
    }
}

#[test]
fn fit_reads_points_from_a_csv() {
    let csv = "tests/fixtures/points/relay-memory.csv";
    let table = transcript(&["fit", "--points", csv, "--x", "rooms"]);
    let json = transcript(&["fit", "--json", "--points", csv, "--x", "rooms"]);
    let bad = transcript(&[
        "fit",
        "--points",
        "tests/fixtures/points/bad.csv",
        "--x",
        "rooms",
    ]);
    insta::assert_snapshot!("fit-csv", format!("{table}\n{json}\n{bad}"));
    let (exit, stdout, _) = headroom(&["fit", "--json", "--points", csv, "--x", "rooms"]);
    assert_eq!(exit, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    // The relay capacity page's published fit: 222.6 MiB + 10.04 MiB per room, R² 0.9996.
    let rss = &report["fits"][0];
    assert_eq!(rss["series"], "rss_mib");
    let mib = |v: &serde_json::Value| v.as_f64().expect("number") / 1_048_576.0;
    assert!((mib(&rss["intercept"]) - 222.6).abs() < 0.05);
    assert!((mib(&rss["slope"]) - 10.04).abs() < 0.005);
    assert!((rss["r2"].as_f64().expect("r2") - 0.9996).abs() < 0.00005);
}

#[test]
fn prices_list_every_entry_with_its_as_of_date() {
    insta::assert_snapshot!(
        "prices-hetzner",
        transcript(&["prices", "--provider", "hetzner"])
    );
    let (exit, stdout, _) = headroom(&["prices", "--json"]);
    assert_eq!(exit, 0);
    let listing: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(listing["hours_per_month"], 730.0);
    let entries = listing["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 58);
    assert!(
        entries
            .iter()
            .all(|e| e["as_of"].as_str().is_some_and(|a| !a.is_empty()))
    );
    assert!(
        entries
            .iter()
            .all(|e| e["source"].as_str().is_some_and(|s| !s.is_empty()))
    );
    let medium = entries
        .iter()
        .find(|e| e["id"] == "t4g.medium")
        .expect("t4g.medium");
    assert!((medium["usd_per_month"].as_f64().expect("monthly") - 24.528).abs() < 1e-9);
    // A price past its `stale_after` date warns; a recent one does not.
    assert!(medium.get("warnings").is_none());
    let cx22 = entries.iter().find(|e| e["id"] == "CX22").expect("CX22");
    assert!(
        cx22["warnings"]
            .to_string()
            .contains("stale since 2026-04-01")
    );
}

/// The relay capacity page's model: its six memory points, its room cap and its CPU ceiling.
const RELAY_PLAN: &[&str] = &[
    "plan",
    "--points",
    "tests/fixtures/points/relay-memory.csv",
    "--x",
    "rooms",
    "--memory",
    "rss_mib",
    "--cap",
    "128",
    "--cpu-ceiling",
    "57",
    "--ipv4",
    "0",
];

/// The relay page's monthly lines and instances: 30 GB of gp3, a db.t4g.micro, two t4g sizes.
const RELAY_PRICED: [&str; 8] = [
    "--ebs-gb",
    "30",
    "--rds",
    "db.t4g.micro",
    "--instance",
    "t4g.medium",
    "--instance",
    "t4g.large",
];

#[test]
fn plan_prices_the_relay_page_from_its_points() {
    let mut args = RELAY_PLAN.to_vec();
    args.extend(RELAY_PRICED);
    let output = transcript(&args);
    insta::assert_snapshot!("plan-relay", output);
    // The relay capacity page's own figures.
    for figure in [
        "$24.53", "$49.06", "57 (cpu)", "$0.43", "$0.86", "$38.61", "$63.14", "$0.68", "$1.11",
    ] {
        assert!(output.contains(figure), "{figure} not in\n{output}");
    }
    assert!(output.contains("burstable"), "the burstable warning");
    // docs/planning.md shows this table's rows: they are what `plan` prints today.
    let docs = std::fs::read_to_string(common::root().join("docs/planning.md")).expect("docs");
    for row in output.lines().filter(|l| l.starts_with("│ ")) {
        assert!(
            docs.contains(row),
            "docs/planning.md lacks the row\n{row}\nof\n{output}"
        );
    }
    let (exit, _, stderr) = headroom(&["plan", "--cpu-ceiling", "10", "--instance", "t4g.huge"]);
    assert_eq!(exit, 1);
    assert!(
        stderr.contains("`t4g.huge` is not in the price table"),
        "{stderr}"
    );
}

#[test]
fn plan_finds_the_cheapest_fleet_and_what_a_budget_holds() {
    let mut args = RELAY_PLAN.to_vec();
    args.extend([
        "--instance",
        "t4g.medium",
        "--instance",
        "t4g.large",
        "--instance",
        "c7g.large",
    ]);
    args.extend(["--units", "200", "--budget", "100"]);
    let output = transcript(&args);
    insta::assert_snapshot!("plan-units-budget", output);
    // 200 rooms at 57 a t4g.medium: 4 of them, 4 × $24.528 = $98.11; the cheapest.
    let fleets = output.split("To hold").nth(1).expect("the fleet table");
    let first = fleets.lines().find(|l| l.contains("t4g.")).expect("a row");
    assert!(
        first.contains("t4g.medium") && first.contains("$98.11"),
        "{first}"
    );
    assert!(output.contains("98.11 more a month than the t4g.medium fleet"));
}

/// Checks a `plan --json` output against the committed schema.
fn plan_json(args: &[&str]) -> serde_json::Value {
    let (exit, stdout, stderr) = headroom(args);
    assert_eq!(exit, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("plan json");
    common::assert_matches_schema("plan.schema.json", &report);
    report
}

#[test]
fn plan_json_is_the_documented_contract() {
    let mut args = RELAY_PLAN.to_vec();
    args.extend(["--unit", "room"]);
    args.extend(RELAY_PRICED);
    args.extend(["--units", "200", "--budget", "100", "--json"]);
    let report = plan_json(&args);
    insta::assert_json_snapshot!("plan-json", report);
    assert_eq!(report["unit"], "room");
    assert_eq!(report["fits"][0]["n"], 6);
    let medium = &report["instances"][0];
    assert_eq!(medium["binding"]["resource"], "cpu");
    assert_eq!(medium["ceilings"]["memory"]["units"], 334.0);
    assert!((medium["all_in"]["usd_month"].as_f64().expect("all in") - 38.608).abs() < 1e-9);
    assert_eq!(report["for_units"][0]["instance"], "t4g.medium");
    // $100 a month: the shared db.t4g.micro ($11.68) once, then t4g.mediums with 30 GB of gp3
    // at $24.528 + $2.40 each: floor(88.32 / 26.928) = 3 of them, 171 rooms.
    assert_eq!(report["for_budget"][0]["count"], 3);
    assert_eq!(report["for_budget"][0]["units"], 171.0);
    assert_eq!(report["hours_per_month"], 730.0);
}

#[test]
fn plan_warns_about_stale_prices_and_refuses_a_bad_csv() {
    let report = plan_json(&[
        "plan",
        "--cpu-ceiling",
        "100",
        "--instance",
        "CX22",
        "--json",
    ]);
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("stale since 2026-04-01"), "{warnings}");
    assert!(warnings.contains("468 days old"), "{warnings}");
    let bad = transcript(&[
        "plan",
        "--points",
        "tests/fixtures/points/bad.csv",
        "--x",
        "rooms",
        "--cpu-ceiling",
        "10",
        "--instance",
        "t4g.medium",
    ]);
    insta::assert_snapshot!("plan-bad-csv", bad);
    assert!(
        bad.contains("exit code: 1") && bad.contains("line 3, column 2"),
        "{bad}"
    );
}

#[test]
fn plan_shows_stale_prices_and_judges_points_by_an_slo() {
    let stale = transcript(&["plan", "--cpu-ceiling", "100", "--instance", "CX22"]);
    insta::assert_snapshot!("plan-stale", stale);
    assert!(
        stale.contains("stale since 2026-04-01") && stale.contains("€3.79"),
        "{stale}"
    );
    let (exit, stdout, _) = headroom(&[
        "plan",
        "--points",
        "examples/points/chat-sweep.csv",
        "--x",
        "users",
        "--memory",
        "rss_mib",
        "--slo",
        "p95_ms < 200",
        "--instance",
        "m7g.large",
    ]);
    assert_eq!(exit, 0);
    // 240 ms at 1,600 users breaks the SLO: the last good step is 800. It is the SLO ceiling,
    // not a CPU one: nothing measured CPU (issue 11, item 3).
    assert!(stdout.contains("800 (slo)"), "{stdout}");
    assert!(
        stdout.contains("slo binds at 800; memory trails at 3,049"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "SLO ceiling, from `csv`: the last step that passed every SLO is 800; at 1,600: `p95_ms < 200` failed"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("(cpu)"), "{stdout}");
}

/// Issue 17, item 5: Locust's own stats files, one per step, are points: the step from each
/// file's name, the figures from its `Aggregated` line (recorded with Locust 2.47.0; see the
/// fixtures' README), judged by an SLO over their p95.
#[test]
fn plan_reads_locust_stats_one_file_per_step() {
    let files =
        [10, 20, 40].map(|users| format!("tests/fixtures/points/locust/users-{users}_stats.csv"));
    let mut args = vec!["plan"];
    for file in &files {
        args.extend(["--points", file.as_str()]);
    }
    args.extend([
        "--x",
        "users",
        "--slo",
        "p95_ms < 12",
        "--instance",
        "t4g.small",
    ]);
    let (exit, stdout, stderr) = headroom(&args);
    assert_eq!(exit, 0, "{stderr}");
    // p95 10, 11, 19 ms at 10, 20, 40 users: 20 is the last step under 12 ms.
    assert!(
        stdout.contains(
            "SLO ceiling, from `locust`: the last step that passed every SLO is 20; at 40: `p95_ms < 12` failed"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("20 (slo)"), "{stdout}");
    let mut fit = vec!["fit", "--json"];
    for file in &files {
        fit.extend(["--points", file.as_str()]);
    }
    fit.extend(["--x", "users"]);
    let (exit, stdout, stderr) = headroom(&fit);
    assert_eq!(exit, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let rate = report["fits"]
        .as_array()
        .expect("fits")
        .iter()
        .find(|f| f["series"] == "rate")
        .expect("a rate fit");
    // About ten requests a second per user (each waits 100 ms between requests).
    let slope = rate["slope"].as_f64().expect("slope");
    assert!((8.0..=10.5).contains(&slope), "{rate}");
    // A file that is no tool's output, among them, is named with the formats it could be.
    let (exit, _, stderr) = headroom(&[
        "plan",
        "--points",
        files[0].as_str(),
        "--points",
        "tests/fixtures/points/bad.csv",
        "--x",
        "users",
    ]);
    assert_eq!(exit, 1);
    assert!(
        stderr.contains("bad.csv: not a k6 summary export"),
        "{stderr}"
    );
}

/// Issue 17, item 5: k6's summary exports, one per step (recorded with k6 v0.45.0; see the
/// fixtures' README): ten requests a second per virtual user, fitted over the three steps.
#[test]
fn fit_reads_k6_summary_exports_one_file_per_step() {
    let mut args = vec!["fit", "--json"];
    let files = [10, 20, 40].map(|vus| format!("tests/fixtures/points/k6/vus-{vus}.json"));
    for file in &files {
        args.extend(["--points", file.as_str()]);
    }
    args.extend(["--x", "vus"]);
    let (exit, stdout, stderr) = headroom(&args);
    assert_eq!(exit, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let fit = |series: &str| {
        report["fits"]
            .as_array()
            .expect("fits")
            .iter()
            .find(|f| f["series"] == series)
            .unwrap_or_else(|| panic!("no fit of {series}: {report}"))
            .clone()
    };
    assert_eq!(fit("rate")["sweep"], "k6");
    let slope = fit("rate")["slope"].as_f64().expect("slope");
    assert!((9.5..=10.0).contains(&slope), "{slope}");
    // k6 reports p(90) and p(95) by default, not p(99): no such series is made up.
    assert!(fit("p95_ms")["n"] == 3);
    assert!(!stdout.contains("p99_ms"), "{stdout}");
    // One file without its step in the name takes --step; two files cannot share one.
    let (exit, _, stderr) = headroom(&[
        "fit",
        "--points",
        "tests/fixtures/points/k6/vus-10.json",
        "--points",
        "tests/fixtures/points/k6/vus-20.json",
        "--x",
        "vus",
        "--step",
        "5",
    ]);
    assert_eq!(exit, 1);
    assert!(
        stderr.contains("--step gives the step of one file"),
        "{stderr}"
    );
}

/// Issue 11, item 2: when every point passes the `--slo`, the SLO ceiling is a lower bound (the
/// most tested), on the CSV path as on the results path; with no instance named, `plan` says
/// the ceiling instead of refusing.
#[test]
fn a_sweep_that_passes_every_slo_is_a_lower_bound() {
    let csv = [
        "plan",
        "--points",
        "tests/fixtures/points/all-pass.csv",
        "--x",
        "users",
        "--memory",
        "rss_mib",
        "--slo",
        "p95_ms < 500",
    ];
    let (exit, stdout, stderr) = headroom(&csv);
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        stdout.contains(
            "SLO ceiling, from `csv`: every step passed, up to 1,600: the ceiling is at least that"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("no instance was named"), "{stdout}");
    let (exit, json, stderr) = headroom(&[&csv[..], &["--json"]].concat());
    assert_eq!(exit, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&json).expect("json");
    let slo = &report["slo_ceiling"];
    assert_eq!(slo["lower_bound"], true, "{slo}");
    assert_eq!(slo["first_failing"], serde_json::Value::Null, "{slo}");
    assert_eq!(slo["units"].as_f64(), Some(1_600.0), "{slo}");
    // Priced, the lower bound makes the cost an upper bound.
    let (_, priced, _) = headroom(&[&csv[..], &["--instance", "m7g.large"]].concat());
    assert!(priced.contains("≥ 1,600 (slo)"), "{priced}");
    assert!(priced.contains("at most $"), "{priced}");
}

/// Issue 12: `plan` refuses values that make no sense, naming the flag: a headroom of 100 % or
/// more, negative or NaN storage, an infinite or zero budget, no units, an SLO threshold that is
/// not a number, a spec given as a price table, and results of another bench.
#[test]
fn plan_refuses_values_that_make_no_sense() {
    let base = ["plan", "--cpu-ceiling", "100", "--instance", "CX22"];
    let mut transcripts = Vec::new();
    for extra in [
        &["--headroom", "150%"][..],
        &["--ebs-gb=-30"],
        &["--ebs-gb", "NaN"],
        &["--budget", "inf"],
        &["--budget", "0"],
        &["--units", "0"],
        &["--cap", "0"],
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (code, stdout, stderr) = headroom(&args);
        assert_eq!(code, 1, "`{}` is refused: {stderr}", extra.join(" "));
        assert!(stdout.is_empty(), "{stdout}");
        transcripts.push(transcript(&args));
    }
    transcripts.push(transcript(&[
        "plan",
        "--points",
        "examples/points/chat-sweep.csv",
        "--x",
        "users",
        "--slo",
        "p95_ms < NaN",
    ]));
    transcripts.push(transcript(&[
        "prices",
        "--prices",
        "tests/fixtures/points/not-a-price-table.toml",
    ]));
    transcripts.push(transcript(&[
        "plan",
        "examples/notes-api.toml",
        "--results",
        "tests/fixtures/render/relay-results.json",
    ]));
    transcripts.push(transcript(&[
        "render",
        "examples/notes-api.toml",
        "--results",
        "tests/fixtures/render/relay-results.json",
    ]));
    insta::assert_snapshot!("plan-refusals", transcripts.join("\n"));
}

/// Issue 12, data loss: `run --out` is checked before anything runs. A file that is not a
/// results file, a folder, a pipe, the spec itself, results of another bench for a `--phase`
/// re-run, and a file another run holds are each refused, named, and left as they were.
#[test]
fn run_refuses_an_out_it_must_not_touch() {
    let dir = "target/headroom-cli-out";
    let root = common::root();
    let _ = std::fs::remove_dir_all(root.join(dir));
    std::fs::create_dir_all(root.join(dir)).expect("scratch");
    let at = |name: &str| format!("{dir}/{name}");
    std::fs::write(root.join(at("notes.txt")), "my notes\n").expect("notes");
    std::fs::copy(
        root.join("examples/relay.toml"),
        root.join(at("relay.toml")),
    )
    .expect("spec");
    std::fs::copy(
        root.join("tests/fixtures/render/relay-results.json"),
        root.join(at("relay-results.json")),
    )
    .expect("results");
    std::fs::write(
        root.join(at("busy.json.lock")),
        format!("{}\n", std::process::id()),
    )
    .expect("lock");
    let mut transcripts = vec![
        transcript(&["run", "examples/relay.toml", "--out", &at("notes.txt")]),
        transcript(&["run", "examples/relay.toml", "--out", dir]),
        transcript(&["run", &at("relay.toml"), "--out", &at("relay.toml")]),
        transcript(&[
            "run",
            "examples/notes-api.toml",
            "--phase",
            "load",
            "--out",
            &at("relay-results.json"),
        ]),
        transcript(&["run", "examples/relay.toml", "--out", &at("busy.json")])
            .replace(&std::process::id().to_string(), "PID"),
    ];
    let fifo = root.join(at("pipe"));
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {
            transcripts.push(transcript(&[
                "run",
                "examples/relay.toml",
                "--out",
                &at("pipe"),
            ]));
        }
        _ => common::say("skipped the pipe case: `mkfifo` is not available here"),
    }
    for case in &transcripts {
        assert!(case.contains("exit code: 1\n"), "{case}");
    }
    insta::assert_snapshot!("run-out-refusals", transcripts[..5].join("\n"));
    if let Some(pipe) = transcripts.get(5) {
        assert!(
            pipe.contains("is not a regular file (a device, a pipe or a socket)"),
            "{pipe}"
        );
    }
    // Nothing was touched: the notes, the spec and the other bench's results are as they were.
    assert_eq!(
        std::fs::read_to_string(root.join(at("notes.txt"))).expect("notes"),
        "my notes\n"
    );
    assert_eq!(
        std::fs::read(root.join(at("relay.toml"))).expect("spec"),
        std::fs::read(root.join("examples/relay.toml")).expect("spec")
    );
    assert_eq!(
        std::fs::read(root.join(at("relay-results.json"))).expect("results"),
        std::fs::read(root.join("tests/fixtures/render/relay-results.json")).expect("results")
    );
    assert!(!root.join(at("notes.txt.prev")).exists());
    let _ = std::fs::remove_dir_all(root.join(dir));
}

/// Issue 12, bounded: a run estimated over a day needs --yes, and a spec over 1 MiB is not
/// read (nothing runs, nothing is expanded).
#[test]
fn what_is_too_long_or_too_large_is_refused_before_it_starts() {
    let mut transcripts = vec![transcript(&["run", "tests/fixtures/run/day-long.toml"])];
    let dir = common::root().join("target/headroom-cli-large");
    std::fs::create_dir_all(&dir).expect("scratch");
    let mut spec = String::from("[bench]\nname = \"large\"\n# ");
    spec.push_str(&"x".repeat(1024 * 1024));
    std::fs::write(dir.join("large.toml"), spec).expect("write");
    transcripts.push(transcript(&[
        "validate",
        "target/headroom-cli-large/large.toml",
    ]));
    for case in &transcripts {
        assert!(case.contains("exit code: 1\n"), "{case}");
    }
    insta::assert_snapshot!("too-long-or-too-large", transcripts.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 12, unclear errors: a range with too many values says how many, an SLO over a
/// misspelt scenario suggests the one meant (each scenario named once), nesting past the TOML
/// reader's limit is said in a spec's terms, at its place; each missing table is named.
#[test]
fn errors_say_what_is_wrong_in_a_specs_terms() {
    let transcripts: Vec<String> = [
        "too-many-values",
        "slo-scenario-typo",
        "nested-too-deep",
        "missing-tables",
    ]
    .iter()
    .map(|name| {
        let path = format!("tests/fixtures/refusals/{name}.toml");
        let case = transcript(&["validate", "--color", "never", &path]);
        assert!(case.contains("exit code: 1\n"), "{case}");
        case
    })
    .collect();
    insta::assert_snapshot!("plain-errors", transcripts.join("\n"));
}

/// Diagnostics are placed and rendered in time linear in the spec: 30,000 unused variables
/// (a spec under 1 MiB holds 100,000) once took minutes, each warning counting lines afresh.
#[test]
fn many_warnings_are_each_placed_on_their_line() {
    let dir = common::root().join("target/headroom-cli-many-vars");
    std::fs::create_dir_all(&dir).expect("scratch");
    let mut spec = String::from("[bench]\nname = \"many-vars\"\n\n[vars]\n");
    for i in 0..30_000 {
        spec.push_str(&format!("v{i} = {i}\n"));
    }
    spec.push_str(concat!(
        "\n[target]\ncommand = [\"{headroom}\", \"demo-target\", \"--port\", \"{port}\"]\n",
        "\n[[scenario]]\nname = \"api\"\nkind = \"http\"\nexecutor = \"constant-arrival-rate\"\n",
        "rate = \"1/s\"\nrequests = [{ url = \"http://127.0.0.1:{port}/\" }]\n",
        "\n[[phase]]\nname = \"one\"\nhold = \"1s\"\n",
    ));
    std::fs::write(dir.join("many.toml"), spec).expect("write");
    let path = "target/headroom-cli-many-vars/many.toml";
    let (code, stdout, stderr) = headroom(&["validate", "--format", "json", path]);
    assert_eq!(code, 0, "{stderr}");
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("json");
    assert_eq!(diagnostics.len(), 30_000);
    let last = &diagnostics[29_999];
    assert_eq!(last["message"], "variable `v29999` is never used");
    assert_eq!(
        (last["line"].as_u64(), last["column"].as_u64()),
        (Some(30_004), Some(1))
    );
    let (code, stdout, stderr) = headroom(&["validate", "--color", "never", path]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, format!("{path}: valid (30000 warnings)\n"));
    assert!(
        stderr.ends_with(&format!(
            "warning[W001]: variable `v29999` is never used\n     --> {path}:30004:1\n      |\n30004 | v29999 = 29999\n      | ^^^^^^ no placeholder names it\n      |\n      = help: use it as \"{{v29999}}\", or remove it\n\n"
        )),
        "{}",
        &stderr[stderr.len().saturating_sub(600)..]
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 12, bounded at run start: a point holding more sockets than this machine lets a
/// process open files is refused before any target starts, with the limit and the fix; no
/// results file is written. The machine here is a shell whose limit is lowered to 1,024.
#[test]
fn a_run_past_the_machines_file_limit_is_refused_before_it_starts() {
    let dir = common::root().join("target/headroom-cli-file-limit");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let out = dir.join("results.json");
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 1024 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_headroom"),
            "run",
            "tests/fixtures/run/many-sockets.toml",
            "--out",
        ])
        .arg(&out)
        .current_dir(common::root())
        .output()
        .expect("run headroom");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: tests/fixtures/run/many-sockets.toml: phase `one` holds 2,000 sockets open at once (2,064 files with the run's own), and a process here may open 1,024 (`ulimit -Hn`): raise the hard limit (`ulimit -Hn 65536` as root, `LimitNOFILE=` under systemd, `--ulimit nofile=` in Docker) or run fewer sockets; both headroom and the target need one file per socket\n"
    );
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    // `validate` on the same machine says it, as a warning: the spec itself is valid.
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 1024 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_headroom"),
            "validate",
            "tests/fixtures/run/many-sockets.toml",
        ])
        .current_dir(common::root())
        .output()
        .expect("run headroom");
    let (stdout, warning) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{warning}");
    assert_eq!(
        stdout,
        "tests/fixtures/run/many-sockets.toml: valid (0 warnings)\n"
    );
    assert_eq!(
        warning,
        format!(
            "warning: `headroom run tests/fixtures/run/many-sockets.toml` would be refused on this machine: {}",
            stderr.trim_start_matches("error: tests/fixtures/run/many-sockets.toml: ")
        )
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "a refused run left {left:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 12: the demo target refuses to seed more notes than the machine can hold (it aborted
/// on allocation); the available memory is this machine's, shown here as N.
#[test]
fn the_demo_target_refuses_to_seed_more_than_memory_holds() {
    let (code, stdout, stderr) = headroom(&["demo-target", "--seed-notes", "10000000000"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    let (before, after) = stderr
        .split_once(" MiB available")
        .expect("the available memory");
    let shown = before
        .rsplit_once(" has ")
        .map(|(head, _)| head)
        .expect("has");
    assert_eq!(
        format!("{shown} has N MiB available{after}"),
        "error: --seed-notes 10000000000 of --note-size 200B take about 3,128,051 MiB, and this machine has N MiB available: seed fewer or smaller notes (at most half the available memory)\n"
    );
}

/// Issue 14: points that carry the server's CPU (`cpu`, in cores) give a CPU fit over the steps
/// that passed (0.05 + 0.0004 cores per user; the saturated 3,200 is left out, and said) and a
/// measured CPU ceiling: (2 vCPU × 80 % − 0.05) / 0.0004 = 3,875 users on a c7g.large, 1,875
/// on a c7g.medium; points without it say that no CPU ceiling is measured.
#[test]
fn plan_prints_the_measured_cpu_ceiling_with_its_fit() {
    let output = transcript(&[
        "plan",
        "--points",
        "tests/fixtures/points/cpu-sweep.csv",
        "--x",
        "users",
        "--unit",
        "user",
        "--memory",
        "rss_mib",
        "--instance",
        "c7g.medium",
        "--instance",
        "c7g.large",
    ]);
    insta::assert_snapshot!("plan-cpu", output);
    assert!(
        output.contains("CPU fit over the hold, from `csv`: 5 points, 0.050 cores + 0.00040 cores per user (R² 1.000)"),
        "{output}"
    );
    assert!(output.contains("3,875"), "{output}");
    assert!(output.contains("1,875"), "{output}");
    assert!(
        output.contains("the CPU fit over `csv` leaves out 1 step where the SLOs failed"),
        "{output}"
    );
}

/// The relay fixture's first point (one room) with five repeats, the steady RSS of each scaled
/// by one of `scales`, written to `name` under the tests' scratch folder; `cpu` renames the
/// machine's CPU.
fn relay_with_rss(name: &str, scales: &[f64], cpu: Option<&str>) -> String {
    let text =
        std::fs::read_to_string(common::root().join("tests/fixtures/render/relay-results.json"))
            .expect("the fixture");
    let mut results: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let phases = results["phases"].as_array_mut().expect("phases");
    phases.truncate(1);
    let points = phases[0]["points"].as_array_mut().expect("points");
    points.truncate(1);
    let first = points[0]["runs"][0].clone();
    points[0]["runs"] = scales
        .iter()
        .enumerate()
        .map(|(i, scale)| {
            let mut run = first.clone();
            run["repeat"] = serde_json::json!(i + 1);
            let rss = &mut run["process"]["steady"]["rss_bytes"];
            *rss = serde_json::json!((rss.as_f64().expect("bytes") * scale) as u64);
            run
        })
        .collect();
    if let Some(cpu) = cpu {
        results["environment"]["cpu_model"] = serde_json::json!(cpu);
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, serde_json::to_string(&results).expect("JSON")).expect("written");
    path.display().to_string()
}

/// Issue 16: `compare` judges every figure of every matched point from its repeats. A file
/// against itself at three repeats cannot tell (and says how many repeats can); 20 % more
/// memory in each of five repeats is worse, the latencies of identical copies within noise;
/// from another machine, no figure is called.
#[test]
fn compare_judges_each_figure_from_its_repeats() {
    let fixture = "tests/fixtures/render/relay-results.json";
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
    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    common::assert_matches_schema("compare.schema.json", &report);
    assert_eq!(report["failed"], false);
    let rss = report["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .find(|f| f["figure"] == "rss")
        .expect("rss");
    assert_eq!(
        (rss["verdict"].as_str(), rss["better"].as_str()),
        (Some("worse"), Some("lower"))
    );
    assert_eq!(rss["base"]["repeats"], 5);
    // Repeats that spread (here 0.7x to 1.3x) make the figure noisy, with the advice.
    let scattered = relay_with_rss("compare-noisy.json", &[1.0, 1.3, 0.7, 1.2, 0.8], None);
    let (code, noisy, _) = headroom(&["compare", &base, &scattered]);
    assert_eq!(code, 0);
    assert!(noisy.contains("within noise (p 1.00), noisy"), "{noisy}");
    assert!(
        noisy.contains("noisy: 1 of the figures have repeats that spread more than 10 %"),
        "{noisy}"
    );
    // The new file's spec commits its gates (`[compare] fail_on`, in the results' plan):
    // held with no flag.
    let mut committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&new).expect("new")).expect("JSON");
    committed["plan"]["gates"] =
        serde_json::json!([{ "rule": "rss +10%", "figure": "rss", "threshold": 0.1 }]);
    let committed_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-committed.json");
    std::fs::write(&committed_path, committed.to_string()).expect("written");
    let (code, out, _) = headroom(&["compare", &base, &committed_path.display().to_string()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("gate `rss +10%` at memory: rooms = 1 (rss): +20.0 %, worse: FAILED"),
        "{out}"
    );
    // A committed gate that names no figure is an error that says whose spec holds it.
    committed["plan"]["gates"] = serde_json::json!([{ "rule": "usd_per_unit +5%", "figure": "usd_per_unit", "threshold": 0.05 }]);
    std::fs::write(&committed_path, committed.to_string()).expect("written");
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
    let fixture = "tests/fixtures/render/relay-results.json";
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

/// Issue 18, item 4: `headroom k8s` writes the manifests of a segmented run; both files read
/// back into k8s-openapi's typed structs, and the transcript and the objects are snapshots.
/// A spec whose target is a command is refused: the pods load a service on the cluster.
#[test]
fn k8s_writes_manifests_that_read_back_into_their_types() {
    let dir = std::env::temp_dir().join(format!("headroom-k8s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.display().to_string();
    let args = [
        "k8s",
        "tests/fixtures/k8s/notes.toml",
        "--segments",
        "3",
        "--image",
        "registry.example/headroom:0.1.0",
        "--namespace",
        "load",
        "--out",
        out.as_str(),
    ];
    let said = transcript(&args).replace(&out, "OUT");
    let read = |file: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(file)).expect("written");
        serde_json::from_str(&text).expect("json")
    };
    let (segments, merge) = (read("segments.json"), read("merge.json"));
    let typed = headroom_k8s::Manifests::from_json(&segments, &merge).expect("typed");
    let job = typed.segments.spec.as_ref().expect("a job spec");
    assert_eq!(job.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(
        (job.completions, job.parallelism, job.backoff_limit),
        (Some(3), Some(3), Some(0))
    );
    let data = typed.config_map.data.as_ref().expect("data");
    assert_eq!(
        data.get("data__users.csv").map(String::as_str),
        Some("email\nada@example.com\ngrace@example.com\nkatherine@example.com\n")
    );
    insta::assert_snapshot!("k8s", said);
    insta::assert_json_snapshot!("k8s-segments", segments);
    insta::assert_json_snapshot!("k8s-merge", merge);

    let (code, _, stderr) = headroom(&[
        "k8s",
        "tests/fixtures/run/rooms.toml",
        "--segments",
        "2",
        "--image",
        "i",
        "--out",
        out.as_str(),
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("set `url` in [target]"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
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
    let report: serde_json::Value = serde_json::from_str(&json).expect("json");
    let rss = report["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .find(|f| f["figure"] == "rss")
        .expect("rss");
    assert_eq!(rss["verdict"], "no_meaningful_change", "{rss}");
    assert!(common::number(&rss["p_value"]) < 0.05, "{rss}");
    assert_eq!(common::number(&report["method"]["min_effect"]), 0.03);
    let (_, table, _) = headroom(&["compare", &base, &new, "--min-effect", "0.1%"]);
    let row = table.lines().find(|l| l.contains("rss")).expect("a row");
    assert!(row.contains("better (p 0.008)"), "{row}");
    // The relay fixture's six points: a row per figure by default, a row per point with --all.
    let fixture = "tests/fixtures/render/relay-results.json";
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
