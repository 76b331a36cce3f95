//! `headroom run`: compile, run the matrix, show progress and a table per phase, and say in the
//! exit code how it went.

use std::io::{IsTerminal, Write};

use std::path::{Path, PathBuf};

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_runner::results::{RoomsResult, RunResult, ScenarioResult};
use headroom_runner::{Event, RunError, RunOptions};

use crate::exit;

/// The flags of `headroom run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The spec to run.
    spec: PathBuf,
    /// Run only this phase (repeatable); the results file keeps the other phases.
    #[arg(long = "phase", value_name = "NAME")]
    phases: Vec<String>,
    /// The results file [default: results/<bench>/results.json]. An earlier file there is
    /// kept as OUT.prev; a file that is not a results file is refused (see --force).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace a file at --out that is not a headroom results file (it is kept as OUT.prev).
    #[arg(long)]
    force: bool,
    /// Runs of every point, instead of the spec's `repeats`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: Option<u32>,
    /// Scale durations, steps and repeats down, for CI and a first look (the results say so).
    #[arg(long)]
    quick: bool,
    /// Exit with 2 when an SLO failed, or could not be measured, at some point.
    #[arg(long)]
    check: bool,
    /// Do not render the capacity page (capacity.md beside the results) at the end.
    #[arg(long)]
    no_page: bool,
    /// Run even when the matrix is estimated to take over a day.
    #[arg(long)]
    yes: bool,
}

/// A run estimated longer than this needs `--yes`: it is more likely a typo than a plan.
const LONGEST_WITHOUT_YES: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

