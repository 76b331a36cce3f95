//! The rooms examples end to end, `--quick`: chat and relay. Results are read through their
//! types.

use headroom_results::{PointResults, RunLimits};
use headroom_spec::VarValue;

use super::*;

/// A point's whole-number variable.
fn integer(point: &PointResults, name: &str) -> u64 {
    match point.at.get(name) {
        Some(VarValue::Integer(n)) => u64::try_from(*n).expect("a count"),
        other => panic!("{name}: {other:?}"),
    }
}

pub(super) fn chat_runs_quick_end_to_end() {
    // The half and the whole CPU hold the known answers; the two-CPU phase (the whole of this
    // machine's cores, none left to the generator) would double the test's time for none. Each
    // phase searches its people; here they are listed instead, at 100 and 1,600 people, where
    // the known answers are: a search's probes of thousands of sockets would take minutes of
    // the test's time for answers `tests/run/search.rs` checks on targets of known ceilings.
    let out = fresh_out("chat");
    let example = std::fs::read_to_string(root().join("examples/chat.toml")).expect("the example");
    // Half a CPU is loaded at 2,400 people, twice what it holds (1,600 take 0.65 of a core: a
    // margin too thin, which a fresh-clone CI run once saw pass at half a CPU).
    let search = r#"{ search = { from = 100, to = 12800, precision = "10%", max_time = "2h" } }"#;
    assert_eq!(
        example.matches(search).count(),
        3,
        "the chat's three searches"
    );
    let cut = example
        .replacen(search, "[100, 2400]", 1)
        .replace(search, "[100, 1600]");
    let spec = out.with_file_name("chat.toml");
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("the test's folder");
    std::fs::write(&spec, cut).expect("the example, its sweeps cut");
    let spec_arg = spec.display().to_string();
    let phases_run = ["--phase", "cpu-0.5", "--phase", "cpu-1"];
    let results = typed(&run_spec_quick(&spec_arg, &out, &phases_run));
    let phases = &results.phases;
    assert_eq!(phases.len(), 2);
    let limited = headroom_runner::cgroup::detect().is_ok();
    for phase in phases {
        let mut rss = Vec::new();
        for point in &phase.points {
            let people = integer(point, "people");
            let run = &point.runs[0];
            let rooms = rooms_in(run, "chat");
            if limited {
                // Issue 14: each phase ran in its CPU size, and the server kept to it.
                let Some(RunLimits::Applied(limits)) = &run.limits else {
                    panic!("limits applied: {:?}", run.limits);
                };
                let cpus = limits.cpus.expect("a CPU size");
                let cores = run.process.hold_cpu_cores.expect("the CPU over the hold");
                assert!(
                    cores <= cpus * 1.1 + 0.02,
                    "{cores} cores under cpus = {cpus}"
                );
            }
            rss.push(run.process.steady.expect("read").rss_bytes);
            // 100 people (and 1,600 with a CPU or more) over 10 channels: every socket opens
            // and every post reaches everyone in its channel. Past what the CPU size holds,
            // sockets may time out and posts fall behind: that is what the phase measures.
            let holds = people <= 100 || (people <= 1600 && phase.name != "cpu-0.5");
            if !holds {
                continue;
            }
            assert_eq!(rooms.sockets.opened, people, "{:?}", rooms.sockets);
            assert_eq!(rooms.sockets.failed.timeout, 0);
            let messages = &rooms.messages;
            assert_eq!(messages.delivered, messages.expected, "{messages:?}");
            if people == 1600 {
                assert!(messages.expected > 1000, "{messages:?}");
                assert!(rooms.reload.as_ref().is_some_and(|r| r.requests > 0));
            }
        }
        // The server holds more for more people online.
        assert!(rss.windows(2).all(|w| w[0] < w[1]), "{rss:?}");
    }
    if !limited {
        common::say("skipped the CPU sizes' ceilings: no writable cgroup, the phases ran alike");
        clean("chat");
        return;
    }
    // Issue 14: the CPU sizes give different ceilings. The demo server spends 250 µs a frame:
    // 1,600 people take about 0.65 of a core, less than one CPU; 2,400 about one, twice what
    // half a CPU holds.
    let seen_at =
        |phase: usize, point: usize| slo(&results.phases[phase].points[point].runs[0], "seen").pass;
    assert_eq!(seen_at(0, 0), Some(true), "cpu-0.5 holds 100 people");
    assert_eq!(seen_at(0, 1), Some(false), "cpu-0.5 does not hold 2,400");
    assert_eq!(seen_at(1, 1), Some(true), "cpu-1 holds 1,600");

    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    let row = |phase: &str, cpus: &str, good: &str, bad: &str| {
        let start = format!("| `{phase}` | {cpus} CPU, 4GiB memory, no swap (cgroup v");
        let end = format!(") | people = {good} | {bad} |");
        page.lines()
            .any(|l| l.starts_with(&start) && l.ends_with(&end))
    };
    assert!(row("cpu-0.5", "0.5", "100", "people = 2400"), "{page}");
    assert!(row("cpu-1", "1", "1600", "none: a lower bound"), "{page}");
    // Issue 43: the answer first; no text over data in any plot.
    common::assert_opens_with_the_answer(&page, "user");
    let folder = out.parent().expect("the results' folder");
    // The cut spec lists two steps a phase: no memory fit, a latency plot.
    assert!(common::plots::assert_plots_read_well(folder) >= 1);
    let plots = super::html_page_reads_well(&spec_arg, &out, None);
    assert!(plots.is_none_or(|plots| plots >= 1), "{plots:?}");
    clean("chat");
}

