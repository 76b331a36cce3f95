//! Issue 33: the live streams. What `--stream json-lines` sends is what the results file
//! holds: every second of every scenario of every run, line for line, with the labels that
//! name the run; and the server's readings beside them.

use std::collections::BTreeMap;

use headroom_results::Window;
use headroom_results::stream::{StreamLine, StreamSecond};

use super::*;

/// `headroom run` of the `live` fixture into the test's own results folder.
pub(super) fn run_live(test: &str, extra: &[&str]) -> (Output, Value) {
    let out = fresh_out(test);
    let out_arg = out.display().to_string();
    let mut args = vec![
        "run",
        "tests/fixtures/run/live.toml",
        "--out",
        &out_arg,
        "--no-page",
    ];
    args.extend(extra);
    let output = headroom(&args, &[]);
    let results = read_results(&out);
    (output, results)
}

/// The seconds of each run's scenario as the stream sent them, in order, by (point, repeat,
/// scenario).
type Streamed = BTreeMap<(usize, u32, String), Vec<Window>>;

/// Off a terminal, the view is a plain line every second (`--live-every 1s`) of each of
/// `runs` runs: no redraw, no escape code.
fn a_plain_line_every_second(said: &str, runs: usize) {
    assert!(!said.contains('\u{1b}'), "{said}");
    let views: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("  load point ") && line.contains("; server "))
        .collect();
    assert!(views.len() >= runs * 3, "{said}");
    // Which second a line falls on is the machine's timing (a loaded CI runner may print the
    // second point's lines only at its first second and its ramp-down), so each figure is
    // looked for in some line, not all in one.
    assert!(
        views
            .iter()
            .any(|line| line.contains("api: 200/s intended")),
        "{views:#?}"
    );
    assert!(
        views
            .iter()
            .any(|line| line.contains("/s done · p50 ") && line.contains("chat: 10 sockets open")),
        "{views:#?}"
    );
}

/// The stream's lines, each checked against the schema and its labels: the seconds by
/// point, repeat and scenario, and how many server readings there were.
fn streamed_seconds(text: &str) -> (Streamed, usize) {
    let mut seconds: Streamed = BTreeMap::new();
    let mut server = 0;
    for (number, line) in text.lines().enumerate() {
        let value: Value = serde_json::from_str(line).expect("a JSON line");
        common::assert_matches_schema("stream-line.schema.json", &value);
        let line: StreamLine = serde_json::from_value(value).expect("a stream line");
        match line {
            StreamLine::Second(StreamSecond {
                labels,
                scenario,
                window,
                ..
            }) => {
                assert_eq!(
                    (
                        labels.run_id.as_str(),
                        labels.bench.as_str(),
                        labels.phase.as_str()
                    ),
                    ("live-test-1", "live", "load"),
                    "line {number}"
                );
                assert_eq!(labels.segment, None, "line {number}");
                seconds
                    .entry((labels.point, labels.repeat, scenario))
                    .or_default()
                    .push(window);
            }
            StreamLine::Server(reading) => {
                assert!(reading.sample.rss_bytes > 0, "line {number}: {reading:?}");
                assert_eq!(reading.service, None, "line {number}");
                server += 1;
            }
        }
    }
    (seconds, server)
}

