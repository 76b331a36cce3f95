//! `--points`: points measured elsewhere, for `fit` and `plan`: a points CSV (one file, a row
//! per point), or other tools' own output, one file per step (k6's `--summary-export` JSON
//! and `--out csv`, Locust's `--csv` stats), the step from each file's name or `--step`.
//! The caller reads the files; this decides what they are and makes their sweep.

use crate::points::{self, MeasuredSweep, PointsError};
use crate::tool_points::{self, ToolError};

/// One file of points, as read: its path as the user wrote it, and its text.
#[derive(Debug, Clone, Copy)]
pub struct GivenFile<'a> {
    /// The path as given (`runs/users-40_stats.csv`): its name may carry the step.
    pub path: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// Why the files given cannot make one sweep, each naming the file and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GivenError {
    /// `--step` with a points CSV, which has its x in a column.
    #[error(
        "`{path}` is a points CSV, whose x is its `{x}` column: --step is for one k6 or Locust output file"
    )]
    StepOfCsv {
        /// The CSV.
        path: String,
        /// Its x column.
        x: String,
    },
    /// A points CSV that does not read.
    #[error("{path}: {error}")]
    Csv {
        /// The CSV.
        path: String,
        /// Why, with its line and column.
        error: PointsError,
    },
    /// `--step` with several files.
    #[error(
        "--step gives the step of one file; with {files} files, put each step in its file's name (`users-40_stats.csv`)"
    )]
    StepOfMany {
        /// How many files were given.
        files: usize,
    },
    /// A tool's output that does not read.
    #[error("{path}: {error}")]
    Tool {
        /// The file.
        path: String,
        /// Why.
        error: ToolError,
    },
    /// A tool's output whose name has no step, and no `--step`.
    #[error(
        "{path}: no number in the file's name to be its `{x}`: name it for its step (`{x}-40.json`) or give --step"
    )]
    NoStep {
        /// The file.
        path: String,
        /// What the steps count.
        x: String,
    },
    /// Files of different tools in one sweep.
    #[error("the points mix {tools}: give one tool's output per sweep")]
    MixedTools {
        /// The tools, in words.
        tools: String,
    },
}

/// The sweep of the points in `files`, with `x` naming the x axis: a points CSV's column, or
/// what the tools' steps count (`step` for one tool file, else each file's name).
pub fn sweep_of(
    files: &[GivenFile<'_>],
    x: &str,
    step: Option<f64>,
) -> Result<MeasuredSweep, GivenError> {
    if let [file] = files
        && tool_points::recognize(file.text).is_none()
    {
        if step.is_some() {
            return Err(GivenError::StepOfCsv {
                path: file.path.to_owned(),
                x: x.to_owned(),
            });
        }
        return points::from_csv(file.text, x).map_err(|error| GivenError::Csv {
            path: file.path.to_owned(),
            error,
        });
    }
    if step.is_some() && files.len() > 1 {
        return Err(GivenError::StepOfMany { files: files.len() });
    }
    let mut steps = Vec::new();
    let mut tools = Vec::new();
    for file in files {
        let figures = tool_points::read(file.text).map_err(|error| GivenError::Tool {
            path: file.path.to_owned(),
            error,
        })?;
        let name = std::path::Path::new(file.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let at = step
            .or_else(|| name.as_deref().and_then(tool_points::step_of))
            .ok_or_else(|| GivenError::NoStep {
                path: file.path.to_owned(),
                x: x.to_owned(),
            })?;
        if !tools.contains(&figures.tool) {
            tools.push(figures.tool);
        }
        steps.push((at, figures));
    }
    if tools.len() > 1 {
        let tools: Vec<&str> = tools.iter().map(|t| t.describe()).collect();
        return Err(GivenError::MixedTools {
            tools: tools.join(" and "),
        });
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(tool_points::sweep(x, &steps))
}

#[cfg(test)]
mod tests {
    use super::{GivenError, GivenFile, sweep_of};

    const SUMMARY: &str = r#"{"metrics":{"http_reqs":{"count":10,"rate":5},"http_req_duration":{"med":2,"p(95)":4}}}"#;
    const CSV: &str = "users,p95_ms\n1,2\n";

    fn file<'a>(path: &'a str, text: &'a str) -> GivenFile<'a> {
        GivenFile { path, text }
    }

    /// Tool files take their steps from their names, in order; a CSV its x from its column.
    #[test]
    fn steps_come_from_the_names_and_a_csv_from_its_column() {
        let swept = sweep_of(
            &[
                file("k6/vus-20.json", SUMMARY),
                file("k6/vus-10.json", SUMMARY),
            ],
            "vus",
            None,
        )
        .expect("two steps");
        let rate = swept.series.iter().find(|s| s.name == "rate");
        let rate = rate.expect("a rate series");
        assert_eq!(rate.points, [(10.0, 5.0), (20.0, 5.0)]);
        let csv = sweep_of(&[file("points.csv", CSV)], "users", None).expect("a csv");
        assert_eq!(csv.x, "users");
    }

    /// What cannot make one sweep is refused, naming the file and the fix.
    #[test]
    fn what_cannot_make_one_sweep_is_refused() {
        let refused =
            |files: &[GivenFile<'_>], step| sweep_of(files, "vus", step).expect_err("refused");
        assert_eq!(
            refused(&[file("points.csv", CSV)], Some(4.0)),
            GivenError::StepOfCsv {
                path: "points.csv".to_owned(),
                x: "vus".to_owned()
            }
        );
        let two = [file("a-1.json", SUMMARY), file("b-2.json", SUMMARY)];
        assert_eq!(
            refused(&two, Some(4.0)),
            GivenError::StepOfMany { files: 2 }
        );
        let unnamed = [file("summary.json", SUMMARY), file("b-2.json", SUMMARY)];
        assert_eq!(
            refused(&unnamed, None).to_string(),
            "summary.json: no number in the file's name to be its `vus`: name it for its step (`vus-40.json`) or give --step"
        );
    }
}