pub(super) fn relay_runs_quick_end_to_end() {
    let results = typed(&run_example_quick("relay", &[]));
    let phases = &results.phases;
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["memory", "edit-rate", "rooms"]);
    for phase in phases {
        for point in &phase.points {
            let rooms = rooms_in(&point.runs[0], "edits");
            assert_eq!(rooms.sockets.opened, rooms.sockets.planned);
            let messages = &rooms.messages;
            assert!(messages.sent > 0, "{messages:?}");
            assert_eq!(messages.delivered, messages.expected, "{messages:?}");
            // An edit reaches the reader after the relay's 2.2 s save window and a rebuild
            // pass; at high edit rates, later edits join a window already open.
            let seen_by_all = if phase.name == "edit-rate" {
                rooms.seen_by_all.max_ms
            } else {
                rooms.seen_by_all.min_ms
            };
            assert!(seen_by_all >= 2200.0, "{:?}", rooms.seen_by_all);
        }
    }
    // Memory per open room: 220 KiB of document each, held while the sockets are open.
    let memory: Vec<(u64, u64)> = phases[0]
        .points
        .iter()
        .map(|p| {
            let steady = p.runs[0].process.steady.expect("read");
            (integer(p, "rooms"), steady.rss_bytes)
        })
        .collect();
    let (first, last) = (memory[0], memory[memory.len() - 1]);
    let per_room = (last.1 - first.1) as f64 / (last.0 - first.0) as f64;
    assert!(
        per_room >= 220.0 * 1024.0,
        "{per_room} bytes per room: {memory:?}"
    );
    // More rooms, more rebuild work per pass: the delivery time grows with the room count.
    let delivery: Vec<f64> = phases[2]
        .points
        .iter()
        .map(|p| rooms_in(&p.runs[0], "edits").seen_by_all.max_ms)
        .collect();
    assert!(delivery.windows(2).all(|w| w[0] < w[1]), "{delivery:?}");
    clean("relay");
}

/// Issue 45: the Socket.IO chat finds its searched ceiling against the demo target (socketioxide)
/// and renders its page, beside the other tests: their load takes CPU from its target (a
/// fresh-clone CI run saw its acks miss the SLO at 160 rooms, where it holds 380 alone), so
/// the test claims a bracket, not where it lies. The search starts at 40 rooms (the example
/// at 10) and stops at 20 % (the example's 10 %), to keep its probes few.
pub(super) fn socketio_chat_searches_its_ceiling_quick_end_to_end() {
    let out = fresh_out("socketio-chat");
    let results = searched_quick_to_20_percent("socketio-chat", &out, 40);
    let phase = &results.phases[0];
    let (search, pass, fail) = bracket(phase);
    // One CPU sends for about 400 rooms at 250 µs a frame: the ceiling is below that.
    assert!((40..=480).contains(&pass), "{search:?}");
    assert!(fail > pass, "{search:?}");
    for point in &phase.points {
        let run = &point.runs[0];
        let rooms = rooms_in(run, "chat");
        let socket_io = rooms.socket_io.as_ref().expect("Socket.IO figures");
        assert_eq!(rooms.sockets.closed_by_server, 0, "{:?}", rooms.sockets);
        if slo(run, "ack").pass == Some(true) {
            assert_eq!(
                socket_io.acks_received, socket_io.acks_asked,
                "{socket_io:?}"
            );
            assert_eq!(rooms.messages.delivered, rooms.messages.expected);
        }
    }
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    common::assert_opens_with_the_answer(&page, "room");
    assert!(
        page.contains("`chat`: Socket.IO rooms (namespace `/`, 1 join event acknowledged, messages as `chat` events, acks asked)"),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "passes at rooms = {pass}, fails at rooms = {fail}"
        )),
        "{page}"
    );
    clean("socketio-chat");
}

