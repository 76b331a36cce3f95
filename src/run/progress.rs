//! What `headroom run` shows while it runs: a bar over the matrix on a terminal, a line per
//! run otherwise.

use std::time::{Duration, Instant};

use super::tables;
use super::tables::variables;
use crate::live::view::{RunHeader, ViewState, frame, plain_line};
use crate::plural;
use headroom_runner::Event;
use headroom_runner::results::{Failure, RunResult};
use std::io::IsTerminal;
use tables::one_line;

/// Whether the progress is a bar redrawn in place: on a terminal with cursor control. A
/// terminal whose `TERM` is unset, empty or `dumb` has none (the bar would be hidden and the
/// per-run lines with it), so it gets the lines a log gets.
fn redrawn_in_place(terminal: bool, term: Option<&str>) -> bool {
    terminal && term.is_some_and(|term| !term.is_empty() && term != "dumb")
}

/// A bar over the matrix on a terminal with the live view of the run in flight below it,
/// redrawn every second; off a terminal, a line per run and the view in one line every
/// `plain_every`.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    view: ViewState,
    plain_every: Duration,
    last_plain: Option<Instant>,
    /// When the matrix started, its estimate, and the runs done of all.
    started: Instant,
    estimated_s: f64,
    runs: (usize, usize),
}

impl Progress {
    pub(super) fn new(plain_every: Duration) -> Progress {
        Progress {
            bar: None,
            view: ViewState::default(),
            plain_every,
            last_plain: None,
            started: Instant::now(),
            estimated_s: 0.0,
            runs: (0, 0),
        }
    }

    /// The time left: the time per run so far over the runs left, never past what the
    /// estimate (a search's at its budget: an upper bound) leaves; the estimate's alone before
    /// the first run ends.
    fn eta(&self) -> String {
        let (done, all) = self.runs;
        let left = eta_s(
            self.started.elapsed().as_secs_f64(),
            done,
            all,
            self.estimated_s,
        );
        crate::human_duration(headroom_spec::Duration::from_micros(
            (left.round() * 1e6) as u64,
        ))
    }

    /// The view once a second: the panel under the bar, or a line when `plain_every` passed.
    fn redraw(&mut self) {
        if let Some(bar) = &self.bar {
            // The bar's time left is the progress's own, as the plain lines say it.
            bar.set_prefix(self.eta());
            bar.set_message(frame(&self.view, None));
            return;
        }
        if self.plain_every.is_zero()
            || self
                .last_plain
                .is_some_and(|at| at.elapsed() < self.plain_every)
        {
            return;
        }
        if let Some(line) = plain_line(&self.view, Some(&self.eta())) {
            eprintln!("{line}");
            self.last_plain = Some(Instant::now());
        }
    }

