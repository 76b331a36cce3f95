//! Which results a command read, and whether they are fit to plan with: `--quick` results,
//! or results of another version of the spec, are not.

use crate::{Results, spec_hash};

/// What makes a results file fit or unfit to plan with, and when it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provenance {
    /// `run --quick` wrote them: scaled down, not figures to plan with.
    pub quick: bool,
    /// The spec's text changed since they were written.
    pub other_spec: bool,
    /// When their first run started, in milliseconds since the Unix epoch (none ran: none).
    pub first_run_ms: Option<u64>,
}

impl Provenance {
    /// The provenance of `results`, read with the text of the spec they are read for
    /// (`None`: read without a spec, so no other spec's either).
    pub fn of(results: &Results, spec_text: Option<&str>) -> Provenance {
        Provenance {
            quick: results.quick,
            other_spec: spec_text.is_some_and(|text| results.spec.hash != spec_hash(text)),
            first_run_ms: first_run_ms(results),
        }
    }

    /// Why `plan --check` refuses these results, when it does: a gate plans from full results
    /// of this spec only.
    pub fn refused_by_check(self) -> Option<&'static str> {
        match (self.quick, self.other_spec) {
            (false, false) => None,
            (true, true) => Some("they are `--quick` results of a different spec"),
            (true, false) => Some("they are `--quick` results"),
            (false, true) => Some("they are results of a different spec"),
        }
    }
}

/// When the results' first run started: the date a reader knows them by.
fn first_run_ms(results: &Results) -> Option<u64> {
    results
        .phases
        .iter()
        .flat_map(|phase| &phase.points)
        .flat_map(|point| &point.runs)
        .map(|run| run.started_ms)
        .filter(|ms| *ms > 0)
        .min()
}

#[cfg(test)]
mod tests {
    use super::Provenance;

    /// `plan --check` refuses `--quick` results and results of another spec, saying which.
    #[test]
    fn quick_results_and_another_spec_s_are_refused_by_check() {
        let of = |quick, other_spec| Provenance {
            quick,
            other_spec,
            first_run_ms: Some(1),
        };
        assert_eq!(of(false, false).refused_by_check(), None);
        assert_eq!(
            of(true, true).refused_by_check(),
            Some("they are `--quick` results of a different spec")
        );
        assert_eq!(
            of(true, false).refused_by_check(),
            Some("they are `--quick` results")
        );
        assert_eq!(
            of(false, true).refused_by_check(),
            Some("they are results of a different spec")
        );
    }
}
