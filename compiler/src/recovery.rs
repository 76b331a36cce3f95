//! Going on after schema errors, so one run reports the semantic problems too.
//!
//! The values the schema rejected are taken out of the document (an unknown key, a duration
//! without a unit); if what is left still deserializes, the semantic checks run on it. A check
//! that could be misled by a missing value is not reported: anything in the same table as a
//! removed value, and any check that depends on the removed value's table (a placeholder check
//! after a variable was removed). Reporting less is better than reporting something untrue.

use headroom_spec::Spec;
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};

/// The spec without the rejected values, and which values went.
pub struct Recovered {
    pub spec: Spec,
    removed: Vec<String>,
}

/// Takes out every value a schema diagnostic points at and deserializes the rest. When a
/// removal leaves a table without a key it needs (`send` without `rate`), that table goes too,
/// found by the path serde reports. `None` when nothing helps: a required key is missing, or
/// the problem is the file's shape.
pub fn recover(json: &Value, schema_diagnostics: &[Diagnostic]) -> Option<Recovered> {
    if schema_diagnostics
        .iter()
        .any(|d| d.code == Code::MissingKey || d.pointer.is_empty())
    {
        return None;
    }
    let mut pruned = json.clone();
    let mut removed = Vec::new();
    for diagnostic in schema_diagnostics {
        removed.push(remove(&mut pruned, &diagnostic.pointer)?);
    }
    // Each round removes one more table; a spec has only so many.
    for _ in 0..16 {
        match serde_path_to_error::deserialize::<_, Spec>(&pruned) {
            Ok(spec) => return Some(Recovered { spec, removed }),
            Err(error) => {
                let at = path_to_pointer(error.path());
                // serde loses the path inside a tagged enum (a scenario's `kind`): it reports
                // the scenario. Then the table a removal emptied is the removed value's own.
                let inside = removed
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| {
                        r.starts_with(&format!("{at}/"))
                            && r.matches('/').count() > at.matches('/').count() + 1
                    })
                    .max_by_key(|(_, r)| r.matches('/').count())
                    .map(|(i, r)| (i, r[..r.rfind('/').unwrap_or(0)].to_owned()));
                match inside {
                    Some((index, parent)) => removed[index] = remove(&mut pruned, &parent)?,
                    None => removed.push(remove(&mut pruned, &at)?),
                }
            }
        }
    }
    None
}

/// Removes the key at `pointer`, or the nearest one above it when it is an array item (which
/// cannot go without renumbering the items after it). A whole top-level table may go: if it
/// was required, deserialization fails and recovery gives up.
fn remove(json: &mut Value, pointer: &str) -> Option<String> {
    let mut parts: Vec<&str> = pointer.split('/').skip(1).collect();
    while parts
        .last()
        .is_some_and(|last| last.parse::<usize>().is_ok())
    {
        parts.pop();
    }
    let key = parts.pop()?;
    let parent = if parts.is_empty() {
        String::new()
    } else {
        format!("/{}", parts.join("/"))
    };
    let unescaped = key.replace("~1", "/").replace("~0", "~");
    json.pointer_mut(&parent)?
        .as_object_mut()?
        .remove(&unescaped)?;
    Some(format!("{parent}/{key}"))
}

/// serde's `scenario[0].send` as the JSON pointer `/scenario/0/send`.
fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push('/');
                pointer.push_str(&crate::document::escape(key));
            }
            Segment::Unknown => break,
        }
    }
    pointer
}

impl Recovered {
    /// Whether a semantic diagnostic can be trusted with the removed values gone.
    pub fn trusts(&self, diagnostic: &Diagnostic) -> bool {
        let scope = table_of(&diagnostic.pointer);
        self.removed.iter().all(|removed| {
            let removed_table = table_of(removed);
            let removed_section = removed.split('/').nth(1).unwrap_or_default();
            removed_table != scope && !depends_on(diagnostic.code).contains(&removed_section)
        })
    }
}

/// `/scenario/0` for anything inside the first scenario, `/target` for anything in [target].
fn table_of(pointer: &str) -> String {
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    match parts.as_slice() {
        [array, index, ..] if index.parse::<usize>().is_ok() => format!("/{array}/{index}"),
        [table, ..] => format!("/{table}"),
        [] => String::new(),
    }
}

/// The sections of a spec whose values a check reads besides its own table.
fn depends_on(code: Code) -> &'static [&'static str] {
    match code {
        Code::UnknownPlaceholder | Code::UnknownVariable | Code::ReservedName => &["vars"],
        Code::VariableType => &["vars", "phase", "scenario", "target", "bench"],
        Code::UnusedSweep | Code::UnusedVariable => {
            &["vars", "scenario", "target", "bench", "capacity", "phase"]
        }
        Code::UnknownFigure | Code::BadSlo | Code::SloUnit => &["scenario", "measure", "phase"],
        Code::UnknownReference => &["scenario", "phase", "measure"],
        Code::PhaseMissesUnits => &["phase", "vars"],
        Code::PlanWithoutUnits => &["capacity"],
        Code::MissingSetting => &["scenario", "phase"],
        Code::HostNotAllowed => &["target"],
        Code::UnknownInstance | Code::UnknownDatabase | Code::UnsourcedPrice => &["plan"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_rejected_values_and_distrusts_their_neighbours() {
        let mut json: Value = serde_json::from_str(&example()).expect("json");
        json["scenario"][0]["timout"] = Value::from("5s");
        let unknown = Diagnostic::new(Code::UnknownKey, "x").at("/scenario/0/timout", None);
        let recovered = recover(&json, &[unknown]).expect("recovered");
        assert_eq!(recovered.removed, ["/scenario/0/timout"]);
        let same_table =
            Diagnostic::new(Code::MissingSetting, "x").at("/scenario/0/executor", None);
        let elsewhere =
            Diagnostic::new(Code::UnknownPlaceholder, "x").at("/target/command/3", None);
        assert!(!recovered.trusts(&same_table));
        assert!(recovered.trusts(&elsewhere));
    }

    #[test]
    fn a_table_left_without_a_required_key_goes_too() {
        let mut json: Value = serde_json::from_str(&example()).expect("json");
        json["phase"][0]["measure"] =
            serde_json::json!({ "series": [{ "name": 3, "metric": "heap" }] });
        let wrong =
            Diagnostic::new(Code::WrongType, "x").at("/phase/0/measure/series/0/name", None);
        let recovered = recover(&json, &[wrong]).expect("recovered");
        // `name` is required in a series: without it the series list cannot stand.
        assert_eq!(
            recovered.removed,
            ["/phase/0/measure/series/0/name", "/phase/0/measure/series"]
        );
    }

    fn example() -> String {
        serde_json::json!({
            "bench": { "name": "x" },
            "target": { "command": ["x"] },
            "scenario": [{ "kind": "http", "name": "a", "executor": "constant-vus", "vus": 1,
                           "requests": [{ "url": "http://127.0.0.1/" }] }],
            "phase": [{ "name": "p", "hold": "1s" }],
        })
        .to_string()
    }

    #[test]
    fn a_missing_key_cannot_be_recovered() {
        let missing = Diagnostic::new(Code::MissingKey, "x").at("/phase/0", None);
        assert!(recover(&serde_json::json!({}), &[missing]).is_none());
    }
}
