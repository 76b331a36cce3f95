//! Names made safe for the files they name, and the environment variables a run's matrix
//! fills (levers outside the spec, recorded with the results).

/// A name made safe for a file name: what is not a letter, digit, `-` or `_` becomes `_`.
pub(crate) fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The environment variables `{env:NAME}` fills anywhere in the run matrix, with their values
/// now (unset ones left out): levers outside the spec, recorded with the results. One used in
/// a header or a body anywhere is recorded by name only (`None`): it may be a secret.
pub(crate) fn env_levers(
    matrix: &headroom_compiler::matrix::RunMatrix,
) -> std::collections::BTreeMap<String, Option<String>> {
    use headroom_spec::placeholder::{PlaceholderName, scan};
    let mut found = std::collections::BTreeMap::new();
    let mut secret = std::collections::BTreeSet::new();
    let Ok(json) = serde_json::to_value(matrix) else {
        return found;
    };
    let mut stack = vec![(json, false)];
    while let Some((value, hidden)) = stack.pop() {
        match value {
            serde_json::Value::String(text) => {
                for placeholder in scan(&text).into_iter().flatten() {
                    if let PlaceholderName::Env(name) = placeholder.name {
                        if hidden {
                            secret.insert(name.to_owned());
                        }
                        found.insert(name.to_owned(), std::env::var(name).ok());
                    }
                }
            }
            serde_json::Value::Array(items) => {
                stack.extend(items.into_iter().map(|item| (item, hidden)));
            }
            serde_json::Value::Object(fields) => {
                for (key, item) in fields {
                    let hides = hidden || matches!(key.as_str(), "headers" | "body");
                    stack.push((item, hides));
                }
            }
            _ => {}
        }
    }
    found
        .into_iter()
        .filter_map(|(name, value)| {
            let value = value?;
            Some(if secret.contains(&name) {
                (name, None)
            } else {
                (name, Some(value))
            })
        })
        .collect()
}
