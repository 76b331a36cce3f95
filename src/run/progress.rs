//! What `headroom run` shows while it runs: a bar over the matrix on a terminal, a line per
//! run otherwise.

use super::*;
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

/// Lines of a failed process's output shown under its run; the results keep more.
const SHOWN_LINES: usize = 5;

impl Progress {
    /// The last lines a failed process wrote, and where its whole log is.
    fn failure_output(&self, result: &RunResult, failure: &Failure) {
        let tail = failure.output_tail();
        for line in &tail[tail.len().saturating_sub(SHOWN_LINES)..] {
            self.line(&format!("    | {line}"));
        }
        let log = match failure {
            Failure::Service { service, .. } => {
                result.services.get(service).and_then(|s| s.log.as_ref())
            }
            Failure::Step { .. } => result.steps.last().and_then(|step| step.log.as_ref()),
            Failure::Interrupted | Failure::Barrier { .. } | Failure::Load { .. } => None,
            _ => result.log.as_ref(),
        };
        if let Some(log) = log.filter(|_| !tail.is_empty()) {
            self.line(&format!(
                "    (its whole output: {log}, beside the results)"
            ));
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
