//! The levers of a run its spec's text does not show: `run --set` values, and the variables
//! `{env:…}` filled (their values never recorded: they may be secrets).

use headroom_results::Results;
use schemars::JsonSchema;
use serde::Serialize;

/// One value given to a run from outside its spec.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Lever {
    /// The `[vars]` variable (`cache`) or the environment variable (`TOKEN`).
    pub name: String,
    /// How it was given: `--set`, or `{env:TOKEN}`.
    pub from: String,
    /// Its value as given (`on`); `None` for an environment variable, whose value is never
    /// recorded.
    pub value: Option<String>,
}

/// The run's `--set` values, then its environment variables, each by name.
pub fn levers(results: &Results) -> Vec<Lever> {
    let set = results.matrix.set.iter().map(|(name, value)| Lever {
        name: name.clone(),
        from: "--set".to_owned(),
        value: Some(value.to_string()),
    });
    let env = results.env.keys().map(|name| Lever {
        name: name.clone(),
        from: format!("{{env:{name}}}"),
        value: None,
    });
    set.chain(env).collect()
}

/// `--set NAME=VALUE` for each `--set` lever, each word quoted for a POSIX shell when it needs
/// it: the run command that reproduces the page.
pub fn set_flags(levers: &[Lever]) -> String {
    levers
        .iter()
        .filter(|lever| lever.from == "--set")
        .filter_map(|lever| {
            let value = lever.value.as_deref()?;
            Some(format!(
                " --set {}",
                shell_word(&format!("{}={value}", lever.name))
            ))
        })
        .collect()
}

/// `word` as a POSIX shell reads it back: bare when it holds only safe characters, else in
/// single quotes (a quote inside closed, escaped and reopened).
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,/:=%+@".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_values_are_flags_a_shell_reads_back() {
        let lever = |name: &str, from: &str, value: Option<&str>| Lever {
            name: name.into(),
            from: from.into(),
            value: value.map(str::to_owned),
        };
        let levers = [
            lever("cache", "--set", Some("on")),
            lever("greeting", "--set", Some("it's 5 o'clock")),
            lever("TOKEN", "{env:TOKEN}", None),
        ];
        assert_eq!(
            set_flags(&levers),
            " --set cache=on --set 'greeting=it'\\''s 5 o'\\''clock'"
        );
    }
}
