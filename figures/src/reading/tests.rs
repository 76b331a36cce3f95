use headroom_results::{MessageCounts, RoomsResult, ScenarioResult, serialize_histogram};

use super::*;

/// A rooms run whose 100 messages each expected someone: 98 reached everyone, at 10, 20, …,
/// 980 µs (values the histogram holds exactly); 2 never did.
fn rooms_run() -> RunResult {
    let mut histogram = headroom_results::histogram::new();
    for k in 1..=98u64 {
        histogram.record(k * 10).expect("in range");
    }
    let rooms = RoomsResult {
        messages: MessageCounts {
            reached_all: 98,
            incomplete: 2,
            ..MessageCounts::default()
        },
        seen_by_all: headroom_results::histogram_summary(&histogram),
        ..RoomsResult::default()
    };
    let mut edits = ScenarioResult {
        kind: "rooms".to_owned(),
        rooms: Some(rooms),
        ..ScenarioResult::default()
    };
    edits
        .histograms
        .insert(HistogramKey::SeenByAll, serialize_histogram(&histogram));
    let mut run = RunResult::started(1, 0);
    run.scenarios.insert("edits".to_owned(), edits);
    run
}

fn seen_by_all(run: &RunResult, statistic: Statistic) -> Reading {
    let named = Named::scenario("edits", ScenarioFigure::SeenByAll).at(statistic);
    read(run, &named).expect("measured")
}

/// Issue 31: seen-by-all counts a message that never reached everyone as never. p95 over
/// 100 messages is the 95th fastest: the 95th of the 98 complete ones (950 µs), not their
/// own 95th percentile (the 94th, 940 µs), which the summary over complete messages says.
#[test]
fn a_message_that_never_reached_everyone_counts_as_never() {
    let run = rooms_run();
    let summary_p95 = run.scenarios["edits"]
        .rooms
        .as_ref()
        .map(|r| r.seen_by_all.p95_ms);
    assert_eq!(summary_p95, Some(0.94));
    let p95 = seen_by_all(&run, Statistic::P95).value();
    assert!(p95.is_some(), "p95 falls among complete messages");
    assert!(
        (p95.unwrap_or_default() - 0.000_95).abs() < 1e-12,
        "{p95:?}"
    );
    assert_eq!(seen_by_all(&run, Statistic::P99), Reading::Never);
    assert_eq!(seen_by_all(&run, Statistic::Max), Reading::Never);
    assert_eq!(seen_by_all(&run, Statistic::Mean), Reading::Never);
    assert_eq!(
        seen_by_all(&run, Statistic::Min),
        Reading::Value(0.000_01),
        "the fastest complete message"
    );
    // Every message complete: the statistics are the histogram's own.
    let mut complete = rooms_run();
    if let Some(rooms) = complete
        .scenarios
        .get_mut("edits")
        .and_then(|s| s.rooms.as_mut())
    {
        rooms.messages.incomplete = 0;
    }
    assert_eq!(
        seen_by_all(&complete, Statistic::P95),
        Reading::Value(0.000_94)
    );
    assert_eq!(
        seen_by_all(&complete, Statistic::Max),
        Reading::Value(0.000_98)
    );
}

/// A figure with nothing behind it is unmeasured, said, never 0.
#[test]
fn nothing_behind_a_figure_is_unmeasured() {
    let mut run = rooms_run();
    let delivered = Named::scenario("edits", ScenarioFigure::Delivered);
    assert_eq!(
        read(&run, &delivered),
        Err("no message was expected at any peer".to_owned())
    );
    assert_eq!(
        read(&run, &Named::point(PointFigure::Cpu)).map_err(|e| e.contains("over the hold")),
        Err(true)
    );
    run.process.hold_cpu_cores = Some(1.5);
    assert_eq!(
        read(&run, &Named::point(PointFigure::Cpu)),
        Ok(Reading::Value(1.5))
    );
    // A scenario no request of which ended has no rate (never 0/s).
    run.scenarios
        .insert("api".to_owned(), ScenarioResult::default());
    assert_eq!(
        read(&run, &Named::scenario("api", ScenarioFigure::Rate)),
        Err("no request ended".to_owned())
    );
    let missing = Named::scenario("browse", ScenarioFigure::Failed);
    assert_eq!(
        read(&run, &missing),
        Err("scenario `browse` did not run".to_owned())
    );
}

/// Names are the SLO's: scenario, request, figure, statistic.
#[test]
fn a_figure_is_named_as_an_slo_names_it() {
    let latency = Named::scenario("api", ScenarioFigure::Latency);
    assert_eq!(latency.at(Statistic::P999).name(), "api.latency.p99.9");
    assert_eq!(latency.of_request("list").name(), "api.list.latency");
    assert_eq!(Named::point(PointFigure::Rss).name(), "rss");
    assert_eq!(Named::point(PointFigure::Series("heap")).name(), "heap");
}
