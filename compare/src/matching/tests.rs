use super::*;
use crate::levers::compare_levers;

/// A real results file: a relay's `memory` phase (three repeats at 1, 32 and 128 rooms) and
/// its `rooms` phase (one repeat each).
fn relay() -> Results {
    headroom_test_support::results::relay()
}

fn table() -> PriceTable {
    PriceTable::embedded().expect("the shipped table")
}

/// Sets `point`'s runs to `repeats` copies of its first, RSS scaled by each of `scales`.
fn with_rss(results: &mut Results, point: usize, scales: &[f64]) {
    let points = &mut results.phases[0].points;
    let first = points[point].runs[0].clone();
    points[point].runs = scales
        .iter()
        .map(|scale| {
            let mut run = first.clone();
            let steady = run.process.steady.as_mut().expect("a steady sample");
            steady.rss_bytes = (steady.rss_bytes as f64 * scale) as u64;
            run
        })
        .collect();
}

#[test]
fn a_file_against_itself_calls_nothing() {
    let relay = relay();
    let comparison = compare(&relay, &relay, false, &table());
    assert!(comparison.machine_differences.is_empty() && comparison.unlike_shapes.is_empty());
    assert!(comparison.only_in_base.is_empty() && comparison.only_in_new.is_empty());
    // Six points, each with latency figures of the `edits` rooms scenario and RSS, and the
    // memory phase's fitted slope.
    let points: BTreeSet<(&str, &str)> = comparison
        .rows
        .iter()
        .map(|r| (r.phase.as_str(), r.point.as_str()))
        .collect();
    assert_eq!(points.len(), 7, "{points:?}");
    assert!(points.contains(&("fit", "`memory` phase, per rooms")));
    assert!(
        comparison
            .rows
            .iter()
            .any(|r| r.figure == "edits.seen_by_all.p95")
    );
    assert!(comparison.rows.iter().any(|r| r.figure == "rss"));
    // The slope against itself: p 1, within noise (nine points a side tell that much).
    let slope = comparison
        .rows
        .iter()
        .find(|r| r.figure == "fit.rss.bytes_per_unit")
        .expect("the memory slope");
    assert_eq!(
        (&slope.judgement.verdict, slope.judgement.p_value),
        (&Verdict::WithinNoise, Some(1.0))
    );
    // Three repeats a side (or one) cannot reach 5 %: every figure says so, none is called.
    for row in comparison.rows.iter().filter(|r| r.phase != "fit") {
        assert!(
            matches!(
                row.judgement.verdict,
                Verdict::CannotTell(CannotTell::TooFewRepeats { .. })
            ),
            "{row:?}"
        );
    }
}

