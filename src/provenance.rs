//! Which results a command read, said before it answers: the file, when its runs ran, and
//! whether it is fit to plan with (`--quick` results, or results of another version of the
//! spec, are not).

use std::path::Path;

use anyhow::Result;

use headroom_results::provenance::Provenance;

use crate::default_results;

/// Results are read only with the spec they came from: a file of another bench is refused
/// (named, with the fix); a spec edited since the run is said on stderr (editing `[plan]` and
/// rendering again is expected).
pub(crate) fn check_results_of(
    spec: &Path,
    bench: &str,
    source: &str,
    results: &headroom_results::Results,
    results_path: &Path,
) -> Result<Provenance> {
    let name = &results.matrix.bench.name;
    if name != bench {
        anyhow::bail!(
            "{} holds results of bench `{name}`, and {} is bench `{bench}`: give the results of this spec (`headroom run {}` writes {})",
            results_path.display(),
            spec.display(),
            spec.display(),
            default_results(bench).display()
        );
    }
    let provenance = Provenance::of(results, Some(source));
    say(provenance, spec, results_path);
    Ok(provenance)
}

/// Says on stderr that the spec's default results file is not there yet.
pub(crate) fn notes_missing(path: &Path) {
    eprintln!(
        "note: no results at {}: `headroom run` writes them (or give --results / --points); planning from flags alone",
        path.display()
    );
}

/// The provenance of results read without their spec (`plan --results` alone), said.
pub(crate) fn of_results(results: &headroom_results::Results, path: &Path) -> Provenance {
    let provenance = Provenance::of(results, None);
    say(provenance, Path::new(&results.spec.path), path);
    provenance
}

/// One line on stderr: the file, when its first run ran, and what makes it unfit, if anything.
fn say(provenance: Provenance, spec: &Path, results_path: &Path) {
    let written = provenance
        .first_run_ms
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms as i64).ok())
        .map(|at| format!(", run on {}", at.strftime("%Y-%m-%d %H:%M UTC")))
        .unwrap_or_default();
    let mut unfit = Vec::new();
    if provenance.quick {
        unfit.push("`--quick` results (scaled down: not figures to plan with)".to_owned());
    }
    if provenance.other_spec {
        unfit.push(format!(
            "from a different spec ({} changed since they were written)",
            spec.display()
        ));
    }
    if unfit.is_empty() {
        eprintln!("reading {}{written}", results_path.display());
    } else {
        eprintln!(
            "warning: reading {}{written}: {}",
            results_path.display(),
            unfit.join(", and ")
        );
    }
}
