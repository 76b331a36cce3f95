use super::*;

/// The errors column counts failed requests (the page's and the SLOs' errors) by kind, and
/// says the starts dropped at `max_in_flight` apart: never sent, they are not errors.
/// A rooms phase whose every run failed before it measured anything keeps its rooms
/// columns (they were HTTP columns of dashes): the spec's scenarios decide.
#[test]
fn a_rooms_phase_whose_runs_failed_keeps_its_rooms_columns() {
    let prices = headroom_pricing::PriceTable::embedded().expect("prices");
    let matrix = headroom_compiler::Compiler::new()
        .compile(
            include_str!("../../../tests/fixtures/run/rooms.toml"),
            &prices,
        )
        .matrix
        .expect("the rooms fixture compiles");
    let planned = &matrix.phases[0].points[0].scenarios;
    let mut failed = RunResult::started(1, 0);
    failed.failure = Some(headroom_runner::results::Failure::Interrupted);
    let phase = headroom_runner::results::PhaseResults {
        name: matrix.phases[0].name.clone(),
        points: vec![headroom_runner::results::PointResults {
            index: 0,
            at: std::collections::BTreeMap::new(),
            runs: vec![failed],
        }],
        target: None,
        search: None,
    };
    let table = phase_table(&phase, planned);
    let header = table
        .lines()
        .find(|line| line.contains("point"))
        .expect("a header");
    assert!(
        header.contains("sockets") && header.contains("delivered"),
        "{table}"
    );
    assert!(!header.contains("req/s"), "{table}");
}

#[test]
fn the_errors_cell_says_each_kind_and_dropped_starts() {
    let none = ErrorCounts::default();
    assert_eq!(errors_cell(&none, 0), "0");
    let checks = ErrorCounts {
        check: 98,
        ..ErrorCounts::default()
    };
    assert_eq!(errors_cell(&checks, 0), "98 (98 check)");
    assert_eq!(errors_cell(&none, 37), "0, 37 dropped");
    assert_eq!(errors_cell(&checks, 1_037), "98 (98 check), 1,037 dropped");
    // Issue 43: statuses by code, as the results have them; the rest by kind.
    let mut mixed = ErrorCounts {
        connect: 3,
        timeout: 1,
        ..ErrorCounts::default()
    };
    for code in [500; 12].into_iter().chain([503, 503]) {
        mixed.unexpected(code);
    }
    assert_eq!(
        errors_cell(&mixed, 0),
        "18 (3 connect, 1 timeout, 12 × 500, 2 × 503)"
    );
    // A file written before codes were counted: the kind alone.
    let uncounted = ErrorCounts {
        status: 14,
        ..ErrorCounts::default()
    };
    assert_eq!(errors_cell(&uncounted, 0), "14 (14 status)");
}

/// Issue 12: the progress line says the starts dropped at `max_in_flight`, as the table does
/// beside the errors, instead of "0 errors" alone.
#[test]
fn the_progress_line_says_dropped_starts() {
    let mut run: RunResult = serde_json::from_value(serde_json::json!({
        "repeat": 1, "started_ms": 0, "duration_s": 1.0, "port": 1,
        "load_average": {"min": 0.0, "max": 0.0},
        "scenarios": {},
        "process": {"samples": []},
        "metrics": {"scrapes": [], "steady": {}},
        "generator": {"schedule_lag_p99_ms": 0.0, "cpu_cores": 0.0, "cores_available": 2, "bound": false},
        "slo": []
    }))
    .expect("a run");
    let api = ScenarioResult {
        kind: "http".to_owned(),
        requests: 1200,
        dropped: 37,
        ..ScenarioResult::default()
    };
    run.scenarios.insert("api".to_owned(), api);
    assert_eq!(
        one_line(&run),
        "ok: 1,200 requests, 0 errors, 37 starts dropped; RSS -"
    );
    // Issue 41: the failures outside the hold are said too, and in the table's cell.
    let api = run.scenarios.get_mut("api").expect("api");
    api.dropped = 0;
    api.outside_hold = Some(headroom_runner::results::RequestCounts {
        requests: 3_120,
        errors: ErrorCounts {
            timeout: 499,
            ..ErrorCounts::default()
        },
        ..Default::default()
    });
    assert_eq!(
        one_line(&run),
        "ok: 1,200 requests, 0 errors, and outside the hold 499 failed (499 timed out); RSS -"
    );
    assert_eq!(http_cells(&run)[5], "0 (+499 outside the hold)");
}

/// Issue 57: a run's rooms in words say why sockets failed, by cause (not "other"), and a
/// socket headroom cut at a frame over its bound as headroom's, not a drop by the server;
/// the delivery faults beside the deliveries.
#[test]
fn rooms_words_say_each_cause_and_headroom_s_own_cuts() {
    let mut rooms = headroom_runner::results::RoomsResult::default();
    rooms.sockets.planned = 8;
    rooms.sockets.opened = 4;
    rooms.sockets.failed.handshake = 3;
    rooms.sockets.failed.other = 1;
    rooms.sockets.dropped.too_large = 2;
    rooms.messages.sent = 8;
    rooms.messages.expected = 8;
    rooms.messages.delivered = 8;
    rooms.messages.misrouted = 16;
    rooms.messages.duplicates = 8;
    assert_eq!(
        rooms_words(&rooms),
        "4 of 8 sockets open (3 answered the upgrade as no WebSocket server does (a wrong Sec-WebSocket-Accept, or no Upgrade header), 1 other (a reset or a closed connection)), 2 cut by headroom (a frame or event over its bound: 16 MiB a WebSocket frame, 8 MiB an SSE event), 8 messages, 8 of 8 frames delivered, 16 misrouted (outside the sender's room), 8 duplicates"
    );
}
