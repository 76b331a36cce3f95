//! `headroom run`: compile, run the matrix, show progress and a table per phase, and say in the
//! exit code how it went.

use std::io::Write;

use std::path::{Path, PathBuf};

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use headroom_runner::{RunError, RunOptions};

use crate::exit;
use headroom_runner::tally::Standing;

mod args;
mod progress;
mod segment;
mod tables;
mod watchers;

pub use args::RunArgs;
pub(crate) use tables::variables;
use tables::{phase_table, request_table};

/// A run estimated longer than this needs `--yes`: it is more likely a typo than a plan.
const LONGEST_WITHOUT_YES: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

pub fn run(args: RunArgs, renderer: &Renderer) -> Result<u8> {
    let compiler = headroom_compiler::Compiler::with_overrides(args.set.clone());
    let Some(compiled) = crate::compile_to_run(&compiler, &args.spec, Some(renderer))? else {
        return Ok(exit::USAGE);
    };
    let Some(matrix) = &compiled.compilation.matrix else {
        return Ok(exit::USAGE);
    };
    let mut matrix = matrix.clone();
    if !args.emulate.is_empty() {
        headroom_compiler::matrix::emulate(&mut matrix, &args.emulate, &compiled.prices)
            .map_err(|why| anyhow::anyhow!("{}: --emulate: {why}", args.spec.display()))?;
    }
    let matrix = &matrix;
    refuse_over_a_day(&args, matrix)?;
    segment::refuse_unfit(args.segment, matrix, args.check, args.barrier.is_some())
        .map_err(|why| anyhow::anyhow!("{}: {why}", args.spec.display()))?;
    let out = args.out.clone().unwrap_or_else(|| match args.segment {
        Some(share) => segment::default_out(&matrix.bench.name, share),
        None => crate::default_results(&matrix.bench.name),
    });
    let spec_hash = headroom_runner::results::spec_hash(&compiled.source);
    // Checked before anything runs: every file the run writes claimed by the guard (the
    // results through a link to the file it names), the earlier results kept, the lock taken.
    let mut outputs = crate::outputs::Outputs::new(args.force);
    let out = claim_outputs(&args, &compiled, &out, &mut outputs)?;
    let claimed = watchers::claim(&args, &mut outputs)?;
    let held = crate::out::hold(
        &out,
        &crate::out::Run {
            bench: &matrix.bench.name,
            spec_hash: &spec_hash,
            merging: !args.phases.is_empty(),
        },
    )?;
    if let Some(previous) = &held.previous {
        eprintln!(
            "note: the earlier {} is kept as {}",
            out.display(),
            previous.display()
        );
    }
    let run_id = watchers::run_id(&args, &matrix.bench.name);
    let mut watchers = watchers::Watchers::start(&args, matrix, &run_id, claimed)?;
    let options = run_options(&args, &compiled, spec_hash, &out, run_id)?;
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
        headroom_runner::run(matrix, &options, cancelled, &mut |event| {
            watchers.event(event);
        })
        .await
    });
    watchers.run_ended();
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
    let (page_failed, page) = tables_and_page(&args, &compiled, &outcome, &out, &mut outputs)?;
    watchers.finish(&out, page);
    Ok(exit_code(&outcome, args.check, page_failed))
}

/// Claims the results file, then the page beside it (unless none is written): what the run
/// reads (the spec, its data files) is never one of them. Where the results go.
fn claim_outputs(
    args: &RunArgs,
    compiled: &crate::Compiled,
    out: &Path,
    outputs: &mut crate::outputs::Outputs,
) -> Result<PathBuf> {
    use crate::outputs::Output;
    outputs.input(&args.spec, "the spec");
    let spec_dir = args.spec.parent().unwrap_or(Path::new(""));
    for file in headroom_compiler::data_file_references(&compiled.source) {
        outputs.input(&spec_dir.join(&file), "a data file the spec reads");
    }
    let out = outputs.claim(out, "--out", Output::Results)?.path;
    if !args.no_page && args.segment.is_none() {
        let page = crate::page::default_page(&out, crate::page::PageFormat::Md);
        outputs.claim(&page, "the page", Output::Page)?;
    }
    Ok(out)
}

/// What the runner needs beside the matrix: where the spec and the results are, the flags.
fn run_options(
    args: &RunArgs,
    compiled: &crate::Compiled,
    spec_hash: String,
    out: &Path,
    run_id: String,
) -> Result<RunOptions> {
    let spec_dir = args
        .spec
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(RunOptions {
        spec_path: compiled.path.clone(),
        seed: segment::seed(args.seed, args.segment, &spec_hash),
        spec_hash,
        spec_dir: spec_dir
            .canonicalize()
            .unwrap_or_else(|_| spec_dir.to_path_buf()),
        out: out.to_path_buf(),
        phases: args.phases.clone(),
        repeats: args.repeat,
        quick: args.quick,
        headroom_bin: std::env::current_exe().context("cannot find the headroom binary itself")?,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        ignore_limits: args.ignore_limits,
        segment: args.segment.unwrap_or(headroom_runner::Segment::WHOLE),
        barrier: args.barrier.clone(),
        barrier_timeout: args.barrier_timeout.as_std(),
        run_id,
        competed_reruns: args.competed_reruns,
        price_tables: compiled.prices.sources().to_vec(),
    })
}

