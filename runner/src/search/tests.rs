use super::*;

fn bounds(from: f64, to: f64, whole: bool) -> Bounds {
    Bounds {
        from,
        start: from,
        to,
        precision: 0.05,
        growth: 2.0,
        whole,
        max_probes: 40,
    }
}

/// Runs a search to its end against `oracle`: the ending and every probe.
fn search(
    bounds: Bounds,
    mut oracle: impl FnMut(f64, Stage) -> ProbeVerdict,
) -> (Ending, Vec<(f64, Stage, ProbeVerdict)>) {
    let mut search = Search::new(bounds);
    // Bounded: a search that never ends fails here, not by hanging.
    for _ in 0..100 {
        match search.next() {
            Next::Probe { load, stage } => search.record(load, stage, oracle(load, stage)),
            Next::Done(ending) => return (ending, search.probes().to_vec()),
        }
    }
    panic!("no end after 100 probes: {:?}", search.probes());
}

/// A server that passes up to `truth` and fails past it.
fn ceiling(truth: f64) -> impl FnMut(f64, Stage) -> ProbeVerdict {
    move |load, _| {
        if load <= truth {
            ProbeVerdict::Pass
        } else {
            ProbeVerdict::Fail
        }
    }
}

#[test]
fn a_known_ceiling_is_bracketed_within_the_precision() {
    for truth in [100.0, 101.0, 1_180.0, 3_999.0, 19_000.0] {
        let (ending, probes) = search(bounds(100.0, 20_000.0, false), ceiling(truth));
        let Ending::Converged { pass, fail } = ending else {
            panic!("{truth}: {ending:?} after {probes:?}");
        };
        assert!(pass <= truth && truth < fail, "{truth}: {pass} … {fail}");
        assert!((fail - pass) / pass <= 0.05, "{truth}: {pass} … {fail}");
        // Both ends confirmed at the full hold, each once.
        let confirmed: Vec<f64> = probes
            .iter()
            .filter(|(_, stage, _)| *stage == Stage::Confirm)
            .map(|(load, _, _)| *load)
            .collect();
        assert_eq!(confirmed, [pass, fail], "{truth}");
        // Doubling to the bracket, then halving it: a handful of probes, not a sweep.
        assert!(probes.len() <= 16, "{truth}: {} probes", probes.len());
    }
}

#[test]
fn counts_are_searched_as_whole_numbers() {
    let (ending, probes) = search(bounds(10.0, 5_000.0, true), ceiling(437.0));
    assert!(
        probes.iter().all(|(load, _, _)| load.fract() == 0.0),
        "{probes:?}"
    );
    assert_eq!(
        ending,
        Ending::Converged {
            pass: 420.0,
            fail: 440.0
        }
    );
    // Two neighbours: nothing lies between them, whatever the precision asks.
    let (ending, _) = search(
        Bounds {
            precision: 0.001,
            ..bounds(1.0, 64.0, true)
        },
        ceiling(5.0),
    );
    assert_eq!(
        ending,
        Ending::Converged {
            pass: 5.0,
            fail: 6.0
        }
    );
}

#[test]
fn passing_at_to_is_a_lower_bound_and_failing_at_from_lies_below() {
    let (ending, probes) = search(bounds(100.0, 1_000.0, false), ceiling(1e9));
    assert_eq!(ending, Ending::LowerBound { pass: 1_000.0 });
    let loads: Vec<f64> = probes.iter().map(|(load, _, _)| *load).collect();
    assert_eq!(loads, [100.0, 200.0, 400.0, 800.0, 1_000.0, 1_000.0]);
    let (ending, probes) = search(bounds(100.0, 1_000.0, false), ceiling(50.0));
    assert_eq!(ending, Ending::BelowFrom { fail: 100.0 });
    assert_eq!(probes.len(), 2, "explored, then confirmed: {probes:?}");
}

/// Runs a search to its end against `oracle`: the ending, every probe, and what it reports.
fn search_reported(
    bounds: Bounds,
    mut oracle: impl FnMut(f64, Stage) -> ProbeVerdict,
) -> (Ending, Vec<(f64, Stage, ProbeVerdict)>, Reported) {
    let mut search = Search::new(bounds);
    for _ in 0..100 {
        match search.next() {
            Next::Probe { load, stage } => search.record(load, stage, oracle(load, stage)),
            Next::Done(ending) => {
                let reported = search.reported();
                return (ending, search.probes().to_vec(), reported);
            }
        }
    }
    panic!("no end after 100 probes: {:?}", search.probes());
}

