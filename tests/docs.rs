//! Docs that cannot rot: the key reference in `docs/spec.md` and the code list in
//! `docs/diagnostics.md` are generated from the schema and the compiler, and the complete spec
//! shown in `docs/spec.md` must validate. Regenerate with `UPDATE_SCHEMA=1 cargo test --workspace`.

use std::path::Path;

use headroom_compiler::{Code, Compiler};
use serde_json::Value;

const START: &str = "<!-- generated:start -->\n";
const END: &str = "<!-- generated:end -->";
const FIGURES_START: &str = "<!-- figures:start -->\n";
const FIGURES_END: &str = "<!-- figures:end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Replaces the generated part of `file` or checks that it is current.
fn check_generated(file: &str, generated: &str) {
    check_between(file, START, END, generated);
}

/// Replaces the part of `file` between `markers` or checks that it is current.
fn check_between(file: &str, first: &str, last: &str, generated: &str) {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).expect("doc");
    let (Some(start), Some(end)) = (text.find(first), text.find(last)) else {
        panic!("{file} has no generated markers");
    };
    let updated = format!("{}{first}{generated}{}", &text[..start], &text[end..]);
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, updated).expect("write doc");
        return;
    }
    assert!(
        updated == text,
        "the generated part of {file} is stale: run `UPDATE_SCHEMA=1 cargo test --workspace` and commit it"
    );
}

/// The tables of a spec, in the order a spec is written.
const TABLES: &[(&str, &str)] = &[
    ("", "Top level"),
    ("Bench", "[bench]"),
    ("Target", "[target]"),
    ("Ready", "[target.ready]"),
    ("Stop", "[target.stop]"),
    ("Limits", "[target.limits]"),
    ("Scenario/0", "[[scenario]] kind = \"http\""),
    ("Request", "[[scenario]] requests = [{…}]"),
    ("Scenario/1", "[[scenario]] kind = \"rooms\""),
    ("Messages", "[[scenario]] send = {…}"),
    ("Ping", "[[scenario]] ping = {…}"),
    ("Reload", "[[scenario]] reload = {…}"),
    ("Stages", "[[scenario]] stages = {…}"),
    ("Generator", "[generator]"),
    ("Measure", "[measure] (and [phase.measure])"),
    ("SteadyState", "[measure] steady_state = {…}"),
    ("Series", "[measure] series = [{…}]"),
    ("Phase", "[[phase]]"),
    ("Range", "[[phase]] vary = { name = {…} }"),
    ("Search", "[[phase]] vary = { name = { search = {…} } }"),
    ("Capacity", "[capacity]"),
    ("Plan", "[plan]"),
    ("Compare", "[compare]"),
];

fn definition<'a>(schema: &'a Value, name: &str) -> &'a Value {
    if name.is_empty() {
        return schema;
    }
    let (base, branch) = name.split_once('/').unwrap_or((name, ""));
    let node = &schema["$defs"][base];
    // A renamed type would otherwise leave its section an empty table.
    assert!(
        node.is_object(),
        "the spec schema has no `{base}`: TABLES names a type that is not there (was it renamed?)"
    );
    if branch.is_empty() {
        node
    } else {
        let branch = &node["oneOf"][branch.parse::<usize>().expect("index")];
        assert!(branch.is_object(), "`{name}` is not a branch of `{base}`");
        branch
    }
}

