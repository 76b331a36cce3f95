//! A probe of a search judged: what each of its runs says of the load (the server failed
//! it, passed it, or the run says nothing of it), and the probe's verdict over its runs.

use crate::results::{Failure, ProbeOutcome, RunResult};
use crate::search::ProbeVerdict;
use headroom_matrix::RunMatrix;

/// Under this share of the intended arrivals sent, a probe did not put its load on the server.
const SENT_AT_LEAST: f64 = 0.99;

/// What one run of a probe says.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RunSays {
    Pass,
    Fail(String),
    GeneratorBound(String),
    Unjudged(String),
    /// Other work or the hypervisor took the machine over every try: nothing said of the load.
    Competed(String),
}

/// What one run says of its load: a failure of the server under it fails it; a failure that
/// is not the load's (never ready, nothing measured, interrupted) says nothing; a generator
/// that could not send it says nothing of the server; else its SLO verdicts.
pub(super) fn judge_run(run: &RunResult, matrix: &RunMatrix, competed_reruns: u32) -> RunSays {
    let failed_slo = run
        .slo
        .iter()
        .find(|v| v.pass == Some(false))
        .map(|v| headroom_figures::text::slo_sentence(v, &matrix.slo));
    if let Some(failure) = &run.failure {
        return match failure {
            Failure::Died { .. } | Failure::OutOfMemory { .. } | Failure::ExternalExited { .. } => {
                RunSays::Fail(format!(
                    "the server failed under this load: {}",
                    failure.describe()
                ))
            }
            Failure::UsersStuck { .. } => RunSays::Fail(failure.describe()),
            Failure::Service { failure: inner, .. }
                if matches!(**inner, Failure::Died { .. } | Failure::OutOfMemory { .. }) =>
            {
                RunSays::Fail(format!(
                    "the server failed under this load: {}",
                    failure.describe()
                ))
            }
            _ => RunSays::Unjudged(failure.describe()),
        };
    }
    if run.generator.bound
        && let Some(said) = judge_bound(run, matrix, competed_reruns)
    {
        return said;
    }
    for (name, scenario) in &run.scenarios {
        let due = scenario.requests + scenario.dropped;
        if due > 0 && (scenario.requests as f64) < SENT_AT_LEAST * due as f64 {
            let sent = scenario.requests as f64 / due as f64 * 100.0;
            let skipped = format!(
                "scenario `{name}` sent {sent:.1} % of the arrivals due ({} skipped with `max_in_flight` requests outstanding)",
                scenario.dropped
            );
            // A server too slow to answer keeps requests outstanding: past the ceiling, if an
            // SLO says so; otherwise the load was never put on it.
            return match failed_slo {
                Some(slo) => RunSays::Fail(format!("{slo}; {skipped}")),
                None => RunSays::GeneratorBound(format!(
                    "{skipped}: raise `max_in_flight` so the whole load is sent"
                )),
            };
        }
    }
    if let Some(slo) = failed_slo {
        // Other work only takes from the server: a pass beside it stands, a fail may be the
        // other work's. The run was run again first; this one competed all the same (with
        // no rerun asked, every first try is judged as it is, the other work said beside it).
        let competed = run
            .machine_cpu
            .filter(|machine| competed_reruns > 0 && machine.others_competed());
        return match competed {
            Some(machine) => RunSays::Competed(format!(
                "not judged: competed: {} over the hold, and {slo}",
                machine.describe()
            )),
            None => RunSays::Fail(slo),
        };
    }
    judge_slos(run, matrix)
}

/// A run none of whose SLOs failed: a pass when every one was measured.
fn judge_slos(run: &RunResult, matrix: &RunMatrix) -> RunSays {
    match run.slo.iter().find(|v| v.pass.is_none()) {
        Some(unmeasured) => RunSays::Unjudged(headroom_figures::text::slo_sentence(
            unmeasured,
            &matrix.slo,
        )),
        None if run.slo.is_empty() => RunSays::Unjudged("no SLO was judged".to_owned()),
        None => RunSays::Pass,
    }
}