/// Repeats that disagree at one load are not a pass: the split bounds the bracket from above
/// as a fail does, and the search narrows below it to a load every run passed, confirmed.
#[test]
fn a_split_is_no_pass_and_the_search_narrows_below_it() {
    let (ending, probes, reported) = search_reported(bounds(100.0, 20_000.0, false), |load, _| {
        if load <= 800.0 {
            ProbeVerdict::Pass
        } else if load < 1_400.0 {
            ProbeVerdict::Split { passes: 2, of: 3 }
        } else {
            ProbeVerdict::Fail
        }
    });
    let Ending::Converged { pass, fail } = ending else {
        panic!("{ending:?} after {probes:?}");
    };
    assert!(
        pass <= 800.0 && 800.0 < fail && fail < 1_400.0,
        "{pass} … {fail}"
    );
    assert!((fail - pass) / pass <= 0.05, "{pass} … {fail}");
    assert_eq!(reported.pass, Some(pass));
    assert_eq!(reported.fail, Some(fail));
    assert_eq!(reported.unconfirmed, None);
}

/// Issue 41's case: a probe that passed exploring, whose confirmation at the full hold
/// passed 1 of 3 runs, is no pass: the ceiling reported is a confirmed load below it.
#[test]
fn an_exploring_pass_whose_confirmation_splits_is_no_ceiling() {
    let (ending, probes, reported) =
        search_reported(bounds(50.0, 12_800.0, true), |load, stage| match stage {
            Stage::Explore if load <= 3_400.0 => ProbeVerdict::Pass,
            Stage::Confirm if load <= 3_200.0 => ProbeVerdict::Pass,
            Stage::Confirm if load <= 3_400.0 => ProbeVerdict::Split { passes: 1, of: 3 },
            _ => ProbeVerdict::Fail,
        });
    assert!(
        probes
            .iter()
            .any(|(load, stage, verdict)| *stage == Stage::Confirm
                && matches!(verdict, ProbeVerdict::Split { .. })
                && *load <= 3_400.0),
        "a confirmation split: {probes:?}"
    );
    let Ending::Converged { pass, fail } = ending else {
        panic!("{ending:?} after {probes:?}");
    };
    let Some(reported_pass) = reported.pass else {
        panic!("no pass reported: {probes:?}");
    };
    assert_eq!(reported_pass, pass);
    assert!(pass <= 3_200.0, "{pass} … {fail}: {probes:?}");
    assert!((fail - pass) / pass <= 0.05, "{pass} … {fail}");
}

/// A search whose budget ends before any full-hold probe reports no ceiling: its best
/// exploring pass is kept apart, unconfirmed.
#[test]
fn a_search_that_confirmed_nothing_reports_no_pass() {
    let (ending, _, reported) = search_reported(
        Bounds {
            max_probes: 5,
            ..bounds(100.0, 20_000.0, false)
        },
        ceiling(1_180.0),
    );
    assert_eq!(
        ending,
        Ending::OutOfBudget {
            why: "5 probes".to_owned()
        }
    );
    assert_eq!(reported.pass, None, "{reported:?}");
    assert_eq!(reported.unconfirmed, Some(800.0));
    assert_eq!(reported.fail, Some(1_600.0));
}

#[test]
fn a_probe_the_generator_could_not_send_ends_the_search() {
    let (ending, probes) = search(bounds(100.0, 20_000.0, false), |load, _| {
        if load < 3_000.0 {
            ProbeVerdict::Pass
        } else {
            ProbeVerdict::GeneratorBound("sent 91 % of the intended arrivals".to_owned())
        }
    });
    assert_eq!(
        ending,
        Ending::GeneratorBound {
            at: 3_200.0,
            why: "sent 91 % of the intended arrivals".to_owned(),
        }
    );
    // The pass below the bound is confirmed at the full hold before the search ends: a lower
    // bound to plan with.
    assert_eq!(probes.len(), 7);
    assert_eq!(probes[6].0, 1_600.0);
    assert_eq!(probes[6].1, Stage::Confirm);
    let mut again = Search::new(bounds(100.0, 20_000.0, false));
    for (load, stage, verdict) in probes {
        again.record(load, stage, verdict);
    }
    assert_eq!(again.reported().pass, Some(1_600.0));
    // A confirmation below the bound that fails: the ceiling is within reach after all, and
    // the search goes on below it.
    let (ending, probes) = search(bounds(100.0, 20_000.0, false), |load, stage| {
        match (load, stage) {
            (l, _) if l >= 3_000.0 => {
                ProbeVerdict::GeneratorBound("sent 91 % of the intended arrivals".to_owned())
            }
            (l, Stage::Confirm) if l > 1_000.0 => ProbeVerdict::Fail,
            _ => ProbeVerdict::Pass,
        }
    });
    let Ending::Converged { pass, fail } = ending else {
        panic!("{ending:?} after {probes:?}");
    };
    assert!(pass <= 1_000.0 && 1_000.0 < fail, "{pass} … {fail}");
}

