//! Issue 30: a newcomer's first hour against their own server. No figure from a server that
//! answered nothing, virtual users that do not move in step, and the results a plan reads
//! chosen on purpose. Each test runs `headroom` as a user does, on loopback.

mod common;

use std::path::Path;

use serde_json::Value;

use common::run::*;

/// An external target that is not running: each run fails by name before any load, `--check`
/// exits non-zero, and no latency figure is written (the SLO reads not measured, never 0).
#[test]
fn an_external_target_that_is_not_running_fails_every_run_by_name() {
    let port = free_port();
    let (output, results) = run_fixture(
        "external-down",
        &["--check", "--no-page"],
        &[("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())],
    );
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = runs(&results);
    assert_eq!(all.len(), 2, "both repeats are recorded");
    for run in &all {
        assert_eq!(run["failure"]["kind"], "never_ready", "{}", run["failure"]);
        let check = run["failure"]["check"]
            .as_str()
            .expect("the check waited for");
        assert!(
            check.contains(&format!("127.0.0.1:{port}")),
            "names where it waited: {check}"
        );
        assert!(
            run["scenarios"].as_object().is_none_or(|s| s.is_empty()),
            "no load, so no figure: {}",
            run["scenarios"]
        );
        for verdict in run["slo"].as_array().into_iter().flatten() {
            assert_ne!(verdict["pass"], true, "{verdict}");
        }
    }
    let said = stderr(&output);
    assert!(said.contains("was not ready"), "{said}");
    clean("external-down");
}

/// A scenario whose every request fails to connect, and one whose every answer is a 404:
/// neither has a latency (count 0, not 0 ms), the 404s' latency is kept apart as unexpected,
/// the run fails naming the scenario and what its requests met, and the latency SLOs read not
/// measured, so `--check` fails.
#[test]
fn a_scenario_with_no_expected_answer_has_no_latency() {
    let dead = free_port();
    let (output, results) = run_fixture(
        "unanswered",
        &["--check", "--no-page"],
        &[("HEADROOM_TEST_DEAD_PORT", dead.to_string())],
    );
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = runs(&results);
    assert_eq!(all.len(), 1);
    let run = all[0];
    let gone = &run["scenarios"]["gone"];
    let requests = common::number(&gone["requests"]);
    assert!(requests >= 60.0, "40/s over 2 s were sent: {requests}");
    assert_eq!(common::number(&gone["errors"]["connect"]), requests);
    assert_eq!(common::number(&gone["latency"]["count"]), 0.0);
    assert_eq!(common::number(&gone["latency"]["p95_ms"]), 0.0);
    assert!(gone["unexpected_latency"].is_null(), "{gone}");
    let wrong = &run["scenarios"]["wrong"];
    let answered = common::number(&wrong["requests"]);
    assert!(answered >= 60.0, "{answered}");
    assert_eq!(common::number(&wrong["errors"]["status"]), answered);
    assert_eq!(common::number(&wrong["latency"]["count"]), 0.0);
    assert_eq!(
        common::number(&wrong["unexpected_latency"]["count"]),
        answered,
        "the 404s' latency is kept apart"
    );
    // The run names the first scenario that measured nothing, and why.
    assert_eq!(
        run["failure"]["kind"], "nothing_measured",
        "{}",
        run["failure"]
    );
    let why = run["failure"]["why"].as_str().expect("why");
    assert!(why.contains("got an expected answer"), "{why}");
    assert!(why.contains("could not connect"), "{why}");
    for name in ["gone_fast", "wrong_fast"] {
        let verdict = run["slo"]
            .as_array()
            .expect("verdicts")
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no verdict {name}: {}", run["slo"]));
        assert!(verdict["pass"].is_null(), "{verdict}");
        assert!(verdict["value"].is_null(), "{verdict}");
        let note = verdict["note"].as_str().expect("a note");
        assert!(note.starts_with("none of the"), "{note}");
    }
    let note = |name: &str| {
        run["slo"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == name)
            .and_then(|v| v["note"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(note("wrong_fast").contains("unexpected status"));
    clean("unanswered");
}

/// When each request arrived at the server, in seconds on its monotonic clock.
fn arrivals(file: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(file).expect("the server's arrivals");
    let mut times: Vec<f64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    times.sort_by(f64::total_cmp);
    times
}

/// The coefficient of variation of the arrivals counted per 250 ms, from one second after the
/// first (when every user has started) over the next 2.5 s.
fn burstiness(times: &[f64]) -> f64 {
    let first = *times.first().expect("some arrivals");
    let from = first + 1.0;
    let mut counts = [0.0f64; 10];
    for &t in times {
        let bucket = ((t - from) / 0.25).floor();
        if (0.0..10.0).contains(&bucket) {
            counts[bucket as usize] += 1.0;
        }
    }
    let mean = counts.iter().sum::<f64>() / counts.len() as f64;
    let variance = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / counts.len() as f64;
    variance.sqrt() / mean
}

/// Fifty virtual users thinking 1 s: by default their sends spread over the second (the
/// server's arrivals per 250 ms vary little: CV 0.26 measured, under 0.6 asked);
/// `start = "together"` reproduces the burst (all fifty in the same quarter second is a CV of
/// 1.73; 1.53 measured).
#[test]
fn virtual_users_spread_their_starts_unless_told_to_start_together() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        common::say("skipped: python3 is not installed, and the test's server is Python's stdlib");
        return;
    }
    let mut measured = Vec::new();
    for fixture in ["think-spread", "think-together"] {
        let file = fresh_out(&format!("{fixture}-arrivals")).with_file_name("arrivals.txt");
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("a folder");
        // The whole machine: a neighbour's load would bunch the users' sends itself.
        let (output, results) = run_fixture_with(
            headroom_whole,
            fixture,
            &["--no-page"],
            &[("HEADROOM_TEST_ARRIVALS", file.display().to_string())],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let all = runs(&results);
        assert_eq!(all.len(), 1);
        let times = arrivals(&file);
        // 50 users, one request a second each, over 4 s.
        assert!(
            (150..=260).contains(&times.len()),
            "{} arrivals",
            times.len()
        );
        measured.push(burstiness(&times));
        clean(fixture);
        clean(&format!("{fixture}-arrivals"));
    }
    let (spread, together) = (measured[0], measured[1]);
    common::say(&format!(
        "arrivals per 250 ms: CV {spread:.2} spread, {together:.2} together"
    ));
    assert!(
        spread < 0.6,
        "spread users' arrivals per 250 ms: CV {spread:.2}"
    );
    // All fifty in one quarter second a second is 1.73; the burst smears a little as the
    // server's answers take time (1.53 measured), never down to the spread's.
    assert!(together > 1.2, "users started together: CV {together:.2}");
}

/// A small spec run in a folder of its own (`plan SPEC` reads `results/<bench>/results.json`
/// from where it runs).
const QUICK_SPEC: &str = r#"
[bench]
name = "quick-plan"
unit = "user"

[target]
command = ["{headroom}", "demo-target", "--port", "{port}"]
ready = { http = "/healthz" }

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "20/s"
requests = [{ url = "http://127.0.0.1:{port}/healthz" }]

[[phase]]
name = "load"
hold = "2s"
repeats = 1
cooldown = "0s"

[plan]
instances = ["t4g.medium"]
"#;

/// `plan SPEC` after `run --quick SPEC` and an edit of the spec: it names the file it read,
/// says quick and from a different spec, and `plan --check` refuses it. A results file of
/// another name renders to a page of its own name, beside the first.
#[test]
fn plan_says_which_results_it_read_and_check_refuses_quick_ones() {
    let dir = fresh_out("quick-plan");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let spec = dir.join("spec.toml");
    std::fs::write(&spec, QUICK_SPEC).expect("spec");
    let _machine = shared();
    let (code, _, said) = common::headroom_in(dir, &["run", "--quick", "spec.toml"]);
    assert_eq!(code, 0, "{said}");
    let default = Path::new("results/quick-plan/results.json");
    assert!(dir.join(default).is_file());
    // The same spec: the file is named, and said to be quick.
    let (code, _, said) = common::headroom_in(dir, &["plan", "spec.toml"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("reading results/quick-plan/results.json, run on 20"),
        "{said}"
    );
    assert!(said.contains("`--quick` results"), "{said}");
    assert!(!said.contains("different spec"), "{said}");
    // Edited: from a different spec too.
    std::fs::write(&spec, QUICK_SPEC.replace("20/s", "30/s")).expect("spec");
    let (code, _, said) = common::headroom_in(dir, &["plan", "spec.toml"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("results/quick-plan/results.json"), "{said}");
    assert!(said.contains("`--quick` results"), "{said}");
    assert!(
        said.contains("from a different spec (spec.toml changed"),
        "{said}"
    );
    let (code, _, said) = common::headroom_in(dir, &["plan", "spec.toml", "--check"]);
    assert_ne!(code, 0, "{said}");
    assert!(
        said.contains(
            "plan --check refuses these results: they are `--quick` results of a different spec"
        ),
        "{said}"
    );
    // Two results files in one folder: each renders its own page.
    let other = dir.join("results/quick-plan/other.json");
    std::fs::copy(dir.join(default), &other).expect("copy");
    let (code, _, said) = common::headroom_in(
        dir,
        &[
            "render",
            "spec.toml",
            "--results",
            "results/quick-plan/other.json",
        ],
    );
    assert_eq!(code, 0, "{said}");
    let folder = dir.join("results/quick-plan");
    assert!(folder.join("other.capacity.md").is_file(), "{said}");
    assert!(
        folder.join("capacity.md").is_file(),
        "run's own page is kept"
    );
    let own = std::fs::read_to_string(folder.join("capacity.md")).expect("page");
    let theirs = std::fs::read_to_string(folder.join("other.capacity.md")).expect("page");
    assert!(theirs.contains("other.json"), "the page names its results");
    assert!(!own.contains("other.json"));
    clean("quick-plan");
}

/// `run --set workers=2` is checked as the spec's own value, recorded in the results, and
/// `compare` names the lever that differs between two files; a name `[vars]` lacks is refused
/// with the closest one.
#[test]
fn a_lever_set_from_the_command_line_is_recorded_and_compared() {
    let dir = fresh_out("set-lever");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    // A lever in [vars], one from the environment, and a token from the environment in a
    // header (a secret: recorded by name only).
    let spec = QUICK_SPEC
        .replace(
            "[target]\n",
            "[vars]\nworkers = 1\n\n[target]\nenv = { WORKERS = \"{workers}\", THREADS = \"{env:HEADROOM_TEST_THREADS}\" }\n",
        )
        .replace(
            "requests = [{ url = \"http://127.0.0.1:{port}/healthz\" }]",
            "requests = [{ url = \"http://127.0.0.1:{port}/healthz\", headers = { authorization = \"Bearer {env:HEADROOM_TEST_TOKEN}\" } }]",
        )
        .replace("name = \"quick-plan\"", "name = \"set-lever\"");
    std::fs::write(dir.join("spec.toml"), spec).expect("spec");
    let _machine = shared();
    let run = |out: &str, set: &[&str], (threads, token): (&str, &str)| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args(["run", "spec.toml", "--no-page", "--out", out])
            .args(set)
            .current_dir(dir)
            .env("HEADROOM_TEST_THREADS", threads)
            .env("HEADROOM_TEST_TOKEN", token)
            .output()
            .expect("run headroom");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    };
    run("one.json", &[], ("1", "secret-one"));
    run("two.json", &["--set", "workers=2"], ("3", "secret-two"));
    let two: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("two.json")).expect("results"))
            .expect("json");
    assert_eq!(two["plan"]["set"]["workers"], 2, "{}", two["plan"]["set"]);
    assert_eq!(two["plan"]["vars"]["workers"], 2);
    let one: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("one.json")).expect("results"))
            .expect("json");
    assert!(one["plan"]["set"].is_null(), "nothing set: {}", one["plan"]);
    // The environment's levers are recorded resolved, the header's token by name only.
    assert_eq!(one["env"]["HEADROOM_TEST_THREADS"], "1", "{}", one["env"]);
    assert!(
        one["env"]["HEADROOM_TEST_TOKEN"].is_null(),
        "{}",
        one["env"]
    );
    assert!(
        one["env"]
            .as_object()
            .is_some_and(|e| e.contains_key("HEADROOM_TEST_TOKEN"))
    );
    let text = std::fs::read_to_string(dir.join("one.json")).expect("results");
    assert!(
        !text.contains("secret-one"),
        "a header's secret is never written"
    );
    let (_, table, said) = common::headroom_in(dir, &["compare", "one.json", "two.json"]);
    assert!(
        table.contains("levers: workers: 1 → 2 (--set); env HEADROOM_TEST_THREADS: 1 → 3"),
        "{table}\n{said}"
    );
    assert!(!table.contains("HEADROOM_TEST_TOKEN"), "{table}");
    // A name the spec does not declare, and a value of the wrong type, are refused.
    let (code, _, said) =
        common::headroom_in(dir, &["run", "spec.toml", "--set", "worker=2", "--no-page"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("the spec declares no variable `worker`"),
        "{said}"
    );
    assert!(said.contains("did you mean `--set workers=2`?"), "{said}");
    clean("set-lever");
}

/// A spec whose scenario reads `data`, for the data-file checks.
fn spec_with_data(file: &str) -> String {
    format!(
        r#"
[bench]
name = "data-check"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "members"
kind = "http"
executor = "constant-vus"
vus = 2
data = {{ file = "{file}" }}
requests = [{{ url = "http://127.0.0.1:{{port}}/api/notes?user={{row.email}}" }}]

[[phase]]
name = "load"
hold = "1s"
"#
    )
}

/// `validate` reads a data file bounded, as `run` does: a device (`/dev/zero` once aborted it
/// with an allocation failure), a file past 64 MiB (a 1 GB one, sparse here, is refused from
/// its size without a read), a header with no row, and a file of good rows, accepted.
#[test]
fn validate_reads_data_files_bounded_and_refuses_devices() {
    let dir = fresh_out("data-check");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let huge = std::fs::File::create(dir.join("huge.csv")).expect("a file");
    huge.set_len(1 << 30).expect("a sparse gigabyte");
    std::fs::write(dir.join("header.csv"), "email\n").expect("a header");
    std::fs::write(dir.join("good.csv"), "email\na@example.com\n").expect("rows");
    for (file, said) in [
        (
            "/dev/zero",
            "is not a regular file (a device, a pipe or a folder)",
        ),
        (
            "huge.csv",
            "is 1,073,741,824 bytes, over the 67,108,864 a run reads",
        ),
        ("header.csv", "has no row below its header"),
    ] {
        std::fs::write(dir.join("spec.toml"), spec_with_data(file)).expect("spec");
        let (code, _, stderr) = common::headroom_in(dir, &["validate", "spec.toml"]);
        assert_eq!(code, 1, "{file}: {stderr}");
        assert!(stderr.contains(said), "{file}: {stderr}");
        assert!(
            stderr.contains("spec.toml:"),
            "the place is named: {stderr}"
        );
    }
    std::fs::write(dir.join("spec.toml"), spec_with_data("good.csv")).expect("spec");
    let (code, _, stderr) = common::headroom_in(dir, &["validate", "spec.toml"]);
    assert_eq!(code, 0, "{stderr}");
    clean("data-check");
}

/// `pid_file` naming pid 1 once sampled the whole machine (79 processes, headroom among them)
/// as "the server": a pid whose tree holds headroom itself (here, this test's own, the parent
/// of the headroom it starts) is refused, and so is pid 1 (its tree holds headroom on a host;
/// in a container it has no process group, which crashed headroom before); each run fails by
/// name rather than read as measured.
#[test]
fn a_pid_file_naming_an_ancestor_of_headroom_is_refused() {
    let (mut server, port) = start_demo_target("1044B");
    let pid_file = fresh_out("pid-one").with_file_name("server.pid");
    std::fs::create_dir_all(pid_file.parent().expect("dir")).expect("dir");
    let own = std::process::id().to_string();
    for (pid, said) in [
        (own.as_str(), "holds headroom itself"),
        ("1", "names pid 1, "),
    ] {
        std::fs::write(&pid_file, format!("{pid}\n")).expect("pid file");
        let (output, results) = run_fixture(
            "external",
            &["--no-page"],
            &[
                ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
                ("HEADROOM_TEST_PID_FILE", pid_file.display().to_string()),
            ],
        );
        assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
        for run in runs(&results) {
            assert_eq!(run["failure"]["kind"], "load", "{}", run["failure"]);
            let message = run["failure"]["message"].as_str().expect("a message");
            assert!(message.starts_with("`pid_file`: "), "{message}");
            assert!(message.contains(said), "{message}");
            assert!(message.contains("it is not the server"), "{message}");
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    clean("external");
    clean("pid-one");
}

/// `plan --budget 1e308` printed a fleet of 18446744073709551615 (a count saturated): a budget
/// past a billion a month is refused, naming the bound; one within it still plans.
#[test]
fn a_budget_past_a_billion_is_refused() {
    let (code, _, said) =
        common::headroom(&["plan", "--budget", "1e308", "--instance", "c7g.medium"]);
    assert_eq!(code, 1, "a usage error: {said}");
    assert!(
        said.contains("it must be at most 1,000,000,000 a month"),
        "{said}"
    );
    let (code, out, said) = common::headroom(&[
        "plan",
        "--points",
        "tests/fixtures/points/cpu-sweep.csv",
        "--x",
        "users",
        "--unit",
        "user",
        "--memory",
        "rss_mib",
        "--instance",
        "c7g.medium",
        "--budget",
        "1000000000",
    ]);
    assert_eq!(code, 0, "{said}");
    assert!(!out.contains("18446744073709551615"), "{out}");
}

/// A server that is not the demo: Python's standard-library `http.server`, as the getting
/// started guide runs it (`--quick`). Its answers are measured (latency over 200s, the body
/// checked), its process sampled, and under `cores = 1` the plan's CPU ceiling on a 2-vCPU
/// c7g.large is taken at one core, which the page says.
#[test]
fn the_python_stdlib_example_runs_and_plans_at_one_core() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        common::say(
            "skipped: python3 is not installed, and the example's server is Python's stdlib",
        );
        return;
    }
    let out = fresh_out("python-stdlib");
    let out_arg = out.display().to_string();
    let (output, results) = {
        let output = headroom_whole(
            &[
                "run",
                "--quick",
                "examples/python-stdlib.toml",
                "--out",
                &out_arg,
            ],
            &[],
        );
        (output, read_results(&out))
    };
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = runs(&results);
    assert_eq!(
        all.len(),
        3,
        "the quick sweep's first, middle and last rates"
    );
    for run in &all {
        let file = &run["scenarios"]["file"];
        let requests = common::number(&file["requests"]);
        assert!(requests > 0.0, "{file}");
        assert_eq!(common::number(&file["ok"]), requests, "{file}");
        assert_eq!(
            common::number(&file["latency"]["count"]),
            requests,
            "{file}"
        );
        assert!(
            common::number(&run["process"]["steady"]["rss_bytes"]) > 4.0 * 1_048_576.0,
            "the Python process was sampled: {}",
            run["process"]
        );
    }
    let (code, plan, said) =
        common::headroom(&["plan", "examples/python-stdlib.toml", "--results", &out_arg]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("`--quick` results"), "{said}");
    assert!(
        plan.contains("the server uses at most 1 core of its 2 vCPU ([target] cores)"),
        "{plan}"
    );
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("the page");
    assert!(
        page.contains("c7g.large: ")
            && page.contains("at most 1 core of its 2 vCPU ([target] cores)"),
        "{page}"
    );
    clean("python-stdlib");
}

/// A device given as the spec was read without bound: `validate /dev/zero` stops at the 1 MiB
/// a spec may be and says so.
#[test]
fn a_device_given_as_the_spec_is_read_bounded() {
    let (code, _, said) = common::headroom(&["validate", "/dev/zero"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("spec `/dev/zero` goes on past 1,048,576 bytes"),
        "{said}"
    );
}

/// One segment's share rendered as a whole run's page, and `compare` took it for one: a share
/// is refused where a whole run is meant, with the way to join the shares.
#[test]
fn a_segments_share_is_not_taken_for_a_whole_run() {
    let dir = fresh_out("share");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let text =
        std::fs::read_to_string(common::root().join("tests/fixtures/render/relay-results.json"))
            .expect("the fixture");
    let mut results: Value = serde_json::from_str(&text).expect("json");
    results["segment"] = serde_json::json!({ "index": 1, "count": 3, "host": "loader-1" });
    let share = dir.join("segment-1-of-3.json");
    std::fs::write(&share, results.to_string()).expect("written");
    let share = share.display().to_string();
    let fixture = "tests/fixtures/render/relay-results.json";
    for args in [
        vec![
            "render",
            "examples/relay.toml",
            "--results",
            share.as_str(),
            "--out",
            "/dev/null",
        ],
        vec!["compare", fixture, share.as_str()],
        vec!["plan", "examples/relay.toml", "--results", share.as_str()],
    ] {
        let (code, _, said) = common::headroom(&args);
        assert_eq!(code, 1, "{args:?}: {said}");
        assert!(
            said.contains("holds share 1 of 3 of a segmented run (run on `loader-1`), not a whole run: join the shares with `headroom merge` first"),
            "{args:?}: {said}"
        );
    }
    clean("share");
}
