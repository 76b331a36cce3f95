//! Validates a headroom spec and expands it into a run matrix. Does no I/O.
pub mod diagnostic;
pub mod document;
