//! Issue 33: a real Prometheus (the distribution's, from `scripts/prometheus.sh`, on loopback)
//! receives the run's seconds by remote write, and holds them with the documented names and
//! labels, equal to the results' windows; one that goes away mid-run is said once, and the
//! run ends as it would have. Skipped, said, where Prometheus cannot be installed.

use std::io::BufRead;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;

use headroom_results::Results;

use super::*;

/// A Prometheus on its own loopback port, stopped (and its folder removed) when dropped.
struct Prometheus {
    port: u16,
    server: Child,
}

impl Prometheus {
    fn start() -> Prometheus {
        let port = headroom_test_support::harness::free_port();
        let server = Command::new("scripts/prometheus.sh")
            .args(["serve", "--port", &port.to_string()])
            .current_dir(root())
            .env("HEADROOM_COMPETED_RERUNS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("scripts/prometheus.sh serve");
        let prometheus = Prometheus { port, server };
        let ready = headroom_test_support::harness::wait_until(Duration::from_secs(30), || {
            prometheus
                .get("/-/ready")
                .is_some_and(|(status, _)| status == 200)
        });
        assert!(ready, "Prometheus on port {port} never became ready");
        prometheus
    }

    fn write_url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/write", self.port)
    }

    /// A GET on loopback: the status and the body.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        let status = answer.split(' ').nth(1)?.parse().ok()?;
        let body = answer.split_once("\r\n\r\n")?.1.to_owned();
        Some((status, body))
    }

    /// Every sample of the series `selector` picks from the last hour, by series: its labels
    /// and its values in time order.
    fn samples(&self, selector: &str) -> Vec<(serde_json::Map<String, Value>, Vec<f64>)> {
        let query: String = format!("{selector}[1h]")
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, body) = self
            .get(&format!("/api/v1/query?query={query}"))
            .expect("Prometheus answers its query API");
        assert_eq!(status, 200, "{body}");
        // The body may be chunked: the JSON object is between the first `{` and the last `}`.
        let json = &body[body.find('{').expect("json")..=body.rfind('}').expect("json")];
        let answer: Value = serde_json::from_str(json).expect("the query's JSON");
        answer["data"]["result"]
            .as_array()
            .expect("a matrix")
            .iter()
            .map(|series| {
                let labels = series["metric"].as_object().expect("labels").clone();
                let values = series["values"]
                    .as_array()
                    .expect("values")
                    .iter()
                    .map(|pair| {
                        pair[1]
                            .as_str()
                            .expect("a value")
                            .parse()
                            .expect("a number")
                    })
                    .collect();
                (labels, values)
            })
            .collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        send("TERM", &self.server);
        let _ = self.server.wait();
    }
}

/// The label `name` of a series, as text.
fn label<'a>(labels: &'a serde_json::Map<String, Value>, name: &str) -> &'a str {
    labels
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no label {name} in {labels:?}"))
}

/// The windows of each run's scenario in the results, by (point, repeat, scenario).
fn windows_by_run(
    results: &Results,
) -> BTreeMap<(String, String, String), Vec<headroom_results::Window>> {
    let mut by_run = BTreeMap::new();
    for point in &results.phases[0].points {
        for run in &point.runs {
            for (name, scenario) in &run.scenarios {
                by_run.insert(
                    (
                        point.index.to_string(),
                        run.repeat.to_string(),
                        name.clone(),
                    ),
                    scenario.windows.clone(),
                );
            }
        }
    }
    by_run
}

use std::collections::BTreeMap;

/// A series' run and scenario: its point, repeat and scenario labels.
fn run_key(labels: &serde_json::Map<String, Value>) -> (String, String, String) {
    (
        label(labels, "point").to_owned(),
        label(labels, "repeat").to_owned(),
        label(labels, "scenario").to_owned(),
    )
}

/// A p95 series holds the results' windows' p95, in seconds, of the seconds with an expected
/// answer.
fn assert_p95_is_the_windows(
    windows: &BTreeMap<(String, String, String), Vec<headroom_results::Window>>,
    labels: &serde_json::Map<String, Value>,
    values: &[f64],
) {
    let key = run_key(labels);
    let expected: Vec<f64> = windows[&key]
        .iter()
        .filter(|w| w.requests > w.errors)
        .map(|w| w.p95_ms / 1000.0)
        .collect();
    assert_eq!(values.len(), expected.len(), "{key:?}");
    for (got, want) in values.iter().zip(&expected) {
        assert!((got - want).abs() < 1e-9, "{key:?}: {got} against {want}");
    }
}

/// The scenarios of tests/fixtures/run/live.toml.
const HTTP_SCENARIO: &str = "api";
const ROOMS_SCENARIO: &str = "chat";

