//! Segments (`--segment`, `--barrier`): one that dies, and three that merge into the single
//! process's run exactly. Results are read through their types.

use headroom_results::{Failure, HistogramKey, Results};

use super::*;

/// Issue 18, item 2: a segment killed during its load never reaches the meeting after it;
/// the other segments fail that run naming it (`barrier`, segment 2), stop instead of waiting
/// at every later run, and exit; nothing of the run is left.
#[test]
fn a_segment_that_dies_fails_the_run_with_its_index() {
    let _machine = shared();
    let (mut server, port) = start_demo_target("1039B");
    let dir = fresh_out("segment-dies");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let barrier = format!("127.0.0.1:{}", free_port());
    let start = |i: u64| {
        Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args(["run", "tests/fixtures/run/segments.toml"])
            .args(["--segment", &format!("{i}/3"), "--barrier", &barrier])
            .args(["--barrier-timeout", "3s", "--out"])
            .arg(dir.join(format!("part-{i}.json")))
            .env("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())
            .env("HEADROOM_TEST_STEPS", dir.join("steps.txt"))
            .current_dir(root())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a segment")
    };
    let survivors = [start(0), start(1)];
    let mut doomed = start(2);
    // The load starts half a second after all three met; two seconds in, it is under way.
    std::thread::sleep(Duration::from_secs(2));
    let _ = doomed.kill();
    let _ = doomed.wait();
    let started = std::time::Instant::now();
    for (i, survivor) in survivors.into_iter().enumerate() {
        let output = survivor.wait_with_output().expect("a segment ran");
        assert_eq!(
            output.status.code(),
            Some(3),
            "segment {i}: {}",
            stderr(&output)
        );
        segment_2_never_came(i, &dir.join(format!("part-{i}.json")));
    }
    // Within the meeting's timeout, with room for the load and the exit.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(leftovers("1039B").is_empty());
    clean("segment-dies");
}

/// Issue 42: a signal ends a wait at the barrier at once, with 130, as it ends a run: a lone
/// segment 0 waits for two that never come, and one SIGTERM stops it well before its
/// `--barrier-timeout` of a minute.
#[test]
fn a_signal_ends_the_wait_at_the_barrier() {
    let _machine = shared();
    let (mut server, port) = start_demo_target("1058B");
    let dir = fresh_out("segment-waits");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let barrier = format!("127.0.0.1:{}", free_port());
    let mut waiting = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", "tests/fixtures/run/segments.toml"])
        .args(["--segment", "0/3", "--barrier", &barrier])
        .args(["--barrier-timeout", "60s", "--out"])
        .arg(dir.join("part-0.json"))
        .env("HEADROOM_TEST_EXTERNAL_PORT", port.to_string())
        .env("HEADROOM_TEST_STEPS", dir.join("steps.txt"))
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("a segment");
    // Two seconds in, its steps have run and it waits at the first run's start.
    std::thread::sleep(Duration::from_secs(2));
    let signalled = std::time::Instant::now();
    let _ = Command::new("kill")
        .args(["-TERM", &waiting.id().to_string()])
        .status();
    let ended = headroom_test_support::harness::wait_until(Duration::from_secs(20), || {
        waiting.try_wait().ok().flatten().is_some()
    });
    if !ended {
        let _ = waiting.kill();
    }
    let output = waiting.wait_with_output().expect("the segment ended");
    assert!(ended, "still waiting: {}", stderr(&output));
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "{:?} after the signal",
        signalled.elapsed()
    );
    assert!(
        stderr(&output).contains("interrupted (SIGTERM)"),
        "{}",
        stderr(&output)
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(leftovers("1058B").is_empty());
    clean("segment-waits");
}

/// Segment `i`'s part at `path`: its run failed at the barrier, naming segment 2/3, which never
/// came (segment 0, which serves the barrier, knows it by index).
pub(super) fn segment_2_never_came(i: usize, path: &Path) {
    let results = typed(&read_results(path));
    let run = typed_runs(&results)[0];
    let Some(Failure::Barrier { segments, message }) = &run.failure else {
        panic!("segment {i}: a barrier failure: {:?}", run.failure);
    };
    if i == 0 {
        assert_eq!(segments, &[2], "{message}");
    }
    assert!(
        message.contains("segment 2/3 never reached the barrier"),
        "{message}"
    );
}

/// `headroom merge` of `parts` but the last (segment 2/3): refused, naming it.
pub(super) fn the_merge_without_segment_2_is_refused(parts: &[String]) {
    let missing = headroom_unlocked(&["merge", &parts[0], &parts[1]], &[]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("segment 2/3 is missing: give all 3 segments"),
        "{}",
        stderr(&missing)
    );
}

/// Issue 18: one demo target loaded by one process, then by three segment processes at once.
/// Merged, the shares are the whole run's load exactly: the open model's fixed arrivals over a
/// ramp and a hold to the request, the virtual users one each (3 + 2 + 2), the rooms whole
/// (2 + 2 + 1), every frame delivered. A share judges no SLO; the merge judges them on the
/// merged figures (90 requests a second pass `>= 80/s`, which no share's 30 would). Two of the
/// three parts are refused, naming the missing one. The setup and teardown steps run once, on
/// segment 0; without a barrier to wait for them, segments are refused.
#[test]
fn three_segments_merge_into_the_single_process_run() {
    let _machine = shared();
    let (mut server, port) = start_demo_target("1038B");
    let env = ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string());
    let dir = fresh_out("segments");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let spec = "tests/fixtures/run/segments.toml";
    let steps_file = dir.join("steps.txt");
    let steps = ("HEADROOM_TEST_STEPS", steps_file.display().to_string());
    let steps_run = || std::fs::read_to_string(&steps_file).unwrap_or_default();
    let whole_path = dir.join("whole.json");
    let whole_arg = whole_path.display().to_string();
    let whole = headroom_unlocked(
        &["run", spec, "--out", &whole_arg, "--no-page"],
        &[env.clone(), steps.clone()],
    );
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert_eq!(steps_run(), "sign-up\nseed\nclean-up\n");
    // Segments run steps with a barrier only: segment 0 runs them, the others wait for it.
    let refused = headroom_unlocked(
        &["run", spec, "--segment", "1/3", "--out", &whole_arg],
        &[env.clone(), steps.clone()],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("give every segment `--barrier HOST:PORT`"),
        "{}",
        stderr(&refused)
    );
    let barrier = format!("127.0.0.1:{}", free_port());
    run_three_segments(spec, &barrier, dir, &[&env, &steps]);
    let _ = server.kill();
    let _ = server.wait();
    // Once more, by segment 0 alone: the others' runs say so.
    assert_eq!(steps_run(), "sign-up\nseed\nclean-up\n".repeat(2));
    let parts: Vec<String> = (0..3)
        .map(|i| dir.join(format!("part-{i}.json")).display().to_string())
        .collect();
    let shares: Vec<Results> = parts
        .iter()
        .map(|p| typed(&read_results(Path::new(p))))
        .collect();
    shares_start_together_each_with_its_own(&shares);

    let merged = merge_keeping_what_was_there(dir, &parts);
    assert!(merged.segment.is_none());
    let whole = typed(&read_results(&whole_path));
    the_merge_is_the_whole_run(&whole, &merged, &shares);

    the_merge_without_segment_2_is_refused(&parts);
    assert!(leftovers("1038B").is_empty());
    clean("segments");
}

