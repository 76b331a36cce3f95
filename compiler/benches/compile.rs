//! Where the time of `headroom validate` goes: `cargo bench -p headroom-compiler`.
//!
//! The whole-process figure (and its ratio to a bare start of the binary) comes from
//! `scripts/bench-validate.py`; these benches split it into its parts.

use headroom_compiler::Compiler;
use headroom_prices::PriceTable;

fn main() {
    divan::main();
}

fn relay() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/relay.toml"
    ))
    .expect("relay example")
}

/// Building the schema validator, once per process.
#[divan::bench]
fn compiler_new() -> Compiler {
    Compiler::new()
}

/// Parsing the shipped price table, once per process.
#[divan::bench]
fn price_table() -> PriceTable {
    PriceTable::embedded().expect("price table")
}

/// Validating and expanding the largest example, with the compiler and table built.
#[divan::bench]
fn compile_relay(bencher: divan::Bencher) {
    let compiler = Compiler::new();
    let prices = PriceTable::embedded().expect("price table");
    let source = relay();
    bencher.bench_local(|| compiler.compile(divan::black_box(&source), &prices));
}