/// The run tables, then the page from the results just written (the one command from spec to
/// page) unless a segment ran or the run was interrupted; whether the page failed, and the
/// page written.
fn tables_and_page(
    args: &RunArgs,
    compiled: &crate::Compiled,
    outcome: &headroom_runner::Outcome,
    out: &Path,
    outputs: &mut crate::outputs::Outputs,
) -> Result<(bool, Option<PathBuf>)> {
    // A stream that writes to stdout keeps it: the tables and the page's report go to stderr.
    let mut stdout: Box<dyn Write> = if args.streams.iter().any(|s| s.takes_stdout()) {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    };
    write_tables(&mut stdout, &outcome.results, out)?;
    if let Some(share) = args.segment {
        writeln!(
            stdout,
            "segment {share}: one share of the load; merge the shares before reading them (`headroom merge`)"
        )?;
        return Ok((false, None));
    }
    if args.no_page || outcome.tally.interrupted {
        return Ok((false, None));
    }
    let source = crate::page::Source {
        spec: &args.spec,
        compiled,
        results: &outcome.results,
        results_path: out,
        baseline: None,
    };
    match crate::page::render(&source, None, None, crate::page::PageFormat::Md, outputs) {
        Ok(Ok(rendered)) => {
            rendered.report(&mut stdout)?;
            Ok((false, (!rendered.streamed).then_some(rendered.page)))
        }
        Ok(Err(_)) => Ok((true, None)),
        Err(error) => {
            eprintln!("error: the capacity page was not written: {error:#}");
            Ok((true, None))
        }
    }
}

/// The exit code of a run: interrupted, a run failed, an SLO failed or went unmeasured under
/// `--check`, the page not written, or 0; said on stderr.
fn exit_code(outcome: &headroom_runner::Outcome, check: bool, page_failed: bool) -> u8 {
    let tally = &outcome.tally;
    match tally.standing(check) {
        Standing::Interrupted => exit::INTERRUPTED,
        Standing::RunsFailed => {
            let phases = match tally.failed_phases {
                0 => String::new(),
                1 => " and the target of 1 phase failed".to_owned(),
                n => format!(" and the targets of {n} phases failed"),
            };
            eprintln!(
                "error: {} of the runs failed{phases}; the results file names each failure",
                tally.failed_runs
            );
            exit::RUN_FAILED
        }
        Standing::SlosFailed => {
            eprintln!(
                "error: {} SLO verdicts failed and {} were not measured",
                tally.slo_failures, tally.slo_unmeasured
            );
            exit::SLO_FAILED
        }
        Standing::Passed if page_failed => exit::WRITE_FAILED,
        Standing::Passed => exit::OK,
    }
}

/// A table per phase, where the results went, and whether they are `--quick` figures.
pub(crate) fn write_tables(
    stdout: &mut impl Write,
    results: &headroom_runner::results::Results,
    out: &Path,
) -> Result<()> {
    for phase in &results.phases {
        // Which columns: the scenarios the spec gives the phase, whatever its runs measured
        // (a rooms phase whose every run failed keeps its rooms columns).
        let planned = results.matrix.phases.iter().find(|p| p.name == phase.name);
        let scenarios = planned
            .and_then(|p| p.points.first())
            .map_or(&[][..], |point| point.scenarios.as_slice());
        writeln!(stdout, "\n{}", phase_table(phase, scenarios))?;
        if let Some(requests) = request_table(phase) {
            writeln!(stdout, "\n{requests}")?;
        }
        let ignored = phase
            .points
            .iter()
            .flat_map(|p| p.runs.iter())
            .any(|r| matches!(r.limits, Some(headroom_runner::results::RunLimits::Ignored)));
        if ignored {
            writeln!(stdout, "note: {}.", headroom_runner::LIMITS_IGNORED)?;
        }
        if let Some(target) = &phase.target {
            writeln!(stdout, "{}", tables::phase_target_line(target))?;
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
fn refuse_over_a_day(args: &RunArgs, matrix: &headroom_matrix::RunMatrix) -> Result<()> {
    // The estimate of what will run: the phases asked for, with --repeat (--quick is short).
    let estimated: f64 = matrix
        .phases
        .iter()
        .filter(|p| args.phases.is_empty() || args.phases.contains(&p.name))
        .map(|p| match &p.search {
            // A search at its budget, whatever its repeats.
            Some(_) => p.estimated.as_secs_f64(),
            None => {
                p.estimated.as_secs_f64() / f64::from(p.repeats.max(1))
                    * f64::from(args.repeat.unwrap_or(p.repeats))
            }
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
    // The run is told first: a stderr that is gone (its reader ended) must not keep a
    // signal from stopping it, so what is said is written, never `eprintln!`ed (it panics).
    let _ = cancel.send(true);
    let _ = writeln!(
        std::io::stderr(),
        "\ninterrupted ({name}): stopping the run in flight and writing the results"
    );
    // A second signal stops waiting (for readiness, for a stop's grace): headroom
    // exits now; the kernel and the guard kill the target's group, and the runs that
    // finished are already in the results file.
    let again = tokio::select! {
        Ok(()) = tokio::signal::ctrl_c() => "Ctrl-C",
        Some(()) = terminate.recv() => "SIGTERM",
        Some(()) = hangup.recv() => "SIGHUP",
    };
    // A setup or teardown step in flight goes with its whole process group: the kernel would
    // end only the step's own process with headroom, not what it started.
    headroom_runner::kill_running_steps();
    let _ = writeln!(
        std::io::stderr(),
        "interrupted again ({again}): not waiting; the target and any step in flight are killed, and the runs that finished are in {out_shown}"
    );
    let _ = std::fs::remove_file(&lock);
    std::process::exit(i32::from(exit::INTERRUPTED));
}
