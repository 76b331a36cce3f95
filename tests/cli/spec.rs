//! A spec checked and compiled: each diagnostic code's rendering and JSON, the examples, the
//! matrix, the schema, the figures' catalogue, errors in a spec's terms, and every command's
//! help.

use super::*;
use headroom_compiler::DiagnosticJson;
use headroom_matrix::RunMatrix;
use headroom_matrix::resolved::Scenario as ResolvedScenario;

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
        let diagnostics: Vec<DiagnosticJson> = common::contract("diagnostics.schema.json", &stdout);
        let own: Vec<&DiagnosticJson> = diagnostics
            .iter()
            .filter(|d| d.code == code.as_str())
            .collect();
        assert!(!own.is_empty(), "{path} does not show {}", code.as_str());
        assert_eq!(
            own.len(),
            diagnostics.len(),
            "{path} shows other codes too: {stdout}"
        );
        for d in &own {
            assert_eq!(d.file, path);
            assert_eq!(d.severity, code.severity(), "{path}");
            assert!(!d.message.is_empty(), "{path}");
        }
        // The caret's line and column in the JSON match the `-->` line of the rendering.
        if let (Some(line), Some(column)) = (own[0].line, own[0].column) {
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
    let plan: RunMatrix = common::contract("run-matrix.schema.json", &stdout);
    assert_eq!(plan.runs.len(), 42);
    let rooms_scenario =
        |phase: usize, point: usize| match &plan.phases[phase].points[point].scenarios[0] {
            ResolvedScenario::Rooms(rooms) => rooms.clone(),
            other => panic!("not a rooms scenario: {other:?}"),
        };
    let rooms: Vec<u64> = (0..6).map(|point| rooms_scenario(0, point).rooms).collect();
    assert_eq!(rooms, [1, 4, 16, 32, 64, 128]);
    // `{port}` stays for the runner; variables are filled.
    let send = rooms_scenario(1, 2).send.expect("peers that send");
    assert_eq!(send.rate.to_string(), "4/s");
    assert_eq!(
        rooms_scenario(0, 0).url,
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

/// Issue 12, unclear errors: a range with too many values says how many, an SLO over a
/// misspelt scenario suggests the one meant (each scenario named once), nesting past the TOML
/// reader's limit is said in a spec's terms, at its place; each missing table is named.
/// Issues 42 and 43: a key of too many parts is placed; a misspelt executor is suggested from
/// every executor; each bad key of a search is named at its own span.
#[test]
fn errors_say_what_is_wrong_in_a_specs_terms() {
    let transcripts: Vec<String> = [
        "too-many-values",
        "slo-scenario-typo",
        "nested-too-deep",
        "missing-tables",
        "key-too-deep",
        "executor-typo",
        "search-keys",
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
    let diagnostics: Vec<DiagnosticJson> = serde_json::from_str(&stdout).expect("json");
    assert_eq!(diagnostics.len(), 30_000);
    let last = &diagnostics[29_999];
    assert_eq!(last.message, "variable `v29999` is never used");
    assert_eq!((last.line, last.column), (Some(30_004), Some(1)));
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

/// A huge key is quoted by its ends and its length, the line cut around the caret: 900,000
/// characters (a spec is read up to 1 MiB) give a diagnostic of a few lines. The JSON form
/// quotes it the same way; its `pointer` stays whole (a program reads it back).
#[test]
fn a_huge_key_gives_a_short_diagnostic() {
    let dir = common::root().join("target/headroom-cli-huge-key");
    std::fs::create_dir_all(&dir).expect("scratch");
    let key = "k".repeat(900_000);
    let spec = format!("[bench]\nname = \"huge\"\n\n[{key}]\nx = 1\n");
    std::fs::write(dir.join("huge.toml"), spec).expect("write");
    let path = "target/headroom-cli-huge-key/huge.toml";
    let quoted = format!(
        "`{}…(900000 characters)…{}`",
        "k".repeat(32),
        "k".repeat(16)
    );
    let (code, stdout, stderr) = headroom(&["validate", "--color", "never", path]);
    assert_eq!(code, 1, "{}", &stderr[..stderr.len().min(2_000)]);
    assert!(
        stdout.len() + stderr.len() < 4_000,
        "{} bytes",
        stderr.len()
    );
    assert!(stderr.contains(&quoted), "{stderr}");
    let (code, stdout, _) = headroom(&["validate", "--format", "json", path]);
    assert_eq!(code, 1);
    let diagnostics: Vec<DiagnosticJson> = common::contract("diagnostics.schema.json", &stdout);
    let unknown = diagnostics
        .iter()
        .find(|d| d.code == "E002")
        .expect("the unknown key");
    let message = &unknown.message;
    assert!(
        message.len() < 400 && message.contains(&quoted),
        "{message}"
    );
    assert_eq!(unknown.pointer, format!("/{key}"));
    let _ = std::fs::remove_dir_all(dir);
}