/// What a run whose generator was bound says: starved by other work (run again first, it
/// says nothing), failed by more than its lag (the server's), late only by the machine's
/// doing (a latency failure put back; otherwise `None`: judged as any run), or bound.
fn judge_bound(run: &RunResult, matrix: &RunMatrix, competed_reruns: u32) -> Option<RunSays> {
    let why = run
        .generator
        .reason
        .clone()
        .unwrap_or_else(|| "the generator was bound".to_owned());
    // Other work or the hypervisor took the machine while the generator fell behind: the
    // run was run again first; this one was starved all the same, and says nothing.
    let starved = run
        .machine_cpu
        .filter(|machine| competed_reruns > 0 && super::recorded::starved_generator(run, machine));
    if let Some(machine) = starved {
        return Some(RunSays::Competed(format!(
            "not judged: the generator was starved: {} over the hold, and {why}",
            machine.describe()
        )));
    }
    // Latency counts from the intended send, so a late generator adds its lag to it: a
    // latency over its threshold by more than that lag is the server's all the same.
    if let Some(slo) = beyond_the_lag(run, matrix) {
        return Some(RunSays::Fail(format!(
            "{slo}, over its threshold by more than the generator's lag (p99 {:.1} ms; {why})",
            run.generator.schedule_lag_p99_ms
        )));
    }
    // Idle and every arrival sent, the generator was late by the machine's doing, not at its
    // limit: the load reached the server, so a pass (the lag counted in) stands, and a fail
    // the lag may explain is put back; never "beyond what this machine can send".
    if crate::generator::lagged_while_idle(run) {
        let idle = format!(
            "the machine delayed the generator (its schedule lag p99 {:.1} ms while it used {:.2} cores and sent every arrival)",
            run.generator.schedule_lag_p99_ms, run.generator.cpu_cores
        );
        return failed_latency(run, matrix)
            .map(|slo| RunSays::Competed(format!("not judged: {idle}, and {slo}")));
    }
    Some(RunSays::GeneratorBound(why))
}

/// A latency SLO (`<` or `<=` a time) that failed, in words.
fn failed_latency(run: &RunResult, matrix: &RunMatrix) -> Option<String> {
    use headroom_matrix::slo::{Comparison, FigureUnit};
    run.slo
        .iter()
        .filter(|verdict| verdict.pass == Some(false))
        .find(|verdict| {
            matrix.slo.iter().any(|rule| {
                rule.name == verdict.name
                    && rule.unit == FigureUnit::Latency
                    && matches!(rule.comparison, Comparison::Below | Comparison::AtMost)
            })
        })
        .map(|verdict| headroom_figures::text::slo_sentence(verdict, &matrix.slo))
}

/// A latency SLO (`<` or `<=` a time) that failed by more than the generator's lag p99, in
/// words: what a generator's lateness cannot explain.
fn beyond_the_lag(run: &RunResult, matrix: &RunMatrix) -> Option<String> {
    use headroom_matrix::slo::{Comparison, FigureUnit};
    let lag_s = run.generator.schedule_lag_p99_ms / 1000.0;
    run.slo
        .iter()
        .filter(|verdict| verdict.pass == Some(false))
        .find(|verdict| {
            matrix.slo.iter().any(|rule| {
                rule.name == verdict.name
                    && rule.unit == FigureUnit::Latency
                    && matches!(rule.comparison, Comparison::Below | Comparison::AtMost)
                    && verdict
                        .value
                        .is_some_and(|value| value - verdict.threshold > lag_s)
            })
        })
        .map(|verdict| headroom_figures::text::slo_sentence(verdict, &matrix.slo))
}

/// A probe's verdict over its runs, the runs that passed, and why.
pub(super) fn probe_verdict(said: &[RunSays]) -> (ProbeVerdict, u32, Option<String>) {
    if said.is_empty() {
        let why = "no run of it ended".to_owned();
        return (ProbeVerdict::Unjudged(why.clone()), 0, Some(why));
    }
    let passes = said.iter().filter(|s| **s == RunSays::Pass).count();
    let passes = u32::try_from(passes).unwrap_or(u32::MAX);
    let of = u32::try_from(said.len()).unwrap_or(u32::MAX);
    if let Some(why) = said.iter().find_map(|s| match s {
        RunSays::GeneratorBound(why) => Some(why.clone()),
        _ => None,
    }) {
        return (ProbeVerdict::GeneratorBound(why.clone()), passes, Some(why));
    }
    if let Some(why) = said.iter().find_map(|s| match s {
        RunSays::Unjudged(why) => Some(why.clone()),
        _ => None,
    }) {
        return (ProbeVerdict::Unjudged(why.clone()), passes, Some(why));
    }
    if let Some(why) = said.iter().find_map(|s| match s {
        RunSays::Competed(why) => Some(why.clone()),
        _ => None,
    }) {
        return (ProbeVerdict::Competed(why.clone()), passes, Some(why));
    }
    let first_fail = said.iter().find_map(|s| match s {
        RunSays::Fail(why) => Some(why.clone()),
        _ => None,
    });
    match (passes, first_fail) {
        (_, None) => (ProbeVerdict::Pass, passes, None),
        (0, why) => (ProbeVerdict::Fail, 0, why),
        (_, why) => (
            ProbeVerdict::Split { passes, of },
            passes,
            Some(format!(
                "passes {passes} of {of}; {}",
                why.unwrap_or_default()
            )),
        ),
    }
}

