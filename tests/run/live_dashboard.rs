//! Issue 33: the live dashboard in a real browser (headless Chromium from
//! `scripts/chromium.sh`, driven over the DevTools protocol): what its DOM shows for a
//! finished run is what the results file holds, and the second it shows for the running point
//! is one the JSON-lines stream sent, at most one second behind it. Skipped, said, where
//! Chromium cannot be installed.

use std::path::Path;
use std::process::Child;

use headroom_results::Results;
use headroom_results::stream::StreamLine;

use super::common::browser::{self, Browser};
use super::*;

/// A run's scenario: (phase, point, repeat, scenario).
type RunScenario = (String, usize, u32, String);

/// A finished row's request count and p95 (ms), as the page shows them.
type RowFigures = (Option<f64>, Option<f64>);

/// Whether the page kept up with the stream: never more than one window behind what the
/// stream held before the page was read.
pub(super) fn kept_up(seen: &Seen) {
    assert!(seen.seconds_checked > 0, "no second was checked");
    assert_eq!(
        seen.behind.0, 0,
        "behind at {} of {} samples ({} windows at worst)",
        seen.behind.0, seen.seconds_checked, seen.behind.1
    );
}

/// What a test saw of the dashboard while a run went.
pub(super) struct Seen {
    /// Times the running point's second was checked against the stream.
    pub(super) seconds_checked: usize,
    /// Of those, the times the page was more than one window behind the stream, and by how
    /// much at most (seconds).
    pub(super) behind: (usize, u64),
    /// The finished rows at the end: (phase, point, repeat, scenario) → (requests, p95 ms).
    pub(super) finished: Vec<(RunScenario, RowFigures)>,
    /// The capacity page's Markdown as the dashboard showed it at the end.
    pub(super) page: String,
}

/// What the page shows now, read from its DOM.
const READ_DOM: &str = r##"(() => {
  const running = document.getElementById("running");
  const cards = [...running.querySelectorAll(".scenario")].filter(c => c.dataset.tS != null).map(c => ({
    scenario: c.dataset.scenario, number: Number(c.dataset.number), t_s: Number(c.dataset.tS), requests: Number(c.dataset.requests),
    received_ms: Number(c.dataset.receivedMs), now_ms: Date.now() }));
  const rows = [...document.querySelectorAll("#finished tbody tr")].map(r => {
    const value = cls => { const v = r.querySelector("td." + cls).dataset.value; return v == null ? null : Number(v); };
    return { phase: r.dataset.phase, point: Number(r.dataset.point), repeat: Number(r.dataset.repeat), scenario: r.dataset.scenario,
             requests: value("requests"), p95_ms: value("p95") };
  });
  return { state: document.getElementById("state").textContent,
           running: { number: Number(running.dataset.number), phase: running.dataset.phase, point: Number(running.dataset.point), repeat: Number(running.dataset.repeat), cards },
           rows, page: document.getElementById("page").textContent };
})()"##;

/// What `READ_DOM` returns: the dashboard's state, its running point, its finished rows and
/// its page. A number the DOM lacks reads as `null`.
#[derive(Debug, serde::Deserialize)]
struct Dom {
    state: String,
    running: RunningPoint,
    rows: Vec<FinishedRow>,
    page: String,
}

/// The running point and its scenarios' cards.
#[derive(Debug, serde::Deserialize)]
struct RunningPoint {
    number: Option<u64>,
    phase: Option<String>,
    point: Option<usize>,
    repeat: Option<u32>,
    cards: Vec<Card>,
}

/// A running scenario's card: its latest second, and when the page got it.
#[derive(Debug, serde::Deserialize)]
struct Card {
    scenario: Option<String>,
    number: Option<u64>,
    t_s: Option<u64>,
    requests: Option<u64>,
    received_ms: Option<f64>,
    now_ms: Option<f64>,
}

