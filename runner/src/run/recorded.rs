//! One run of a point as every phase runs it: announced, run, judged whole, counted, added to
//! its point's results and the results file rewritten.

use super::attempt::{Attempt, Held};
use super::once::run_once;
use super::{
    Outcome, RunError, RunOptions, is_baseline, judged_whole, phase_slot_of, point_results,
};
use crate::event::Event;
use crate::limits::Emulation;
use crate::results::{Failure, RunResult};
use headroom_matrix::RunMatrix;
use headroom_matrix::{MatrixPhase, Point};
use std::sync::Arc;
use tokio::sync::watch;

/// How one run went, for the phase that runs it.
pub(super) struct Recorded {
    /// The run failed (its target, its load, its measurements).
    pub(super) failed: bool,
    /// Everything is to stop: Ctrl-C, or a meeting of the segments missed.
    pub(super) stop_all: bool,
}

/// Where a run's limits, meetings and kept target come from.
pub(super) type Means<'a, 'h> = (
    &'a Emulation,
    Option<&'a Arc<headroom_load::barrier::Barrier>>,
    Option<&'h mut Held>,
);

/// The run kept, saying the tries before it that other work competed with (`tries`).
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

/// Runs `point` once (repeat `repeat`, the `number`th run of `runs`) and records it; a run
/// that other work competed with is run again first, up to `options.competed_reruns` times.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_recorded(
    (matrix, phase, point): (&RunMatrix, &MatrixPhase, &Point),
    (emulation, barrier, held): Means<'_, '_>,
    (repeat, number, runs): (u32, &mut usize, usize),
    options: &RunOptions,
    cancel: &watch::Receiver<bool>,
    outcome: &mut Outcome,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Recorded, RunError> {
    let slot = phase_slot_of(&outcome.results, &phase.name);
    *number += 1;
    let mut held = held;
    let mut competed_tries = Vec::new();
    let result = loop {
        on_event(Event::RunStarted {
            phase: &phase.name,
            point,
            repeat,
            number: *number,
            runs,
        });
        let attempt = Attempt {
            repeat,
            number: *number,
            emulation,
            barrier,
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
            on_event,
        )
        .await;
        let result = judged_whole(result, options.segment);
        // Other work took a share of the machine over the hold: its figures are not the
        // server's alone, so the run is run again, up to the bound, before it is judged.
        let competed = result
            .machine_cpu
            .filter(|machine| result.failure.is_none() && machine.others_competed());
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
                on_event(Event::RunAgain {
                    why: why.clone(),
                    left: tries_left - 1,
                });
                competed_tries.push(why);
            }
            _ => break kept_after(result, &competed_tries),
        }
    };
    let failed =
        outcome
            .tally
            .count_run(&result, is_baseline(matrix, point), phase.search.is_some());
    // A meeting missed: the other segments are gone or never came, so every later run
    // would wait out the timeout for nothing.
    let stranded = matches!(result.failure, Some(Failure::Barrier { .. }));
    on_event(Event::RunFinished {
        phase: &phase.name,
        point,
        result: &result,
    });
    point_results(&mut outcome.results.phases[slot], point)
        .runs
        .push(result);
    outcome.results.write(&options.out)?;
    Ok(Recorded {
        failed,
        stop_all: outcome.tally.interrupted || stranded,
    })
}
