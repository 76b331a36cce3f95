//! Validation against the spec's generated JSON Schema, with jsonschema's errors rewritten in
//! our words: the key's name, the accepted forms, a suggestion.

use headroom_spec::param::{PLACEHOLDER_PATTERN, quantity_of_pattern};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Document, escape};
use crate::suggest::did_you_mean;

mod branches;
mod wording;

pub use wording::table_label;
use wording::unknown_choice;
use wording::{
    describe_types, describe_value, key_name, key_name_plain, misplaced_hint, missing_key,
    out_of_range, quantity_code,
};

/// The spec schema, compiled once and reused for every file.
pub struct SchemaCheck {
    schema: Value,
    validator: Validator,
}

/// The tables a key can be written in, for "this key belongs in [capacity]".
const TABLES: &[(&str, &str)] = &[
    ("", "the top level (above the first `[table]` header)"),
    ("Bench", "[bench]"),
    ("Target", "[target]"),
    ("Measure", "[measure]"),
    ("Capacity", "[capacity]"),
    ("Plan", "[plan]"),
    ("Scenario", "[[scenario]]"),
    ("Phase", "[[phase]]"),
];

impl SchemaCheck {
    /// The check against the schema the spec types generate.
    pub fn new() -> SchemaCheck {
        let schema = headroom_spec::json_schema();
        let validator = jsonschema::draft202012::new(&schema)
            // The schema is generated from our own types; a failure here is a bug, not input.
            .unwrap_or_else(|error| panic!("the generated spec schema does not compile: {error}"));
        SchemaCheck { schema, validator }
    }