pub(super) fn outcome_of(verdict: &ProbeVerdict) -> ProbeOutcome {
    match verdict {
        ProbeVerdict::Pass => ProbeOutcome::Pass,
        ProbeVerdict::Fail => ProbeOutcome::Fail,
        ProbeVerdict::Split { .. } => ProbeOutcome::Split,
        ProbeVerdict::GeneratorBound(_) => ProbeOutcome::GeneratorBound,
        ProbeVerdict::Unjudged(_) | ProbeVerdict::Competed(_) => ProbeOutcome::Unjudged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec searching an open model's rate, held to `api.latency.p95 < 200ms`.
    fn searching() -> RunMatrix {
        let text = r#"
[bench]
name = "lag"
[vars]
rate = "100/s"
[target]
command = ["{headroom}", "demo-target", "--port", "{port}"]
[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/" }]
[[phase]]
name = "load"
hold = "10s"
vary = { rate = { search = { from = "100/s", to = "6400/s" } } }
[slo]
p95 = "api.latency.p95 < 200ms"
"#;
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        headroom_compiler::Compiler::new()
            .compile(text, &prices)
            .matrix
            .expect("compiles")
    }

    /// A run whose p95 read `p95_s`, judged against the 200 ms SLO.
    fn with_p95(p95_s: f64) -> RunResult {
        let mut run = RunResult::started(1, 0);
        run.slo.push(crate::results::SloVerdict {
            name: "p95".to_owned(),
            expression: "api.latency.p95 < 200ms".to_owned(),
            value: Some(p95_s),
            threshold: 0.2,
            pass: Some(p95_s < 0.2),
            note: None,
        });
        run
    }

    /// A bound generator's run fails when a latency SLO failed by more than its lag (the
    /// server's queue, not the generator's lateness), and says nothing otherwise.
    #[test]
    fn a_latency_far_past_the_generators_lag_is_the_servers() {
        let matrix = searching();
        let run_with = |p95_s: f64| {
            let mut run = with_p95(p95_s);
            run.generator.bound = true;
            run.generator.reason = Some("the generator's schedule lag p99 was 7.1 ms".to_owned());
            run.generator.schedule_lag_p99_ms = 7.1;
            run
        };
        let far = judge_run(&run_with(0.9), &matrix, 2);
        assert!(
            matches!(&far, RunSays::Fail(why) if why.contains("by more than the generator's lag")),
            "{far:?}"
        );
        let near = judge_run(&run_with(0.204), &matrix, 2);
        assert!(matches!(near, RunSays::GeneratorBound(_)), "{near:?}");
        let passing = judge_run(&run_with(0.1), &matrix, 2);
        assert!(matches!(passing, RunSays::GeneratorBound(_)), "{passing:?}");
    }

    /// Issue 41: a run that failed an SLO while other work took a share of the machine says
    /// nothing of the load (it was run again first); one that passed beside it passes.
    #[test]
    fn a_competed_fail_is_not_judged_and_a_competed_pass_stands() {
        let matrix = searching();
        let run_with = |p95_s: f64, others_cores: f64| {
            let mut run = with_p95(p95_s);
            run.machine_cpu = Some(crate::results::MachineCpu {
                others_cores,
                ..crate::results::MachineCpu::default()
            });
            run
        };
        let competed = judge_run(&run_with(0.3, 0.93), &matrix, 2);
        assert_eq!(
            competed,
            RunSays::Competed(
                "not judged: competed: other processes used 0.93 cores over the hold, and \
                 `api.latency.p95 < 200ms`: measured 300.0 ms"
                    .to_owned()
            )
        );
        assert_eq!(judge_run(&run_with(0.1, 0.93), &matrix, 2), RunSays::Pass);
        assert!(matches!(
            judge_run(&run_with(0.3, 0.1), &matrix, 2),
            RunSays::Fail(_)
        ));
        // No rerun asked: every first try is judged as it is.
        assert!(matches!(
            judge_run(&run_with(0.3, 0.93), &matrix, 0),
            RunSays::Fail(_)
        ));
    }

    /// Issue 59: a generator that fell behind while other work or the hypervisor took a share
    /// of the machine was starved, not at its own limit: the run says nothing of the load
    /// (it was run again first), where on a quiet machine it is generator-bound.
    #[test]
    fn a_generator_starved_by_other_work_or_steal_is_not_judged() {
        let matrix = searching();
        let run_with = |others_cores: f64, stolen_cores: f64| {
            let mut run = with_p95(0.1);
            run.generator.bound = true;
            run.generator.reason = Some("the generator's schedule lag p99 was 6.6 ms".to_owned());
            run.generator.schedule_lag_p99_ms = 6.6;
            run.machine_cpu = Some(crate::results::MachineCpu {
                others_cores,
                stolen_cores,
                ..crate::results::MachineCpu::default()
            });
            run
        };
        assert_eq!(
            judge_run(&run_with(0.93, 0.0), &matrix, 2),
            RunSays::Competed(
                "not judged: the generator was starved: other processes used 0.93 cores over \
                 the hold, and the generator's schedule lag p99 was 6.6 ms"
                    .to_owned()
            )
        );
        let stolen = judge_run(&run_with(0.0, 0.4), &matrix, 2);
        assert!(
            matches!(&stolen, RunSays::Competed(why) if why.contains("the hypervisor took 0.40 cores")),
            "{stolen:?}"
        );
        // Quiet: the generator's own limit.
        assert!(matches!(
            judge_run(&run_with(0.1, 0.0), &matrix, 2),
            RunSays::GeneratorBound(_)
        ));
        // No rerun asked: every first try is judged as it is.
        assert!(matches!(
            judge_run(&run_with(0.93, 0.0), &matrix, 0),
            RunSays::GeneratorBound(_)
        ));
    }

    /// Issue 59: a generator late while idle (0.15 of 2 cores, every arrival sent) is late by
    /// the machine's doing, as the landing CI's notes-api search was at 400 readers (lag p99
    /// 28.5 ms, pauses of 9 ms, nothing else running): the load reached the server, so a
    /// pass stands, a latency failure within the lag is put back, one past it is the server's.
    #[test]
    fn a_generator_late_while_idle_is_not_at_its_limit() {
        let matrix = searching();
        let run_with = |p95_s: f64| {
            let mut run = with_p95(p95_s);
            run.generator.bound = true;
            run.generator.reason = Some("the generator's schedule lag p99 was 28.5 ms".to_owned());
            run.generator.schedule_lag_p99_ms = 28.5;
            run.generator.cpu_cores = 0.15;
            run.generator.cores_available = 2;
            run.machine_cpu = Some(crate::results::MachineCpu {
                others_cores: 0.08,
                ..crate::results::MachineCpu::default()
            });
            run
        };
        assert_eq!(judge_run(&run_with(0.1), &matrix, 2), RunSays::Pass);
        assert_eq!(
            judge_run(&run_with(0.21), &matrix, 2),
            RunSays::Competed(
                "not judged: the machine delayed the generator (its schedule lag p99 28.5 ms \
                 while it used 0.15 cores and sent every arrival), and \
                 `api.latency.p95 < 200ms`: measured 210.0 ms"
                    .to_owned()
            )
        );
        let far = judge_run(&run_with(0.9), &matrix, 2);
        assert!(matches!(far, RunSays::Fail(_)), "{far:?}");
        // Busy (1.9 of 2 cores): the generator's own limit.
        let mut busy = run_with(0.1);
        busy.generator.cpu_cores = 1.9;
        assert!(matches!(
            judge_run(&busy, &matrix, 2),
            RunSays::GeneratorBound(_)
        ));
        // Arrivals skipped: the load did not all reach the server.
        let mut skipped = run_with(0.1);
        skipped.scenarios.insert(
            "api".to_owned(),
            crate::results::ScenarioResult {
                requests: 990,
                dropped: 10,
                ..crate::results::ScenarioResult::default()
            },
        );
        assert!(matches!(
            judge_run(&skipped, &matrix, 2),
            RunSays::GeneratorBound(_)
        ));
    }

    #[test]
    fn a_probe_is_judged_on_all_its_runs() {
        let fail = RunSays::Fail("`api.failed == 0%`: measured 2 %".to_owned());
        assert_eq!(
            probe_verdict(&[RunSays::Pass, RunSays::Pass]).0,
            ProbeVerdict::Pass
        );
        assert_eq!(
            probe_verdict(&[fail.clone(), fail.clone()]).0,
            ProbeVerdict::Fail
        );
        let (split, passes, why) = probe_verdict(&[RunSays::Pass, fail.clone(), RunSays::Pass]);
        assert_eq!(split, ProbeVerdict::Split { passes: 2, of: 3 });
        assert_eq!(passes, 2);
        assert!(why.is_some_and(|w| w.starts_with("passes 2 of 3")));
        let bound = RunSays::GeneratorBound("lag".to_owned());
        assert_eq!(
            probe_verdict(&[RunSays::Pass, bound, fail]).0,
            ProbeVerdict::GeneratorBound("lag".to_owned())
        );
        assert!(matches!(
            probe_verdict(&[RunSays::Unjudged("never ready".to_owned())]).0,
            ProbeVerdict::Unjudged(_)
        ));
        assert!(matches!(probe_verdict(&[]).0, ProbeVerdict::Unjudged(_)));
    }
}