/// A finished run's scenario, as its row shows it.
#[derive(Debug, serde::Deserialize)]
struct FinishedRow {
    phase: Option<String>,
    point: Option<usize>,
    repeat: Option<u32>,
    scenario: Option<String>,
    requests: Option<f64>,
    p95_ms: Option<f64>,
}

/// The dashboard's DOM now.
fn read_dom(browser: &mut Browser) -> Dom {
    let value = browser.evaluate(READ_DOM);
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{e}: {value}"))
}

/// The seconds the stream sent so far, by (phase, point, repeat, scenario): (t_s, requests).
/// Seconds of each run's scenario: (t_s, requests), in the order sent.
type Streamed = BTreeMap<RunScenario, Vec<(u64, u64)>>;

fn streamed(lines: &Path) -> Streamed {
    let mut seconds: BTreeMap<_, Vec<(u64, u64)>> = BTreeMap::new();
    let text = std::fs::read_to_string(lines).unwrap_or_default();
    // The last line may be half written.
    for line in text
        .lines()
        .filter_map(|l| serde_json::from_str::<StreamLine>(l).ok())
    {
        if let StreamLine::Second(second) = line {
            let l = second.labels;
            seconds
                .entry((l.phase, l.point, l.repeat, second.scenario))
                .or_default()
                .push((second.window.t_s, second.window.requests));
        }
    }
    seconds
}

use std::collections::BTreeMap;