/// The three segments of `spec`, started together and meeting at `barrier`, each writing
/// `part-{i}.json` in `dir`; each succeeds.
fn run_three_segments(spec: &str, barrier: &str, dir: &Path, env: &[&(&str, String)]) {
    let segments: Vec<std::process::Child> = (0..3)
        .map(|i| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_headroom"));
            command
                .args(["run", spec, "--segment", &format!("{i}/3")])
                .args(["--barrier", barrier, "--out"])
                .arg(dir.join(format!("part-{i}.json")));
            for (name, value) in env {
                command.env(name, value);
            }
            command
                .current_dir(root())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("a segment")
        })
        .collect();
    for segment in segments {
        let output = segment.wait_with_output().expect("a segment ran");
        assert!(output.status.success(), "{}", stderr(&output));
    }
}

/// `headroom merge` of `parts` into `merged.json` in `dir`, where results of another bench
/// already are: they are kept, as `run --out` keeps them (a merge replaced them silently).
fn merge_keeping_what_was_there(dir: &Path, parts: &[String]) -> Results {
    let merged_path = dir.join("merged.json");
    let merged_arg = merged_path.display().to_string();
    let other = common::fixtures::RELAY_RESULTS;
    std::fs::write(&merged_path, other).expect("written");
    let mut args = vec!["merge", "--out", merged_arg.as_str()];
    args.extend(parts.iter().map(String::as_str));
    let merge = headroom_unlocked(&args, &[]);
    assert!(merge.status.success(), "{}", stderr(&merge));
    assert!(
        stderr(&merge).contains(&format!(
            "note: the results that were at {merged_arg} are kept as {merged_arg}.prev"
        )),
        "{}",
        stderr(&merge)
    );
    let kept = std::fs::read_to_string(dir.join("merged.json.prev")).expect("the earlier file");
    assert_eq!(kept, other, "the earlier file is kept whole");
    typed(&read_results(&merged_path))
}