pub fn run(args: RunArgs, renderer: &Renderer) -> Result<u8> {
    let Some(compiled) = crate::compile_for_use(&args.spec, Some(renderer))? else {
        return Ok(exit::USAGE);
    };
    let Some(plan) = &compiled.compilation.plan else {
        return Ok(exit::USAGE);
    };
    refuse_over_a_day(&args, plan)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| crate::default_results(&plan.bench.name));
    let spec_hash = headroom_runner::results::spec_hash(&compiled.source);
    // Checked before anything runs: what --out is, the earlier file kept, the lock taken.
    let held = crate::out::hold(
        &out,
        &crate::out::Run {
            spec: &args.spec,
            bench: &plan.bench.name,
            spec_hash: &spec_hash,
            merging: !args.phases.is_empty(),
            force: args.force,
        },
    )?;
    if let Some(previous) = &held.previous {
        eprintln!(
            "note: the earlier {} is kept as {}",
            out.display(),
            previous.display()
        );
    }
    let spec_dir = args
        .spec
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let options = RunOptions {
        spec_path: compiled.path.clone(),
        spec_hash,
        spec_dir: spec_dir
            .canonicalize()
            .unwrap_or_else(|_| spec_dir.to_path_buf()),
        out: out.clone(),
        phases: args.phases.clone(),
        repeats: args.repeat,
        quick: args.quick,
        headroom: std::env::current_exe().context("cannot find the headroom binary itself")?,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let outcome = runtime.block_on(async {
        let (cancel, cancelled) = tokio::sync::watch::channel(false);
        tokio::spawn(stop_on_signals(
            cancel,
            held.lock().to_path_buf(),
            out.display().to_string(),
        ));
        let mut progress = Progress::new();
        headroom_runner::run(plan, &options, cancelled, &mut |event| progress.show(event)).await
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(RunError::Results(error)) => {
            eprintln!("error: {error}");
            return Ok(exit::WRITE_FAILED);
        }
        Err(error) => {
            // The spec is the file the point, phase or host named here comes from.
            eprintln!("error: {}: {error}", args.spec.display());
            return Ok(exit::USAGE);
        }
    };
    let mut stdout = std::io::stdout().lock();
    write_tables(&mut stdout, &outcome.results, &out)?;
    // The page, from the results just written: the one command from spec to page.
    let mut page_failed = false;
    if !args.no_page && !outcome.interrupted {
        let source = crate::page::Source {
            spec: &args.spec,
            compiled: &compiled,
            results: &outcome.results,
            results_path: &out,
        };
        match crate::page::render(&source, None, None, crate::page::PageFormat::Md) {
            Ok(Ok(rendered)) => rendered.report(&mut stdout)?,
            Ok(Err(_)) => page_failed = true,
            Err(error) => {
                eprintln!("error: the capacity page was not written: {error:#}");
                page_failed = true;
            }
        }
    }
    Ok(exit_code(&outcome, args.check, page_failed))
}

/// The exit code of a run: interrupted, a run failed, an SLO failed or went unmeasured under
/// `--check`, the page not written, or 0; said on stderr.
fn exit_code(outcome: &headroom_runner::Outcome, check: bool, page_failed: bool) -> u8 {
    if outcome.interrupted {
        exit::INTERRUPTED
    } else if outcome.failed_runs > 0 {
        eprintln!(
            "error: {} of the runs failed; the results file names each failure",
            outcome.failed_runs
        );
        exit::RUN_FAILED
    } else if check && (outcome.slo_failures > 0 || outcome.slo_unmeasured > 0) {
        // An SLO that measured nothing did not pass: --check does not call it green.
        eprintln!(
            "error: {} SLO verdicts failed and {} were not measured",
            outcome.slo_failures, outcome.slo_unmeasured
        );
        exit::SLO_FAILED
    } else if page_failed {
        exit::WRITE_FAILED
    } else {
        exit::OK
    }
}

/// A table per phase, where the results went, and whether they are `--quick` figures.
fn write_tables(
    stdout: &mut impl Write,
    results: &headroom_runner::results::Results,
    out: &Path,
) -> Result<()> {
    for phase in &results.phases {
        writeln!(stdout, "\n{}", phase_table(phase))?;
        let unlimited = phase.points.iter().flat_map(|p| p.runs.iter()).any(|r| {
            r.notes
                .iter()
                .any(|n| n == headroom_runner::LIMITS_NOT_APPLIED)
        });
        if unlimited {
            writeln!(stdout, "note: {}.", headroom_runner::LIMITS_NOT_APPLIED)?;
        }
    }
    writeln!(stdout, "\nresults: {}", out.display())?;
    if results.quick {
        writeln!(
            stdout,
            "(--quick: durations, steps and repeats scaled down; not figures to plan with)"
        )?;
    }
    Ok(())
}

/// A run estimated over a day needs `--yes`: it is more likely a typo than a plan.
fn refuse_over_a_day(args: &RunArgs, plan: &headroom_compiler::ResolvedPlan) -> Result<()> {
    // The estimate of what will run: the phases asked for, with --repeat (--quick is short).
    let estimated: f64 = plan
        .phases
        .iter()
        .filter(|p| args.phases.is_empty() || args.phases.contains(&p.name))
        .map(|p| {
            p.estimated.as_secs_f64() / f64::from(p.repeats.max(1))
                * f64::from(args.repeat.unwrap_or(p.repeats))
        })
        .sum();
    if !args.quick && !args.yes && estimated > LONGEST_WITHOUT_YES.as_secs_f64() {
        anyhow::bail!(
            "{} is estimated to run for {}, over a day: add --yes to run it, or --quick for a first look",
            args.spec.display(),
            crate::human_duration(headroom_spec::Duration::from_micros(
                (estimated * 1e6) as u64
            ))
        );
    }
    Ok(())
}

/// Ctrl-C, and what `timeout`, CI runners and systemd send (TERM, HUP), end the run the same
/// way: the run in flight stops, the results so far are written. A second signal exits now.
async fn stop_on_signals(
    cancel: tokio::sync::watch::Sender<bool>,
    lock: std::path::PathBuf,
    out_shown: String,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut hangup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    let name = tokio::select! {
        Ok(()) = tokio::signal::ctrl_c() => "Ctrl-C",
        Some(()) = terminate.recv() => "SIGTERM",
        Some(()) = hangup.recv() => "SIGHUP",
    };
    eprintln!("\ninterrupted ({name}): stopping the run in flight and writing the results");
    let _ = cancel.send(true);
    // A second signal stops waiting (for readiness, for a stop's grace): headroom
    // exits now; the kernel and the guard kill the target's group, and the runs that
    // finished are already in the results file.
    let again = tokio::select! {
        Ok(()) = tokio::signal::ctrl_c() => "Ctrl-C",
        Some(()) = terminate.recv() => "SIGTERM",
        Some(()) = hangup.recv() => "SIGHUP",
    };
    eprintln!(
        "interrupted again ({again}): not waiting; the target is killed, and the runs that finished are in {out_shown}"
    );
    let _ = std::fs::remove_file(&lock);
    std::process::exit(i32::from(exit::INTERRUPTED));
}

/// A bar over the matrix on a terminal (current run, elapsed, ETA, live p95 and errors); plain
/// lines, one per run, otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    current: String,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            bar: None,
            current: String::new(),
        }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn show(&mut self, event: Event<'_>) {
        match event {
            Event::Started { runs, estimated_s } => {
                self.line(&format!(
                    "running {runs} runs, about {} of load, settle and cool-down (start-up not included)",
                    crate::human_duration(headroom_spec::Duration::from_micros((estimated_s * 1e6) as u64))
                ));
                if std::io::stderr().is_terminal() {
                    let bar = indicatif::ProgressBar::new(runs as u64);
                    let style = indicatif::ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} runs  {elapsed_precise} elapsed, ETA {eta}  {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                    bar.set_style(style);
                    self.bar = Some(bar);
                }
            }
            Event::RunStarted {
                phase,
                point,
                repeat,
                number,
                runs,
            } => {
                self.current = format!(
                    "{phase} point {} ({}) repeat {repeat}",
                    point.index + 1,
                    variables(&point.at)
                );
                self.line(&format!("[{number}/{runs}] {}", self.current));
            }
            Event::Progress {
                elapsed_s,
                requests,
                errors,
                p95_ms,
            } => {
                if let Some(bar) = &self.bar {
                    let p95 = p95_ms.map_or_else(|| "-".to_owned(), ms);
                    bar.set_message(format!(
                        "{}: {elapsed_s:.0}s, {requests} sent, p95 {p95}, {errors} errors",
                        self.current
                    ));
                }
            }
            Event::RunFinished { result, .. } => {
                self.line(&format!("  {}", one_line(result)));
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A point's swept variables as people read them: `rooms = 16, rate = 4/s`.
pub(crate) fn variables(
    at: &std::collections::BTreeMap<String, headroom_spec::VarValue>,
) -> String {
    if at.is_empty() {
        return "(one point)".to_owned();
    }
    at.iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn one_line(result: &RunResult) -> String {
    if let Some(failure) = &result.failure {
        return format!("failed: {}", failure.describe());
    }
    let mut parts = Vec::new();
    let http: Vec<_> = measured(result).filter(|s| s.rooms.is_none()).collect();
    if !http.is_empty() {
        let requests: u64 = http.iter().map(|s| s.requests).sum();
        let errors: u64 = http.iter().map(|s| s.errors.total()).sum();
        // Starts skipped at `max_in_flight` are said too: the table counts them with errors.
        let dropped: u64 = http.iter().map(|s| s.dropped).sum();
        let mut text = format!(
            "{} requests, {} errors",
            thousands(requests),
            thousands(errors)
        );
        if dropped > 0 {
            text.push_str(&format!(", {} starts dropped", thousands(dropped)));
        }
        parts.push(text);
    }
    for rooms in measured(result).filter_map(|s| s.rooms.as_ref()) {
        let (sockets, messages) = (&rooms.sockets, &rooms.messages);
        let mut text = format!(
            "{} of {} sockets open",
            thousands(sockets.opened),
            thousands(sockets.planned)
        );
        if messages.sent > 0 {
            text.push_str(&format!(
                ", {} messages, {} of {} frames delivered",
                thousands(messages.sent),
                thousands(messages.delivered),
                thousands(messages.expected)
            ));
        }
        parts.push(text);
    }
    let rss = result
        .process
        .steady
        .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes));
    let failed = result.slo.iter().filter(|v| v.pass == Some(false)).count();
    parts.push(format!("RSS {rss}, {failed} SLO failed"));
    let mut line = format!("ok: {}", parts.join("; "));
    if result.generator.bound {
        line.push_str(" (generator-bound)");
    }
    line
}

/// The scenarios that ran (not skipped).
fn measured(result: &RunResult) -> impl Iterator<Item = &ScenarioResult> {
    result.scenarios.values().filter(|s| s.skipped.is_none())
}

/// `4393` → `4,393`, as the pages write counts.
fn thousands(n: u64) -> String {
    headroom_templates::format::count(n as f64)
}

fn mib(bytes: u64) -> String {
    headroom_templates::format::mib(bytes as f64, None)
}

fn ms(value: f64) -> String {
    headroom_templates::format::duration_ms(value)
}

/// A row per run: what people look at first. HTTP columns when the phase has HTTP scenarios,
/// socket and delivery columns when it has rooms.
fn phase_table(phase: &headroom_runner::results::PhaseResults) -> String {
    let runs = || phase.points.iter().flat_map(|p| p.runs.iter());
    let has_http = runs().any(|r| measured(r).any(|s| s.rooms.is_none()));
    let has_rooms = runs().any(|r| measured(r).any(|s| s.rooms.is_some()));
    let mut header = vec!["point", "variables", "run"];
    if has_http || !has_rooms {
        header.extend(["requests", "req/s", "p50", "p95", "p99", "errors"]);
    }
    if has_rooms {
        header.extend(["sockets", "delivered", "seen p95", "seen by all p95"]);
    }
    header.extend(["RSS", "SLO"]);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(header);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    for point in &phase.points {
        for run in &point.runs {
            let mut row = vec![
                right((point.index + 1).to_string()),
                Cell::new(variables(&point.at)),
                right(run.repeat.to_string()),
            ];
            if has_http || !has_rooms {
                row.extend(http_cells(run).map(right));
            }
            if has_rooms {
                row.extend(rooms_cells(run).map(right));
            }
            row.push(right(
                run.process
                    .steady
                    .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes)),
            ));
            row.push(Cell::new(slo_cell(run)));
            table.add_row(row);
        }
    }
    format!("{}\n{table}", phase.name)
}

