//! The context against small worked cases.

use super::caveats::{caveats, saturated};
use super::ceiling::ceiling;
use super::rows::ScenarioCell;
use super::tally::RunTally;
use super::*;

fn step(variables: &str, p95: f64, failed: bool) -> Point {
    Point {
        variables: variables.to_owned(),
        x: None,
        runs: 1,
        rss_bytes: None,
        cpu_cores: None,
        scenarios: vec![ScenarioCell {
            name: "api".into(),
            kind: "http".into(),
            requests: None,
            p95_ms: Stat::of(&[p95]),
            p95_never: 0,
            p50_ms: None,
            p99_ms: None,
            errors: None,
            errors_by_kind: String::new(),
            dropped: None,
            delivered: None,
            expected: None,
            misrouted: None,
            duplicates: None,
        }],
        requests: Vec::new(),
        slo_failed: if failed {
            vec!["p95".into()]
        } else {
            Vec::new()
        },
        slo_unmeasured: Vec::new(),
        slo_judged: true,
        failures: Vec::new(),
        services: Vec::new(),
        series: Vec::new(),
    }
}

#[test]
fn the_ceiling_names_the_last_good_step_what_broke_and_the_cliff() {
    let phases = vec![Phase {
        name: "load".into(),
        description: None,
        axis: None,
        series: Vec::new(),
        scenarios: vec!["api".into()],
        latency_slos: Vec::new(),
        leads_with_requests: false,
        limits: None,
        services: Vec::new(),
        service_limits: Vec::new(),
        kept_target: None,
        points: vec![
            step("rate = 100/s", 10.0, false),
            step("rate = 200/s", 12.0, false),
            step("rate = 400/s", 600.0, true),
        ],
    }];
    let verdict = |expression: &str, value: f64, pass: bool| headroom_results::SloVerdict {
        name: expression.split('.').nth(1).unwrap_or("slo").to_owned(),
        expression: expression.to_owned(),
        value: Some(value),
        threshold: 0.0,
        pass: Some(pass),
        note: None,
    };
    // The relay fixture's runs, re-judged: two steps pass, the third fails its p95.
    let mut results = headroom_test_support::results::relay();
    let mut phase = results.phases[0].clone();
    phase.name = "load".into();
    phase.points.truncate(3);
    for (index, point) in phase.points.iter_mut().enumerate() {
        point.runs.truncate(1);
        point.runs[0].slo = vec![
            verdict("api.latency.p95 < 200ms", 0.6, index < 2),
            verdict("api.failed < 1%", 0.0, true),
        ];
    }
    results.phases = vec![phase];
    // The rules behind the verdicts, which give each figure its unit.
    use headroom_compiler::slo::{Figure, parse};
    use headroom_matrix::slo::FigureUnit;
    let figure = |name: &str, unit| Figure {
        scenario: Some("api".to_owned()),
        request: None,
        name: name.to_owned(),
        unit,
    };
    let figures = [
        figure("latency", FigureUnit::Latency),
        figure("failed", FigureUnit::Ratio),
    ];
    results.matrix.slo = vec![
        parse("latency", "api.latency.p95 < 200ms", &figures).expect("a rule"),
        parse("failed", "api.failed < 1%", &figures).expect("a rule"),
    ];
    let ceiling = ceiling(&results, &phases, "load", "named").expect("a ceiling");
    assert_eq!(ceiling.last_good.as_deref(), Some("rate = 200/s"));
    assert_eq!(ceiling.first_bad.as_deref(), Some("rate = 400/s"));
    assert_eq!(
        ceiling.broke,
        ["`api.latency.p95 < 200ms`: measured 600.0 ms"]
    );
    assert_eq!(
        ceiling.cliff.as_deref(),
        Some("the p95 jumps 50.0× from 12.0 ms (rate = 200/s) to 600.0 ms (rate = 400/s)")
    );
}

#[test]
fn stats_over_repeats() {
    let stat = Stat::of(&[3.0, 1.0, 2.0, f64::NAN]).expect("values");
    assert_eq!(
        stat,
        Stat {
            min: 1.0,
            median: 2.0,
            max: 3.0,
            n: 3,
            // Standard deviation 1 over a mean of 2.
            noisy: true,
            // Each run's, lowest first; the unmeasured one is not among them.
            values: vec![1.0, 2.0, 3.0],
        }
    );
    assert!(!Stat::of(&[100.0, 101.0, 99.0]).expect("values").noisy);
    assert_eq!(Stat::of(&[4.0, 2.0]).map(|s| s.median), Some(3.0));
    assert!(Stat::of(&[]).is_none());
}

