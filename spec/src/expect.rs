//! `expect`: what an answer to an HTTP request must be, its status and checks on its body.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::units::Size;

/// `expect = 200`, `expect = [200, 201]`, or checks on the answer:
/// `expect = { status = 200, body_contains = "ok", json = { "/state" = "open" } }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Expect {
    /// One status code.
    One(#[schemars(range(min = 100, max = 599))] u16),
    /// Any of these status codes.
    Any(#[schemars(inner(range(min = 100, max = 599)))] Vec<u16>),
    /// Checks on the answer; each that fails makes the request a `check` error.
    Checks(Checks),
}

/// Checks on an answer beyond its status. The body is kept for them up to `max_size` (1 MiB
/// by default): a longer body fails the checks that read it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Checks {
    /// The status codes that count as success; any 2xx by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Statuses>,
    /// Text the body must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// A regular expression (Rust's `regex` syntax) the body must match somewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_regex: Option<String>,
    /// Values the body, read as JSON, must hold, by JSON pointer: `{ "/user/id" = 42 }`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub json: BTreeMap<String, serde_json::Value>,
    /// The largest body that passes: `"64KiB"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<Size>,
}

/// One status code or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Statuses {
    /// One status code.
    One(#[schemars(range(min = 100, max = 599))] u16),
    /// Any of these status codes.
    Any(#[schemars(inner(range(min = 100, max = 599)))] Vec<u16>),
}

impl Expect {
    /// The status codes that count as success; empty for any 2xx.
    pub fn statuses(&self) -> Vec<u16> {
        match self {
            Expect::One(status)
            | Expect::Checks(Checks {
                status: Some(Statuses::One(status)),
                ..
            }) => vec![*status],
            Expect::Any(statuses)
            | Expect::Checks(Checks {
                status: Some(Statuses::Any(statuses)),
                ..
            }) => statuses.clone(),
            Expect::Checks(Checks { status: None, .. }) => Vec::new(),
        }
    }

    /// The checks beyond the status, when there are any.
    pub fn checks(&self) -> Option<&Checks> {
        match self {
            Expect::Checks(checks) => Some(checks),
            _ => None,
        }
    }
}
