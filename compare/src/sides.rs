//! The two sides of a comparison, named: what the base has and what the new file (or the
//! lever's later value) has.

/// One thing on each side of a comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sides<T> {
    /// The base's (the first file, or the lever's first value).
    pub(crate) base: T,
    /// The new file's (or the lever's later value).
    pub(crate) new: T,
}