#[test]
fn the_json_lines_stream_is_the_results_windows_line_for_line() {
    let lines_path =
        std::env::temp_dir().join(format!("headroom-test-{}-live.jsonl", std::process::id()));
    let stream = format!("json-lines={}", lines_path.display());
    let (output, results) = run_live(
        "live-lines",
        &[
            "--stream",
            &stream,
            "--run-id",
            "live-test-1",
            "--live-every",
            "1s",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    a_plain_line_every_second(&stderr(&output), 2);
    let text = std::fs::read_to_string(&lines_path).expect("the stream's file");
    let (seconds, server) = streamed_seconds(&text);
    let results = typed(&results);
    let mut in_results: Streamed = BTreeMap::new();
    let mut with_kinds = 0;
    for point in &results.phases[0].points {
        for run in &point.runs {
            assert!(run.failure.is_none(), "{:?}", run.failure);
            assert_eq!(run.run_id.as_deref(), Some("live-test-1"));
            for (name, scenario) in &run.scenarios {
                with_kinds += scenario
                    .windows
                    .iter()
                    .filter(|w| {
                        w.errors_by_kind
                            .as_ref()
                            .is_some_and(|k| k.check == w.errors)
                    })
                    .filter(|w| w.errors > 0)
                    .count();
                in_results.insert(
                    (point.index, run.repeat, name.clone()),
                    scenario.windows.clone(),
                );
            }
        }
    }
    // 2 points × 2 scenarios, each a few seconds long.
    assert_eq!(in_results.len(), 4, "{:?}", in_results.keys());
    assert!(in_results.values().all(|w| w.len() >= 3), "{in_results:?}");
    assert_eq!(
        seconds, in_results,
        "the stream's seconds are the results' windows"
    );
    // The `wrong` request fails its check on every answer: seconds say why.
    assert!(with_kinds >= 2, "{with_kinds} seconds with check failures");
    // The server was read about every second of each of the 2 runs' loads.
    assert!(server >= 2 * 3, "{server} readings of the server");
    let _ = std::fs::remove_file(&lines_path);
    clean("live-lines");
}

#[test]
fn a_stream_that_cannot_be_opened_is_refused_before_anything_runs() {
    let out = fresh_out("live-refused");
    let out_arg = out.display().to_string();
    let output = headroom(
        &[
            "run",
            "tests/fixtures/run/live.toml",
            "--out",
            &out_arg,
            "--stream",
            "json-lines=/nonexistent-folder/lines.jsonl",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains(
            "--stream json-lines /nonexistent-folder/lines.jsonl: cannot create the file: its folder /nonexistent-folder does not exist"
        ),
        "{said}"
    );
    assert!(!out.exists(), "nothing ran");
    let unknown = headroom(
        &[
            "run",
            "tests/fixtures/run/live.toml",
            "--stream",
            "influx=x",
        ],
        &[],
    );
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("`influx` is not a stream"),
        "{}",
        stderr(&unknown)
    );
    clean("live-refused");
}

/// Issue 42: a terminal without cursor control (`TERM=dumb`, as an editor's shell or an old
/// CI runner gives) gets the lines a log gets: each run's line as it starts and ends, and the
/// view in one line; no bar, which it could not draw.
#[test]
fn a_dumb_terminal_gets_the_runs_lines() {
    if Command::new("script").arg("--version").output().is_err() {
        common::say("skipped: no `script` (util-linux) to give the run a pseudo-terminal");
        return;
    }
    let _machine = headroom_test_support::harness::shared();
    let out = fresh_out("live-dumb");
    let command = format!(
        "{} run tests/fixtures/run/live.toml --repeat 1 --no-page --live-every 1s --out {}",
        env!("CARGO_BIN_EXE_headroom"),
        out.display()
    );
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(root())
        .env("HEADROOM_COMPETED_RERUNS", "0")
        .env("TERM", "dumb")
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("script");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(!screen.contains("\u{1b}[2K"), "no redraws: {screen}");
    for words in [
        "[1/2] load point 1 (rate = 100/s) repeat 1",
        "[2/2] load point 2 (rate = 200/s) repeat 1",
        "; server ",
    ] {
        assert!(screen.contains(words), "{words}: {screen}");
    }
    // Each run's line as it ends.
    assert_eq!(screen.matches(" requests, ").count(), 2, "{screen}");
    clean("live-dumb");
}

/// On a terminal (a pseudo-terminal from `script`), the view is a panel under the bar, redrawn
/// in place every second: the cursor moves up over it and each line is cleared and drawn
/// again; the same figures as the plain line, on lines of their own.
#[test]
fn on_a_terminal_the_view_is_a_panel_redrawn_in_place() {
    if Command::new("script").arg("--version").output().is_err() {
        common::say("skipped: no `script` (util-linux) to give the run a pseudo-terminal");
        return;
    }
    let _machine = headroom_test_support::harness::shared();
    let out = fresh_out("live-tty");
    let command = format!(
        "{} run tests/fixtures/run/live.toml --repeat 1 --no-page --out {}",
        env!("CARGO_BIN_EXE_headroom"),
        out.display()
    );
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(root())
        .env("HEADROOM_COMPETED_RERUNS", "0")
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .output()
        .expect("script");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let screen = String::from_utf8_lossy(&output.stdout);
    // Redrawn in place: up over the panel, each line cleared.
    assert!(screen.contains("\u{1b}[2K"), "{screen}");
    let ups = screen.matches("A\r\u{1b}[2K").count();
    assert!(ups >= 4, "{ups} redraws: {screen}");
    for words in [
        "load point 2 (rate = 200/s) repeat 1 · run 2 of 2 · hold",
        "200/s intended",
        "10 sockets open",
        "seen by all p95",
        "· generator ",
    ] {
        assert!(screen.contains(words), "{words}: {screen}");
    }
    // Not the plain line: that is for logs.
    assert!(!screen.contains("; server "), "{screen}");
    let results = typed(&read_results(&out));
    assert_eq!(typed_runs(&results).len(), 2);
    clean("live-tty");
}