/// Issue 45: the SSE feed finds its searched ceiling against the demo target (axum's SSE) and
/// renders its page, beside the other tests: the test claims a bracket, not where it lies.
/// The search starts at 10 rooms, as the example does (a fresh-clone CI run saw 40 fail, the
/// target starved by a neighbour's 1.9 cores), and stops at 20 % (the example's 10 %).
pub(super) fn sse_feed_searches_its_ceiling_quick_end_to_end() {
    let out = fresh_out("sse-feed");
    let results = searched_quick_to_20_percent("sse-feed", &out, 10);
    let phase = &results.phases[0];
    let (search, pass, fail) = bracket(phase);
    // One CPU writes for about 100 rooms at 250 µs an event: the ceiling is below that.
    assert!((10..=120).contains(&pass), "{search:?}");
    assert!(fail > pass, "{search:?}");
    for point in &phase.points {
        let run = &point.runs[0];
        let rooms = rooms_in(run, "feed");
        let sse = rooms.sse.as_ref().expect("SSE figures");
        // Past the ceiling a publish may time out, or still wait for its answer at the close.
        let answered = sse.published + sse.publish_errors.total();
        assert!(answered <= rooms.messages.sent, "{sse:?}");
        if slo(run, "seen").pass == Some(true) {
            assert_eq!(sse.published, rooms.messages.sent, "{sse:?}");
            assert_eq!(rooms.messages.delivered, rooms.messages.expected);
        }
    }
    let page = std::fs::read_to_string(out.with_file_name("capacity.md")).expect("page");
    common::assert_opens_with_the_answer(&page, "room");
    assert!(
        page.contains("`feed`: Server-Sent Events rooms (each peer a stream, messages POSTed to `/sse/match-{room}`, dropped streams reopened with `Last-Event-ID`)"),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "passes at rooms = {pass}, fails at rooms = {fail}"
        )),
        "{page}"
    );
    clean("sse-feed");
}

/// `examples/NAME.toml`, its search from `from` rooms (the example's from 10) to 20 % (its
/// 10 %), run `--quick` into `out`: fewer probes, the same bracket's claims.
fn searched_quick_to_20_percent(
    name: &str,
    out: &std::path::Path,
    from: u32,
) -> headroom_results::Results {
    let example =
        std::fs::read_to_string(root().join(format!("examples/{name}.toml"))).expect("the example");
    let written = "search = { from = 10,";
    assert_eq!(example.matches(written).count(), 1, "the example's search");
    let spec = out.with_file_name(format!("{name}.toml"));
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("the test's folder");
    let cut = example
        .replace(written, &format!("search = {{ from = {from},"))
        .replace(r#"precision = "10%""#, r#"precision = "20%""#);
    std::fs::write(&spec, cut).expect("the spec");
    let spec_arg = spec.display().to_string();
    typed(&run_spec_quick(&spec_arg, out, &[]))
}

/// A searched phase's record and both ends of its bracket.
fn bracket(phase: &headroom_results::PhaseResults) -> (&headroom_results::SearchRecord, i64, i64) {
    let search = phase.search.as_ref().expect("the phase's search record");
    let (Some(VarValue::Integer(pass)), Some(VarValue::Integer(fail))) =
        (&search.pass, &search.fail)
    else {
        panic!("a bracket with both ends: {search:?}");
    };
    (search, *pass, *fail)
}