    /// Every schema error of the document, as diagnostics.
    pub fn check(&self, document: &Document) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for error in self.validator.iter_errors(&document.json) {
            self.translate(&error, document, &mut out);
        }
        out.dedup_by(|a, b| a.pointer == b.pointer && a.code == b.code);
        out
    }

    /// The schema node a keyword location points at, following `$ref`s on the way.
    fn node(&self, path: &str) -> Option<&Value> {
        let mut node = &self.schema;
        for segment in path.split('/').skip(1) {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            node = match node {
                Value::Object(object) => match object.get(&segment) {
                    Some(next) => next,
                    None => {
                        let target = object.get("$ref")?.as_str()?.strip_prefix('#')?;
                        self.node(target)?.get(&segment)?
                    }
                },
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The node that holds the failing keyword (the keyword location without its last part).
    fn keyword_parent(&self, error: &ValidationError<'_>) -> Option<&Value> {
        let path = error.schema_path().as_str();
        let parent = &path[..path.rfind('/').unwrap_or(0)];
        let node = self.node(parent)?;
        match node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(target) if node.get("properties").is_none() => self.node(target),
            _ => Some(node),
        }
    }

    fn definition_properties(&self, name: &str) -> Vec<String> {
        let node = if name.is_empty() {
            Some(&self.schema)
        } else {
            self.node(&format!("/$defs/{name}"))
        };
        let mut keys = Vec::new();
        let Some(node) = node else { return keys };
        let mut collect = |node: &Value| {
            if let Some(properties) = node.get("properties").and_then(Value::as_object) {
                keys.extend(properties.keys().cloned());
            }
        };
        collect(node);
        for branch in node
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect(branch);
        }
        keys.sort();
        keys.dedup();
        keys
    }

    fn translate(
        &self,
        error: &ValidationError<'_>,
        document: &Document,
        out: &mut Vec<Diagnostic>,
    ) {
        let pointer = error.instance_path().as_str().to_owned();
        let instance = error.instance();
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let known: Vec<String> = self
                    .keyword_parent(error)
                    .and_then(|node| node.get("properties"))
                    .and_then(Value::as_object)
                    .map(|properties| properties.keys().cloned().collect())
                    .unwrap_or_default();
                for key in unexpected {
                    out.push(self.unknown_key(&pointer, key, &known, document));
                }
            }
            ValidationErrorKind::Required { property } => {
                let key = property.as_str().unwrap_or_default();
                out.push(missing_key(&pointer, key, document));
            }
            ValidationErrorKind::Type { .. } => {
                let node = self.keyword_parent(error);
                out.push(self.wrong_type(&pointer, instance, node, document));
            }
            ValidationErrorKind::Minimum { limit }
            | ValidationErrorKind::ExclusiveMinimum { limit }
            | ValidationErrorKind::Maximum { limit }
            | ValidationErrorKind::ExclusiveMaximum { limit } => {
                out.push(number_bound(
                    error.kind(),
                    limit,
                    &pointer,
                    instance,
                    document,
                ));
            }
            ValidationErrorKind::MinItems { limit } | ValidationErrorKind::MaxItems { limit } => {
                out.push(items_bound(
                    error.kind(),
                    *limit,
                    &pointer,
                    instance,
                    document,
                ));
            }
            ValidationErrorKind::MinLength { limit } | ValidationErrorKind::MaxLength { limit } => {
                out.push(length_bound(error.kind(), *limit, &pointer, document));
            }
            ValidationErrorKind::Pattern { pattern } => {
                out.push(self.bad_pattern(&pointer, instance, pattern, document));
            }
            ValidationErrorKind::PropertyNames { error: inner } => {
                let name = inner.instance().as_str().unwrap_or_default().to_owned();
                let child = format!("{pointer}/{}", escape(&name));
                out.push(
                    Diagnostic::new(Code::BadName, format!("`{name}` is not a valid variable name"))
                        .at(&child, document.key_span(&child))
                        .label("not a valid name")
                        .hint("a variable name is lower-case letters, digits and `_`, starting with a letter: `edit_rate`"),
                );
            }
            ValidationErrorKind::Enum { options } => {
                out.push(unknown_choice(&pointer, instance, options, document));
            }
            ValidationErrorKind::Constant { expected_value } => {
                let options = Value::Array(vec![expected_value.as_ref().clone()]);
                out.push(unknown_choice(&pointer, instance, &options, document));
            }
            ValidationErrorKind::AnyOf { context } => {
                self.one_of_many(error, context, document, out);
            }
            ValidationErrorKind::OneOfNotValid { context } => {
                self.one_of(error, context, document, out);
            }
            _ => out.push(
                Diagnostic::new(Code::WrongType, error.to_string())
                    .at(&pointer, document.value_span(&pointer)),
            ),
        }
    }

    fn unknown_key(
        &self,
        pointer: &str,
        key: &str,
        known: &[String],
        document: &Document,
    ) -> Diagnostic {
        let child = format!("{pointer}/{}", escape(key));
        let span = document.key_span(&child);
        let here = table_label(pointer, document);
        // A key of another table: TOML's header rules put it here.
        let homes: Vec<&str> = TABLES
            .iter()
            .filter(|(definition, _)| {
                self.definition_properties(definition)
                    .iter()
                    .any(|k| k == key)
            })
            .map(|(_, label)| *label)
            .filter(|label| !here.starts_with(label))
            .collect();
        if let (Some(home), true) = (homes.first(), pointer.split('/').count() <= 3) {
            return Diagnostic::new(
                Code::MisplacedKey,
                format!("`{key}` is not a key of {here}; it belongs in {home}"),
            )
            .at(child, span)
            .label(format!("TOML put this key into {here}"))
            .hint(misplaced_hint(key, home, &here));
        }
        let suggestion = did_you_mean(key, known.iter().map(String::as_str));
        let hint = suggestion.unwrap_or_else(|| {
            if known.is_empty() {
                format!("{here} takes no keys")
            } else {
                format!("the keys of {here} are: {}", known.join(", "))
            }
        });
        Diagnostic::new(Code::UnknownKey, format!("unknown key `{key}` in {here}"))
            .at(child, span)
            .label("unknown key")
            .hint(hint)
    }

    fn wrong_type(
        &self,
        pointer: &str,
        instance: &Value,
        node: Option<&Value>,
        document: &Document,
    ) -> Diagnostic {
        let span = document.value_span(pointer);
        let pattern = node.and_then(|n| n.get("pattern")).and_then(Value::as_str);
        if let (Some(kind), true) = (pattern.and_then(quantity_of_pattern), instance.is_number()) {
            return Diagnostic::new(
                quantity_code(kind),
                format!(
                    "{} needs a unit: a bare number is ambiguous for a {}",
                    key_name(pointer),
                    kind.name()
                ),
            )
            .at(pointer, span)
            .label(format!("a {} without its unit", kind.name()))
            .hint(format!("write it as {}", kind.forms()));
        }
        // A value of [slo] or [vars] whose key belongs to another table.
        if let Some(diagnostic) = self.misplaced_value(pointer, document) {
            return diagnostic;
        }
        let expected = node
            .and_then(|n| n.get("type"))
            .map(describe_types)
            .unwrap_or_else(|| "another type".into());
        Diagnostic::new(
            Code::WrongType,
            format!(
                "{} must be {expected}, found {}",
                key_name(pointer),
                describe_value(instance)
            ),
        )
        .at(pointer, span)
        .label(format!("expected {expected}"))
    }

    fn misplaced_value(&self, pointer: &str, document: &Document) -> Option<Diagnostic> {
        let mut parts = pointer.split('/').skip(1);
        let table = parts.next()?;
        let key = parts.next()?;
        if parts.next().is_some() || !(table == "slo" || table == "vars") {
            return None;
        }
        let here = format!("[{table}]");
        let home = TABLES
            .iter()
            .filter(|(definition, _)| !definition.is_empty())
            .find(|(definition, _)| {
                self.definition_properties(definition)
                    .iter()
                    .any(|k| k == key)
            })
            .map(|(_, label)| *label)?;
        Some(
            Diagnostic::new(
                Code::MisplacedKey,
                format!(
                    "`{key}` is not {}; it belongs in {home}",
                    if table == "slo" {
                        "an SLO"
                    } else {
                        "a variable"
                    }
                ),
            )
            .at(pointer, document.key_span(pointer))
            .label(format!("TOML put this key into {here}"))
            .hint(misplaced_hint(key, home, &here)),
        )
    }

    fn bad_pattern(
        &self,
        pointer: &str,
        instance: &Value,
        pattern: &str,
        document: &Document,
    ) -> Diagnostic {
        let text = instance.as_str().unwrap_or_default();
        let span = document.value_span(pointer);
        if let Some(kind) = quantity_of_pattern(pattern) {
            let variable = if pattern == headroom_spec::param::param_pattern(kind) {
                format!(", or name a variable: \"{{{}}}\"", key_name_plain(pointer))
            } else {
                String::new()
            };
            return Diagnostic::new(
                quantity_code(kind),
                format!("`{text}` is not a {}", kind.name()),
            )
            .at(pointer, span)
            .label(format!("expected a {}", kind.name()))
            .hint(format!("write it as {}{variable}", kind.forms()));
        }
        if pattern == headroom_spec::scenario::REQUEST_NAME_PATTERN {
            let (what, figure) = if pointer.contains("/requests/") {
                ("request", "`scenario.request.latency.p95`")
            } else {
                ("scenario", "`scenario.latency.p95`")
            };
            return Diagnostic::new(Code::BadName, format!("\"{text}\" is not a valid {what} name"))
                .at(pointer, span)
                .label(format!("not a valid {what} name"))
                .hint(format!("use lower-case letters, digits, `_` and `-`, starting with a letter or digit, at most 64: a {what}'s figures are named {figure}, so a dot would split them"));
        }
        if pattern == headroom_spec::phase::SERIES_NAME_PATTERN {
            return Diagnostic::new(Code::BadName, format!("\"{text}\" is not a valid series name"))
                .at(pointer, span)
                .label("not a valid series name")
                .hint("use lower-case letters, digits and `_`, starting with a letter, at most 64 (`pg_connections`): SLOs and `[capacity] memory` name the series as they name a variable");
        }
        if pattern == headroom_spec::compare::GATE_PATTERN {
            return Diagnostic::new(Code::BadGate, format!("`{text}` is not a gate"))
                .at(pointer, span)
                .label("expected a figure and a signed percentage")
                .hint("write the figure (or the end of its name) and how much worse it may get, signed the worse way: \"latency.p95 +10%\" (fails past 10 % slower), \"api.rate -5%\" (fails past 5 % fewer)");
        }
        if pattern == PLACEHOLDER_PATTERN {
            return Diagnostic::new(
                Code::WrongType,
                format!("{} must be a number or a \"{{variable}}\", found \"{text}\"", key_name(pointer)),
            )
            .at(pointer, span)
            .label("expected a number or a placeholder")
            .hint("write a number, or a variable from [vars] in braces: \"{rooms}\" (names are lower-case)");
        }
        // `/phase/0/name` is a phase's name, `/bench/name` the bench's.
        let key = key_name_plain(pointer);
        let what = match pointer
            .rsplit('/')
            .skip(1)
            .find(|part| part.parse::<usize>().is_err())
        {
            Some(owner) if key == "name" => format!("{owner} name"),
            _ => key,
        };
        Diagnostic::new(Code::BadName, format!("\"{text}\" is not a valid {what}"))
            .at(pointer, span)
            .label("not a valid name")
            .hint(
                "use lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit",
            )
    }
}

