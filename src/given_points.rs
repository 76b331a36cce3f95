//! `--points`: the files read, within their size bound; what they are and their sweep are
//! `headroom_pricing::given`'s.

use std::path::PathBuf;

use anyhow::Result;
use headroom_pricing::given::{self, GivenFile};
use headroom_pricing::points::MeasuredSweep;

/// The sweep of the points in `paths`, with `x` naming the x axis (`headroom_pricing::given`).
pub fn read(paths: &[PathBuf], x: &str, step: Option<f64>) -> Result<MeasuredSweep> {
    let mut texts = Vec::new();
    for path in paths {
        let text = crate::read_bounded(path, crate::files::MAX_POINTS_BYTES, "points", "")?;
        texts.push((path.display().to_string(), text));
    }
    let files: Vec<GivenFile<'_>> = texts
        .iter()
        .map(|(path, text)| GivenFile { path, text })
        .collect();
    Ok(given::sweep_of(&files, x, step)?)
}
