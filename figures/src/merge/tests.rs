use proptest::prelude::*;

use super::*;
use headroom_results::histogram::new as histogram;

proptest! {
    /// Issue 18: a histogram of every sample equals, bit for bit once serialized, the parts'
    /// histograms added, however the samples were shared out.
    #[test]
    fn a_histogram_of_all_samples_is_the_merge_of_the_parts(
        samples in proptest::collection::vec((1u64..60_000_000, 0usize..4), 1..400),
    ) {
        let mut whole = histogram();
        let mut parts = vec![histogram(); 4];
        for (value, part) in &samples {
            whole.record(*value).expect("in range");
            parts[*part].record(*value).expect("in range");
        }
        let shares: Vec<ScenarioResult> = parts
            .iter()
            .map(|h| ScenarioResult {
                kind: "http".into(),
                histograms: [(headroom_results::HistogramKey::Latency, serialize_histogram(h))].into(),
                ..Default::default()
            })
            .collect();
        let refs: Vec<&ScenarioResult> = shares.iter().collect();
        let merged = merge_histograms(&refs).expect("merged");
        prop_assert_eq!(serialize_histogram(&merged[&headroom_results::HistogramKey::Latency]), serialize_histogram(&whole));
    }
}

fn share(requests: u64, latencies_us: &[u64], window: u64) -> ScenarioResult {
    let mut latency = histogram();
    for &us in latencies_us {
        latency.record(us).expect("in range");
    }
    ScenarioResult {
        kind: "http".into(),
        requests,
        ok: requests - 1,
        errors: ErrorCounts {
            status: 1,
            ..Default::default()
        },
        rate: requests as f64 / 2.0,
        latency: histogram_summary(&latency),
        windows: vec![Window::of(
            window,
            &latency,
            latency.len() + 1,
            &ErrorCounts {
                status: 1,
                ..Default::default()
            },
        )],
        connections: Some(Connections {
            opened: 2,
            queued_at_limit: 0,
        }),
        histograms: [(
            headroom_results::HistogramKey::Latency,
            serialize_histogram(&latency),
        )]
        .into(),
        ..Default::default()
    }
}

/// Two shares of one scenario: counts, rates and errors add; percentiles come from the added
/// histograms, not from averaging the shares' own.
#[test]
fn shares_add_up_and_percentiles_come_from_the_added_histograms() {
    let a = share(100, &[1_000; 99], 3);
    let b = share(50, &[9_000; 20], 3);
    let merged = merge_scenario(&[&a, &b]).expect("merged");
    assert_eq!((merged.requests, merged.ok), (150, 148));
    assert_eq!(merged.errors.status, 2);
    assert!((merged.rate - 75.0).abs() < 1e-9);
    assert_eq!(merged.latency.count, 119);
    // 20 of 119 samples at 9 ms: the p90 is 9 ms, the p50 1 ms.
    assert!(
        (merged.latency.p50_ms - 1.0).abs() < 0.01,
        "{:?}",
        merged.latency
    );
    assert!(
        (merged.latency.p90_ms - 9.0).abs() < 0.01,
        "{:?}",
        merged.latency
    );
    assert_eq!(merged.windows.len(), 1);
    // A window counts its failed requests too (one a share), with no latency of theirs.
    assert_eq!(
        (merged.windows[0].requests, merged.windows[0].errors),
        (121, 2)
    );
    // And says why: both were unexpected statuses.
    let kinds = merged.windows[0]
        .errors_by_kind
        .as_ref()
        .expect("the kinds");
    assert_eq!((kinds.status, kinds.total()), (2, 2));
    assert_eq!(
        deserialize_histogram(merged.windows[0].histogram.as_deref().expect("latencies"))
            .expect("a histogram")
            .len(),
        119
    );
    assert_eq!(merged.connections.expect("counted").opened, 4);
}

fn part(path: &str, index: u64, count: u64, hash: &str) -> Part {
    let text = headroom_test_support::fixtures::RELAY_RESULTS;
    let mut results: Results = serde_json::from_str(text).expect("a results file");
    results.spec.hash = hash.to_owned();
    results.seed = Some(7);
    results.segment = Some(headroom_results::SegmentRef {
        index,
        count,
        host: format!("host-{index}"),
    });
    Part {
        path: path.to_owned(),
        results,
    }
}

#[test]
fn parts_of_other_specs_missing_or_twice_are_refused_by_name() {
    let error = merge(vec![part("a.json", 0, 2, "aa"), part("b.json", 1, 2, "bb")])
        .expect_err("other spec");
    assert!(
        error.contains("`b.json` and `a.json` are results of different specs"),
        "{error}"
    );
    let error =
        merge(vec![part("a.json", 0, 3, "aa"), part("c.json", 2, 3, "aa")]).expect_err("missing");
    assert_eq!(error, "segment 1/3 is missing: give all 3 segments");
    let error =
        merge(vec![part("a.json", 0, 2, "aa"), part("b.json", 0, 2, "aa")]).expect_err("twice");
    assert!(error.contains("segment 0/2 is given twice"), "{error}");
    // A whole run among segments is refused; alone, it is its own merge (one segment).
    let whole = || {
        let mut whole = part("w.json", 0, 1, "aa");
        whole.results.segment = None;
        whole
    };
    let error = merge(vec![whole(), part("b.json", 1, 2, "aa")]).expect_err("not a segment");
    assert!(
        error.contains("`w.json` is not a segment's results: it was run without --segment"),
        "{error}"
    );
    let alone = merge(vec![whole()]).expect("one whole run is its own merge");
    assert!(alone.segment.is_none());
    assert_eq!(alone.phases.len(), whole().results.phases.len());
    let runs = |r: &Results| -> Vec<(u64, Option<u64>)> {
        r.phases
            .iter()
            .flat_map(|p| p.points.iter())
            .flat_map(|p| p.runs.iter())
            .flat_map(|run| {
                run.scenarios
                    .values()
                    .map(|s| (s.requests, s.latency.count.into()))
            })
            .collect()
    };
    assert_eq!(runs(&alone), runs(&whole().results));
}

/// What others took of the machines: of segments on hosts of their own, the most any host
/// read; of segments sharing a host, nothing (each counted the others' generators); of a
/// segment that did not read it, nothing.
#[test]
fn other_work_is_kept_from_hosts_of_their_own_only() {
    let took = |others: f64, stolen: f64| {
        Some(headroom_results::MachineCpu {
            others_cores: others,
            stolen_cores: stolen,
            ..headroom_results::MachineCpu::default()
        })
    };
    let mut a = part("a.json", 0, 2, "aa").results.phases[0].points[0].runs[0].clone();
    let mut b = a.clone();
    a.machine_cpu = took(0.1, 0.3);
    b.machine_cpu = took(0.9, 0.0);
    let own_hosts = [part("a.json", 0, 2, "aa"), part("b.json", 1, 2, "aa")];
    assert_eq!(merge_machine_cpu(&[&a, &b], &own_hosts), took(0.9, 0.3));
    let mut one_host = [part("a.json", 0, 2, "aa"), part("b.json", 1, 2, "aa")];
    for part in &mut one_host {
        part.results.segment.as_mut().expect("a segment").host = "ci".into();
    }
    assert_eq!(merge_machine_cpu(&[&a, &b], &one_host), None);
    b.machine_cpu = None;
    assert_eq!(merge_machine_cpu(&[&a, &b], &own_hosts), None);
}
