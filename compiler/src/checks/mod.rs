//! Semantic checks: what the schema cannot see. Every check reports by JSON pointer, so the
//! spec types stay free of spans. One module per part of the spec; `Checker` holds what they
//! share: the spec, the spans, the variables' uses and the diagnostics.

mod data;
mod generator;
mod phases;
mod references;
mod scenarios;
mod search;
mod socket_io;
mod sse;
mod stack;
mod target;
mod variables;

use std::collections::BTreeMap;
use std::ops::Range;

use headroom_prices::PriceTable;
use headroom_spec::{Spec, ValueKind};
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::document::Document;
use headroom_matrix::slo::SloRule;

/// Where a variable is used, and as what (`None`: inside a string, any value will do).
#[derive(Debug, Clone)]
pub struct Usage {
    /// The kind of value this use needs; `None` for a use inside a string.
    pub kind: Option<ValueKind>,
    /// Where the variable is used (a JSON pointer into the spec).
    pub pointer: String,
}

/// The semantic checks of one spec: what it reads, and what it found.
pub struct Checker<'a> {
    source: &'a str,
    spec: &'a Spec,
    document: &'a Document,
    prices: &'a PriceTable,
    /// What the checks found, in the order they found it.
    pub diagnostics: Vec<Diagnostic>,
    /// Every use of each variable, for its type checks and the unused-variable warning.
    pub usages: BTreeMap<String, Vec<Usage>>,
    /// Typed uses that do not change the load (the unit count), for type checks only.
    typed_only: Vec<(String, Usage)>,
    /// The SLOs, parsed against the figures the spec produces.
    pub slo: Vec<SloRule>,
    /// `[compare] fail_on`, read.
    pub gates: Vec<headroom_spec::compare::GateRule>,
    /// The columns of each data file, as the CLI read them.
    data: &'a crate::DataColumns,
    /// While an HTTP scenario's requests are checked: what they may fill.
    requests_context: Option<RequestsContext>,
}

impl<'a> Checker<'a> {
    /// Checks over a deserialized spec, its document (for spans) and the price table.
    pub fn new(
        source: &'a str,
        spec: &'a Spec,
        document: &'a Document,
        prices: &'a PriceTable,
        data: &'a crate::DataColumns,
    ) -> Checker<'a> {
        Checker {
            source,
            spec,
            document,
            prices,
            data,
            requests_context: None,
            diagnostics: Vec::new(),
            usages: BTreeMap::new(),
            typed_only: Vec::new(),
            slo: Vec::new(),
            gates: Vec::new(),
        }
    }

    /// Runs every check, the diagnostics in order.
    pub fn run(mut self) -> Self {
        self.variable_names();
        self.target();
        self.stack();
        self.generator();
        self.scenarios();
        self.units_usage();
        self.variable_types();
        self.phases();
        self.measure();
        self.slos();
        self.gates();
        self.capacity();
        self.plan();
        self.unused_variables();
        self
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// The spec being checked.
    pub fn spec(&self) -> &'a Spec {
        self.spec
    }

    /// The spec's document, for spans.
    pub fn document(&self) -> &'a Document {
        self.document
    }

    fn value_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.document.value_span(pointer)
    }

    fn key_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.document.key_span(pointer)
    }

    /// The span of `range` inside the string value at `pointer`, when the source writes the
    /// string without escapes (so offsets match); the whole value otherwise.
    pub fn inner_span(&self, pointer: &str, range: Range<usize>) -> Option<Range<usize>> {
        let span = self.value_span(pointer)?;
        let written = self.document_source_slice(&span)?;
        let decoded = self
            .document
            .json
            .pointer(pointer)
            .and_then(Value::as_str)?;
        for quote in ["\"\"\"", "'''", "\"", "'"] {
            if let Some(inner) = written
                .strip_prefix(quote)
                .and_then(|w| w.strip_suffix(quote))
                && inner == decoded
            {
                let start = span.start + quote.len();
                return Some(start + range.start..start + range.end);
            }
        }
        Some(span)
    }

    fn document_source_slice(&self, span: &Range<usize>) -> Option<&'a str> {
        self.source.get(span.clone())
    }
}
/// What an HTTP scenario's requests may fill, while its requests are checked.
#[derive(Debug, Clone, Default)]
struct RequestsContext {
    /// The data file as written, and where (`None`: the scenario has no `data`).
    file: Option<(String, String)>,
    /// Its columns, when the CLI read them (`None`: not read, nothing to check against).
    columns: Option<Vec<String>>,
    /// Every value some request of the scenario captures.
    captures: Vec<String>,
    /// Whether some `{row.…}` of its requests reads the data file.
    rows_read: bool,
}