/// A point whose repeats spread more than 10 % (RSS or a p95) is named among the caveats,
/// with the advice to add repeats; a tight one is not.
#[test]
fn points_whose_repeats_spread_are_called_noisy() {
    let point = |variables: &str, rss: [f64; 3], p95: [f64; 3]| {
        let mut point = step(variables, 0.0, false);
        point.runs = 3;
        point.rss_bytes = Stat::of(&rss);
        point.scenarios[0].p95_ms = Stat::of(&p95);
        point
    };
    let tight = point("rooms = 2", [100e6, 102e6, 101e6], [10.0, 10.2, 9.9]);
    let scattered_latency = point("rooms = 4", [100e6, 102e6, 101e6], [10.0, 14.0, 9.0]);
    let scattered_memory = point("rooms = 8", [100e6, 130e6, 90e6], [10.0, 10.2, 9.9]);
    let phase = Phase {
        name: "memory".into(),
        description: None,
        points: vec![tight, scattered_latency, scattered_memory],
        axis: None,
        series: Vec::new(),
        scenarios: vec!["api".into()],
        latency_slos: Vec::new(),
        leads_with_requests: false,
        limits: None,
        services: Vec::new(),
        service_limits: Vec::new(),
        kept_target: None,
    };
    let machine = two_cores();
    let (said, _) = caveats(false, &machine, None, &RunCounts::default(), &[phase]);
    let noisy: Vec<&String> = said.iter().filter(|c| c.contains("noisy")).collect();
    assert_eq!(
        noisy,
        [
            "The repeats spread more than 10 % (standard deviation over mean) at rooms = 4 in `memory` (api p95); rooms = 8 in `memory` (RSS): those medians are noisy; add repeats (the phase's `repeats`, or `headroom run --repeat N`) before planning with them."
        ]
    );
}

/// Issue 32: runs the machine paused (not generator-bound) are counted on the page apart from
/// the generator-bound ones, with the longest pause.
#[test]
fn runs_the_machine_paused_are_a_caveat_of_their_own() {
    let mut results = headroom_test_support::results::relay();
    let mut tally = RunTally::default();
    for (i, run) in headroom_test_support::results::typed_runs_mut(&mut results)
        .into_iter()
        .enumerate()
    {
        if i < 2 {
            run.generator.pauses = Some(headroom_results::MachinePauses {
                count: 3,
                longest_ms: 20.0 + i as f64 * 11.0,
            });
            run.generator.paused = Some("the machine paused the generator".into());
        }
        tally.count(run);
    }
    assert_eq!(tally.runs.machine_paused, 2);
    assert_eq!(tally.runs.generator_bound, 0);
    let machine = two_cores();
    let (said, _) = caveats(false, &machine, None, &tally.runs, &[]);
    assert!(
        said.contains(&"In 2 of 12 runs the machine paused the generator (up to 31 ms) while it was idle and sent every arrival: their schedule lag is the machine's pauses, a caveat on their tails, not a generator bound.".to_owned()),
        "{said:?}"
    );
}

/// Runs over whose hold other work took a notable share of the machine are counted on the
/// page, with the most any run read of each kind; a run under both thresholds is not.
#[test]
fn runs_that_shared_the_machine_are_a_caveat() {
    let mut results = headroom_test_support::results::relay();
    let mut tally = RunTally::default();
    let took = [(0.93, 0.0), (0.3, 0.12), (0.2, 0.05)];
    for (run, (others, stolen)) in headroom_test_support::results::typed_runs_mut(&mut results)
        .into_iter()
        .zip(took.into_iter().chain(std::iter::repeat((0.0, 0.0))))
    {
        run.machine_cpu = Some(headroom_results::MachineCpu {
            others_cores: others,
            stolen_cores: stolen,
            ..headroom_results::MachineCpu::default()
        });
        tally.count(run);
    }
    assert_eq!(tally.runs.machine_competed, 2);
    assert_eq!(tally.runs.most_others_cores, Some(0.93));
    assert_eq!(tally.runs.most_stolen_cores, Some(0.12));
    let machine = two_cores();
    let (said, headline) = caveats(false, &machine, None, &tally.runs, &[]);
    // Other work on the machine is the caveat the page's headline carries.
    let headline = headline.expect("a headline caveat");
    assert!(
        headline.starts_with("In 2 of 12 runs other work took"),
        "{headline}"
    );
    assert!(
        said.contains(&"In 2 of 12 runs other work took a share of the machine over the hold (other processes up to 0.93 cores, the hypervisor up to 0.12): their server had less of it than a quiet machine gives, so their latencies read high and their ceilings low.".to_owned()),
        "{said:?}"
    );
    // Read and quiet everywhere: no caveat.
    let mut quiet = RunTally::default();
    for run in headroom_test_support::results::typed_runs_mut(&mut results) {
        run.machine_cpu = Some(headroom_results::MachineCpu::default());
        quiet.count(run);
    }
    assert_eq!(quiet.runs.machine_competed, 0);
    let (said, headline) = caveats(false, &machine, None, &quiet.runs, &[]);
    assert!(!said.iter().any(|c| c.contains("other work")), "{said:?}");
    assert_eq!(
        headline, None,
        "quiet and not quick: no headline of its own"
    );
}

