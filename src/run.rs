//! `headroom run`: compile, run the matrix, show progress and a table per phase, and say in the
//! exit code how it went.

use std::io::{IsTerminal, Write};

use std::path::{Path, PathBuf};

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_runner::results::RunResult;
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
    /// The results file [default: results/<bench>/results.json].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs of every point, instead of the spec's `repeats`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: Option<u32>,
    /// Scale durations, steps and repeats down, for CI and a first look (the results say so).
    #[arg(long)]
    quick: bool,
    /// Exit with 2 when an SLO failed at some point.
    #[arg(long)]
    check: bool,
}

pub fn run(args: RunArgs, renderer: &Renderer) -> Result<u8> {
    let Some(compiled) = crate::compile_for_use(&args.spec, renderer)? else {
        return Ok(exit::USAGE);
    };
    let Some(plan) = &compiled.compilation.plan else {
        return Ok(exit::USAGE);
    };
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results")
            .join(&plan.bench.name)
            .join("results.json")
    });
    let spec_dir = args
        .spec
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let options = RunOptions {
        spec_path: compiled.path.clone(),
        spec_hash: headroom_runner::results::spec_hash(&compiled.source),
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
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ninterrupted: stopping the run in flight and writing the results");
                let _ = cancel.send(true);
            }
        });
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
            eprintln!("error: {error}");
            return Ok(exit::USAGE);
        }
    };
    let mut stdout = std::io::stdout().lock();
    for phase in &outcome.results.phases {
        writeln!(stdout, "\n{}", phase_table(phase))?;
    }
    writeln!(stdout, "\nresults: {}", out.display())?;
    if outcome.results.quick {
        writeln!(
            stdout,
            "(--quick: durations, steps and repeats scaled down; not figures to plan with)"
        )?;
    }
    Ok(if outcome.interrupted {
        exit::INTERRUPTED
    } else if outcome.failed_runs > 0 {
        eprintln!(
            "error: {} of the runs failed; the results file names each failure",
            outcome.failed_runs
        );
        exit::RUN_FAILED
    } else if args.check && outcome.slo_failures > 0 {
        eprintln!("error: {} SLO verdicts failed", outcome.slo_failures);
        exit::SLO_FAILED
    } else {
        exit::OK
    })
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
                        "{}: {elapsed_s:.0}s, {requests} requests, p95 {p95}, {errors} errors",
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
    let requests: u64 = result.scenarios.values().map(|s| s.requests).sum();
    let errors: u64 = result.scenarios.values().map(|s| s.errors.total()).sum();
    let rss = result
        .process
        .steady
        .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes));
    let failed = result.slo.iter().filter(|v| v.pass == Some(false)).count();
    let mut line =
        format!("ok: {requests} requests, {errors} errors, RSS {rss}, {failed} SLO failed");
    if result.generator.bound {
        line.push_str(" (generator-bound)");
    }
    line
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn ms(value: f64) -> String {
    if value >= 1000.0 {
        format!("{:.2} s", value / 1000.0)
    } else {
        format!("{value:.1} ms")
    }
}

/// A row per run: what people look at first.
fn phase_table(phase: &headroom_runner::results::PhaseResults) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "point",
        "variables",
        "run",
        "requests",
        "req/s",
        "p50",
        "p95",
        "p99",
        "errors",
        "RSS",
        "SLO",
    ]);
    for point in &phase.points {
        for run in &point.runs {
            let http: Vec<_> = run
                .scenarios
                .values()
                .filter(|s| s.skipped.is_none())
                .collect();
            let requests: u64 = http.iter().map(|s| s.requests).sum();
            let rate: f64 = http.iter().map(|s| s.rate).sum();
            let worst = |f: fn(&headroom_runner::results::Summary) -> f64| {
                http.iter().map(|s| f(&s.latency)).fold(0.0, f64::max)
            };
            let errors: u64 = http.iter().map(|s| s.errors.total() + s.dropped).sum();
            let slo = if let Some(failure) = &run.failure {
                format!("run failed: {}", failure.describe())
            } else {
                let failed: Vec<&str> = run
                    .slo
                    .iter()
                    .filter(|v| v.pass == Some(false))
                    .map(|v| v.name.as_str())
                    .collect();
                let unmeasured = run.slo.iter().filter(|v| v.pass.is_none()).count();
                let mut text = if failed.is_empty() {
                    "pass".to_owned()
                } else {
                    format!("fail: {}", failed.join(", "))
                };
                if unmeasured > 0 {
                    text.push_str(&format!(" ({unmeasured} not measured)"));
                }
                if run.generator.bound {
                    text.push_str(" [generator-bound]");
                }
                text
            };
            table.add_row(vec![
                Cell::new(point.index + 1).set_alignment(CellAlignment::Right),
                Cell::new(variables(&point.at)),
                Cell::new(run.repeat).set_alignment(CellAlignment::Right),
                Cell::new(requests).set_alignment(CellAlignment::Right),
                Cell::new(format!("{rate:.1}")).set_alignment(CellAlignment::Right),
                Cell::new(ms(worst(|s| s.p50_ms))).set_alignment(CellAlignment::Right),
                Cell::new(ms(worst(|s| s.p95_ms))).set_alignment(CellAlignment::Right),
                Cell::new(ms(worst(|s| s.p99_ms))).set_alignment(CellAlignment::Right),
                Cell::new(errors).set_alignment(CellAlignment::Right),
                Cell::new(
                    run.process
                        .steady
                        .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes)),
                )
                .set_alignment(CellAlignment::Right),
                Cell::new(slo),
            ]);
        }
    }
    format!("{}\n{table}", phase.name)
}
