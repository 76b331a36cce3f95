//! The `headroom` binary from the outside: transcripts of what it prints and its exit codes.
//! A module per theme; each module's snapshots live in `tests/cli/snapshots/`, named after it
//! (`cli__plan__plan-relay.snap`); review changes with `cargo insta review`.

#[path = "../common/mod.rs"]
mod common;

mod compare;
mod k8s;
mod outputs;
mod plan;
mod prices;
mod refusals;
mod spec;
mod writers;

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
