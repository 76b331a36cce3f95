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

/// `--memory NAME` names a column of the points: a series the points do not have would plan
/// without it, in silence; refused, naming what they have.
pub(crate) fn memory_is_a_column(
    memory: Option<&str>,
    points: &[std::path::PathBuf],
    given: &headroom_pricing::planner::Measured,
) -> anyhow::Result<()> {
    let Some(memory) = memory else {
        return Ok(());
    };
    let columns: Vec<&str> = given
        .sweeps
        .iter()
        .flat_map(|s| s.series.iter().map(|series| series.name.as_str()))
        .collect();
    if columns.contains(&memory) {
        return Ok(());
    }
    anyhow::bail!(
        "--memory {memory}: the points ({}) have no column `{memory}`; their series are {}: name one of them, or add the column",
        points
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if columns.is_empty() {
            "none".to_owned()
        } else {
            columns.join(", ")
        }
    )
}
