//! What `headroom run` shows while it runs: a bar over the matrix on a terminal, a line per
//! run otherwise.

use super::*;
use crate::plural;
use headroom_runner::results::Failure;
use tables::{ms, one_line};

/// A bar over the matrix on a terminal (current run, elapsed, ETA, live p95 and errors); plain
/// lines, one per run, otherwise.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    current: String,
}

impl Progress {
    pub(super) fn new() -> Progress {
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

    pub(super) fn show(&mut self, event: Event<'_>) {
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
            Event::Limits { how } => self.line(&how),
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
            Event::PhaseTargetUp {
                phase,
                port,
                ready_after_s,
                runs,
            } => {
                let ready =
                    ready_after_s.map_or_else(String::new, |s| format!(", ready after {s:.1}s"));
                self.line(&format!(
                    "{phase}: one target for the phase's {runs} runs (process = \"per-phase\"), on port {port}{ready}"
                ));
            }
            Event::PhaseTargetEnded { phase, target } => self.phase_target_ended(phase, target),
            Event::Probed { probe, .. } => self.line(&probe_line(probe)),
            Event::SearchEnded {
                phase,
                record,
                unspent,
            } => {
                self.line(&format!(
                    "{phase}: {}; {} in {}",
                    record.said,
                    plural(record.runs as usize, "run"),
                    crate::human_duration(headroom_spec::Duration::from_micros(
                        (record.wall_s * 1e6) as u64
                    ))
                ));
                if let Some(bar) = &self.bar
                    && let Some(length) = bar.length()
                {
                    bar.set_length(length.saturating_sub(unspent as u64));
                }
            }
            Event::RunFinished { result, .. } => {
                self.line(&format!("  {}", one_line(result)));
                if let Some(failure) = &result.failure {
                    self.failure_output(result, failure);
                }
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
        }
    }
}

/// A search's probe in one line: `probe 800/s (explore, 1 run of 2s): passes`.
fn probe_line(probe: &headroom_runner::results::SearchProbe) -> String {
    use headroom_runner::results::{ProbeOutcome, ProbeStage};
    let stage = match probe.stage {
        ProbeStage::Explore => "explore",
        ProbeStage::Confirm => "confirm",
    };
    let verdict = match probe.verdict {
        ProbeOutcome::Pass => "passes".to_owned(),
        ProbeOutcome::Fail => "fails".to_owned(),
        ProbeOutcome::Split => format!("split, passes {} of {}", probe.passes, probe.runs),
        ProbeOutcome::GeneratorBound => "not judged: the generator could not send it".to_owned(),
        ProbeOutcome::Unjudged => "not judged".to_owned(),
    };
    let why = probe
        .why
        .as_ref()
        .map_or_else(String::new, |why| format!(": {why}"));
    format!(
        "  probe {} ({stage}, {} of {}s): {verdict}{why}",
        probe.load,
        plural(probe.runs as usize, "run"),
        probe.hold_s
    )
}

/// Where a run's (or a phase's kept target's) output went: the target's log, each service's,
/// each step's.
struct Logs<'a> {
    target: Option<&'a String>,
    services: &'a std::collections::BTreeMap<String, headroom_runner::results::ServiceResult>,
    steps: &'a [headroom_runner::results::StepResult],
}

/// Lines of a failed process's output shown under its run; the results keep more.
const SHOWN_LINES: usize = 5;

impl Progress {
    /// The last lines a failed process wrote, and where its whole log is.
    fn failure_output(&self, result: &RunResult, failure: &Failure) {
        let logs = Logs {
            target: result.log.as_ref(),
            services: &result.services,
            steps: &result.steps,
        };
        self.output_of(failure, &logs);
    }

    /// The last lines of `failure`'s output, and the log that holds all of it.
    fn output_of(&self, failure: &Failure, logs: &Logs<'_>) {
        let tail = failure.output_tail();
        for line in &tail[tail.len().saturating_sub(SHOWN_LINES)..] {
            self.line(&format!("    | {line}"));
        }
        let log = match failure {
            Failure::Service { service, .. } => {
                logs.services.get(service).and_then(|s| s.log.as_ref())
            }
            Failure::Step { .. } => logs.steps.last().and_then(|step| step.log.as_ref()),
            Failure::Interrupted | Failure::Barrier { .. } | Failure::Load { .. } => None,
            _ => logs.target,
        };
        if let Some(log) = log.filter(|_| !tail.is_empty()) {
            self.line(&format!(
                "    (its whole output: {log}, beside the results)"
            ));
        }
    }
}

impl Progress {
    /// How a phase's kept target ended: stopped after its runs, or the failure that ended
    /// them, with its last lines and the runs it left out.
    fn phase_target_ended(&self, phase: &str, target: &headroom_runner::results::PhaseTarget) {
        let Some(failure) = &target.failure else {
            let stopped: Vec<String> = target
                .stopped
                .iter()
                .chain(target.services.values().filter_map(|s| s.stopped.as_ref()))
                .map(|stopped| {
                    let exit = stopped
                        .exit
                        .as_ref()
                        .map_or_else(|| "gone".to_owned(), ToString::to_string);
                    let killed = if stopped.killed { ", then KILL" } else { "" };
                    format!("SIG{}{killed}: {exit}", stopped.signal)
                })
                .collect();
            let when = if target.interrupted {
                "when the run was interrupted"
            } else {
                "after the phase's last run"
            };
            self.line(&format!(
                "{phase}: its target stopped {when} ({})",
                stopped.join("; ")
            ));
            return;
        };
        let not_run = match target.runs_not_run {
            0 => String::new(),
            1 => "; 1 run of the phase not run".to_owned(),
            n => format!("; {n} runs of the phase not run"),
        };
        self.line(&format!(
            "{phase}: its target failed: {}{not_run}",
            failure.describe()
        ));
        let logs = Logs {
            target: target.log.as_ref(),
            services: &target.services,
            steps: &target.steps,
        };
        self.output_of(failure, &logs);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
