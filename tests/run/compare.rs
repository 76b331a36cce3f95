//! `compare` on real runs of the demo target: an A/A comparison calls nothing, a known
//! regression is worse and fails the gate. Results are read through their types; `compare
//! --format json` as the documented JSON it prints (`schemas/compare.schema.json`).

use super::*;
use headroom_compare::report::{FigureReport, Report, VerdictWord};
use headroom_compare::verdict::Basis;

/// `compare --format json`, checked against its schema and read as its type.
fn compare_report(stdout: &[u8]) -> Report {
    common::contract("compare.schema.json", &String::from_utf8_lossy(stdout))
}

/// Issue 16: an A/A comparison end to end. The same spec against the demo target, run twice
/// with three repeats a point, compared: the points match, the machines are alike, every
/// figure is there on both sides, and none is called better or worse (three repeats a side
/// cannot reach 5 %, and the comparison says how many can).
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn an_a_a_comparison_on_the_demo_target_calls_nothing() {
    let out = fresh_out("a-a");
    let (first, second) = (out.with_file_name("a.json"), out.with_file_name("b.json"));
    for file in [&first, &second] {
        let path = file.display().to_string();
        let output = headroom(
            &[
                "run",
                "tests/fixtures/run/a-a.toml",
                "--no-page",
                "--out",
                &path,
            ],
            &[],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let (a, b) = (first.display().to_string(), second.display().to_string());
    let output = headroom(&["compare", &a, &b, "--format", "json"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = compare_report(&output.stdout);
    assert!(report.machine_differences.is_empty(), "{report:?}");
    let names: Vec<&str> = report.figures.iter().map(|f| f.figure.as_str()).collect();
    for wanted in ["api.latency.p95", "api.rate", "api.failed", "rss", "cpu"] {
        assert!(names.contains(&wanted), "{wanted} in {names:?}");
    }
    for figure in &report.figures {
        let base = figure.base.as_ref().expect("the base's repeats");
        assert_eq!(base.repeats, 3, "{figure:?}");
        assert_eq!(figure.verdict, VerdictWord::CannotTell, "{figure:?}");
        let why = figure.why.as_deref().expect("why");
        assert!(why.contains("1 more a side would be enough"), "{why}");
    }
    assert!(leftovers("1076B").is_empty());
    clean("a-a");
}

/// The runs of `results` in the order they started are `repeats` rounds of `steps` runs.
fn assert_ran_in_rounds(results: &Path, repeats: u32, steps: usize) {
    let results = typed(&read_results(results));
    let mut starts: Vec<(u64, u32)> = typed_runs(&results)
        .iter()
        .map(|run| (run.started_ms, run.repeat))
        .collect();
    starts.sort_unstable();
    let rounds: Vec<u32> = starts.iter().map(|(_, repeat)| *repeat).collect();
    let expected: Vec<u32> = (1..=repeats)
        .flat_map(|repeat| vec![repeat; steps])
        .collect();
    assert_eq!(rounds, expected);
}

/// The figure `name` at each of the four steps: worse at `worse_at_least` of them, better at
/// none, its change within `range`, and where it is not called worse, said to be noisy; what
/// does not hold, said.
fn worse_at_steps(
    report: &Report,
    name: &str,
    range: std::ops::Range<f64>,
    worse_at_least: usize,
) -> Result<(), String> {
    let steps: Vec<&FigureReport> = report.figures.iter().filter(|f| f.figure == name).collect();
    assert_eq!(steps.len(), 4, "{name}: {steps:?}");
    let worse = steps
        .iter()
        .filter(|s| s.verdict == VerdictWord::Worse)
        .count();
    if worse < worse_at_least {
        return Err(format!("{name}: worse at {worse} of 4 steps: {steps:?}"));
    }
    for step in steps {
        assert_ne!(step.verdict, VerdictWord::Better, "{step:?}");
        let change = step.change.expect("a change");
        if !range.contains(&change) {
            return Err(format!("{name}: changed {change:.3}: {step:?}"));
        }
        let said_noisy = step.verdict == VerdictWord::WithinNoise && step.noisy;
        let lowest_cpu = name == "cpu" && step.point.ends_with("= 30/s");
        if !(step.verdict == VerdictWord::Worse || said_noisy || lowest_cpu) {
            return Err(format!("{name}: neither worse nor said noisy: {step:?}"));
        }
    }
    Ok(())
}

/// The runs of either side over whose hold other work or the hypervisor took a notable share
/// of the machine (`machine_cpu`), each said: "base users = 30/s run 1: the hypervisor took
/// 0.32 cores".
fn disturbed_runs(sides: [(&str, &Path); 2]) -> Vec<String> {
    let mut said = Vec::new();
    for (side, file) in sides {
        let results = typed(&read_results(file));
        for phase in &results.phases {
            for point in &phase.points {
                for run in &point.runs {
                    let Some(machine) = run.machine_cpu.filter(|m| m.competed()) else {
                        continue;
                    };
                    said.push(format!(
                        "{side} point {} run {}: {}",
                        point.index,
                        run.repeat,
                        machine.describe()
                    ));
                }
            }
        }
    }
    said
}

/// Both sides run, one after the other (4 ms, then 4.8 ms of CPU a request), into `out`'s
/// folder; their files.
fn regression_sides(out: &Path) -> (PathBuf, PathBuf) {
    let (before, after) = (
        out.with_file_name("4ms.json"),
        out.with_file_name("4.8ms.json"),
    );
    for (file, cpu) in [(&before, "4ms"), (&after, "4800us")] {
        let path = file.display().to_string();
        let output = headroom_whole(
            &[
                "run",
                "tests/fixtures/run/regression.toml",
                "--no-page",
                "--out",
                &path,
            ],
            &[("HEADROOM_TEST_REQUEST_CPU", cpu.to_owned())],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    // The repeats ran in rounds (interleaved, the default): every step once, then again.
    assert_ran_in_rounds(&before, 5, 4);
    (before, after)
}

/// Issue 16: a known regression is caught. The demo target's notes requests cost 4 ms of CPU,
/// then 4.8 ms (20 % more); a user sends one a second, in four steps of users, five repeats a
/// side. The latency, the CPU and the cost of a user-month on c7g.medium (priced by the CPU
/// per user) are worse beyond noise, and the spec's 10 % gates on the latency and the cost
/// (`[compare] fail_on`) exit 2.
///
/// The two sides run one after the other, not interleaved (two files), so a share of the
/// machine taken during one side only falls on that side: the hypervisor taking 0.2 to 0.3
/// cores over the base's first rounds (and none over the new side's) put the base's median
/// latency 10 % up at every step, within noise of the 20 % regression; 0.6 cores taken over
/// the new side's first rounds put its CPU down to the base's (the demo spends its CPU per
/// request by the clock). Where the CPU or the latency does not hold and the runs say the
/// machine was not the server's alone, both sides run again (twice at most), saying so; on a
/// machine that was the server's alone it fails at once.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn a_known_regression_is_worse_and_fails_the_gate() {
    let out = fresh_out("regression");
    let mut tries = 0;
    let (output, report) = loop {
        tries += 1;
        let (before, after) = regression_sides(&out);
        let (a, b) = (before.display().to_string(), after.display().to_string());
        // The gates are the spec's (`[compare] fail_on`): 10 % on the latency and on the cost.
        let output = headroom(&["compare", &a, &b, "--format", "json"], &[]);
        let report = compare_report(&output.stdout);
        // Every step of users: the CPU worse (by 11 to 20 % in the runs this was written
        // from: the demo's own work on a request, about 0.3 ms, and the idle process are not
        // scaled, and a step of 30 users is 0.14 cores read from 100 Hz ticks: 5 to 35 %),
        // the median latency worse (by 13 to 26 %; a request's wait for a busy worker adds
        // noise: 5 to 50 %). What must hold: the latency is worse at half the steps at least,
        // better at none, and a step it does not call worse is one it says is noisy (its
        // repeats spread over 10 %), or, for the CPU, the lowest step: 0.14 cores read over
        // 1.5 s from 100 Hz ticks rose 10 % on a fresh clone with the sides overlapping
        // (p 0.15), within noise on quiet repeats, and rightly so.
        let Err(why) = worse_at_steps(&report, "cpu", 0.05..0.35, 3)
            .and_then(|()| worse_at_steps(&report, "api.latency.p50", 0.05..0.50, 2))
        else {
            break (output, report);
        };
        let disturbed = disturbed_runs([("base", &before), ("new", &after)]);
        assert!(
            tries < 3 && !disturbed.is_empty(),
            "{why}; try {tries}; runs the machine was not the server's alone over: {disturbed:?}"
        );
        common::say(&format!(
            "regression, try {tries}: {why}; the machine was not the server's alone over {} \
             runs ({}): both sides run again",
            disturbed.len(),
            disturbed.join("; ")
        ));
    };
    let figures = |name: &str| -> Vec<&FigureReport> {
        let found: Vec<&FigureReport> =
            report.figures.iter().filter(|f| f.figure == name).collect();
        assert!(!found.is_empty(), "{name} in {report:?}");
        found
    };
    let change = |figure: &FigureReport| figure.change.expect("a change");
    // The cost of a user-month: CPU per user binds on c7g.medium (1 vCPU), so 20 % more CPU
    // is about 20 % more dollars a user (the ceiling is floored to whole users), and fewer users.
    let [cost] = &figures("plan.c7g.medium.usd_per_unit_month")[..] else {
        panic!("one cost figure: {report:?}")
    };
    assert_eq!(cost.verdict, VerdictWord::Worse, "{cost:?}");
    assert!((0.12..0.30).contains(&change(cost)), "{cost:?}");
    let [units] = &figures("plan.c7g.medium.units")[..] else {
        panic!("one units figure: {report:?}")
    };
    assert_eq!(units.verdict, VerdictWord::Worse, "{units:?}");
    // The CPU per user, fitted over every run of the sweep (20 points a side): 20 % steeper.
    let [slope] = &figures("fit.cpu.cores_per_unit")[..] else {
        panic!("one CPU slope: {report:?}")
    };
    assert_eq!(
        (slope.verdict, slope.basis),
        (VerdictWord::Worse, Basis::Fit),
        "{slope:?}"
    );
    assert!((0.12..0.30).contains(&change(slope)), "{slope:?}");
    assert_eq!(report.unit, "user");
    assert_eq!(output.status.code(), Some(2), "{report:?}");
    assert!(report.failed);
    let failed: Vec<&str> = report
        .gates
        .iter()
        .filter(|g| g.failed)
        .map(|g| g.figure.as_str())
        .collect();
    for figure in ["plan.c7g.medium.usd_per_unit_month", "api.latency.p50"] {
        assert!(failed.contains(&figure), "{figure} in {failed:?}");
    }
    assert!(leftovers("1004B").is_empty());
    clean("regression");
}

/// Issue 41: other work decides nothing. An A/A lever (a header the server ignores), four
/// repeats a side interleaved (enough to call a change at 5 %), with a busy loop of one core beside the second half of the runs
/// (kept as they are: `--competed-reruns 0`): `compare --by` calls nothing, and the rows that
/// rest on a competed run say which and why.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn an_a_a_lever_beside_a_busy_loop_half_the_time_calls_nothing() {
    let _machine = whole();
    let out = fresh_out("a-a-lever");
    let out_arg = out.display().to_string();
    let mut busy_loop = None;
    let (code, said) = super::competed::headroom_watched(
        &[
            "run",
            "tests/fixtures/run/a-a-lever.toml",
            "--no-page",
            "--competed-reruns",
            "0",
            "--out",
            &out_arg,
        ],
        |line| {
            if line.starts_with("[5/8]") {
                busy_loop = Some(super::competed::BusyLoop::start());
            }
        },
    );
    drop(busy_loop);
    assert_eq!(code, 0, "{said}");
    let results = typed(&read_results(&out));
    let competed = typed_runs(&results)
        .iter()
        .filter(|run| run.machine_cpu.is_some_and(|m| m.competed()))
        .count();
    common::say(&format!("A/A lever: {competed} of 8 runs competed"));
    assert!(competed >= 3, "{competed} runs competed");
    let output = headroom_unlocked(
        &["compare", &out_arg, "--by", "lever", "--format", "json"],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = compare_report(&output.stdout);
    let figures = &report.figures;
    assert!(!figures.is_empty());
    // Both values have competed runs: every verdict their figures could give is withheld,
    // naming the run (a figure one side lacks, or too few repeats, says that instead).
    let mut withheld = 0;
    for figure in figures {
        assert_eq!(figure.verdict, VerdictWord::CannotTell, "{figure:?}");
        let why = figure.why.as_deref().expect("why");
        if why.starts_with("not judged: run ") {
            assert!(why.contains("other processes used"), "{why}");
            withheld += 1;
        }
    }
    common::say(&format!(
        "A/A lever: {withheld} of {} verdicts withheld as competed",
        figures.len()
    ));
    assert!(withheld > 0, "{figures:?}");
    assert!(leftovers("1057B").is_empty());
    clean("a-a-lever");
}
