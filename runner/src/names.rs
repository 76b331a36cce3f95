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

/// The environment variables `{env:NAME}` fills anywhere in the run matrix, each by a keyed
/// hash of its value now (unset ones left out): levers outside the spec, recorded with the
/// results without their values, which may be secrets (docs/spec.md, "Secrets").
pub(crate) fn env_fills(
    matrix: &headroom_matrix::RunMatrix,
) -> std::collections::BTreeMap<String, headroom_results::EnvFill> {
    use headroom_spec::placeholder::{PlaceholderName, scan};
    let mut names = std::collections::BTreeSet::new();
    let Ok(json) = serde_json::to_value(matrix) else {
        return std::collections::BTreeMap::new();
    };
    let mut stack = vec![json];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::String(text) => {
                for placeholder in scan(&text).into_iter().flatten() {
                    if let PlaceholderName::Env(name) = placeholder.name {
                        names.insert(name.to_owned());
                    }
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            serde_json::Value::Object(fields) => stack.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let value = std::env::var(&name).ok()?;
            let fill = headroom_results::EnvFill::of(&matrix.bench.name, &name, &value);
            Some((name, fill))
        })
        .collect()
}