/// Watches the dashboard at `port` while `run` goes (its JSON-lines stream at `lines`):
/// every half second, the running point's latest second is checked against the stream; a
/// screenshot is kept once a run finished and another runs (`UPDATE_SCREENSHOT=1` writes it
/// to docs/images/dashboard.png). Returns when the run ended, with the rows it shows then.
pub(super) fn watch(binary: &str, port: u16, lines: &Path, run: &mut Child) -> Seen {
    let url = format!("http://127.0.0.1:{port}/");
    let up = headroom_test_support::harness::wait_until(Duration::from_secs(60), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "the dashboard never listened on {port}");
    let mut browser = Browser::open(binary, &url);
    let loaded = headroom_test_support::harness::wait_until(Duration::from_secs(30), || {
        browser
            .evaluate("document.readyState === 'complete' && !!document.getElementById('running')")
            == true
    });
    assert!(loaded, "the dashboard never loaded");
    let mut seen = Seen {
        seconds_checked: 0,
        behind: (0, 0),
        finished: Vec::new(),
        page: String::new(),
    };
    let mut shot = false;
    while run.try_wait().expect("the run's status").is_none() {
        // The stream before the page: every second it held then had reached the dashboard
        // already (the same event, handed to both), so the page must show it or the one before.
        let held = streamed(lines);
        let dom = read_dom(&mut browser);
        // And after: the second the page shows is one the stream sent.
        let stream = streamed(lines);
        check_running(&dom.running, &held, &stream, &mut seen);
        // A screenshot with a finished run in the table and a few seconds of the next drawn.
        let drawn = dom
            .running
            .cards
            .iter()
            .any(|c| c.t_s.is_some_and(|t| t >= 2));
        if !shot && !dom.rows.is_empty() && drawn {
            let png = browser.screenshot();
            assert!(png.starts_with(b"\x89PNG"), "a PNG");
            if std::env::var_os("UPDATE_SCREENSHOT").is_some() {
                std::fs::write(root().join("docs/images/dashboard.png"), &png)
                    .expect("the screenshot");
            }
            shot = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // The run is over; the page keeps what it was told, the capacity page last.
    let done = headroom_test_support::harness::wait_until(Duration::from_secs(5), || {
        read_dom(&mut browser).state == "finished"
    });
    let dom = read_dom(&mut browser);
    assert!(done || !dom.page.is_empty(), "{dom:?}");
    for row in dom.rows {
        seen.finished.push((
            (
                row.phase.unwrap_or_default(),
                row.point.unwrap_or_default(),
                row.repeat.unwrap_or_default(),
                row.scenario.unwrap_or_default(),
            ),
            (row.requests, row.p95_ms),
        ));
    }
    seen.page = dom.page;
    assert!(
        shot,
        "no moment with a finished run and a running one to take the screenshot at"
    );
    seen
}

/// The running point's cards as the page shows them, against the stream `held` before the page
/// was read and `sent` after.
fn check_running(running: &RunningPoint, held: &Streamed, sent: &Streamed, seen: &mut Seen) {
    for card in &running.cards {
        if card.number != running.number {
            continue;
        }
        let key = (
            running.phase.clone().unwrap_or_default(),
            running.point.unwrap_or_default(),
            running.repeat.unwrap_or_default(),
            card.scenario.clone().unwrap_or_default(),
        );
        let (t_s, requests) = (card.t_s.expect("t_s"), card.requests.expect("requests"));
        let Some(sent) = sent.get(&key) else {
            continue;
        };
        // The same second the stream sent, and at most a window behind its latest.
        assert!(
            sent.contains(&(t_s, requests)),
            "{key:?}: the page shows second {t_s} with {requests}, the stream sent {sent:?}"
        );
        let latest = held
            .get(&key)
            .and_then(|before| before.iter().map(|(t, _)| *t).max())
            .unwrap_or(0);
        if t_s + 1 < latest {
            let waited = card.now_ms.unwrap_or(0.0) - card.received_ms.unwrap_or(0.0);
            common::say(&format!(
                "{key:?}: the page shows second {t_s}, the stream held {latest} before the page was read (the page had its second for {waited} ms)"
            ));
            seen.behind.0 += 1;
            seen.behind.1 = seen.behind.1.max(latest - t_s);
        }
        seen.seconds_checked += 1;
    }
}

/// Every finished row the dashboard showed has the results' request count and p95 (HTTP
/// scenarios; rooms have neither), and every run of the results has its rows.
pub(super) fn rows_match_the_results(seen: &Seen, results: &Results) -> usize {
    let mut checked = 0;
    for phase in &results.phases {
        for point in &phase.points {
            for run in &point.runs {
                for (name, scenario) in &run.scenarios {
                    let key = (phase.name.clone(), point.index, run.repeat, name.clone());
                    let Some((_, (requests, p95))) = seen.finished.iter().find(|(k, _)| *k == key)
                    else {
                        panic!(
                            "{key:?} is not on the dashboard: {:?}",
                            seen.finished.iter().map(|r| &r.0).collect::<Vec<_>>()
                        );
                    };
                    if scenario.rooms.is_some() {
                        continue;
                    }
                    assert_eq!(*requests, Some(scenario.requests as f64), "{key:?}");
                    let p95 = p95.expect("a p95");
                    assert!(
                        (p95 - scenario.latency.p95_ms).abs() < 1e-6,
                        "{key:?}: {p95} against {}",
                        scenario.latency.p95_ms
                    );
                    checked += 1;
                }
            }
        }
    }
    checked
}

/// A run the test started, interrupted if the test fails before it ends.
pub(super) struct Stopped(pub(super) Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            send("INT", &self.0);
            let _ = self.0.wait();
        }
    }
}

