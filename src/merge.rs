//! `headroom merge`: the segments of a run (`run --segment i/n`) joined into one results
//! file, its SLOs judged on the merged figures.

use std::path::PathBuf;

use anyhow::{Context, Result};
use headroom_figures::merge::Part;

use crate::exit;

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
    let runs = merged
        .phases
        .iter()
        .flat_map(|p| p.points.iter())
        .flat_map(|p| p.runs.iter());
    let (mut failed, mut unmeasured, mut runs_failed) = (0, 0, 0);
    for run in runs {
        runs_failed += usize::from(run.failure.is_some());
        failed += run.slo.iter().filter(|v| v.pass == Some(false)).count();
        unmeasured += run.slo.iter().filter(|v| v.pass.is_none()).count();
    }
    use std::io::Write;
    writeln!(
        stdout,
        "merged {count} segments: SLOs judged on the merged figures ({failed} failed, {unmeasured} not measured)"
    )?;
    Ok(if runs_failed > 0 {
        for failure in &failures {
            eprintln!("{failure}");
        }
        eprintln!(
            "error: {runs_failed} of the runs failed in some segment: their shares are not a whole run, so no SLO is judged on them and nothing is fitted or priced from them; the results file keeps what each segment recorded"
        );
        exit::RUN_FAILED
    } else if args.check && (failed > 0 || unmeasured > 0) {
        eprintln!("error: {failed} SLO verdicts failed and {unmeasured} were not measured");
        exit::SLO_FAILED
    } else {
        exit::OK
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