fn type_of(schema: &Value, node: &Value) -> String {
    if let Some(target) = node.get("$ref").and_then(Value::as_str) {
        let name = target.rsplit('/').next().unwrap_or_default();
        let def = &schema["$defs"][name];
        return match name {
            "Duration" => "duration".into(),
            "Size" => "size".into(),
            "Percent" => "percentage".into(),
            "Rate" => "rate".into(),
            "DurationParam" => "duration or `\"{var}\"`".into(),
            "SizeParam" => "size or `\"{var}\"`".into(),
            "RateParam" => "rate or `\"{var}\"`".into(),
            "CountParam" => "integer ≥ 1 or `\"{var}\"`".into(),
            "NumberParam" => "number > 0 or `\"{var}\"`".into(),
            "VarValue" => "number or string".into(),
            "Sweep" => "list, range or search".into(),
            "Expect" => "status or list of statuses".into(),
            "SourceAddresses" => "`\"spread\"`, address block or list of addresses".into(),
            _ => {
                if let Some(values) = def.get("enum").and_then(Value::as_array) {
                    values
                        .iter()
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(" \\| ")
                } else if let Some(values) = def.get("oneOf").and_then(Value::as_array) {
                    values
                        .iter()
                        .filter_map(|v| {
                            v.get("const")
                                .or_else(|| v.pointer("/properties/kind/const"))
                        })
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(" \\| ")
                } else {
                    format!("table ({name})")
                }
            }
        };
    }
    match node.get("type").and_then(Value::as_str) {
        Some("array") => {
            let items = node
                .get("items")
                .map(|i| type_of(schema, i))
                .unwrap_or_default();
            format!("list of {items}")
        }
        Some("object") => match node.get("additionalProperties") {
            Some(Value::Object(values)) => format!(
                "table of {}",
                type_of(schema, &Value::Object(values.clone()))
            ),
            _ => "table".into(),
        },
        Some("integer") => "integer".into(),
        Some("number") => "number".into(),
        Some("string") => node
            .get("const")
            .map_or_else(|| "string".into(), |c| format!("`{c}`")),
        Some("boolean") => "boolean".into(),
        _ => "value".into(),
    }
}

fn reference(schema: &Value) -> String {
    let mut out = String::new();
    for (name, title) in TABLES {
        let node = definition(schema, name);
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        out.push_str(&format!("\n### {title}\n\n"));
        if let Some(description) = node.get("description").and_then(Value::as_str) {
            out.push_str(&format!("{}\n\n", description.replace('\n', " ")));
        }
        out.push_str("| key | type | default | meaning |\n| --- | --- | --- | --- |\n");
        let properties = node
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, property) in properties {
            let default = if required.contains(&key.as_str()) {
                "required".to_owned()
            } else {
                property
                    .get("default")
                    .map_or_else(|| "—".to_owned(), |d| format!("`{d}`"))
            };
            let description = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .replace('\n', " ")
                .replace('|', "\\|");
            out.push_str(&format!(
                "| `{key}` | {} | {default} | {description} |\n",
                type_of(schema, &property)
            ));
        }
    }
    out.push('\n');
    out
}

#[test]
fn spec_reference_is_current() {
    check_generated("docs/spec.md", &reference(&headroom_spec::json_schema()));
}

/// Issue 31: the figures an SLO, a gate, `compare` and the page name are listed from the
/// figure catalogue, the one definition each is computed by.
#[test]
fn figures_list_is_current() {
    check_between(
        "docs/spec.md",
        FIGURES_START,
        FIGURES_END,
        &format!("\n{}\n", headroom_figures::catalogue::markdown()),
    );
}

#[test]
fn diagnostics_list_is_current() {
    let mut out = String::from(
        "\n| code | name | severity | meaning | fixture |\n| --- | --- | --- | --- | --- |\n",
    );
    for code in Code::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | [`{}-{}.toml`](../tests/fixtures/diagnostics/{}-{}.toml) |\n",
            code.as_str(),
            code.slug(),
            code.severity().as_str(),
            code.summary(),
            code.as_str(),
            code.slug(),
            code.as_str(),
            code.slug()
        ));
    }
    out.push('\n');
    check_generated("docs/diagnostics.md", &out);
}

