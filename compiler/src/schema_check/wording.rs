//! Schema errors in our words: what a table is called, what a type or value is, the hints.

use crate::diagnostic::{Code, Diagnostic};
use crate::document::Document;
use crate::suggest::did_you_mean;
use headroom_spec::QuantityKind;
use serde_json::Value;

pub(super) fn quantity_code(kind: QuantityKind) -> Code {
    match kind {
        QuantityKind::Duration => Code::BadDuration,
        QuantityKind::Size => Code::BadSize,
        QuantityKind::Rate => Code::BadRate,
        QuantityKind::Percentage => Code::BadPercentage,
    }
}

pub(super) fn out_of_range(
    pointer: &str,
    message: String,
    label: String,
    document: &Document,
) -> Diagnostic {
    Diagnostic::new(Code::OutOfRange, message)
        .at(pointer, document.value_span(pointer))
        .label(label)
}

pub(super) fn missing_key(pointer: &str, key: &str, document: &Document) -> Diagnostic {
    if pointer.is_empty() {
        let table = match key {
            "scenario" | "phase" => format!("`[[{key}]]` table"),
            _ => format!("`[{key}]` table"),
        };
        return Diagnostic::new(Code::MissingKey, format!("the spec has no {table}"))
            .at(format!("/{key}"), None)
            .hint(format!("add a {table}; see docs/spec.md#{key}"));
    }
    let here = table_label(pointer, document);
    Diagnostic::new(Code::MissingKey, format!("{here} has no `{key}`"))
        .at(pointer, document.key_span(pointer))
        .label(format!("`{key}` is required here"))
        .hint(format!("add `{key} = …` to {here}; see docs/spec.md"))
}

pub(super) fn unknown_choice(
    pointer: &str,
    instance: &Value,
    options: &Value,
    document: &Document,
) -> Diagnostic {
    let options: Vec<String> = options
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
        .collect();
    let quoted: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
    let given = instance
        .as_str()
        .map_or_else(|| instance.to_string(), str::to_owned);
    let hint = did_you_mean(&given, options.iter().map(String::as_str))
        .map(|h| h.replace('`', "\""))
        .unwrap_or_else(|| format!("use one of {}", quoted.join(", ")));
    Diagnostic::new(
        Code::UnknownChoice,
        format!("\"{given}\" is not a valid {}", key_name_plain(pointer)),
    )
    .at(pointer, document.value_span(pointer))
    .label(format!("expected {}", join_or(&quoted)))
    .hint(hint)
}

pub(super) fn misplaced_hint(key: &str, home: &str, here: &str) -> String {
    let header = here.split(' ').next().unwrap_or(here);
    if home.starts_with("the top level") {
        format!(
            "move `{key}` above the first table header; every key written after a `{header}` header belongs to that table until the next header"
        )
    } else {
        format!(
            "move `{key} = …` under the `{}` header; every key written after a `{header}` header belongs to that table until the next header",
            home.split(' ').next().unwrap_or(home)
        )
    }
}

/// `[[phase]] "memory"`, `[target]`, `` `stages` in [[scenario]] "edits" ``.
pub fn table_label(pointer: &str, document: &Document) -> String {
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    match parts.as_slice() {
        [] => "the top level".to_owned(),
        [table] => format!("[{table}]"),
        [array, index] if index.parse::<usize>().is_ok() => {
            let name = document
                .json
                .pointer(&format!("/{array}/{index}/name"))
                .and_then(Value::as_str)
                .map(|n| format!(" \"{n}\""))
                .unwrap_or_else(|| format!(" #{}", index.parse::<usize>().unwrap_or(0) + 1));
            format!("[[{array}]]{name}")
        }
        [.., last] => {
            let parent = &pointer[..pointer.rfind('/').unwrap_or(0)];
            let owner = table_label(parent, document);
            if last.parse::<usize>().is_ok() {
                owner
            } else {
                format!("`{last}` in {owner}")
            }
        }
    }
}

/// `` `hold` `` from `/phase/0/hold`; list items name their list.
pub(super) fn key_name(pointer: &str) -> String {
    format!("`{}`", key_name_plain(pointer))
}

pub(super) fn key_name_plain(pointer: &str) -> String {
    let mut parts = pointer.rsplit('/');
    let last = parts.next().unwrap_or_default();
    if last.parse::<usize>().is_ok() {
        let owner = parts.next().unwrap_or_default();
        format!("{owner}[{last}]")
    } else {
        last.replace("~1", "/").replace("~0", "~")
    }
}

pub(super) fn describe_types(types: &Value) -> String {
    let names: Vec<String> = match types {
        Value::String(t) => vec![describe_type(t).to_owned()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(|t| describe_type(t).to_owned())
            .collect(),
        _ => vec!["a value".to_owned()],
    };
    join_or(&names)
}

pub(super) fn describe_type(name: &str) -> &'static str {
    match name {
        "string" => "a string",
        "integer" => "a whole number",
        "number" => "a number",
        "boolean" => "true or false",
        "array" => "a list",
        "object" => "a table",
        _ => "a value",
    }
}

pub(super) fn describe_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("the string \"{s}\""),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("the whole number {n}"),
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => format!("`{b}`"),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a table".to_owned(),
        Value::Null => "nothing".to_owned(),
    }
}

pub(super) fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
