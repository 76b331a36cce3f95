//! `headroom merge`: the segments of a run (`run --segment i/n`) joined into one results
//! file, its SLOs judged on the merged figures.

use std::path::PathBuf;

use anyhow::{Context, Result};
use headroom_figures::merge::Part;

use crate::exit;
use headroom_runner::tally::Standing;

/// The flags of `headroom merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The segments' results files, one per segment of the run.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// The merged results [default: results.json beside the first part]. A file there that
    /// is not a headroom results file is refused.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Exit with 2 when an SLO failed, or could not be measured, at some point of the merge.
    #[arg(long)]
    check: bool,
}

pub fn run(args: MergeArgs) -> Result<u8> {
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        let results = crate::files::read_results(path)
            .with_context(|| format!("cannot merge `{}`", path.display()))?;
        parts.push(Part {
            path: path.display().to_string(),
            results,
        });
    }
    let out = args.out.clone().unwrap_or_else(|| {
        args.parts[0]
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("results.json")
    });
    // The guard: no part is replaced, nor a file headroom did not write; a link is written
    // through.
    let mut outputs = crate::outputs::Outputs::new(false);
    for part in &args.parts {
        outputs.input(part, "one of the parts");
    }
    let claimed = outputs.claim(&out, "--out", crate::outputs::Output::Results)?;
    let (out, replaced) = (claimed.path, claimed.replaces);
    let count = parts.len();
    let failures = failures_of(&parts);
    let merged = headroom_figures::merge::merge(parts).map_err(|why| anyhow::anyhow!("{why}"))?;
    // The results there are kept, as `run` keeps them: a merge never takes any away.
    if replaced {
        let previous = crate::out::keep_earlier(&out)?;
        eprintln!(
            "note: the results that were at {} are kept as {}",
            out.display(),
            previous.display()
        );
    }
    if let Err(error) = merged.write(&out) {
        eprintln!("error: {error}");
        return Ok(exit::WRITE_FAILED);
    }
    let mut stdout = std::io::stdout().lock();
    crate::run::write_tables(&mut stdout, &merged, &out)?;
    // Counted as `headroom run` counts its runs: one tally, one ladder.
    let tally = headroom_runner::tally::Tally::of_results(&merged);
    let (failed, unmeasured) = (tally.slo_failures, tally.slo_unmeasured);
    use std::io::Write;
    writeln!(
        stdout,
        "merged {count} segments: SLOs judged on the merged figures ({failed} failed, {unmeasured} not measured)"
    )?;
    Ok(match tally.standing(args.check) {
        // A segment cut short is a run that failed in it: the merged file has no whole run.
        Standing::Interrupted | Standing::RunsFailed => {
            for failure in &failures {
                eprintln!("{failure}");
            }
            eprintln!(
                "error: {} of the runs failed in some segment: their shares are not a whole run, so no SLO is judged on them and nothing is fitted or priced from them; the results file keeps what each segment recorded",
                tally.failed_runs + tally.failed_phases
            );
            exit::RUN_FAILED
        }
        Standing::SlosFailed => {
            eprintln!("error: {failed} SLO verdicts failed and {unmeasured} were not measured");
            exit::SLO_FAILED
        }
        Standing::Passed => exit::OK,
    })
}

/// Every run a part records as failed, in words: `load point 1 repeat 1: segment 2/3 (HOST)
/// failed: …`.
fn failures_of(parts: &[Part]) -> Vec<String> {
    let mut said = Vec::new();
    for part in parts {
        let results = &part.results;
        let Some(segment) = &results.segment else {
            continue;
        };
        for phase in &results.phases {
            for point in &phase.points {
                for run in &point.runs {
                    if let Some(failure) = &run.failure {
                        said.push(format!(
                            "  {} point {} repeat {}: segment {}/{} ({}) failed: {}",
                            phase.name,
                            point.index + 1,
                            run.repeat,
                            segment.index,
                            segment.count,
                            segment.host,
                            failure.describe()
                        ));
                    }
                }
            }
        }
    }
    said
}