impl Default for SchemaCheck {
    fn default() -> Self {
        SchemaCheck::new()
    }
}

/// A number outside its `minimum`/`maximum` (exclusive or not).
fn number_bound(
    kind: &ValidationErrorKind,
    limit: &Value,
    pointer: &str,
    instance: &Value,
    document: &Document,
) -> Diagnostic {
    let relation = match kind {
        ValidationErrorKind::Minimum { .. } => "at least",
        ValidationErrorKind::ExclusiveMinimum { .. } => "above",
        ValidationErrorKind::Maximum { .. } => "at most",
        _ => "below",
    };
    let bound = format!("{relation} {limit}");
    let message = format!("{} must be {bound}, found {instance}", key_name(pointer));
    out_of_range(pointer, message, format!("must be {bound}"), document)
}

/// A list with fewer or more items than it may have.
fn items_bound(
    kind: &ValidationErrorKind,
    limit: u64,
    pointer: &str,
    instance: &Value,
    document: &Document,
) -> Diagnostic {
    let relation = if matches!(kind, ValidationErrorKind::MinItems { .. }) {
        "at least"
    } else {
        "at most"
    };
    let count = instance.as_array().map_or(0, Vec::len);
    let bound = format!(
        "{relation} {limit} item{}",
        if limit == 1 { "" } else { "s" }
    );
    let message = format!("{} needs {bound}, found {count}", key_name(pointer));
    out_of_range(pointer, message, bound, document)
}

/// A string shorter or longer than it may be.
fn length_bound(
    kind: &ValidationErrorKind,
    limit: u64,
    pointer: &str,
    document: &Document,
) -> Diagnostic {
    let relation = if matches!(kind, ValidationErrorKind::MinLength { .. }) {
        "at least"
    } else {
        "at most"
    };
    let bound = format!("{relation} {limit} characters");
    let message = format!("{} must be {bound} long", key_name(pointer));
    out_of_range(pointer, message, bound, document)
}
