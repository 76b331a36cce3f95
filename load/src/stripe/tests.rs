use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

fn schedule(up: f64, hold: f64, down: f64) -> (f64, f64, f64) {
    (up, hold, down)
}

/// Every lane of every segment, `threads[i]` threads in segment `i`: each arrival by number.
fn striped(curve: &RateCurve, threads: &[usize], seed: Option<u64>) -> Vec<(u64, u64)> {
    let count = threads.len() as u64;
    let mut all = Vec::new();
    for (index, &threads) in threads.iter().enumerate() {
        let segment = Segment {
            index: index as u64,
            count,
        };
        for thread in 0..threads {
            let lane = Lane::new(segment, thread, threads);
            let arrivals = match seed {
                None => Arrivals::fixed(curve.clone(), lane),
                Some(seed) => Arrivals::poisson(curve.clone(), lane, seed),
            };
            all.extend(arrivals.map(|(k, t)| (k, t.to_bits())));
        }
    }
    all
}

proptest! {
    /// Issue 18: the segments' lanes are disjoint, and together they are the one machine's
    /// schedule, arrival for arrival and instant for instant (bit for bit), for fixed and
    /// Poisson arrivals, flat or ramping, whatever threads each segment runs.
    #[test]
    fn striped_schedules_are_disjoint_and_add_up_to_the_single_one(
        up in prop_oneof![Just(0.0), 0.1f64..3.0],
        hold in prop_oneof![Just(0.0), 0.1f64..3.0],
        down in prop_oneof![Just(0.0), 0.1f64..3.0],
        from in prop_oneof![Just(0.0), 1.0f64..500.0],
        to in 1.0f64..500.0,
        threads in proptest::collection::vec(1usize..4, 1..5),
        seed in proptest::option::of(any::<u64>()),
    ) {
        let curve = RateCurve::new(schedule(up, hold, down), from, to);
        let single = striped(&curve, &[1], seed);
        let parts = striped(&curve, &threads, seed);
        let mut by_number = BTreeMap::new();
        for (k, t) in &parts {
            prop_assert!(by_number.insert(*k, *t).is_none(), "arrival {} twice", k);
        }
        let union: Vec<(u64, u64)> = by_number.into_iter().collect();
        prop_assert_eq!(union, single);
    }
}

/// A flat rate: arrival `k` at `k / rate` exactly, as many as the hold has room for.
#[test]
fn a_flat_rate_spaces_arrivals_evenly() {
    let curve = RateCurve::new(schedule(0.0, 1.0, 0.0), 300.0, 300.0);
    let lane = Lane::new(Segment::WHOLE, 0, 1);
    let times: Vec<f64> = Arrivals::fixed(curve, lane).map(|(_, t)| t).collect();
    assert_eq!(times.len(), 300);
    assert_eq!(times[0], 0.0);
    assert!((times[150] - 0.5).abs() < 1e-12, "{}", times[150]);
    assert!(times[299] < 1.0);
}

/// A ramp from 0 to 100/s over 2 s holds 100 arrivals; half of them come in its last 0.59 s
/// (the count grows with the square of the time).
#[test]
fn a_ramp_counts_the_area_under_the_rate() {
    let curve = RateCurve::new(schedule(2.0, 0.0, 0.0), 0.0, 100.0);
    assert!((curve.arrivals() - 100.0).abs() < 1e-9);
    let half = curve.time_of(50.0).expect("within the ramp");
    assert!((half - 2.0 / 2f64.sqrt()).abs() < 1e-9, "{half}");
    let lane = Lane::new(Segment::WHOLE, 0, 1);
    assert_eq!(Arrivals::fixed(curve, lane).count(), 100);
}

/// Poisson arrivals from one seed are the same run after run, and about the rate.
#[test]
fn poisson_arrivals_follow_their_seed() {
    let curve = RateCurve::new(schedule(0.0, 10.0, 0.0), 1000.0, 1000.0);
    let lane = Lane::new(Segment::WHOLE, 0, 1);
    let a: Vec<(u64, f64)> = Arrivals::poisson(curve.clone(), lane, 7).collect();
    let b: Vec<(u64, f64)> = Arrivals::poisson(curve.clone(), lane, 7).collect();
    let c: Vec<(u64, f64)> = Arrivals::poisson(curve, lane, 8).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    // 10,000 expected, a standard deviation of 100.
    assert!((9_500..=10_500).contains(&a.len()), "{}", a.len());
}

#[test]
fn segments_parse_and_share_units() {
    assert_eq!(Segment::parse("2/3"), Ok(Segment { index: 2, count: 3 }));
    for bad in ["3/3", "1/0", "a/3", "1", "-1/3"] {
        let error = Segment::parse(bad).expect_err(bad);
        assert!(error.contains("write `INDEX/COUNT`"), "{error}");
    }
    let thirds: Vec<u64> = (0..3)
        .map(|index| Segment { index, count: 3 }.of(10))
        .collect();
    assert_eq!(thirds, [4, 3, 3]);
    assert!(Segment { index: 1, count: 3 }.owns(7));
}

/// A draw depends on the seed and its number only, and its numbers spread evenly: over
/// 100,000 draws each tenth of the range gets 10 % within half a percent.
#[test]
fn draws_are_numbered_and_uniform() {
    assert_eq!(draw(7, 12), draw(7, 12));
    assert_ne!(draw(7, 12), draw(7, 13));
    assert_ne!(draw(7, 12), draw(8, 12));
    let mut tenths = [0u32; 10];
    for k in 0..100_000 {
        tenths[((u128::from(draw(3, k)) * 10) >> 64) as usize] += 1;
    }
    for count in tenths {
        assert!((9_500..=10_500).contains(&count), "{tenths:?}");
    }
}
