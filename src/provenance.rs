//! Which results a command read, said before it answers: the file, when its runs ran, and
//! whether it is fit to plan with (`--quick` results, or results of another version of the
//! spec, are not).

use std::path::Path;

use anyhow::Result;

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
    let provenance = Provenance {
        quick: results.quick,
        other_spec: results.spec.hash != headroom_runner::results::spec_hash(source),
        first_run_ms: first_run_ms(results),
    };
    provenance.say(spec, results_path);
    Ok(provenance)
}

/// When the results' first run started: the date a reader knows them by.
fn first_run_ms(results: &headroom_results::Results) -> Option<u64> {
    results
        .phases
        .iter()
        .flat_map(|phase| &phase.points)
        .flat_map(|point| &point.runs)
        .map(|run| run.started_ms)
        .filter(|ms| *ms > 0)
        .min()
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
    let provenance = Provenance {
        quick: results.quick,
        other_spec: false,
        first_run_ms: first_run_ms(results),
    };
    provenance.say(Path::new(&results.spec.path), path);
    provenance
}

/// Which results a command read, said before it answers: a `--quick` file or one of another
/// version of the spec is not what a plan should be made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Provenance {
    /// `run --quick` wrote them: scaled down, not figures to plan with.
    pub(crate) quick: bool,
    /// The spec's text changed since they were written.
    pub(crate) other_spec: bool,
    /// When their first run started, in milliseconds since the Unix epoch (none ran: none).
    pub(crate) first_run_ms: Option<u64>,
}

impl Provenance {
    /// Why `plan --check` refuses these results, when it does: a gate plans from full results
    /// of this spec only.
    pub(crate) fn refused_by_check(self) -> Option<&'static str> {
        match (self.quick, self.other_spec) {
            (false, false) => None,
            (true, true) => Some("they are `--quick` results of a different spec"),
            (true, false) => Some("they are `--quick` results"),
            (false, true) => Some("they are results of a different spec"),
        }
    }

    /// One line on stderr: the file, when its first run ran, and what makes it unfit, if anything.
    fn say(self, spec: &Path, results_path: &Path) {
        let written = self
            .first_run_ms
            .and_then(|ms| jiff::Timestamp::from_millisecond(ms as i64).ok())
            .map(|at| format!(", run on {}", at.strftime("%Y-%m-%d %H:%M UTC")))
            .unwrap_or_default();
        let mut unfit = Vec::new();
        if self.quick {
            unfit.push("`--quick` results (scaled down: not figures to plan with)".to_owned());
        }
        if self.other_spec {
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
}
