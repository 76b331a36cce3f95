//! SLO verdicts, per run: the figure, the threshold, pass or fail.

use headroom_matrix::slo::{ScenarioFigure, SloRule};
use headroom_results::{RunResult, SloVerdict};
use headroom_spec::numbers::duration_ms;

use crate::reading::{Named, Reading, connection_wait, read};

/// Whether an SLO verdict breaks its step of a ceiling: it failed, or it could not be
/// measured (a figure that never came is no pass). The planner's SLO ceiling and the page's
/// words about it read a step by this one rule.
pub fn breaks_the_step(verdict: &SloVerdict) -> bool {
    verdict.pass != Some(true)
}

/// Every rule of the spec against one run, each figure read as the catalogue defines it,
/// then the delivery faults every rooms scenario is judged on ([`delivery_faults`]).
pub fn evaluate(rules: &[SloRule], run: &RunResult) -> Vec<SloVerdict> {
    let mut verdicts = of_rules(rules, run);
    verdicts.extend(delivery_faults(run));
    verdicts
}

/// A failed verdict for each delivery fault of the run's rooms scenarios, spec or no spec: a
/// copy at a socket outside the sender's room (`misrouted`) or a second copy at one
/// recipient (`duplicates`). A server that leaks messages across rooms or sends them twice
/// does not pass; said only when it happened.
pub fn delivery_faults(run: &RunResult) -> Vec<SloVerdict> {
    let mut faults = Vec::new();
    for (scenario, result) in &run.scenarios {
        let Some(rooms) = &result.rooms else {
            continue;
        };
        let counted = [
            (
                ScenarioFigure::Misrouted,
                rooms.messages.misrouted,
                "arrived at sockets outside the sender's room: the server leaks messages across rooms",
            ),
            (
                ScenarioFigure::Duplicates,
                rooms.messages.duplicates,
                "arrived again at a recipient that had them: the server sends messages twice",
            ),
        ];
        for (figure, count, what) in counted {
            if count == 0 {
                continue;
            }
            let name = format!("{scenario}.{}", figure.as_str());
            faults.push(SloVerdict {
                expression: format!("{name} == 0"),
                name,
                value: Some(count as f64),
                threshold: 0.0,
                pass: Some(false),
                note: Some(format!(
                    "{} {} {what} (judged in every run, whatever the spec's SLOs)",
                    headroom_spec::numbers::count(count as f64),
                    if count == 1 { "copy" } else { "copies" }
                )),
            });
        }
    }
    faults
}

/// Every rule of the spec against one run.
fn of_rules(rules: &[SloRule], run: &RunResult) -> Vec<SloVerdict> {
    rules
        .iter()
        .map(|rule| {
            let holds = |v: f64| Some(rule.comparison.holds(v, rule.threshold_value));
            let reading = Named::of_rule(rule).and_then(|named| read(run, &named));
            let (value, pass, note) = match reading {
                Ok(Reading::Value(value)) => {
                    let pass = holds(value);
                    let note = (pass == Some(false))
                        .then(|| waiting_to_connect(rule, run, value))
                        .flatten();
                    (Some(value), pass, note)
                }
                // A time that never came: JSON has no infinity, so the note says it.
                Ok(Reading::Never) => (None, holds(f64::INFINITY), Some(NEVER.to_owned())),
                Err(note) => (None, None, Some(note)),
            };
            SloVerdict {
                name: rule.name.clone(),
                expression: rule.expression.clone(),
                value,
                threshold: rule.threshold_value,
                pass,
                note,
            }
        })
        .collect()
}

/// Where a latency that failed went, when most of it was not the server's answer: the wait
/// for a connection at the same statistic, from half the latency up. A server whose accept
/// queue overflows (Python's `http.server` listens with a backlog of 5) makes a connect wait
/// for the kernel's one-second SYN retry, and "p95 1.01 s" alone reads as a slow answer.
fn waiting_to_connect(rule: &SloRule, run: &RunResult, latency: f64) -> Option<String> {
    let (scenario, ScenarioFigure::Latency) = rule.scenario_figure()? else {
        return None;
    };
    let statistic = rule.statistic?;
    let wait = connection_wait(run, scenario, statistic)?;
    (wait >= latency / 2.0).then(|| {
        format!(
            "the wait for a connection alone reads {} at {} (`{scenario}`'s \
             `connection_wait`): the server's accept queue or a slow connect, not its answers",
            duration_ms(wait * 1000.0),
            statistic.as_str()
        )
    })
}

/// What a verdict notes when its figure is a time that never came.
pub const NEVER: &str = "never: the quantile falls among messages that never reached everyone";

#[cfg(test)]
mod tests {

    use super::*;
    use headroom_results::{ProcessSample, ScenarioResult, Summary};

    use headroom_compiler::slo::{Figure, parse};
    use headroom_matrix::slo::FigureUnit;

    fn rule(expression: &str) -> SloRule {
        let figure = |scenario: Option<&str>, name: &str, unit| Figure {
            scenario: scenario.map(str::to_owned),
            request: None,
            name: name.to_owned(),
            unit,
        };
        let slow = |name: &str, unit| Figure {
            request: Some("slow".to_owned()),
            ..figure(Some("api"), name, unit)
        };
        let figures = [
            figure(Some("api"), "failed", FigureUnit::Ratio),
            figure(Some("api"), "latency", FigureUnit::Latency),
            slow("latency", FigureUnit::Latency),
            slow("failed", FigureUnit::Ratio),
            figure(None, "cpu", FigureUnit::Cpu),
            figure(None, "rss", FigureUnit::Size),
        ];
        parse("slo", expression, &figures).expect("a rule")
    }

