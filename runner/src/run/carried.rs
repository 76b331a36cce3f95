//! Whether the server carried the run's load (issue 41): every scenario held its load over
//! the one hold (else the run is not judged), and a closed model's users kept their pace
//! (else they were stuck: the server did not carry them).

use crate::results::{Failure, RunResult};
use headroom_matrix::Point;
use std::time::Duration;

/// Why the server did not carry the run's load, as the run's failure: its loads were not
/// there together, or a closed model's users were stuck. `None` when it carried it.
pub(super) fn not_carried(result: &RunResult) -> Option<Failure> {
    if let Some(why) = not_together(result) {
        return Some(Failure::NotTogether { why });
    }
    headroom_figures::users::stuck(result)
        .map(|(scenario, why)| Failure::UsersStuck { scenario, why })
}

/// The hold every scenario of `point` has (the compiler refuses a point whose scenarios' holds
/// differ); none only for a point of no scenario.
pub(super) fn point_hold(point: &Point) -> Duration {
    point
        .scenarios
        .iter()
        .find_map(|scenario| scenario.stages().hold)
        .map_or(Duration::ZERO, |hold| hold.as_std())
}

/// Under this, a scenario's part of the run's hold is short of it: the loads were not there
/// together. A scenario's ends are the hold's own instants, so only a scenario that stopped
/// early (or never held its load in it) falls short.
const TOGETHER_WITHIN_S: f64 = 0.05;

/// Where a scenario that ran did not hold its load over the whole of the run's hold, in
/// words; `None` when every one did.
fn not_together(result: &RunResult) -> Option<String> {
    let hold = result.hold?;
    let short: Vec<String> = result
        .scenarios
        .iter()
        .filter(|(_, scenario)| scenario.skipped.is_none())
        .filter_map(|(name, scenario)| {
            let held = scenario.held.map_or(0.0, |held| held.length_s());
            (held < hold.length_s() - TOGETHER_WITHIN_S).then(|| {
                format!(
                    "`{name}` held its load {held:.1} s of the {:.1} s hold",
                    hold.length_s()
                )
            })
        })
        .collect();
    (!short.is_empty()).then(|| short.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Interval, ScenarioResult};

    fn run_holding(held: &[(&str, Option<(f64, f64)>)]) -> RunResult {
        let mut run = RunResult::started(1, 0);
        run.hold = Some(Interval {
            from_s: 3.0,
            to_s: 7.0,
        });
        for (name, held) in held {
            run.scenarios.insert(
                (*name).to_owned(),
                ScenarioResult {
                    held: held.map(|(from_s, to_s)| Interval { from_s, to_s }),
                    ..ScenarioResult::default()
                },
            );
        }
        run
    }

    /// Every scenario over the whole hold: together. One that stopped early, or that has no
    /// part of it: not, said with what each held.
    #[test]
    fn a_scenario_short_of_the_hold_is_not_together() {
        let together = run_holding(&[("api", Some((3.0, 7.0))), ("chat", Some((3.0, 6.99)))]);
        assert_eq!(not_together(&together), None);
        let short = run_holding(&[("api", Some((3.0, 7.0))), ("chat", Some((3.0, 5.5)))]);
        assert_eq!(
            not_together(&short).as_deref(),
            Some("`chat` held its load 2.5 s of the 4.0 s hold")
        );
        let never = run_holding(&[("api", None), ("chat", Some((3.0, 7.0)))]);
        assert_eq!(
            not_together(&never).as_deref(),
            Some("`api` held its load 0.0 s of the 4.0 s hold")
        );
        let failure = Failure::NotTogether {
            why: not_together(&short).unwrap_or_default(),
        };
        assert_eq!(
            failure.describe(),
            "not judged: the loads were not there together (`chat` held its load 2.5 s of the 4.0 s hold)"
        );
    }
}
