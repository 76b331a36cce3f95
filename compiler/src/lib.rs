//! Validates a headroom spec and expands it into a run matrix.
//!
//! **No I/O.** The compiler gets the spec's text and the price table as values and returns
//! data: every diagnostic it found (schema and semantic alike, never just the first) and, when
//! there are no errors, the [`RunMatrix`] (its types are `headroom-matrix`'s). Rendering is the CLI's job.
//!
//! The stages: [`document`] parses TOML with spans into JSON plus a pointer→span index;
//! [`schema_check`] validates against the schema generated from `headroom-spec` and rewrites
//! the errors in our words; the spec is then deserialized into typed values; [`checks`] runs
//! the semantic checks; [`matrix`] expands the phases into points and runs.

#![warn(missing_docs)]

mod checks;
mod diagnostic;
mod document;
pub mod matrix;
mod overrides;
mod paths;
mod recovery;
mod schema_check;
pub mod slo;
pub mod suggest;

pub use diagnostic::{Code, Diagnostic, DiagnosticJson, LineIndex, Severity, line_column};
pub use paths::{NamedPath, PathKind};

use headroom_matrix::RunMatrix;
use headroom_prices::PriceTable;
use headroom_spec::Spec;

use crate::document::Document;
use crate::schema_check::SchemaCheck;

/// What compiling one spec gives: every diagnostic, and the plan when there is no error.
#[derive(Debug)]
pub struct Compilation {
    /// Every error and warning, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// The run matrix, when the spec has no error.
    pub matrix: Option<RunMatrix>,
    /// The folders and files the spec names (`cwd`, `ca`), for the caller to look for
    /// ([`Compilation::check_paths`]); empty when the spec does not deserialize.
    pub paths: Vec<NamedPath>,
}

impl Compilation {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity() == Severity::Error)
    }
}

/// The column names of each data file a spec's scenarios read (`data = { file }`), by the
/// file as the spec writes it, or why it could not be read: the CLI reads the files, so the
/// compiler checks `{row.column}` without any I/O. A file not in the map is not checked.
pub type DataColumns = std::collections::BTreeMap<String, Result<Vec<String>, String>>;

/// Compiles specs; holds the compiled schema so several files share it.
pub struct Compiler {
    schema: SchemaCheck,
    /// `run --set NAME=VALUE`: `[vars]` values given from outside the spec, as written.
    overrides: Vec<(String, String)>,
}

impl Compiler {
    /// A compiler with the spec schema built once.
    pub fn new() -> Compiler {
        Compiler {
            schema: SchemaCheck::new(),
            overrides: Vec::new(),
        }
    }

    /// The same, with `[vars]` values set from outside the spec (`run --set NAME=VALUE`):
    /// each replaces the spec's value before anything is checked, so it is validated as the
    /// spec's own would be, and the run matrix records it (`RunMatrix::set`).
    pub fn with_overrides(overrides: Vec<(String, String)>) -> Compiler {
        Compiler {
            overrides,
            ..Compiler::new()
        }
    }

    /// Validates `source` and, when it has no errors, expands it into a plan; data files'
    /// columns are not checked.
    pub fn compile(&self, source: &str, prices: &PriceTable) -> Compilation {
        self.compile_with_data(source, prices, &DataColumns::new())
    }

