//! What the integration tests share: running the binary the way a user does, and checking JSON
//! output against a committed schema.

// Each test file uses what it needs of this module.
#![allow(dead_code)]

pub mod run;

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

/// Runs `headroom` from `dir`, as `headroom` does from the repository root.
pub fn headroom_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("COLUMNS", "100")
        .env("HEADROOM_TODAY", "2026-11-30")
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

/// The number at `value`, failing the test when there is none: comparing `as_f64()` Options
/// would let `None <= None` pass.
#[track_caller]
pub fn number(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("expected a number, found {value}"))
}

/// What a test says beside its verdict, on stderr: that it skipped and why (never a silent
/// pass), or a figure it measured. The one place a test prints.
#[allow(clippy::print_stderr)]
pub fn say(text: &str) {
    eprintln!("{text}");
}
