//! One run of a point as every phase runs it: announced, run, judged whole, counted, added to
//! its point's results and the results file rewritten.

use super::attempt::{Attempt, Held};
use super::once::run_once;
use super::walk::Walker;
use super::{RunError, is_baseline, judged_whole, phase_slot_of, point_results};
use crate::event::Event;
use crate::results::{Failure, MachineCpu, RunResult};
use headroom_matrix::{MatrixPhase, Point};

/// How one run went, for the phase that runs it.
pub(super) struct Recorded {
    /// The run failed (its target, its load, its measurements).
    pub(super) failed: bool,
    /// Everything is to stop: Ctrl-C, or a meeting of the segments missed.
    pub(super) stop_all: bool,
}

/// The run kept, saying the tries before it that other work competed with (`tries`).
/// Whether the generator fell behind while other work or the hypervisor took a share of the
/// machine: its lateness may be theirs, not its own limit (issue 59), so the run is run again
/// and, still so, judges nothing rather than "beyond what this machine can send".
pub(super) fn starved_generator(run: &RunResult, machine: &MachineCpu) -> bool {
    run.generator.bound && machine.competed()
}

fn kept_after(mut result: RunResult, tries: &[String]) -> RunResult {
    if !tries.is_empty() {
        result.notes.push(format!(
            "run again after {} {} that other work competed with ({}): this is the try kept",
            tries.len(),
            if tries.len() == 1 { "try" } else { "tries" },
            tries.join("; ")
        ));
    }
    result
}

impl Walker<'_> {
    /// Runs `point` once (repeat `repeat`, the next run of the walk) and records it; a run
    /// that other work competed with is run again first, up to `options.competed_reruns` times.
    pub(super) async fn run_recorded(
        &mut self,
        phase: &MatrixPhase,
        point: &Point,
        repeat: u32,
        mut held: Option<&mut Held>,
    ) -> Result<Recorded, RunError> {
        let (matrix, options, cancel) = (self.matrix, self.options, self.cancel);
        let slot = phase_slot_of(&self.outcome.results, &phase.name);
        self.number += 1;
        let (number, runs) = (self.number, self.runs);
        let mut competed_tries = Vec::new();
        let result = loop {
            (self.on_event)(Event::RunStarted {
                phase: &phase.name,
                point,
                repeat,
                number,
                runs,
            });
            let attempt = Attempt {
                repeat,
                number,
                emulation: self.emulation,
                barrier: self.barrier,
                held: held.as_deref_mut(),
                cancel,
            };
            let result = run_once(
                matrix,
                phase,
                point,
                attempt,
                options,
                cancel.clone(),
                &mut *self.on_event,
            )
            .await;
            let result = judged_whole(result, options.segment);
            // Other work took a share of the machine over the hold: its figures are not the
            // server's alone, so the run is run again, up to the bound, before it is judged.
            let competed = result.machine_cpu.filter(|machine| {
                result.failure.is_none()
                    && (machine.others_competed() || starved_generator(&result, machine))
            });
            // Segments run in step, meeting at every run: none runs one again on its own.
            let reruns = if options.segment.count > 1 {
                0
            } else {
                options.competed_reruns
            };
            let tries_left = reruns.saturating_sub(competed_tries.len() as u32);
            match competed {
                Some(machine) if tries_left > 0 && !*cancel.borrow() => {
                    let why = format!("{} over the hold", machine.describe());
                    (self.on_event)(Event::RunAgain {
                        why: why.clone(),
                        left: tries_left - 1,
                    });
                    competed_tries.push(why);
                }
                _ => break kept_after(result, &competed_tries),
            }
        };
        let failed = self.outcome.tally.count_run(
            &result,
            is_baseline(matrix, point),
            phase.search.is_some(),
        );
        // A meeting missed: the other segments are gone or never came, so every later run
        // would wait out the timeout for nothing.
        let stranded = matches!(result.failure, Some(Failure::Barrier { .. }));
        (self.on_event)(Event::RunFinished {
            phase: &phase.name,
            point,
            result: &result,
        });
        point_results(&mut self.outcome.results.phases[slot], point)
            .runs
            .push(result);
        self.outcome.results.write(&options.out)?;
        Ok(Recorded {
            failed,
            stop_all: self.outcome.tally.interrupted || stranded,
        })
    }
}
