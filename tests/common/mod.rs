//! What the integration tests share beyond `headroom-test-support` (the hostile servers, the
//! shared fixtures, the harness, the typed results): running this package's binary the way a
//! user does, which only its own tests can (`CARGO_BIN_EXE_headroom`), and checking JSON
//! output against a committed schema.

// Each test file uses what it needs of this module.
#![allow(dead_code, unused_imports)]

pub mod browser;
pub mod plots;
pub mod run;

pub use headroom_test_support::fixtures;
pub use headroom_test_support::harness::{number, say};

use std::path::Path;
use std::process::Command;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `headroom` from the repository root: exit code, stdout, stderr. Colours off the
/// terminal, a fixed width, and price ages counted from a fixed day, so transcripts do not
/// change with the terminal or the calendar.
pub fn headroom(args: &[&str]) -> (i32, String, String) {
    headroom_in(root(), args)
}

/// Runs `headroom` from `dir`, as `headroom` does from the repository root. Beside the other
/// tests, whose load is other work on the machine, a run keeps its first try (issue 41's
/// reruns are tested with the machine whole).
pub fn headroom_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("COLUMNS", "100")
        .env("HEADROOM_TODAY", "2026-11-30")
        .env("HEADROOM_COMPETED_RERUNS", "0")
        .output()
        .expect("run headroom");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Fails with every violation when `value` does not match `schemas/<file>`.
pub fn assert_matches_schema(file: &str, value: &serde_json::Value) {
    let text = std::fs::read_to_string(root().join("schemas").join(file)).expect("schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema json");
    let validator = jsonschema::draft202012::new(&schema).expect("valid schema");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "does not match schemas/{file}: {errors:#?}"
    );
}

/// A machine output read as its typed contract, once it matched `schemas/<schema>`: what is
/// written is what the schema says, and what the type reads.
pub fn contract<T: serde::de::DeserializeOwned>(schema: &str, text: &str) -> T {
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    assert_matches_schema(schema, &value);
    serde_json::from_value(value).unwrap_or_else(|e| panic!("not what {schema} reads: {e}"))
}

/// Issue 43: a capacity page opens with its answer: the first section after the title (and a
/// quick run's warning) is "The answer", with a line per priced instance (units planned, what
/// binds, the cost per `unit`-month) and the SLO ceiling's line.
pub fn assert_opens_with_the_answer(page: &str, unit: &str) {
    let first = page
        .lines()
        .find(|l| l.starts_with("## "))
        .unwrap_or_else(|| panic!("no section: {page}"));
    assert_eq!(first, "## The answer", "{page}");
    let start = page.find("## The answer").expect("the answer");
    let end = page[start + 3..]
        .find("\n## ")
        .map_or(page.len(), |e| start + 3 + e);
    let answer = &page[start..end];
    let instances = answer
        .lines()
        .filter(|l| {
            l.starts_with("- **")
                && l.contains(" binding at ")
                && l.contains(&format!(" per {unit}-month"))
        })
        .count();
    assert!(instances >= 1, "{answer}");
    assert!(answer.contains("- **The SLO ceiling**: "), "{answer}");
}