#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn prometheus_holds_the_runs_seconds_with_the_documented_labels() {
    if let Err(why) = installed_by("prometheus.sh") {
        common::say(&format!("skipped: Prometheus not installed ({why})"));
        return;
    }
    let prometheus = Prometheus::start();
    let stream = format!("prometheus-rw={}", prometheus.write_url());
    let (output, results) = super::live::run_live(
        "live-prometheus",
        &[
            "--stream",
            &stream,
            "--run-id",
            "prom-test-1",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("warning: stream"),
        "{}",
        stderr(&output)
    );
    let results = typed(&results);
    let windows = windows_by_run(&results);
    assert_eq!(windows.len(), 4, "{:?}", windows.keys());
    // An HTTP second counts requests; a rooms second, deliveries seen (its own series).
    let http = prometheus.samples(r#"headroom_requests_per_second{run_id="prom-test-1"}"#);
    let rooms = prometheus.samples(r#"headroom_deliveries_per_second{run_id="prom-test-1"}"#);
    assert_eq!((http.len(), rooms.len()), (2, 2), "{http:?} {rooms:?}");
    assert!(
        http.iter()
            .all(|(labels, _)| label(labels, "scenario") == HTTP_SCENARIO)
    );
    assert!(
        rooms
            .iter()
            .all(|(labels, _)| label(labels, "scenario") == ROOMS_SCENARIO)
    );
    let requests: Vec<_> = http.into_iter().chain(rooms).collect();
    let p95 =
        prometheus.samples(r#"headroom_latency_seconds{run_id="prom-test-1",quantile="0.95"}"#);
    assert_eq!(
        requests.len(),
        4,
        "a series per run and scenario: {requests:?}"
    );
    for (labels, values) in &requests {
        assert_eq!(label(labels, "bench"), "live");
        assert_eq!(label(labels, "phase"), "load");
        assert!(
            ["100/s", "200/s"].contains(&label(labels, "var_rate")),
            "{labels:?}"
        );
        let key = run_key(labels);
        let expected: Vec<f64> = windows[&key].iter().map(|w| w.requests as f64).collect();
        assert_eq!(values, &expected, "{key:?}");
    }
    assert_eq!(p95.len(), 4, "{p95:?}");
    for (labels, values) in &p95 {
        assert_p95_is_the_windows(&windows, labels, values);
    }
    let rss = prometheus.samples(r#"headroom_server_rss_bytes{run_id="prom-test-1"}"#);
    assert_eq!(rss.len(), 2, "a series per run: {rss:?}");
    assert!(
        rss.iter()
            .all(|(_, values)| values.iter().all(|v| *v > 1e6)),
        "{rss:?}"
    );
    clean("live-prometheus");
}

/// What each run counted, scenario by scenario: HTTP requests in the hold and the ramps, rooms
/// messages sent.
fn counts(results: &Results) -> Vec<(String, u64, u64)> {
    let mut counts = Vec::new();
    for point in &results.phases[0].points {
        for run in &point.runs {
            assert!(run.failure.is_none(), "{:?}", run.failure);
            for (name, scenario) in &run.scenarios {
                let ramps = scenario.outside_hold.as_ref().map_or(0, |r| r.requests);
                let sent = scenario.rooms.as_ref().map_or(0, |r| r.messages.sent);
                counts.push((name.clone(), scenario.requests + ramps, sent));
            }
        }
    }
    counts
}

#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_prometheus_that_goes_away_mid_run_is_said_once_and_the_run_ends_as_without_it() {
    if let Err(why) = installed_by("prometheus.sh") {
        common::say(&format!("skipped: Prometheus not installed ({why})"));
        return;
    }
    let machine = headroom_test_support::harness::shared();
    let prometheus = Prometheus::start();
    let out = fresh_out("live-gone");
    let mut run = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            "tests/fixtures/run/live.toml",
            "--no-page",
            "--seed",
            "7",
            "--repeat",
            "1",
            "--out",
        ])
        .arg(&out)
        .args([
            "--stream",
            &format!("prometheus-rw={}", prometheus.write_url()),
        ])
        .current_dir(root())
        .env("HEADROOM_COMPETED_RERUNS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn headroom");
    // Prometheus goes away once the second of the two runs starts.
    let mut said = Vec::new();
    let mut prometheus = Some(prometheus);
    for line in std::io::BufReader::new(run.stderr.take().expect("stderr")).lines() {
        let line = line.expect("a line");
        if line.starts_with("[2/2]") {
            prometheus = None;
        }
        said.push(line);
    }
    assert!(
        prometheus.is_none(),
        "the run never got to its second run: {said:#?}"
    );
    let status = run.wait().expect("the run ends");
    assert_eq!(status.code(), Some(0), "{said:#?}");
    let warnings: Vec<&String> = said
        .iter()
        .filter(|l| l.contains("warning: stream"))
        .collect();
    assert_eq!(warnings.len(), 1, "said once: {said:#?}");
    assert!(
        warnings[0].contains("prometheus-rw=http://127.0.0.1:"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("the run goes on"), "{}", warnings[0]);
    let with_stream = counts(&typed(&read_results(&out)));
    drop(machine);
    let (output, without) =
        super::live::run_live("live-gone-none", &["--seed", "7", "--repeat", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(with_stream, counts(&typed(&without)));
    clean("live-gone");
    clean("live-gone-none");
}