/// The HTTP columns of a run: requests, req/s, p50, p95, p99 (the worst scenario's), errors.
fn http_cells(run: &RunResult) -> [String; 6] {
    let http: Vec<_> = measured(run).filter(|s| s.rooms.is_none()).collect();
    let requests: u64 = http.iter().map(|s| s.requests).sum();
    let rate: f64 = http.iter().map(|s| s.rate).sum();
    // Only scenarios that completed a request have a latency: none is "-", not 0 ms.
    let worst = |f: fn(&headroom_runner::results::Summary) -> f64| {
        http.iter()
            .filter(|s| s.latency.count > 0)
            .map(|s| f(&s.latency))
            .reduce(f64::max)
            .map_or_else(|| "-".to_owned(), ms)
    };
    let errors: u64 = http.iter().map(|s| s.errors.total() + s.dropped).sum();
    [
        thousands(requests),
        // No request: no rate (not "0.0", nor the "-0.0" an empty sum can give).
        if requests == 0 {
            "-".to_owned()
        } else {
            format!("{rate:.1}")
        },
        worst(|s| s.p50_ms),
        worst(|s| s.p95_ms),
        worst(|s| s.p99_ms),
        thousands(errors),
    ]
}

/// The rooms columns of a run: sockets opened, messages delivered, seen p95, seen by all p95.
fn rooms_cells(run: &RunResult) -> [String; 4] {
    let rooms: Vec<_> = measured(run).filter(|s| s.rooms.is_some()).collect();
    let sum = |f: fn(&RoomsResult) -> u64| -> u64 {
        rooms.iter().filter_map(|s| s.rooms.as_ref()).map(f).sum()
    };
    let seen = rooms
        .iter()
        .filter_map(|s| s.rooms.as_ref())
        .filter(|r| r.seen.count > 0)
        .map(|r| r.seen.p95_ms)
        .reduce(f64::max);
    let all = rooms
        .iter()
        .filter_map(|s| Some((s, s.rooms.as_ref()?)))
        .filter(|(_, r)| r.messages.reached_all + r.messages.incomplete > 0)
        .map(|(s, r)| {
            let histogram = s
                .histograms
                .get("seen_by_all")
                .and_then(|h| headroom_runner::results::deserialize_histogram(h));
            histogram
                .and_then(|h| r.seen_by_all_quantile(&h, 0.95))
                .map_or(f64::INFINITY, |s| s * 1000.0)
        })
        .reduce(f64::max);
    let expected = sum(|r| r.messages.expected);
    [
        format!(
            "{} of {}",
            thousands(sum(|r| r.sockets.opened)),
            thousands(sum(|r| r.sockets.planned))
        ),
        if expected == 0 {
            "-".to_owned()
        } else {
            format!(
                "{} of {}",
                thousands(sum(|r| r.messages.delivered)),
                thousands(expected)
            )
        },
        seen.map_or_else(|| "-".to_owned(), ms),
        all.map_or_else(
            || "-".to_owned(),
            |v| {
                if v.is_infinite() {
                    "never".to_owned()
                } else {
                    ms(v)
                }
            },
        ),
    ]
}

fn slo_cell(run: &RunResult) -> String {
    if let Some(failure) = &run.failure {
        return format!("run failed: {}", failure.describe());
    }
    let failed: Vec<&str> = run
        .slo
        .iter()
        .filter(|v| v.pass == Some(false))
        .map(|v| v.name.as_str())
        .collect();
    // An SLO whose figure was not measured is never a pass.
    let unmeasured: Vec<&str> = run
        .slo
        .iter()
        .filter(|v| v.pass.is_none())
        .map(|v| v.name.as_str())
        .collect();
    let mut text = match (failed.is_empty(), unmeasured.is_empty()) {
        (true, true) => "pass".to_owned(),
        (true, false) => format!("not measured: {}", unmeasured.join(", ")),
        (false, true) => format!("fail: {}", failed.join(", ")),
        (false, false) => format!(
            "fail: {}; not measured: {}",
            failed.join(", "),
            unmeasured.join(", ")
        ),
    };
    if run.generator.bound {
        text.push_str(" [generator-bound]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: the progress line says the starts dropped at `max_in_flight`, which the table
    /// counts with the errors, instead of "0 errors" alone.
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
            "ok: 1,200 requests, 0 errors, 37 starts dropped; RSS -, 0 SLO failed"
        );
    }
}
