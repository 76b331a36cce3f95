//! `--points`: points measured elsewhere, for `fit` and `plan`: a points CSV (one file, a row
//! per point), or other tools' own output, one file per step (k6's `--summary-export` JSON
//! and `--out csv`, Locust's `--csv` stats), the step from each file's name or `--step`.

use std::path::PathBuf;

use anyhow::Result;
use headroom_pricing::points::{self, MeasuredSweep};
use headroom_pricing::tool_points;

/// The sweep of the points in `paths`, with `x` naming the x axis: a points CSV's column, or
/// what the tools' steps count.
pub fn read(paths: &[PathBuf], x: &str, step: Option<f64>) -> Result<MeasuredSweep> {
    let mut texts = Vec::new();
    for path in paths {
        let text = crate::read_bounded(path, crate::files::MAX_POINTS_BYTES, "points", "")?;
        texts.push(text);
    }
    if let ([path], [text]) = (paths, texts.as_slice())
        && tool_points::recognize(text).is_none()
    {
        if step.is_some() {
            anyhow::bail!(
                "`{}` is a points CSV, whose x is its `{x}` column: --step is for one k6 or Locust output file",
                path.display()
            );
        }
        return points::from_csv(text, x).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()));
    }
    if step.is_some() && paths.len() > 1 {
        anyhow::bail!(
            "--step gives the step of one file; with {} files, put each step in its file's name (`users-40_stats.csv`)",
            paths.len()
        );
    }
    let mut steps = Vec::new();
    let mut tools = Vec::new();
    for (path, text) in paths.iter().zip(&texts) {
        let figures =
            tool_points::read(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let at = match step {
            Some(step) => step,
            None => name.as_deref().and_then(tool_points::step_of).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: no number in the file's name to be its `{x}`: name it for its step (`{x}-40.json`) or give --step",
                    path.display()
                )
            })?,
        };
        if !tools.contains(&figures.tool) {
            tools.push(figures.tool);
        }
        steps.push((at, figures));
    }
    if tools.len() > 1 {
        anyhow::bail!(
            "the points mix {}: give one tool's output per sweep",
            tools
                .iter()
                .map(|t| t.describe())
                .collect::<Vec<_>>()
                .join(" and ")
        );
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(tool_points::sweep(x, &steps))
}
