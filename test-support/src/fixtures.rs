//! The fixtures more than one crate's tests read. They live beside this crate
//! (`test-support/fixtures/`), each with its provenance; a crate's tests reach them through
//! these functions, so no crate knows where another keeps its tests.

use std::path::{Path, PathBuf};

/// A real results file: a relay's `memory` phase (three repeats at 1, 32 and 128 rooms) and
/// its `rooms` phase (one repeat each), recorded by `headroom run` against the demo target.
pub const RELAY_RESULTS: &str = include_str!("../fixtures/relay-results.json");

/// The relay results file's path from the repository root, as a user would type it on a
/// command line (transcripts show it, so it is relative).
pub const RELAY_RESULTS_PATH: &str = "test-support/fixtures/relay-results.json";

/// This crate's fixtures folder, absolute.
pub fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))
}

/// The absolute path of the fixture `name` (`k6/vus-20.json`).
pub fn path(name: &str) -> PathBuf {
    dir().join(name)
}

/// The text of the fixture `name`, failing the test with the path when it cannot be read.
pub fn text(name: &str) -> String {
    let path = path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relative_path_names_the_same_file_as_the_text() {
        let from_root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(RELAY_RESULTS_PATH);
        assert_eq!(
            std::fs::read_to_string(from_root).expect("the relay results"),
            RELAY_RESULTS
        );
        assert!(text("k6/vus-20.json").contains("http_req_duration"));
    }
}
