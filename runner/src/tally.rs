//! How a matrix's runs went, counted once: the runs and kept targets that failed, the SLO
//! verdicts that failed or went unmeasured, an interruption; and what that makes of the
//! command (`Standing`). `headroom run` counts as it goes and `headroom merge` counts the
//! merged file, by the same rules, so both end the same way on the same runs.

use std::collections::BTreeMap;

use headroom_matrix::RunMatrix;
use headroom_spec::VarValue;

use crate::results::{Failure, PhaseTarget, Results, RunResult, SearchEnding};

/// What went wrong over the runs so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs that failed.
    pub failed_runs: usize,
    /// Phases whose kept target (`process = "per-phase"`) failed: never up, a step run once a
    /// phase failed, or it died and the rest of the phase did not run.
    pub failed_phases: usize,
    /// SLO verdicts that failed (and closed-model users stuck in the server).
    pub slo_failures: usize,
    /// SLO verdicts whose figure was not measured, baseline points left out.
    pub slo_unmeasured: usize,
    /// The run was cut short by a signal.
    pub interrupted: bool,
}

/// What the tally makes of the command, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Cut short by a signal.
    Interrupted,
    /// A run or a kept target failed.
    RunsFailed,
    /// Under `--check`: an SLO failed or was not measured (one that measured nothing did not
    /// pass).
    SlosFailed,
    /// Every run ran (and, under `--check`, every SLO passed).
    Passed,
}

impl Tally {
    /// Counts one run's failure and verdicts; whether it failed. At the baseline (0 units)
    /// nothing is sent by design: its SLOs are not owed. A search's probes fail their SLOs by
    /// design: the search judges them, and its ending is counted instead.
    pub fn count_run(&mut self, result: &RunResult, baseline: bool, searched: bool) -> bool {
        if matches!(result.failure, Some(Failure::Interrupted)) {
            self.interrupted = true;
        }
        if !searched {
            self.slo_failures += result.slo.iter().filter(|v| v.pass == Some(false)).count();
        }
        if !baseline && !searched {
            self.slo_unmeasured += result.slo.iter().filter(|v| v.pass.is_none()).count();
        }
        // Users stuck in the server are a verdict on the load, as a failed SLO is, not a run
        // that broke: counted with the SLO failures (`--check`), a search's probe failing.
        if matches!(result.failure, Some(Failure::UsersStuck { .. })) {
            self.slo_failures += usize::from(!searched);
            return false;
        }
        let failed = result.failure.is_some();
        self.failed_runs += usize::from(failed);
        failed
    }

    /// Counts a search's ending: the SLOs failing where it starts is a failure, a probe that
    /// said nothing an unmeasured verdict.
    pub fn count_search(&mut self, ending: SearchEnding) {
        match ending {
            SearchEnding::BelowFrom => self.slo_failures += 1,
            SearchEnding::Unjudged => self.slo_unmeasured += 1,
            _ => {}
        }
    }

    /// Counts a phase's kept target.
    pub fn count_target(&mut self, target: &PhaseTarget) {
        self.failed_phases += usize::from(target.failure.is_some());
    }

    /// The tally of a results file: every run, search and kept target it holds.
    pub fn of_results(results: &Results) -> Tally {
        let mut tally = Tally::default();
        for phase in &results.phases {
            if let Some(target) = &phase.target {
                tally.count_target(target);
            }
            let searched = phase.search.is_some();
            for point in &phase.points {
                let baseline = is_baseline(&results.matrix, &point.at);
                for run in &point.runs {
                    tally.count_run(run, baseline, searched);
                }
            }
            if let Some(search) = &phase.search {
                tally.count_search(search.ending);
            }
        }
        tally
    }

    /// What the tally makes of the command; `check`: whether SLOs decide it.
    pub fn standing(&self, check: bool) -> Standing {
        if self.interrupted {
            Standing::Interrupted
        } else if self.failed_runs > 0 || self.failed_phases > 0 {
            Standing::RunsFailed
        } else if check && (self.slo_failures > 0 || self.slo_unmeasured > 0) {
            Standing::SlosFailed
        } else {
            Standing::Passed
        }
    }
}

/// A point where the units variable is 0: the server with no load, measured for its memory.
pub(crate) fn is_baseline(matrix: &RunMatrix, at: &BTreeMap<String, VarValue>) -> bool {
    matrix
        .capacity
        .units
        .as_ref()
        .is_some_and(|units| at.get(units) == Some(&VarValue::Integer(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_standing_wins_and_check_decides_slos() {
        let slos = Tally {
            slo_unmeasured: 1,
            ..Tally::default()
        };
        assert_eq!(slos.standing(false), Standing::Passed);
        assert_eq!(slos.standing(true), Standing::SlosFailed);
        let runs = Tally {
            failed_phases: 1,
            ..slos
        };
        assert_eq!(runs.standing(true), Standing::RunsFailed);
        let cut = Tally {
            interrupted: true,
            ..runs
        };
        assert_eq!(cut.standing(false), Standing::Interrupted);
    }

    /// The relay fixture, counted from the file: its `rooms` phase fails its SLOs at every
    /// step, which `--check` holds against it; no run failed.
    #[test]
    fn a_results_file_is_counted_as_its_run_counted_it() {
        let results = headroom_test_support::results::relay();
        let tally = Tally::of_results(&results);
        assert_eq!(tally.failed_runs, 0);
        assert!(tally.slo_failures > 0, "{tally:?}");
        assert_eq!(tally.standing(true), Standing::SlosFailed);
        assert_eq!(tally.standing(false), Standing::Passed);
    }
}
