//! An answer's checks beyond its status (`expect = { body_contains, body_regex, json,
//! max_size }`), compiled once per scenario: a failed one is a `check` error of its request.

/// The body kept for checks when `max_size` does not say: answers to check are pages and
/// API documents, not downloads.
pub(super) const CHECKED_BODY_LIMIT: u64 = 1024 * 1024;

/// An answer's checks beyond its status (`expect = { … }`), compiled once.
pub(super) struct Checks {
    contains: Option<Vec<u8>>,
    regex: Option<regex::bytes::Regex>,
    json: Vec<(String, serde_json::Value)>,
    /// The largest body that passes, and the most kept to check.
    pub(super) max_size: u64,
    /// Whether a check reads the body (then it is kept).
    pub(super) reads_body: bool,
}

impl Checks {
    pub(super) fn of(
        checks: &headroom_spec::scenario::Checks,
        url: &str,
    ) -> Result<Checks, String> {
        let regex = match &checks.body_regex {
            Some(pattern) => Some(
                regex::bytes::Regex::new(pattern)
                    .map_err(|e| format!("`body_regex` of `{url}`: {e}"))?,
            ),
            None => None,
        };
        let contains = checks.body_contains.as_ref().map(|t| t.as_bytes().to_vec());
        let reads_body = contains.is_some() || regex.is_some() || !checks.json.is_empty();
        Ok(Checks {
            contains,
            regex,
            json: checks.json.clone().into_iter().collect(),
            max_size: checks
                .max_size
                .map_or(CHECKED_BODY_LIMIT, |size| size.bytes()),
            reads_body,
        })
    }

    /// Whether an answer of `size` bytes, of which `kept` were kept, passes every check.
    pub(super) fn pass(&self, size: u64, kept: &[u8]) -> bool {
        if size > self.max_size {
            return false;
        }
        if let Some(text) = &self.contains
            && !text.is_empty()
            && !kept.windows(text.len()).any(|w| w == text.as_slice())
        {
            return false;
        }
        if let Some(regex) = &self.regex
            && !regex.is_match(kept)
        {
            return false;
        }
        if !self.json.is_empty() {
            let Ok(document) = serde_json::from_slice::<serde_json::Value>(kept) else {
                return false;
            };
            return self
                .json
                .iter()
                .all(|(pointer, value)| document.pointer(pointer) == Some(value));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks of an answer, on bodies whose answers are known.
    #[test]
    fn checks_pass_what_holds_and_fail_what_does_not() {
        let spec = |toml: &str| -> headroom_spec::scenario::Checks {
            toml::from_str(toml).expect("checks")
        };
        let checks = |toml: &str| Checks::of(&spec(toml), "http://x/").expect("compiles");
        let body = br#"{"user":{"id":42,"name":"ada"},"items":[1,2]}"#;
        let size = body.len() as u64;
        assert!(checks(r#"body_contains = "ada""#).pass(size, body));
        assert!(!checks(r#"body_contains = "bob""#).pass(size, body));
        assert!(checks(r#"body_contains = """#).pass(0, b""));
        assert!(checks(r#"body_regex = '"id":\d+'"#).pass(size, body));
        assert!(!checks(r#"body_regex = '^\['"#).pass(size, body));
        assert!(checks(r#"json = { "/user/id" = 42, "/items/1" = 2 }"#).pass(size, body));
        assert!(!checks(r#"json = { "/user/id" = "42" }"#).pass(size, body));
        assert!(!checks(r#"json = { "/user/id" = 42 }"#).pass(3, b"not"));
        assert!(checks(r#"max_size = "1KiB""#).pass(size, body));
        assert!(!checks(r#"max_size = "10B""#).pass(size, body));
        // Only checks that read the body keep it.
        assert!(!checks(r#"max_size = "10B""#).reads_body);
        assert!(checks(r#"body_contains = "x""#).reads_body);
    }
}