#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn the_dashboard_shows_what_the_results_and_the_stream_hold() {
    let binary = match browser::installed() {
        Ok(binary) => binary,
        Err(why) => {
            common::say(&format!("skipped: Chromium not installed ({why})"));
            return;
        }
    };
    let _machine = headroom_test_support::harness::shared();
    let out = fresh_out("live-dashboard");
    let lines = out.with_file_name("live.jsonl");
    let export = out.with_file_name("dashboard.html");
    let port = headroom_test_support::harness::free_port();
    let mut run = Stopped(
        Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args([
                "run",
                "tests/fixtures/run/live.toml",
                "--repeat",
                "1",
                "--out",
            ])
            .arg(&out)
            .args([
                "--dashboard",
                "--dashboard-port",
                &port.to_string(),
                "--stream",
            ])
            .arg(format!("json-lines={}", lines.display()))
            .arg("--dashboard-export")
            .arg(&export)
            .current_dir(root())
            .env("HEADROOM_COMPETED_RERUNS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn headroom"),
    );
    let seen = watch(&binary, port, &lines, &mut run.0);
    assert_eq!(run.0.wait().expect("the run").code(), Some(0));
    assert!(
        seen.seconds_checked >= 4,
        "{} seconds checked",
        seen.seconds_checked
    );
    kept_up(&seen);
    let results = typed(&read_results(&out));
    assert_eq!(rows_match_the_results(&seen, &results), 2);
    assert!(seen.page.contains("# Capacity: live"), "{}", seen.page);
    // The export is the same page, its messages inside: no server, nothing online.
    let exported = std::fs::read_to_string(&export).expect("the export");
    assert!(
        exported
            .contains("<script id=\"recorded\" type=\"application/json\">[{\"kind\":\"started\"")
    );
    assert!(
        !exported.contains("http://") || !exported.contains("<script src"),
        "nothing fetched"
    );
    clean("live-dashboard");
}

/// The soft limit on this process's open files, from /proc/self/limits.
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Issue 42: 1,200 idle clients on the dashboard of a run that may open 1,100 files: the
/// dashboard holds 64 of them at most, so the run finishes with every run measured (before,
/// they took its files and every run failed). `--dashboard-port 0` says the port the kernel
/// chose.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_run_beside_1200_idle_dashboard_clients_finishes_measured() {
    use std::io::BufRead;
    match open_files_limit() {
        Some(limit) if limit >= 1_400 => {}
        limit => {
            common::say(&format!(
                "skipped: this test holds 1,200 connections and may open {limit:?} files (`ulimit -n` 1,400 or more runs it)"
            ));
            return;
        }
    }
    let _machine = headroom_test_support::harness::shared();
    let out = fresh_out("dashboard-idle");
    let script = format!(
        "ulimit -Sn 1100 && ulimit -Hn 1100 && exec '{}' run tests/fixtures/run/live.toml --repeat 1 --no-page --out '{}' --dashboard --dashboard-port 0",
        env!("CARGO_BIN_EXE_headroom"),
        out.display()
    );
    let mut run = Stopped(
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(root())
            .env("HEADROOM_COMPETED_RERUNS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn headroom"),
    );
    let stderr_pipe = run.0.stderr.take().expect("stderr");
    let (said_port, port_said) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut said = String::new();
        for line in std::io::BufReader::new(stderr_pipe)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(rest) = line.strip_prefix("dashboard: http://127.0.0.1:") {
                let port: Option<u16> = rest.trim_end_matches('/').parse().ok();
                let _ = said_port.send(port);
            }
            said.push_str(&line);
            said.push('\n');
        }
        said
    });
    let port = port_said
        .recv_timeout(Duration::from_secs(60))
        .expect("the dashboard's line")
        .expect("a port in it");
    assert_ne!(port, 0, "the port the kernel chose, not 0");
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let clients: Vec<std::net::TcpStream> = (0..1_200)
        .filter_map(|_| std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok())
        .collect();
    assert!(
        clients.len() >= 1_000,
        "{} clients connected",
        clients.len()
    );
    let code = run.0.wait().expect("the run").code();
    drop(clients);
    let said = reader.join().expect("stderr");
    assert_eq!(code, Some(0), "{said}");
    let results = typed(&read_results(&out));
    let runs = typed_runs(&results);
    assert_eq!(runs.len(), 2, "{said}");
    for run in runs {
        assert!(run.failure.is_none(), "{:?}\n{said}", run.failure);
        assert!(scenario(run, "api").requests > 100, "{said}");
    }
    clean("dashboard-idle");
}
