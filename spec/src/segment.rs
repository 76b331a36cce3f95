//! `run --segment INDEX/COUNT`: which share of every run's load a segment sends, said once.
//! The CLI's help, docs/cli.md and docs/scale-out.md state it in these words (checked by
//! `tests/docs.rs`); the load generator's striping (`headroom_load::stripe::Segment::owns`)
//! is its implementation.

/// Which arrivals, users and rooms segment `INDEX` of `COUNT` sends.
pub const RULE: &str =
    "open-model arrivals, virtual users and rooms numbered k (from 0) with k % COUNT == INDEX";
