//! The spec's TOML as JSON (for the schema) plus where every value sits in the source.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};

use crate::diagnostic::{Code, Diagnostic};

/// Where one value of the document is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The key, when the value has one (`hold` in `hold = "10s"`, `phase` in `[[phase]]`).
    pub key: Option<Range<usize>>,
    /// The value itself (for a table from a header, what toml records for it).
    pub value: Range<usize>,
}

/// A parsed spec: JSON for validation, and a map from JSON pointer to source span.
#[derive(Debug, Default)]
pub struct Document {
    /// The spec as JSON, for the schema check and deserialization.
    pub json: Value,
    places: HashMap<String, Place>,
}

impl Document {
    /// Parses TOML, reporting every syntax error toml can recover from.
    pub fn parse(text: &str) -> (Option<Document>, Vec<Diagnostic>) {
        let (table, errors) = DeTable::parse_recoverable(text);
        if !errors.is_empty() {
            // Past a recursion limit the reader reports the brackets it did not open as
            // unclosed: only the first error there is the user's.
            let recursion = errors
                .iter()
                .position(|e| e.message().starts_with("cannot recurse further"));
            let errors = &errors[..recursion.map_or(errors.len(), |at| at + 1)];
            let diagnostics = errors
                .iter()
                .map(|error| {
                    let message = error.message().trim_end().to_owned();
                    let (message, hint) = split_toml_message(&message);
                    // toml says a dotted key past its limit without a place: find it.
                    let span = error.span().or_else(|| {
                        (message == DEEP_KEY_MESSAGE)
                            .then(|| deepest_key_line(text))
                            .flatten()
                    });
                    Diagnostic::new(Code::TomlSyntax, message)
                        .at("", span)
                        .maybe_hint(hint)
                })
                .collect();
            return (None, diagnostics);
        }
        let mut document = Document::default();
        let span = table.span();
        document.places.insert(
            String::new(),
            Place {
                key: None,
                value: span,
            },
        );
        let json = document.table(table.get_ref(), "");
        document.json = json;
        (Some(document), Vec::new())
    }

    fn table(&mut self, table: &DeTable<'_>, pointer: &str) -> Value {
        let mut object = Map::new();
        for (key, value) in table.iter() {
            let child = format!("{pointer}/{}", escape(key.get_ref()));
            self.places.insert(
                child.clone(),
                Place {
                    key: Some(key.span()),
                    value: value.span(),
                },
            );
            let json = self.value(value.get_ref(), &child);
            object.insert(key.get_ref().to_string(), json);
        }
        Value::Object(object)
    }

    fn value(&mut self, value: &DeValue<'_>, pointer: &str) -> Value {
        match value {
            DeValue::String(text) => Value::String(text.to_string()),
            DeValue::Integer(integer) => {
                let digits = integer.as_str().replace('_', "");
                i64::from_str_radix(
                    digits
                        .trim_start_matches("0x")
                        .trim_start_matches("0o")
                        .trim_start_matches("0b"),
                    integer.radix(),
                )
                .map(|n| Value::Number(n.into()))
                .unwrap_or_else(|_| Value::String(integer.as_str().to_owned()))
            }
            DeValue::Float(float) => {
                let text = float.as_str().replace('_', "");
                text.parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number)
                    // inf and nan have no JSON form; a string fails the schema's type check.
                    .unwrap_or_else(|| Value::String(text))
            }
            DeValue::Boolean(b) => Value::Bool(*b),
            // No spec key takes a date: a string fails the type check with a clear message.
            DeValue::Datetime(datetime) => Value::String(datetime.to_string()),
            DeValue::Array(array) => {
                let mut items = Vec::new();
                for (index, item) in array.iter().enumerate() {
                    let child = format!("{pointer}/{index}");
                    self.places.insert(
                        child.clone(),
                        Place {
                            key: None,
                            value: item.span(),
                        },
                    );
                    items.push(self.value(item.get_ref(), &child));
                }
                Value::Array(items)
            }
            DeValue::Table(table) => self.table(table, pointer),
        }
    }

    /// Where a JSON pointer's key and value are in the source.
    pub fn place(&self, pointer: &str) -> Option<&Place> {
        self.places.get(pointer)
    }

    /// The span of the value at `pointer`, or of its nearest written ancestor.
    pub fn value_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.nearest(pointer).map(|place| place.value.clone())
    }

    /// The span of the key at `pointer` (or of its value when it has no key).
    pub fn key_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.nearest(pointer)
            .map(|place| place.key.clone().unwrap_or_else(|| place.value.clone()))
    }

    fn nearest(&self, pointer: &str) -> Option<&Place> {
        let mut pointer = pointer;
        loop {
            if let Some(place) = self.places.get(pointer) {
                if !pointer.is_empty() {
                    return Some(place);
                }
                return None;
            }
            pointer = &pointer[..pointer.rfind('/')?];
        }
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// What toml's limit on a dotted key's parts (80) is said as.
const DEEP_KEY_MESSAGE: &str = "a key of too many dotted parts: the TOML reader stops at 80";

/// The line whose key (a header's or before its `=`) has the most dotted parts, quoted parts
/// counted as one: where toml's place-less "recursion limit" was met.
fn deepest_key_line(text: &str) -> Option<Range<usize>> {
    let mut deepest: Option<(usize, Range<usize>)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset + (line.len() - line.trim_start().len());
        let end = offset + line.trim_end().len();
        offset += line.len();
        let parts = key_parts(line.trim_start());
        if parts > 1 && deepest.as_ref().is_none_or(|(most, _)| parts > *most) {
            deepest = Some((parts, start..end));
        }
    }
    deepest.map(|(_, span)| span)
}

