//! The compiler from its API: the examples, and properties that hold for any spec. A module per
//! theme; the helpers they share (the compiler, a spec's head, the codes it found) are here.

mod examples;
mod properties;
mod refusals;
mod searches;
mod socket_io;
mod sse;
mod targets;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use headroom_compiler::{Code, Compilation, Compiler, Severity};
use headroom_prices::PriceTable;
use headroom_spec::target::{ProcessMode, StepScope};
use proptest::prelude::*;

fn compiler() -> &'static (Compiler, PriceTable) {
    static COMPILER: OnceLock<(Compiler, PriceTable)> = OnceLock::new();
    COMPILER.get_or_init(|| {
        (
            Compiler::new(),
            PriceTable::embedded().expect("price table"),
        )
    })
}

fn compile(source: &str) -> Compilation {
    let (compiler, prices) = compiler();
    compiler.compile(source, prices)
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../examples/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example")
}

/// Each diagnostic's code and where it points, in the order reported.
fn codes_at(compilation: &Compilation) -> Vec<(&'static str, &str)> {
    compilation
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_str()))
        .collect()
}

fn codes(compilation: &Compilation) -> BTreeSet<&'static str> {
    compilation
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect()
}

/// A spec's head: a bench, a target (with `target` lines added) and one HTTP scenario swept
/// over `users`; `tail` adds tables.
fn spec_with(target: &str, tail: &str) -> String {
    format!(
        r#"[bench]
name = "keys"
people_per_unit = "{{people}}"

[vars]
users = 10
people = 4

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]
{target}

[[scenario]]
name = "browse"
kind = "http"
executor = "constant-vus"
vus = "{{users}}"
requests = [{{ url = "http://127.0.0.1:{{port}}/" }}]
stages = {{ hold = "10s" }}

[[phase]]
name = "load"
vary = {{ users = [10, 20, 40] }}
repeats = 3

[capacity]
units = "users"
{tail}
"#
    )
}
