//! The exit codes, defined once: every command returns one of these, and docs/cli.md's "Exit
//! codes" table is [`MEANINGS`], checked by this module's test.

/// Success: valid specs, a run whose points all ran (and, with `--check`, passed).
pub const OK: u8 = 0;
/// A spec has errors, a file cannot be read, a flag is wrong.
pub const USAGE: u8 = 1;
/// `run --check`: an SLO failed at some point.
pub const SLO_FAILED: u8 = 2;
/// `compare --fail-on`: a figure got worse past its threshold, beyond noise.
pub const GATE_FAILED: u8 = 2;
/// `run`: a run failed (the target exited, never got ready, died during the load).
pub const RUN_FAILED: u8 = 3;
/// The results file could not be written.
pub const WRITE_FAILED: u8 = 4;
/// Interrupted by Ctrl-C; the results gathered so far are on disk.
pub const INTERRUPTED: u8 = 130;

/// Every code, in brief (the top-level help's list) and in full (docs/cli.md's table), the
/// same for every command.
pub const MEANINGS: [(u8, &str, &str); 6] = [
    (
        OK,
        "ok",
        "success: every spec valid (warnings allowed), the matrix or schema printed, every run ran (with `--check`: and every SLO passed)",
    ),
    (
        USAGE,
        "spec or usage error",
        "a spec has errors, a file could not be read (`validate` still checks the others), a flag is wrong; an output the guard refuses (an input, a device, a pipe, a file headroom did not write) or a results file another run holds; a price file that is not the provider's (a price no provider charges, a publication date after today, a cut-short set of pages, a file past its bound); `compare` of two benches",
    ),
    (
        SLO_FAILED,
        "a check failed (an SLO, a price or a gate: --check, --fail-on)",
        "`run --check` or `merge --check`: an SLO failed, or a rooms scenario's messages arrived misrouted or duplicated (judged in every run); `plan --check`: an instance cannot be priced (or its price is out of date); `compare --fail-on`: a figure got worse past its threshold, beyond noise",
    ),
    (
        RUN_FAILED,
        "a run failed",
        "`run`: a run failed (see the results file for which and why); `merge`: a run failed in some segment",
    ),
    (
        WRITE_FAILED,
        "the results could not be written",
        "the results file could not be written",
    ),
    (
        INTERRUPTED,
        "interrupted",
        "interrupted (Ctrl-C, SIGTERM or SIGHUP); the results of the finished runs are on disk. The first signal ends every wait at once (readiness, a setup step, the barrier) and lets the teardown steps run; a second stops waiting for them or for a stop's grace and exits at once; the target's whole process group is killed, and so is that of any setup or teardown step in flight",
    ),
];

/// The top-level help's list: `Exit codes: 0 ok, 1 spec or usage error, …`.
pub fn in_brief() -> String {
    let codes: Vec<String> = MEANINGS
        .iter()
        .map(|(code, brief, _)| format!("{code} {brief}"))
        .collect();
    format!("Exit codes: {}.", codes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cli.md's table is these codes and meanings, row for row.
    #[test]
    fn the_docs_table_is_the_codes() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md"),
        )
        .expect("docs/cli.md");
        let mut table = String::from("| code | meaning |\n| --- | --- |\n");
        for (code, _, meaning) in MEANINGS {
            table.push_str(&format!("| {code} | {meaning} |\n"));
        }
        assert!(
            docs.contains(&table),
            "docs/cli.md's exit codes are not these:\n{table}"
        );
        assert_eq!(GATE_FAILED, SLO_FAILED, "one code for a check that failed");
    }
}