    /// `compile`, with the columns of the data files (`data_file_references`) to check
    /// `{row.column}` against.
    pub fn compile_with_data(
        &self,
        source: &str,
        prices: &PriceTable,
        data: &DataColumns,
    ) -> Compilation {
        let (document, mut diagnostics) = Document::parse(source);
        let Some(mut document) = document else {
            return Compilation {
                diagnostics,
                matrix: None,
                paths: Vec::new(),
            };
        };
        let set = overrides::apply(&self.overrides, &mut document, &mut diagnostics);
        diagnostics.extend(self.schema.check(&document));
        if !diagnostics.is_empty() {
            // Go on without the rejected values, to report the semantic problems too.
            if let Some(recovered) = recovery::recover(&document.json, &diagnostics) {
                let checker =
                    checks::Checker::new(source, &recovered.spec, &document, prices, data).run();
                diagnostics.extend(
                    checker
                        .diagnostics
                        .into_iter()
                        .filter(|d| recovered.trusts(d)),
                );
            }
            sort(&mut diagnostics);
            return Compilation {
                diagnostics,
                matrix: None,
                paths: Vec::new(),
            };
        }
        let spec: Spec = match serde_json::from_value(document.json.clone()) {
            Ok(spec) => spec,
            Err(error) => {
                // The schema accepted what serde refuses: report it rather than panic.
                diagnostics.push(Diagnostic::new(Code::WrongType, error.to_string()));
                return Compilation {
                    diagnostics,
                    matrix: None,
                    paths: Vec::new(),
                };
            }
        };
        let checker = checks::Checker::new(source, &spec, &document, prices, data).run();
        diagnostics.extend(checker.diagnostics.iter().cloned());
        let has_errors = diagnostics.iter().any(|d| d.severity() == Severity::Error);
        let mut plan = if has_errors {
            None
        } else {
            matrix::expand(&spec, &checker, &mut diagnostics)
        };
        if let Some(matrix) = plan.as_mut() {
            matrix.set = set;
        }
        // `[plan] emulate`: the ceiling phase once more per priced instance, in its shape.
        if let (Some(matrix), Some(priced)) = (plan.as_mut(), spec.plan.as_ref())
            && priced.emulate
            && let Err(why) = matrix::emulate(matrix, &priced.instances, prices)
        {
            diagnostics.push(
                Diagnostic::new(Code::OutOfRange, why)
                    .at("/plan/emulate", document.value_span("/plan/emulate"))
                    .label("no instance shape to run the ceiling phase in")
                    .hint("price instances the table has, with memory past `[capacity] reserve`, or remove `emulate`"),
            );
        }
        // `[plan] scale_cores`: the ceiling phase once more per core count, pinned.
        if let (Some(matrix), Some(priced)) = (plan.as_mut(), spec.plan.as_ref())
            && !priced.scale_cores.is_empty()
            && let Err(why) = matrix::scale_cores(matrix, &priced.scale_cores)
        {
            diagnostics.push(
                Diagnostic::new(Code::OutOfRange, why)
                    .at("/plan/scale_cores", document.value_span("/plan/scale_cores"))
                    .label("no ceiling phase to run at these core counts")
                    .hint("name the searched phase in `[capacity] ceiling_phase`, start the server with `command`, or remove `scale_cores`"),
            );
        }
        sort(&mut diagnostics);
        let has_errors = diagnostics.iter().any(|d| d.severity() == Severity::Error);
        Compilation {
            diagnostics,
            matrix: if has_errors { None } else { plan },
            paths: paths::named(&spec, &document),
        }
    }
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

/// In source order; diagnostics without a place last.
fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| d.span.as_ref().map_or(usize::MAX, |s| s.start));
}

/// The data files a spec's scenarios name (`data = { file }`), as written, so the caller can
/// read their header lines before compiling.
pub fn data_file_references(source: &str) -> Vec<String> {
    let Ok(document) = source.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut files: Vec<String> = document
        .get("scenario")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|scenario| scenario.get("data")?.get("file")?.as_str())
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// The price table a spec names in `[plan] prices`, with the span of that value, so the
/// caller can read the file before compiling. `None` when the spec names none (or does not
/// parse: `compile` reports that).
pub fn price_table_reference(source: &str) -> Option<(String, std::ops::Range<usize>)> {
    let (document, _) = Document::parse(source);
    let document = document?;
    let path = document.json.pointer("/plan/prices")?.as_str()?.to_owned();
    let span = document.value_span("/plan/prices")?;
    Some((path, span))
}