    /// A line of news above the bar (or on its own line off a terminal).
    pub(super) fn say(&self, text: &str) {
        self.line(text);
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// The matrix starts: its size and estimate, and the bar on a terminal.
    fn started(&mut self, runs: usize, estimated_s: f64) {
        self.line(&format!(
            "running {runs} runs, about {} of load, settle and cool-down (start-up not included)",
            crate::human_duration(headroom_spec::Duration::from_micros(
                (estimated_s * 1e6) as u64
            ))
        ));
        self.started = Instant::now();
        self.estimated_s = estimated_s;
        self.runs = (0, runs);
        if redrawn_in_place(
            std::io::stderr().is_terminal(),
            std::env::var("TERM").ok().as_deref(),
        ) {
            let bar = indicatif::ProgressBar::new(runs as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} runs  {elapsed_precise} elapsed, ETA {prefix}\n{msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            bar.set_style(style);
            self.bar = Some(bar);
        }
    }

    /// A run starts: its line, and the view starts over.
    fn run_started(
        &mut self,
        phase: &str,
        point: &headroom_matrix::Point,
        repeat: u32,
        number: usize,
        runs: usize,
    ) {
        // The runs in all as the bar counts them: a search's unspent budget taken off.
        let runs = self.runs.1.max(number).min(runs);
        self.line(&format!(
            "[{number}/{runs}] {phase} point {} {} repeat {repeat}",
            point.index + 1,
            crate::live::in_parens(&variables(&point.at))
        ));
        let header = RunHeader {
            phase: phase.to_owned(),
            point: point.index + 1,
            at: variables(&point.at),
            repeat,
            number,
            runs,
        };
        self.view.start(header, point);
        // A new run's first line comes after its first seconds.
        self.last_plain = Some(Instant::now());
    }

    pub(super) fn show(&mut self, event: Event<'_>) {
        match event {
            Event::Started { runs, estimated_s } => self.started(runs, estimated_s),
            Event::Limits { how } => self.line(&how),
            Event::RunAgain { why, left } => self.line(&format!(
                "  run again: {why}, a share of the machine the server needs ({} more {} at most)",
                left + 1,
                if left == 0 { "try" } else { "tries" }
            )),
            Event::RunStarted {
                phase,
                point,
                repeat,
                number,
                runs,
            } => self.run_started(phase, point, repeat, number, runs),
            Event::Progress {
                elapsed_s,
                generator_cores,
                throttled,
                ..
            } => {
                self.view.elapsed_s = elapsed_s;
                self.view.generator_cores = generator_cores;
                self.view.throttled = throttled;
                self.redraw();
            }
            Event::Second {
                scenario,
                window,
                gauges,
                ..
            } => self.view.second(scenario, window, gauges),
            Event::Sampled {
                service: None,
                sample,
                ..
            } => self.view.server = Some(*sample),
            // A stack's services one by one: the view shows their sum.
            Event::Sampled { .. } => {}
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
            } => self.search_ended(phase, record, unspent),
            Event::RunFinished { result, .. } => self.run_finished(result),
        }
    }

    /// A search ended: what it found and spent; the bar, the header and the time left count
    /// the same runs, its unspent budget taken off.
    fn search_ended(
        &mut self,
        phase: &str,
        record: &headroom_runner::results::SearchRecord,
        unspent: usize,
    ) {
        self.line(&format!(
            "{phase}: {}; {} in {}",
            record.said,
            plural(record.runs as usize, "run"),
            crate::human_duration(headroom_spec::Duration::from_micros(
                (record.wall_s * 1e6) as u64
            ))
        ));
        self.runs.1 = self.runs.1.saturating_sub(unspent);
        if let Some(bar) = &self.bar {
            bar.set_length(self.runs.1 as u64);
        }
    }

    /// A run ended: its line, and why it failed when it did.
    fn run_finished(&mut self, result: &headroom_runner::results::RunResult) {
        self.view.run = None;
        self.runs.0 += 1;
        if let Some(bar) = &self.bar {
            bar.set_message(String::new());
        }
        self.line(&format!("  {}", one_line(result)));
        if let Some(failure) = &result.failure {
            self.failure_output(result, failure);
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

/// Seconds left after `elapsed` with `done` of `all` runs over: the time per run so far over
/// the runs left, never past what the estimate leaves (it counts a search at its budget, an
/// upper bound), unless the run is already past the estimate; the estimate's alone before
/// the first run ends.
fn eta_s(elapsed: f64, done: usize, all: usize, estimated_s: f64) -> f64 {
    let budget_left = estimated_s - elapsed;
    if done == 0 {
        return budget_left.max(0.0);
    }
    let by_runs = elapsed / done as f64 * all.saturating_sub(done) as f64;
    if budget_left > 0.0 {
        by_runs.min(budget_left)
    } else {
        by_runs
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41: the time left never passes what the estimate (a search at its budget) leaves,
    /// so a short first probe and a long confirmation do not swing it from minutes to hours.
    #[test]
    fn the_time_left_stays_within_the_budget() {
        // A search budgeted at 60 runs and an hour: after a 5 s probe, runs alone say 5 min.
        assert_eq!(eta_s(5.0, 1, 60, 3_600.0), 295.0);
        // A 3-minute confirmation next: runs alone would say 1.5 h; the budget says 56 min.
        assert_eq!(eta_s(185.0, 2, 60, 3_600.0), 3_415.0);
        // Before any run ends, the estimate; past it, the runs.
        assert_eq!(eta_s(10.0, 0, 60, 3_600.0), 3_590.0);
        assert_eq!(eta_s(4_000.0, 50, 60, 3_600.0), 800.0);
    }

    /// Issue 42: a terminal without cursor control gets the log's lines, not a hidden bar.
    #[test]
    fn only_a_terminal_with_cursor_control_redraws_in_place() {
        assert!(redrawn_in_place(true, Some("xterm-256color")));
        assert!(!redrawn_in_place(true, Some("dumb")));
        assert!(!redrawn_in_place(true, Some("")));
        assert!(!redrawn_in_place(true, None));
        assert!(!redrawn_in_place(false, Some("xterm-256color")));
    }
}