/// A short probe that passed where the full hold fails (a server that degrades slowly): the
/// confirmation overturns it, the bracket moves down, and the search goes on to the truth.
#[test]
fn a_confirmation_that_disagrees_moves_the_bracket() {
    let truth = 1_000.0;
    let (ending, probes) = search(bounds(100.0, 20_000.0, false), |load, stage| {
        let holds = match stage {
            Stage::Explore => load <= truth * 1.2,
            Stage::Confirm => load <= truth,
        };
        if holds {
            ProbeVerdict::Pass
        } else {
            ProbeVerdict::Fail
        }
    });
    let Ending::Converged { pass, fail } = ending else {
        panic!("{ending:?} after {probes:?}");
    };
    assert!(pass <= truth && truth < fail, "{pass} … {fail}: {probes:?}");
    assert!((fail - pass) / pass <= 0.05);
}

#[test]
fn a_search_out_of_probes_reports_the_bracket_it_had() {
    let (ending, probes) = search(
        Bounds {
            max_probes: 7,
            ..bounds(100.0, 20_000.0, false)
        },
        ceiling(1_180.0),
    );
    assert_eq!(probes.len(), 7);
    assert_eq!(
        ending,
        Ending::OutOfBudget {
            why: "7 probes".to_owned(),
        }
    );
    // Every probe explored: its bracket is 1,000 … 1,200, and nothing was confirmed.
    let mut again = Search::new(Bounds {
        max_probes: 7,
        ..bounds(100.0, 20_000.0, false)
    });
    for (load, stage, verdict) in probes {
        again.record(load, stage, verdict);
    }
    assert_eq!(
        again.reported(),
        Reported {
            pass: None,
            unconfirmed: Some(1_000.0),
            fail: Some(1_200.0)
        }
    );
}

/// A warm start near the truth (another instance's bracket, scaled) brackets it in fewer
/// probes than a cold start from `from`, above the truth or below it; stepping down never
/// goes under `from`, where the ceiling is below it.
#[test]
fn a_warm_start_brackets_in_fewer_probes() {
    for (truth, start) in [(1_000.0, 1_200.0), (1_000.0, 850.0), (400.0, 1_000.0)] {
        let (_, cold) = search(bounds(50.0, 6_400.0, false), ceiling(truth));
        let warm_bounds = Bounds {
            start,
            growth: 1.25,
            ..bounds(50.0, 6_400.0, false)
        };
        let (ending, warm) = search(warm_bounds, ceiling(truth));
        let Ending::Converged { pass, fail } = ending else {
            panic!("{truth} from {start}: {ending:?} after {warm:?}");
        };
        assert!(pass <= truth && truth < fail, "{pass} … {fail}");
        assert!((fail - pass) / pass <= 0.05);
        assert!(
            warm.len() < cold.len(),
            "{truth} from {start}: warm {} probes, cold {}",
            warm.len(),
            cold.len()
        );
    }
    let (ending, _) = search(
        Bounds {
            start: 800.0,
            growth: 1.25,
            ..bounds(50.0, 6_400.0, false)
        },
        ceiling(20.0),
    );
    assert_eq!(ending, Ending::BelowFrom { fail: 50.0 });
}

/// Issue 59: a probe other work competed with is put back, not an end: the same load is
/// probed again and, once the machine calms, the search brackets the truth; on a machine that
/// never calms, [`COMPETED_PROBES`] in a row at one load end the search unjudged there.
#[test]
fn a_competed_probe_is_probed_again_and_never_ends_a_search_alone() {
    let truth = 1_180.0;
    let mut competed_left = 2;
    let (ending, probes) = search(bounds(100.0, 20_000.0, false), |load, _| {
        if load == 800.0 && competed_left > 0 {
            competed_left -= 1;
            return ProbeVerdict::Competed("other processes used 1.60 cores".to_owned());
        }
        ceiling(truth)(load, Stage::Explore)
    });
    let Ending::Converged { pass, fail } = ending else {
        panic!("{ending:?} after {probes:?}");
    };
    assert!(pass <= truth && truth < fail, "{pass} … {fail}");
    let at_800: Vec<&ProbeVerdict> = probes
        .iter()
        .filter(|(load, stage, _)| *load == 800.0 && *stage == Stage::Explore)
        .map(|(_, _, verdict)| verdict)
        .collect();
    assert_eq!(at_800.len(), 3, "twice competed, then passed: {probes:?}");
    assert_eq!(*at_800[2], ProbeVerdict::Pass);

    let (ending, probes) = search(bounds(100.0, 20_000.0, false), |load, stage| {
        if load >= 400.0 {
            ProbeVerdict::Competed("the hypervisor took 1.10 cores".to_owned())
        } else {
            ceiling(truth)(load, stage)
        }
    });
    assert_eq!(
        ending,
        Ending::Unjudged {
            at: 400.0,
            why: "the hypervisor took 1.10 cores (at each of 3 probes of this load)".to_owned()
        }
    );
    assert_eq!(probes.len(), 2 + COMPETED_PROBES, "{probes:?}");
}