/// A target kept for a phase is said as what it did: ready after how long, its once-a-phase
/// steps with their exits, and how it ended: stopped, or the failure and the runs left out.
#[test]
fn a_target_kept_for_a_phase_is_said_with_how_it_ended() {
    use headroom_results::{Exit, Failure, PhaseTarget, StepResult};
    let step = |name: &str, when: &str, code: i32| StepResult {
        name: name.into(),
        when: when.into(),
        seconds: 1.25,
        exit: Some(Exit::Code(code)),
        log: None,
    };
    let kept = PhaseTarget {
        log: Some("logs/kept.log".into()),
        ready_after_s: Some(0.5),
        steps: vec![step("sign-up", "setup", 0), step("report", "teardown", 0)],
        ..PhaseTarget::default()
    };
    assert_eq!(
        stack::kept_sentence(&kept),
        "One target served every run of this phase (`process = \"per-phase\"`), ready 0.5 s after it started. Once for the phase: setup `sign-up` (1.2 s, exit status 0), teardown `report` (1.2 s, exit status 0). It was stopped after the phase's last run."
    );
    let died = PhaseTarget {
        log: Some("logs/killed.log".into()),
        failure: Some(Failure::Died {
            exit: Exit::Code(3),
            stderr_tail: Vec::new(),
        }),
        runs_not_run: 2,
        ..PhaseTarget::default()
    };
    assert_eq!(
        stack::kept_sentence(&died),
        "One target served every run of this phase (`process = \"per-phase\"`). It failed: the target died during the point (exit status 3); 2 runs of the phase were not run."
    );
}

/// Issue 30: a server whose CPU stays at one core over the last steps while its p95 climbs
/// looks bound at one core, measured; one whose CPU keeps growing does not.
#[test]
fn a_server_flat_at_one_core_while_latency_climbs_looks_bound_there() {
    let at = |variables: &str, p95: f64, cpu: f64| Point {
        cpu_cores: Stat::of(&[cpu]),
        ..step(variables, p95, false)
    };
    let phase = |points: Vec<Point>| Phase {
        name: "users".into(),
        description: None,
        points,
        axis: None,
        series: Vec::new(),
        scenarios: vec!["api".into()],
        latency_slos: Vec::new(),
        leads_with_requests: false,
        limits: None,
        services: Vec::new(),
        service_limits: Vec::new(),
        kept_target: None,
    };
    let bound = phase(vec![
        at("users = 200", 4.0, 0.42),
        at("users = 400", 6.0, 0.97),
        at("users = 800", 90.0, 1.0),
        at("users = 1600", 480.0, 0.99),
    ]);
    let said = saturated(&bound).expect("bound at one core");
    assert_eq!(
        said,
        "In `users`, the server looks bound at 1 core, measured: from users = 400 to users = 1600 its CPU stays at 0.97–1.00 cores while the worst p95 climbs from 6.00 ms to 480.0 ms: more load there only waits. If it was meant to use more cores, it does not; `[target] cores = 1` plans it as it is."
    );
    let growing = phase(vec![
        at("users = 200", 4.0, 0.42),
        at("users = 400", 6.0, 0.84),
        at("users = 800", 90.0, 1.6),
    ]);
    assert_eq!(saturated(&growing), None);
    let quiet = phase(vec![
        at("users = 400", 6.0, 1.0),
        at("users = 800", 7.0, 1.0),
    ]);
    assert_eq!(
        saturated(&quiet),
        None,
        "flat, but the latency did not climb"
    );
}

/// A machine of two logical cores, for the caveats.
fn two_cores() -> Machine {
    Machine {
        cpu_model: "test".into(),
        logical_cores: Some(2),
        memory_bytes: None,
        kernel: "6".into(),
    }
}
