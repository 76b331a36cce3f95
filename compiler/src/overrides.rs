//! `run --set NAME=VALUE`: a `[vars]` value given from outside the spec. It replaces the
//! spec's value in the document before any check, so it is checked as the spec's own, and the
//! run matrix records what was set.

use std::collections::BTreeMap;

use headroom_spec::VarValue;
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::Document;

/// Puts each override into `document` at `/vars/NAME`: a number where the text is one, else
/// the text as written. A name `[vars]` does not declare is an error naming the closest one.
/// Returns what was set.
pub(crate) fn apply(
    overrides: &[(String, String)],
    document: &mut Document,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, VarValue> {
    let mut set = BTreeMap::new();
    for (name, text) in overrides {
        let declared: Vec<String> = document
            .json
            .get("vars")
            .and_then(Value::as_object)
            .map(|vars| vars.keys().cloned().collect())
            .unwrap_or_default();
        if !declared.contains(name) {
            let hint = match crate::suggest::closest(name, declared.iter().map(String::as_str)) {
                Some(close) => format!("did you mean `--set {close}={text}`?"),
                None => format!(
                    "declare it with its default in [vars] (`{name} = {text}`), then set it"
                ),
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownVariable,
                    format!("`--set {name}={text}`: the spec declares no variable `{name}`"),
                )
                .at("/vars", document.key_span("/vars"))
                .label("[vars] declares the variables `--set` may set")
                .hint(hint),
            );
            continue;
        }
        let (json, value) = parse(text);
        if let Some(vars) = document.json.get_mut("vars").and_then(Value::as_object_mut) {
            vars.insert(name.clone(), json);
        }
        set.insert(name.clone(), value);
    }
    set
}

/// A value as `--set` writes it: an integer or a number where it reads as one, else text.
fn parse(text: &str) -> (Value, VarValue) {
    if let Ok(n) = text.parse::<i64>() {
        return (Value::from(n), VarValue::Integer(n));
    }
    if let Ok(x) = text.parse::<f64>()
        && x.is_finite()
    {
        return (Value::from(x), VarValue::Float(x));
    }
    (Value::from(text), VarValue::Text(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_a_number_where_it_reads_as_one() {
        assert_eq!(parse("2").1, VarValue::Integer(2));
        assert_eq!(parse("0.5").1, VarValue::Float(0.5));
        assert_eq!(parse("64MB").1, VarValue::Text("64MB".to_owned()));
        assert_eq!(parse("inf").1, VarValue::Text("inf".to_owned()));
    }
}