    fn run() -> RunResult {
        RunResult {
            duration_s: 1.0,
            port: 1,
            ..RunResult::started(1, 0)
        }
    }

    /// Issue 11, item 5: `failed < 1%` when no request was sent is unmeasured, not a pass.
    #[test]
    fn a_share_of_nothing_is_unmeasured() {
        let mut run = run();
        run.scenarios
            .insert("api".to_owned(), ScenarioResult::default());
        let verdicts = evaluate(&[rule("api.failed < 1%")], &run);
        assert_eq!(verdicts[0].pass, None, "{verdicts:?}");
        assert_eq!(verdicts[0].value, None);
        assert_eq!(verdicts[0].note.as_deref(), Some("no request was sent"));
        run.scenarios.get_mut("api").expect("api").requests = 100;
        assert_eq!(
            evaluate(&[rule("api.failed < 1%")], &run)[0].pass,
            Some(true)
        );
    }

    /// Issue 31: `cpu` is the catalogue's, the CPU over the hold (as the page, the planner
    /// and `compare` read it), not the steady state's reading after the load; without it, the
    /// SLO is unmeasured and says why.
    #[test]
    fn cpu_is_read_over_the_hold() {
        let mut run = run();
        run.process.steady = Some(ProcessSample {
            t_s: 1.0,
            rss_bytes: 1 << 20,
            cpu_pct: Some(3.0),
            processes: 1,
        });
        let verdicts = evaluate(&[rule("cpu < 50%"), rule("rss < 1GiB")], &run);
        assert_eq!(verdicts[0].pass, None, "{verdicts:?}");
        assert!(
            verdicts[0]
                .note
                .as_deref()
                .unwrap_or("")
                .contains("CPU over the hold was not measured")
        );
        assert_eq!(verdicts[1].pass, Some(true));
        run.process.hold_cpu_cores = Some(1.2);
        let verdicts = evaluate(&[rule("cpu < 50%")], &run);
        assert_eq!(
            (verdicts[0].value, verdicts[0].pass),
            (Some(1.2), Some(false))
        );
    }

    /// Issue 17: an SLO on one named request reads that request's figures: the slow route
    /// fails its p95 while the scenario's, mostly fast answers, passes.
    #[test]
    fn a_request_is_judged_by_its_own_figures() {
        let mut run = run();
        let mut api = ScenarioResult {
            requests: 100,
            latency: Summary {
                count: 100,
                p95_ms: 40.0,
                ..Summary::default()
            },
            ..ScenarioResult::default()
        };
        api.by_request.insert(
            "slow".to_owned(),
            headroom_results::RequestResult {
                requests: 10,
                ok: 9,
                outside_hold: None,
                latency: Summary {
                    count: 10,
                    p95_ms: 400.0,
                    ..Summary::default()
                },
                errors: headroom_results::ErrorCounts {
                    status: 1,
                    ..Default::default()
                },
                histogram: String::new(),
            },
        );
        run.scenarios.insert("api".to_owned(), api);
        let verdicts = evaluate(
            &[
                rule("api.latency.p95 < 100ms"),
                rule("api.slow.latency.p95 < 100ms"),
                rule("api.slow.failed < 5%"),
            ],
            &run,
        );
        let passes: Vec<Option<bool>> = verdicts.iter().map(|v| v.pass).collect();
        assert_eq!(
            passes,
            [Some(true), Some(false), Some(false)],
            "{verdicts:?}"
        );
        assert_eq!(verdicts[1].value, Some(0.4));
        assert_eq!(verdicts[2].value, Some(0.1));
        // A request that was not measured apart (results from before): unmeasured, said.
        run.scenarios
            .get_mut("api")
            .expect("api")
            .by_request
            .clear();
        let unmeasured = evaluate(&[rule("api.slow.latency.p95 < 100ms")], &run);
        assert_eq!(unmeasured[0].pass, None);
        assert!(
            unmeasured[0]
                .note
                .as_deref()
                .is_some_and(|n| n.contains("not measured apart")),
            "{unmeasured:?}"
        );
    }

    /// A latency that failed on connects waiting for the server's accept queue says so; one
    /// that failed on slow answers, or passed, notes nothing.
    #[test]
    fn a_latency_spent_waiting_to_connect_says_so() {
        let mut run = run();
        let summary = |p95_ms: f64| Summary {
            count: 100,
            p95_ms,
            ..Summary::default()
        };
        let api = |latency: f64, wait: f64| ScenarioResult {
            requests: 100,
            latency: summary(latency),
            connection_wait: summary(wait),
            ..ScenarioResult::default()
        };
        let rules = [rule("api.latency.p95 < 50ms")];
        run.scenarios.insert("api".to_owned(), api(1014.8, 1008.1));
        let verdict = &evaluate(&rules, &run)[0];
        assert_eq!(verdict.pass, Some(false));
        assert_eq!(
            verdict.note.as_deref(),
            Some(
                "the wait for a connection alone reads 1.01 s at p95 (`api`'s \
                 `connection_wait`): the server's accept queue or a slow connect, not its answers"
            )
        );
        // Slow answers on connections ready at once.
        run.scenarios.insert("api".to_owned(), api(400.0, 0.3));
        assert_eq!(evaluate(&rules, &run)[0].note, None);
        // Waiting, but within the SLO.
        run.scenarios.insert("api".to_owned(), api(40.0, 30.0));
        let verdict = &evaluate(&rules, &run)[0];
        assert_eq!((verdict.pass, verdict.note.as_deref()), (Some(true), None));
    }
}
