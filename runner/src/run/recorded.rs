//! One run of a point as every phase runs it: announced, run, judged whole, counted, added to
//! its point's results and the results file rewritten.

use super::*;

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

/// Runs `point` once (repeat `repeat`, the `number`th run of `runs`) and records it.
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
        held,
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
    let failed = outcome.count(&result, is_baseline(matrix, point), phase.search.is_some());
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
        stop_all: outcome.interrupted || stranded,
    })
}