/// Every share of the segmented run: its index, one seed, no SLO judged, steps on segment 0
/// only, one load start, and its own virtual users and whole rooms, their holds together.
pub(super) fn shares_start_together_each_with_its_own(shares: &[Results]) {
    let first = |share| typed_runs(share)[0];
    for (i, share) in shares.iter().enumerate() {
        let segment = share.segment.as_ref().expect("a share");
        assert_eq!((segment.index, segment.count), (i as u64, 3), "{segment:?}");
        assert_eq!(share.seed, shares[0].seed, "one seed for every share");
        assert!(first(share).slo.is_empty(), "a share judges no SLO");
        let notes = &first(share).notes;
        assert_eq!(
            i > 0,
            notes
                .iter()
                .any(|n| n.contains("steps run on segment 0 only")),
            "{notes:?}"
        );
    }
    // One start for every share, announced by segment 0's barrier.
    let starts: Vec<Option<u64>> = shares.iter().map(|s| first(s).load_start_ms).collect();
    assert!(starts[0].is_some(), "{starts:?}");
    assert!(starts.iter().all(|&s| s == starts[0]), "{starts:?}");
    let users: Vec<u64> = shares
        .iter()
        .map(|s| {
            let users = scenario(first(s), "users");
            users.connections.as_ref().map_or(0, |c| c.opened)
        })
        .collect();
    assert_eq!(users, [3, 2, 2], "seven virtual users, each in one share");
    let rooms: Vec<u64> = shares
        .iter()
        .map(|s| rooms_in(first(s), "chat").rooms)
        .collect();
    assert_eq!(rooms, [2, 2, 1], "five rooms, each whole in one share");
    // The rooms' holds start together too: the segments met once their sockets were open.
    let holds: Vec<f64> = shares
        .iter()
        .map(|s| rooms_in(first(s), "chat").hold_started_s)
        .collect();
    assert!(
        holds.iter().all(|h| (h - holds[0]).abs() < 0.05),
        "{holds:?}"
    );
}

/// An HTTP scenario's requests intended outside the run's hold.
pub(super) fn outside(api: &headroom_results::ScenarioResult) -> u64 {
    api.outside_hold.as_ref().map_or(0, |r| r.requests)
}

/// The merge of the shares is the single-process run's load exactly, its histograms the
/// shares' added, its SLOs judged on the merged figures.
pub(super) fn the_merge_is_the_whole_run(whole: &Results, merged: &Results, shares: &[Results]) {
    let (one, all) = (typed_runs(whole)[0], typed_runs(merged)[0]);
    let (one_api, all_api) = (scenario(one, "api"), scenario(all, "api"));
    // 180 arrivals over the 2 s hold at 90/s: exactly. Before it, the 45 of the 1 s ramp from
    // 0 to 90/s, and those of the moment between the ramp's end and the run's hold (which
    // starts once the rooms' sockets are open, and the segments met): a moment at most.
    assert_eq!((one_api.requests, all_api.requests), (180, 180));
    for api in [one_api, all_api] {
        let before = outside(api);
        assert!((45..=45 + 90).contains(&before), "{before}");
    }
    // The merge's are the shares' added, exactly.
    let shared: u64 = shares
        .iter()
        .map(|share| outside(scenario(typed_runs(share)[0], "api")))
        .sum();
    assert_eq!(outside(all_api), shared);
    assert_eq!(all_api.latency.count, 180, "the shares' histograms added");
    // Its percentiles are those of every share's samples together, to the histogram's
    // precision: the three parts' histograms, read from their files and added here.
    let mut together = headroom_results::histogram::new();
    for share in shares {
        let part = scenario(typed_runs(share)[0], "api")
            .histogram(HistogramKey::Latency)
            .expect("a latency histogram");
        together.add(&part).expect("same shape");
    }
    let latency = &all_api.latency;
    for (q, merged) in [
        (0.5, latency.p50_ms),
        (0.95, latency.p95_ms),
        (0.99, latency.p99_ms),
    ] {
        let expected = together.value_at_quantile(q) as f64 / 1000.0;
        assert!(
            (merged - expected).abs() <= expected * 0.001 + 0.001,
            "{q}: {merged} vs {expected}"
        );
    }
    let users = scenario(all, "users")
        .connections
        .as_ref()
        .map(|c| c.opened);
    assert_eq!(users, Some(7));
    let (one_chat, all_chat) = (rooms_in(one, "chat"), rooms_in(all, "chat"));
    assert_eq!(all_chat.sockets.opened, 20);
    assert_eq!(all_chat.messages.sent, one_chat.messages.sent);
    assert_eq!(all_chat.messages.delivered, all_chat.messages.expected);
    let throughput = slo(all, "throughput");
    assert_eq!(throughput.pass, Some(true), "{throughput:?}");
    let rate = all_api.rate;
    assert!((rate - 90.0).abs() < 0.5, "{rate}");
    assert_eq!(all.generator.segments.len(), 3);
}
