//! Failed requests or sockets, counted by why: a scenario's errors, a reload's, a publish
//! request's.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Failed requests or sockets, by why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorCounts {
    /// The connection could not be made (refused, reset before an answer).
    pub connect: u64,
    /// No answer within the request's `timeout`.
    pub timeout: u64,
    /// Answers with a status the request did not expect.
    pub status: u64,
    /// An answer that was not valid HTTP, or a connection cut mid-answer.
    pub protocol: u64,
    /// Answers with the expected status that failed a check of `expect` (the body, its size).
    #[serde(default)]
    pub check: u64,
    /// The unexpected statuses by code (`{"500": 12, "503": 2}`): they add up to `status`.
    /// Absent in files written before they were counted, and for sockets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub statuses: BTreeMap<u16, u64>,
}

impl ErrorCounts {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.status + self.protocol + self.check
    }

    /// `other`'s added, kind by kind.
    pub fn add(&mut self, other: &ErrorCounts) {
        self.connect += other.connect;
        self.timeout += other.timeout;
        self.status += other.status;
        self.protocol += other.protocol;
        self.check += other.check;
        for (code, count) in &other.statuses {
            *self.statuses.entry(*code).or_default() += count;
        }
    }

    /// One answer of an unexpected status, counted by its code.
    pub fn unexpected(&mut self, code: u16) {
        self.status += 1;
        *self.statuses.entry(code).or_default() += 1;
    }

    /// The unexpected statuses by code, most frequent first: `12 × 500, 2 × 503`; empty when
    /// they were not counted by code.
    pub fn status_codes(&self) -> String {
        let mut codes: Vec<(u16, u64)> = self.statuses.iter().map(|(c, n)| (*c, *n)).collect();
        codes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        codes
            .iter()
            .map(|(code, count)| {
                format!("{} × {code}", headroom_spec::numbers::count(*count as f64))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The kinds that happened, in words: `120 could not connect, 3 timed out`.
    pub fn describe(&self) -> String {
        let kinds = [
            (self.connect, "could not connect"),
            (self.timeout, "timed out"),
            (self.protocol, "broken answers"),
            (self.status, "unexpected status"),
            (self.check, "failed a check"),
        ];
        let codes = self.status_codes();
        let named: Vec<String> = kinds
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| {
                let n = headroom_spec::numbers::count(*n as f64);
                match *what {
                    "unexpected status" if !codes.is_empty() => format!("{n} {what} ({codes})"),
                    _ => format!("{n} {what}"),
                }
            })
            .collect();
        named.join(", ")
    }
}