/// Every ```toml block of the docs that starts with `[bench]` is a complete spec and must
/// validate without a diagnostic.
#[test]
fn specs_in_the_docs_validate() {
    let compiler = Compiler::new();
    let prices = headroom_pricing::PriceTable::embedded().expect("prices");
    let mut checked = 0;
    for doc in ["docs/spec.md", "docs/getting-started.md", "README.md"] {
        let text = std::fs::read_to_string(root().join(doc)).expect("doc");
        for block in text.split("```toml\n").skip(1) {
            let block = block.split("```").next().unwrap_or_default();
            let body = block.trim_start_matches(['#', ':']).trim_start();
            if !(block.starts_with("[bench]")
                || block.starts_with("#:schema") && body.contains("\n[bench]"))
            {
                continue;
            }
            let compilation = compiler.compile(block, &prices);
            assert!(
                compilation.diagnostics.is_empty(),
                "{doc}: {:#?}\n{block}",
                compilation.diagnostics
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "only {checked} complete specs found in the docs"
    );
}

/// Every key of the schema appears with a value in an example of `docs/spec.md`.
#[test]
fn every_key_has_an_example_in_the_spec_docs() {
    let schema = headroom_spec::json_schema();
    let text = std::fs::read_to_string(root().join("docs/spec.md")).expect("docs/spec.md");
    let examples: String = text
        .split("```toml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .collect::<Vec<_>>()
        .join("\n");
    let mut keys = std::collections::BTreeSet::new();
    let mut collect = |node: &Value| {
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            keys.extend(properties.keys().cloned());
        }
    };
    collect(&schema);
    for definition in schema["$defs"].as_object().expect("$defs").values() {
        collect(definition);
        for branch in definition
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect(branch);
        }
    }
    let written = |key: &str| {
        examples.contains(&format!("\n{key} = "))
            || examples.contains(&format!("{{ {key} = "))
            || examples.contains(&format!(", {key} = "))
            || examples.contains(&format!("[{key}]"))
            || examples.contains(&format!("[[{key}]]"))
            // A dotted table header: `[target.services.db]`, `[[target.setup]]`.
            || examples.contains(&format!(".{key}]"))
            || examples.contains(&format!(".{key}."))
    };
    let missing: Vec<&String> = keys.iter().filter(|key| !written(key)).collect();
    assert!(
        missing.is_empty(),
        "keys without an example in docs/spec.md: {missing:?}"
    );
}

/// The worked example of `docs/planning.md` is what `headroom plan` prints, line for line.
#[test]
fn the_planning_example_is_what_plan_prints() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "plan",
            "--points",
            "examples/points/chat-sweep.csv",
            "--x",
            "users",
            "--unit",
            "user",
            "--memory",
            "rss_mib",
            "--cap",
            "2000",
            "--ebs-gb",
            "20",
            "--rds",
            "db.t4g.small",
            "--instance",
            "c7g.large",
            "--instance",
            "m7g.large",
        ])
        .current_dir(root())
        .env("COLUMNS", "100")
        .env("HEADROOM_TODAY", "2026-11-30")
        .output()
        .expect("run headroom plan");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    let page = std::fs::read_to_string(root().join("docs/planning.md")).expect("planning.md");
    for line in printed.lines() {
        assert!(
            page.contains(line),
            "docs/planning.md lacks the line\n{line}\nof\n{printed}"
        );
    }
    for figure in [
        "1,409 (memory)",
        "1,600 (slo)",
        "$52.92",
        "$59.57",
        "$81.53",
        "$88.18",
        "$0.058",
        "$0.055",
    ] {
        assert!(printed.contains(figure), "{figure}");
    }
}

/// Issue 31: the segment rule is one text. `run --help`, docs/cli.md and docs/scale-out.md say
/// it in the words of `headroom_spec::segment::RULE`, and none states it a second way
/// (`k % n == i`, `r % n`), which is how the three once came to use three sets of letters.
#[test]
fn the_segment_rule_is_one_text() {
    use headroom_spec::segment::RULE;
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", "--help"])
        .env("COLUMNS", "1000")
        .output()
        .expect("run --help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains(RULE), "run --help:\n{help}");
    let restated = regex::Regex::new(r"\b[a-z] % [a-z]+\b").expect("a pattern");
    for file in ["docs/cli.md", "docs/scale-out.md"] {
        let text = std::fs::read_to_string(root().join(file)).expect("doc");
        assert!(text.contains(RULE), "{file} does not say: {RULE}");
        let found: Vec<&str> = restated.find_iter(&text).map(|m| m.as_str()).collect();
        assert!(found.is_empty(), "{file} restates the rule: {found:?}");
    }
}

/// Issue 58: the README's first block is the two set-up commands, the second the test line;
/// `.ci/run` runs that same line, and it runs both layers (docs/testing.md).
#[test]
fn ci_runs_the_readmes_test_line_and_it_runs_both_layers() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md opens with a sh block");
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines.len(), 2, "the main job and the tests: {lines:?}");
    let test_line = lines[1];
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == test_line),
        "`.ci/run` does not run the README's test line `{test_line}`"
    );
    let script = std::fs::read_to_string(root().join(test_line)).expect("the test line's script");
    assert!(
        script.contains("timed fast fast") && script.contains("timed end-to-end end_to_end"),
        "`{test_line}` runs both layers by default"
    );
    assert!(
        script.contains("--ignored") && script.contains("HEADROOM_TEST_LAYER=end-to-end"),
        "the end-to-end layer is the ignored tests, told they may take the machine whole"
    );
}