/// How many dotted parts the key at the start of `line` has: a header's (`[a.b]`, `[[a.b]]`)
/// or a key's before its `=`; dots inside quotes are not separators.
fn key_parts(line: &str) -> usize {
    let header = line.starts_with('[');
    let mut quote = None;
    let mut parts = 1;
    for c in line.trim_start_matches('[').chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts += 1,
            (None, ']') if header => return parts,
            (None, '=') if !header => return parts,
            (None, '#') => return 1,
            _ => {}
        }
    }
    if header { parts } else { 1 }
}

/// toml's messages carry a second line with the expectation; keep it as the hint. Its
/// recursion limits are said in a spec's terms.
fn split_toml_message(message: &str) -> (String, Option<String>) {
    if message == "recursion limit" {
        return (
            DEEP_KEY_MESSAGE.to_owned(),
            Some(
                "no key of a spec has more than a few parts (`phase.vary`); remove the extra ones"
                    .to_owned(),
            ),
        );
    }
    if message.starts_with("cannot recurse further") {
        return (
            "lists and tables nested too deep: the TOML reader stops here".to_owned(),
            Some(
                "no key of a spec nests more than a few levels (a list of tables in a table); remove the extra brackets"
                    .to_owned(),
            ),
        );
    }
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid TOML").to_owned();
    let rest: Vec<&str> = lines.collect();
    let hint = (!rest.is_empty()).then(|| rest.join(" "));
    (first, hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_map_to_spans() {
        let text = "[bench]\nname = \"x\"\n\n[[phase]]\nname = \"a\"\nvary = { rooms = [1, 4] }\n";
        let (document, errors) = Document::parse(text);
        assert!(errors.is_empty());
        let document = document.expect("document");
        let span = document.value_span("/phase/0/vary/rooms/1").expect("span");
        assert_eq!(&text[span], "4");
        let span = document.key_span("/phase/0/name").expect("span");
        assert_eq!(&text[span], "name");
        let span = document.key_span("/bench/name").expect("span");
        assert_eq!(&text[span.clone()], "name");
        assert_eq!(span.start, 8);
    }

    #[test]
    fn nesting_too_deep_is_said_with_its_place() {
        let text = format!(
            "[bench]\nname = \"x\"\ndeep = {}{}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let (document, errors) = Document::parse(&text);
        assert!(document.is_none());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].message,
            "lists and tables nested too deep: the TOML reader stops here"
        );
        let span = errors[0].span.clone().expect("a place");
        assert_eq!(crate::line_column(&text, span.start).0, 3);
    }

    /// S07: a header 20,000 parts deep is said at its line (toml gives no place).
    #[test]
    fn a_key_of_too_many_parts_is_said_at_its_line() {
        for (key, line) in [
            (format!("[{}b]", "a.".repeat(20_000)), 3),
            (format!("{}b = 1", "a.".repeat(100)), 3),
            (format!("[[{}b]]", "\"x.y\".".repeat(90)), 3),
        ] {
            let text = format!("[bench]\nname = \"x.y.z\"\n{key}\nk = 1\n");
            let (document, errors) = Document::parse(&text);
            assert!(document.is_none(), "{key:.40}");
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].message, DEEP_KEY_MESSAGE);
            let span = errors[0].span.clone().expect("a place");
            assert_eq!(
                crate::line_column(&text, span.start),
                (line, 1),
                "{key:.40}"
            );
            assert_eq!(&text[span], key);
        }
    }

    #[test]
    fn every_syntax_error_is_reported() {
        let (document, errors) = Document::parse("a = \nb = [1,\n");
        assert!(document.is_none());
        assert!(!errors.is_empty());
        assert!(
            errors
                .iter()
                .all(|e| e.code == Code::TomlSyntax && e.span.is_some())
        );
    }
}
