//! Errors of a value that may take several shapes (`anyOf`, `oneOf`): which shape was meant,
//! and its errors in the spec's words.

use super::SchemaCheck;
use super::wording::{
    describe_types, describe_value, join_or, key_name, table_label, unknown_choice,
};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::Document;
use crate::suggest::did_you_mean;
use headroom_spec::param::{PLACEHOLDER_PATTERN, quantity_of_pattern};
use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

impl SchemaCheck {
    /// `oneOf`: an enum whose values are documented one by one (`Executor`) is a `oneOf` of
    /// constants, every one of them a choice (not the first branch's alone); else a table
    /// tagged by its `kind`.
    pub(super) fn one_of(
        &self,
        error: &ValidationError<'_>,
        context: &[Vec<ValidationError<'static>>],
        document: &Document,
        out: &mut Vec<Diagnostic>,
    ) {
        let branches = self.branches_of(error, "oneOf");
        let choices: Vec<Value> = branches
            .iter()
            .filter_map(|branch| branch.get("const").cloned())
            .collect();
        if !choices.is_empty() && choices.len() == branches.len() {
            let pointer = error.instance_path().as_str();
            let options = Value::Array(choices);
            out.push(unknown_choice(
                pointer,
                error.instance(),
                &options,
                document,
            ));
        } else {
            self.tagged(error, context, document, out);
        }
    }

    /// The branches of the `oneOf` or `anyOf` (`keyword`) an error is of, through a `$ref`.
    fn branches_of(&self, error: &ValidationError<'_>, keyword: &str) -> Vec<&Value> {
        let node = match self.keyword_parent(error) {
            Some(Value::String(reference)) => reference
                .strip_prefix('#')
                .and_then(|target| self.node(target)),
            other => other,
        };
        node.and_then(|n| n.get(keyword))
            .and_then(Value::as_array)
            .map(|branches| branches.iter().collect())
            .unwrap_or_default()
    }

    /// `anyOf`: the branch of the instance's type decides which errors to show.
    pub(super) fn one_of_many(
        &self,
        error: &ValidationError<'_>,
        context: &[Vec<ValidationError<'static>>],
        document: &Document,
        out: &mut Vec<Diagnostic>,
    ) {
        let pointer = error.instance_path().as_str();
        let matching: Vec<&Vec<ValidationError<'static>>> = context
            .iter()
            .filter(|errors| {
                !errors.iter().all(|e| {
                    matches!(e.kind(), ValidationErrorKind::Type { .. })
                        && e.instance_path().as_str() == pointer
                })
            })
            .collect();
        if let [errors] = matching.as_slice() {
            for inner in errors.iter() {
                self.translate(inner, document, out);
            }
            return;
        }
        // A table of one of several shapes (`{ from, to, step }`, `{ search = { … } }`): the
        // shape whose keys it has is the one meant, and that shape's errors are all inside it
        // (a misspelt key, `precision = "10"`); the others' are at the table itself.
        if error.instance().is_object() {
            let inside: Vec<&&Vec<ValidationError<'static>>> = matching
                .iter()
                .filter(|errors| errors.iter().all(|e| e.instance_path().as_str() != pointer))
                .collect();
            if let [errors] = inside.as_slice() {
                for inner in errors.iter() {
                    self.translate(inner, document, out);
                }
                return;
            }
        }
        let node = self.keyword_parent(error);
        let branches: Vec<&Value> = node
            .and_then(|n| n.get("anyOf"))
            .and_then(Value::as_array)
            .map(|branches| branches.iter().collect())
            .unwrap_or_default();
        let instance = error.instance();
        // A bare number where one branch wants a quantity string.
        let quantity = branches.iter().find(|branch| {
            branch
                .get("pattern")
                .and_then(Value::as_str)
                .and_then(quantity_of_pattern)
                .is_some()
        });
        if let (Some(branch), true) = (quantity, instance.is_number()) {
            out.push(self.wrong_type(pointer, instance, Some(branch), document));
            return;
        }
        if let Some(diagnostic) = self.misplaced_value(pointer, document) {
            out.push(diagnostic);
            return;
        }
        let expected: Vec<String> = branches
            .iter()
            .map(|branch| self.branch_words(branch))
            .collect();
        let mut expected_text = expected.clone();
        expected_text.dedup();
        let expected_text = join_or(&expected_text);
        out.push(
            Diagnostic::new(
                Code::WrongType,
                format!(
                    "{} must be {expected_text}, found {}",
                    key_name(pointer),
                    describe_value(instance)
                ),
            )
            .at(pointer, document.value_span(pointer))
            .label(format!("expected {expected_text}")),
        );
    }

    /// What one branch of an `anyOf` takes, in words: `a "{variable}"`, `a number`.
    fn branch_words(&self, branch: &Value) -> String {
        if branch.get("pattern").and_then(Value::as_str) == Some(PLACEHOLDER_PATTERN) {
            "a \"{variable}\"".to_owned()
        } else if let Some(target) = branch.get("$ref").and_then(Value::as_str) {
            self.node(target.trim_start_matches('#'))
                .and_then(|n| n.get("type"))
                .map(describe_types)
                .unwrap_or_else(|| "a value".into())
        } else {
            branch
                .get("type")
                .map(describe_types)
                .unwrap_or_else(|| "a value".into())
        }
    }

    /// `oneOf` over tagged variants (scenario kinds): report the variant `kind` names.
    fn tagged(
        &self,
        error: &ValidationError<'_>,
        context: &[Vec<ValidationError<'static>>],
        document: &Document,
        out: &mut Vec<Diagnostic>,
    ) {
        let pointer = error.instance_path().as_str();
        let instance = error.instance();
        let kind_pointer = format!("{pointer}/kind");
        let kinds: Vec<String> = self
            .keyword_parent(error)
            .and_then(|n| n.get("oneOf"))
            .and_then(Value::as_array)
            .map(|branches| {
                branches
                    .iter()
                    .filter_map(|b| b.pointer("/properties/kind/const").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let quoted: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
        match instance.get("kind") {
            None if instance.is_object() => {
                out.push(
                    Diagnostic::new(
                        Code::MissingKey,
                        format!("{} has no `kind`", table_label(pointer, document)),
                    )
                    .at(pointer, document.key_span(pointer))
                    .label("this table has no `kind`")
                    .hint(format!("add `kind = {}`", quoted.join("` or `kind = "))),
                );
                return;
            }
            Some(Value::String(kind)) if !kinds.contains(kind) => {
                out.push(
                    Diagnostic::new(
                        Code::UnknownChoice,
                        format!("`{kind}` is not a kind of scenario"),
                    )
                    .at(&kind_pointer, document.value_span(&kind_pointer))
                    .label(format!("expected {}", join_or(&quoted)))
                    .hint(
                        did_you_mean(kind, kinds.iter().map(String::as_str))
                            .unwrap_or_else(|| format!("use {}", join_or(&quoted))),
                    ),
                );
                return;
            }
            _ => {}
        }
        let chosen = context.iter().find(|errors| {
            !errors.iter().any(|e| {
                e.instance_path().as_str() == kind_pointer
                    || (e.instance_path().as_str() == pointer
                        && matches!(e.kind(), ValidationErrorKind::Type { .. }))
            })
        });
        match chosen {
            Some(errors) => {
                for inner in errors {
                    self.translate(inner, document, out);
                }
            }
            None => out.push(self.wrong_type(
                pointer,
                instance,
                Some(&serde_json::json!({"type": "object"})),
                document,
            )),
        }
    }
}