#[test]
fn more_memory_in_every_repeat_is_worse_and_unmatched_points_are_named() {
    let mut base = relay();
    let mut new = relay();
    with_rss(&mut base, 0, &[1.0, 1.01, 0.99, 1.02, 0.98]);
    with_rss(&mut new, 0, &[1.2, 1.21, 1.19, 1.22, 1.18]);
    let run = &mut new.phases[0].points[0].runs[1];
    run.generator.bound = true;
    run.generator.reason = Some("the generator's schedule lag p99 was 9.0 ms".to_owned());
    new.phases[0].points.remove(2);
    let comparison = compare(&base, &new, false, &table());
    let rss = comparison
        .rows
        .iter()
        .find(|r| r.phase == "memory" && r.point == "rooms = 1" && r.figure == "rss")
        .expect("RSS at one room");
    assert_eq!(rss.judgement.verdict, Verdict::Worse);
    let change = rss.judgement.change.expect("a base median");
    assert!((change - 0.2).abs() < 0.01, "{change}");
    // Every repeat is a copy of one run: the latencies tie and are within noise.
    let seen = comparison
        .rows
        .iter()
        .find(|r| r.point == "rooms = 1" && r.figure == "edits.seen.p95")
        .expect("seen p95 at one room");
    assert_eq!(seen.judgement.verdict, Verdict::WithinNoise);
    assert_eq!(
        comparison.only_in_base,
        vec!["memory: rooms = 128".to_owned()]
    );
    assert_eq!(
        comparison.notes,
        [
            "new, memory: rooms = 1: the generator was the bottleneck in 1 of 5 runs (the generator's schedule lag p99 was 9.0 ms): those figures are not the server's",
            "[measure] series not compared, the spec does not say which way of them is better (give them `better = \"lower\"` or `\"higher\"`): `array_buffers`, `external`, `heap`"
        ]
    );
    // From an edited spec: said first.
    new.spec.hash = "0123456789abcdef".to_owned();
    let edited = compare(&base, &new, false, &table());
    assert!(
        edited.notes[0].starts_with("the files come from different specs"),
        "{:?}",
        edited.notes
    );
    assert!(comparison.only_in_new.is_empty());
    // The same on another machine: not called, unless told to judge across machines.
    new.environment.cpu_model = "Another CPU".to_owned();
    let rss_verdict = |comparison: &Comparison| {
        comparison
            .rows
            .iter()
            .find(|r| r.point == "rooms = 1" && r.figure == "rss")
            .map(|r| r.judgement.verdict.clone())
    };
    let unlike = compare(&base, &new, false, &table());
    assert_eq!(unlike.machine_differences.len(), 1, "{unlike:?}");
    assert_eq!(
        rss_verdict(&unlike),
        Some(Verdict::CannotTell(CannotTell::Unlike(Box::new(
            Verdict::Worse
        ))))
    );
    assert_eq!(
        rss_verdict(&compare(&base, &new, true, &table())),
        Some(Verdict::Worse)
    );
}
#[test]
fn a_lever_is_judged_against_its_first_value_in_each_phase() {
    let relay = relay();
    let levers = compare_levers(&relay, "rooms").expect("rooms is swept");
    let points: BTreeSet<(&str, &str)> = levers
        .rows
        .iter()
        .map(|r| (r.phase.as_str(), r.point.as_str()))
        .collect();
    assert_eq!(
        points.into_iter().collect::<Vec<_>>(),
        [
            ("memory", "rooms 1 → 128"),
            ("memory", "rooms 1 → 32"),
            ("rooms", "rooms 16 → 128"),
            ("rooms", "rooms 16 → 64")
        ]
    );
    let rss = levers
        .rows
        .iter()
        .find(|r| r.point == "rooms 1 → 32" && r.figure == "rss")
        .expect("RSS from 1 to 32 rooms");
    // 7.8 to 22.8 MiB in three repeats a side: too few to call.
    let change = rss.judgement.change.expect("a base median");
    assert!((change - 1.92).abs() < 0.05, "{change}");
    assert!(matches!(
        rss.judgement.verdict,
        Verdict::CannotTell(CannotTell::TooFewRepeats { base: 3, new: 3 })
    ));
    // The relay's repeats ran point by point (their start times say so).
    assert!(
        levers.notes[0].contains("not interleaved"),
        "{:?}",
        levers.notes
    );
    // The same runs started in rounds (every point once, then again): no such note.
    let mut rounds = relay.clone();
    for phase in &mut rounds.phases {
        for (position, point) in phase.points.iter_mut().enumerate() {
            for (repeat, run) in point.runs.iter_mut().enumerate() {
                run.started_ms = (repeat * 1000 + position) as u64;
            }
        }
    }
    let notes = compare_levers(&rounds, "rooms")
        .expect("rooms is swept")
        .notes;
    assert!(
        notes.iter().all(|n| !n.contains("interleaved")),
        "{notes:?}"
    );
    assert_eq!(
        compare_levers(&relay, "fanout").map_err(|e| e.to_string()),
        Err("`--by fanout`: no phase of this file gives `fanout` two values or more; its levers are `rooms`".to_owned())
    );
}

/// Issue 41: other work that took a share of the machine over a run's hold (run again, and
/// competing all the same) withholds the verdict that rests on it, naming the run; the
/// same comparison on quiet runs calls it.
#[test]
fn a_verdict_resting_on_a_competed_run_is_withheld() {
    let mut base = relay();
    let mut new = relay();
    with_rss(&mut base, 0, &[1.0, 1.01, 0.99, 1.02, 0.98]);
    with_rss(&mut new, 0, &[1.2, 1.21, 1.19, 1.22, 1.18]);
    let run = &mut new.phases[0].points[0].runs[2];
    run.repeat = 3;
    run.machine_cpu = Some(headroom_results::MachineCpu {
        others_cores: 0.93,
        ..headroom_results::MachineCpu::default()
    });
    let rss = |comparison: &Comparison| {
        comparison
            .rows
            .iter()
            .find(|r| r.point == "rooms = 1" && r.figure == "rss")
            .map(|r| r.judgement.verdict.clone())
    };
    let withheld = rss(&compare(&base, &new, false, &table()));
    let Some(Verdict::CannotTell(why)) = withheld else {
        panic!("called: {withheld:?}");
    };
    assert_eq!(
        why.to_string(),
        "not judged: run 3 of the new file: other processes used 0.93 cores over the hold, so \
         what it shows may be the other work's (the test read worse)"
    );
    new.phases[0].points[0].runs[2].machine_cpu = None;
    assert_eq!(
        rss(&compare(&base, &new, false, &table())),
        Some(Verdict::Worse)
    );
}
