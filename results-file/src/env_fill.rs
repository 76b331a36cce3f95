//! An environment variable that `{env:NAME}` filled into a run, as the results record it: never
//! its value, which may be a secret (a token in the target's env, a key in a URL's query), but a
//! short keyed hash of it, so `compare` can say that it changed without saying what to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Hex digits of the keyed hash kept: 32 bits tell two values apart (a false "unchanged" once
/// in four billion) and, for a value that was not guessable, say nothing of it.
const KEPT_HEX_DIGITS: usize = 8;

/// What the results record of an environment variable `{env:NAME}` filled (the map's key is
/// `NAME`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EnvFill {
    /// The value, "from {env:NAME}", by the first 8 hex digits of its HMAC-SHA-256 keyed by the
    /// bench's name and the variable's: equal values in two files of one bench hash equal.
    Hashed {
        /// The first 8 hex digits of HMAC-SHA-256(key = `headroom {env:NAME} of BENCH`, value).
        keyed_hash: String,
    },
    /// A file written before values were hashed: its value (`null` for one used in a header or
    /// a body). Read, compared by equality, never shown.
    Written(Option<String>),
}

impl EnvFill {
    /// The record of `value`, filled from `{env:name}` in a run of `bench`.
    pub fn of(bench: &str, name: &str, value: &str) -> EnvFill {
        let key = ring::hmac::Key::new(
            ring::hmac::HMAC_SHA256,
            format!("headroom {{env:{name}}} of {bench}").as_bytes(),
        );
        let tag = ring::hmac::sign(&key, value.as_bytes());
        let keyed_hash = tag.as_ref()[..KEPT_HEX_DIGITS / 2]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        EnvFill::Hashed { keyed_hash }
    }

    /// Whether two records may hold different values (two hashes, or two values of old files,
    /// that differ); a hash and an old value cannot be compared and are not said to differ.
    pub fn differs_from(&self, other: &EnvFill) -> bool {
        match (self, other) {
            (EnvFill::Hashed { keyed_hash: a }, EnvFill::Hashed { keyed_hash: b }) => a != b,
            (EnvFill::Written(Some(a)), EnvFill::Written(Some(b))) => a != b,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_recorded_by_a_short_keyed_hash_never_in_clear() {
        let one = EnvFill::of("chat", "TOKEN", "s3cr3tPASS42");
        let EnvFill::Hashed { keyed_hash } = &one else {
            panic!("a fill is hashed: {one:?}");
        };
        assert_eq!(keyed_hash.len(), 8);
        assert!(keyed_hash.chars().all(|c| c.is_ascii_hexdigit()));
        let json = serde_json::to_string(&one).expect("json");
        assert!(!json.contains("s3cr3t"), "{json}");
        // Equal values of one bench hash equal; another value, or another bench's key, not.
        assert_eq!(one, EnvFill::of("chat", "TOKEN", "s3cr3tPASS42"));
        assert!(one.differs_from(&EnvFill::of("chat", "TOKEN", "n3wPASS99")));
        assert!(!one.differs_from(&EnvFill::of("chat", "TOKEN", "s3cr3tPASS42")));
        assert_ne!(one, EnvFill::of("notes", "TOKEN", "s3cr3tPASS42"));
        assert_ne!(one, EnvFill::of("chat", "OTHER", "s3cr3tPASS42"));
    }

    #[test]
    fn an_old_files_values_read_and_compare_by_equality() {
        let old: std::collections::BTreeMap<String, EnvFill> =
            serde_json::from_str(r#"{"A": "1", "B": null, "C": {"keyed_hash": "0a1b2c3d"}}"#)
                .expect("an old file's env reads");
        assert_eq!(old["A"], EnvFill::Written(Some("1".to_owned())));
        assert_eq!(old["B"], EnvFill::Written(None));
        assert!(old["A"].differs_from(&EnvFill::Written(Some("2".to_owned()))));
        assert!(!old["B"].differs_from(&EnvFill::Written(None)));
        assert!(
            !old["A"].differs_from(&old["C"]),
            "an old value and a hash: not compared"
        );
    }
}
