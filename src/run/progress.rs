//! What `headroom run` shows while it runs: a bar over the matrix on a terminal, a line per
//! run otherwise.

use super::*;
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
