//! A frame of the terminal view, drawn from fixed figures (no clock, no run): what a user
//! sees a second into the hold of a point with an HTTP and a rooms scenario.

use super::*;
use headroom_runner::live::RoomsGauges;

/// A second whose latencies are `values` (ms), `errors` of them failed checks.
fn window(t_s: u64, values: &[u64], errors: u64) -> Window {
    let mut h = headroom_runner::results::histogram::new();
    for value in values {
        h.record(value * 1000).expect("a latency");
    }
    let kinds = ErrorCounts {
        check: errors,
        ..Default::default()
    };
    Window::of(t_s, &h, values.len() as u64 + errors, &kinds)
}

fn http_view() -> ScenarioView {
    ScenarioView {
        name: "browse".to_owned(),
        stages: (30.0, Some(120.0), 10.0),
        load: Intended::Rate(0.0, 400.0),
        last: None,
        hold: headroom_runner::results::histogram::new(),
        errors: ErrorCounts::default(),
    }
}

fn state() -> ViewState {
    let mut browse = http_view();
    let gauges = Gauges {
        connections: 12,
        dropped: 0,
        lag_max_ms: Some(0.31),
        rooms: None,
    };
    // A ramp second (not in the hold's p95), then two hold seconds.
    browse.second(&window(29, &[100; 50], 0), &gauges);
    browse.second(&window(30, &[4, 5, 6, 7, 20], 1), &gauges);
    browse.second(&window(31, &[4, 5, 6, 7, 8], 2), &gauges);
    let mut chat = ScenarioView {
        name: "chat".to_owned(),
        stages: (30.0, Some(120.0), 10.0),
        load: Intended::Sockets(1000),
        last: None,
        hold: headroom_runner::results::histogram::new(),
        errors: ErrorCounts::default(),
    };
    chat.second(
        &window(31, &[2, 3, 3, 4], 0),
        &Gauges {
            connections: 998,
            dropped: 0,
            lag_max_ms: None,
            rooms: Some(RoomsGauges {
                expected: 48_000,
                delivered: 47_990,
                seen_by_all_completed_p95_ms: Some(4.0),
            }),
        },
    );
    ViewState {
        run: Some(RunHeader {
            phase: "load".to_owned(),
            point: 3,
            at: "readers = 400".to_owned(),
            repeat: 1,
            number: 7,
            runs: 15,
        }),
        scenarios: vec![browse, chat],
        server: Some(ProcessSample {
            t_s: 32.0,
            rss_bytes: 117_860_352,
            cpu_pct: Some(41.0),
            processes: 1,
        }),
        generator_cores: Some(0.05),
        throttled: Some(0.42),
        elapsed_s: 32.4,
    }
}

#[test]
fn a_frame_shows_the_run_each_scenario_the_server_and_the_generator() {
    insta::assert_snapshot!(frame(&state(), Some("12m 30s")));
}

#[test]
fn the_plain_line_says_the_same_in_one_line() {
    let line = plain_line(&state(), Some("12m 30s")).expect("a run in flight");
    assert!(!line.contains('\n'), "{line}");
    assert!(!line.contains('\u{1b}'), "no escape codes: {line}");
    insta::assert_snapshot!(line);
}

#[test]
fn the_hold_p95_counts_the_hold_seconds_only() {
    let state = state();
    // The ramp's second at 100 ms is left out: the hold's ten latencies top out at 20 ms.
    let hold = histogram_summary(&state.scenarios[0].hold);
    assert_eq!(hold.count, 10);
    assert!((hold.max_ms - 20.0).abs() < 0.1, "{hold:?}");
    assert_eq!(state.scenarios[0].errors.check, 3);
}

#[test]
fn the_intended_load_follows_the_ramps() {
    let view = http_view();
    assert_eq!(view.intended_at(15.0), "200/s intended");
    assert_eq!(view.intended_at(60.0), "400/s intended");
    assert_eq!(view.intended_at(155.0), "200/s intended");
    // From a start rate, the ramp-down goes back to it, as the generator paces it.
    let from_100 = ScenarioView {
        load: Intended::Rate(100.0, 400.0),
        ..http_view()
    };
    let paced = headroom_load::http::Schedule::new(30.0, 120.0, 10.0).at(155.0, 100.0, 400.0);
    assert_eq!(paced, 250.0);
    assert_eq!(from_100.intended_at(155.0), "250/s intended");
    assert_eq!(
        from_100.intended_at(161.0),
        "0/s intended",
        "the load is over"
    );
    assert_eq!(view.stage_at(15.0), "ramp-up 15s of 30s");
    assert_eq!(view.stage_at(42.4), "hold 12s of 120s");
    assert_eq!(view.stage_at(155.5), "ramp-down 5.5s of 10s");
    assert_eq!(
        view.stage_at(161.0),
        "load over, measuring the steady state"
    );
}

#[test]
fn nothing_is_drawn_between_runs() {
    assert_eq!(frame(&ViewState::default(), None), "");
    assert_eq!(plain_line(&ViewState::default(), None), None);
}
