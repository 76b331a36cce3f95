//! TOML → compile, what `headroom validate` and `compile` do with a spec: any text must give
//! diagnostics or a plan, never a panic, a hang or unbounded memory. Every diagnostic's place
//! must lie in the source (the renderer slices it), and a plan must serialise (`compile --json`).
#![no_main]

use std::sync::OnceLock;

use headroom_compiler::{Compiler, LineIndex};
use headroom_prices::PriceTable;
use libfuzzer_sys::fuzz_target;

static PRICES: OnceLock<PriceTable> = OnceLock::new();

thread_local! {
    /// One compiler, as `validate` shares one over its files: the schema is compiled once.
    static COMPILER: Compiler = Compiler::new();
}

fuzz_target!(|data: &[u8]| {
    // The CLI reads a spec as UTF-8 and refuses other bytes before compiling.
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let prices = PRICES.get_or_init(|| PriceTable::embedded().expect("the shipped price table"));
    let compilation = COMPILER.with(|compiler| compiler.compile(source, prices));
    let lines = LineIndex::new(source);
    for diagnostic in &compilation.diagnostics {
        if let Some(span) = &diagnostic.span {
            assert!(
                span.start <= span.end && span.end <= source.len(),
                "{span:?} is outside a source of {} bytes: {diagnostic:?}",
                source.len()
            );
            let (window, _) = lines.lines_of(span);
            assert!(window.start <= span.start && window.end <= source.len());
            let _ = lines.line_column(span.end);
        }
    }
    if let Some(plan) = &compilation.plan {
        serde_json::to_string(plan).expect("a resolved plan serialises");
    }
});
