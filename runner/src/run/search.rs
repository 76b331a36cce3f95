//! A phase that searches its ceiling: each probe's point made when the search asks for it,
//! run `repeats` times, judged on its runs' SLO verdicts, the generator's figures and their
//! failures; the search's record written with the phase's results. The decisions are
//! `crate::search`'s.

use super::attempt::Held;
use super::probe::{RunSays, judge_run, outcome_of, probe_verdict};
use super::walk::Walker;
use super::{Outcome, PhaseRan, RunError, RunOptions, phase_slot_of};
use crate::event::Event;
use crate::results::{ProbeStage, Results, SearchEnding, SearchProbe, SearchRecord};
use crate::search::{Bounds, Ending, Next, Search, Stage};
use headroom_matrix::RunMatrix;
use headroom_matrix::{MatrixPhase, PhaseSearch, Point};
use headroom_spec::search::SearchEnds;
use tokio::time::Instant;

/// Each bracketing probe's load over the last one's.
const GROWTH: f64 = 2.0;
/// The same from a warm start: the ceiling is expected near it.
const WARM_GROWTH: f64 = 1.25;
/// A safety net under `max_runs`: a search never makes more probes than this.
const MOST_PROBES: u32 = 200;
/// Where an emulated instance's search starts when another instance's search of the same
/// phase has found its last pass: that pass scaled by the CPUs the server can use here over
/// there (its vCPUs, or its baseline's share, and no more than `[target] cores`).
fn warm_start(
    matrix: &RunMatrix,
    phase: &MatrixPhase,
    results: &Results,
    ends: &SearchEnds,
) -> Option<(f64, crate::results::WarmStart)> {
    if let Some(scaled) = &phase.scales {
        return warm_at_cores(scaled, results, ends);
    }
    let here = phase.emulates.as_ref()?;
    let usable = |cpus: f64| matrix.target.cores.map_or(cpus, |cores| cpus.min(cores));
    results.phases.iter().rev().find_map(|done| {
        let record = done.search.as_ref()?;
        let pass = record.pass_number()?;
        let there = matrix
            .phases
            .iter()
            .find(|p| p.name == done.name)?
            .emulates
            .as_ref()
            .filter(|there| there.of_phase == here.of_phase && done.name != phase.name)?;
        let scale = usable(here.cpus) / usable(there.cpus);
        Some(warm_from(&done.name, pass, scale, ends))
    })
}

/// A start at `pass` (of the phase `from_phase`) times `scale`, within the search's ends.
fn warm_from(
    from_phase: &str,
    pass: f64,
    scale: f64,
    ends: &SearchEnds,
) -> (f64, crate::results::WarmStart) {
    let start = (pass * scale).clamp(ends.from, ends.to);
    let start = if ends.whole { start.floor() } else { start };
    (
        start,
        crate::results::WarmStart {
            from_phase: from_phase.to_owned(),
            its_pass: ends.value(pass),
            scale: (scale * 1000.0).round() / 1000.0,
            start: ends.value(start),
        },
    )
}

/// Where the search at a core count (`[plan] scale_cores`) starts once the ceiling phase has
/// found its last pass on this machine's cores: that pass times the cores here over the
/// machine's. A server scales no better than its cores, so the ceiling here is at least that
/// share, and the search grows from it.
fn warm_at_cores(
    scaled: &headroom_matrix::ScaledCores,
    results: &Results,
    ends: &SearchEnds,
) -> Option<(f64, crate::results::WarmStart)> {
    let done = results.phases.iter().find(|p| p.name == scaled.of_phase)?;
    let pass = done.search.as_ref()?.pass_number()?;
    let machine = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let scale = f64::from(scaled.cores) / machine;
    Some(warm_from(&done.name, pass, scale, ends))
}

impl Walker<'_> {
    /// Runs the search of `phase`, probe by probe, and writes its record.
    pub(super) async fn search_phase(
        &mut self,
        phase: &MatrixPhase,
        mut held: Option<&mut Held>,
    ) -> Result<PhaseRan, RunError> {
        let (matrix, options) = (self.matrix, self.options);
        let Some(plan) = &phase.search else {
            return Ok(PhaseRan::default());
        };
        let ends = plan.ends().map_err(RunError::Search)?;
        let repeats = options.repeats.unwrap_or(phase.repeats);
        let warm = warm_start(matrix, phase, &self.outcome.results, &ends);
        let mut search = Search::new(Bounds {
            from: ends.from,
            start: warm.as_ref().map_or(ends.from, |(start, _)| *start),
            to: ends.to,
            precision: plan.precision.fraction(),
            growth: if warm.is_some() { WARM_GROWTH } else { GROWTH },
            whole: ends.whole,
            max_probes: MOST_PROBES,
        });
        let slot = phase_slot_of(&self.outcome.results, &phase.name);
        // The results' matrix lists the probes made, not the two ends it was checked at.
        planned_points(&mut self.outcome, &phase.name).clear();
        let started = Instant::now();
        let (mut spent, mut probes, mut ran) = (0u32, Vec::new(), PhaseRan::default());
        let ending = loop {
            let (load, stage) = match search.next() {
                Next::Done(ending) => break ending,
                Next::Probe { load, stage } => (load, stage),
            };
            let probe_runs = match stage {
                Stage::Explore => plan.probe_repeats.min(repeats),
                Stage::Confirm => repeats,
            };
            if let Some(spent_budget) = budget_spent(plan, spent, probe_runs, started.elapsed()) {
                break search.out_of_budget(spent_budget);
            }
            let point = probe_point(matrix, phase, options, probes.len(), load, stage)?;
            planned_points(&mut self.outcome, &phase.name).push(point.clone());
            let said = self
                .run_probe(phase, &point, probe_runs, held.as_deref_mut(), &mut ran)
                .await?;
            spent += u32::try_from(said.len()).unwrap_or(u32::MAX);
            let (verdict, passes, why) = probe_verdict(&said);
            let probe = SearchProbe {
                point: point.index,
                load: ends.value(load),
                stage: match stage {
                    Stage::Explore => ProbeStage::Explore,
                    Stage::Confirm => ProbeStage::Confirm,
                },
                hold_s: longest_hold(&point),
                runs: u32::try_from(said.len()).unwrap_or(u32::MAX),
                passes,
                verdict: outcome_of(&verdict),
                why,
            };
            (self.on_event)(Event::Probed {
                phase: &phase.name,
                probe: &probe,
            });
            probes.push(probe);
            search.record(load, stage, verdict);
            if ran.target_gone.is_some() && !matches!(search.next(), Next::Done(_)) {
                break search.stopped(load, "the target kept for the phase died".to_owned());
            }
        };
        let spend = Spend {
            runs: spent,
            wall_s: started.elapsed().as_secs_f64(),
        };
        let mut record = record_of(plan, &ends, probes, &ending, search.reported(), spend);
        record.warm_start = warm.map(|(_, warm)| warm);
        (self.on_event)(Event::SearchEnded {
            phase: &phase.name,
            record: &record,
            unspent: plan.max_runs.saturating_sub(spent) as usize,
        });
        // `--check` holds a search to its ending: the SLOs failing where it starts is a failure,
        // a probe that said nothing an unmeasured verdict.
        self.outcome.tally.count_search(record.ending);
        self.outcome.results.phases[slot].search = Some(record);
        self.outcome.results.write(&options.out)?;
        Ok(ran)
    }

    /// The runs of one probe, each judged; fewer than `probe_runs` when everything is to stop or
    /// the phase's kept target is gone (said in `ran`).
    async fn run_probe(
        &mut self,
        phase: &MatrixPhase,
        point: &Point,
        probe_runs: u32,
        mut held: Option<&mut Held>,
        ran: &mut PhaseRan,
    ) -> Result<Vec<RunSays>, RunError> {
        let slot = phase_slot_of(&self.outcome.results, &phase.name);
        let mut said = Vec::new();
        for repeat in 1..=probe_runs {
            let recorded = self
                .run_recorded(phase, point, repeat, held.as_deref_mut())
                .await?;
            if let Some(run) = self.outcome.results.phases[slot]
                .points
                .last()
                .and_then(|p| p.runs.last())
            {
                said.push(judge_run(run, self.matrix, self.options.competed_reruns));
            }
            ran.stop_all |= recorded.stop_all;
            if let Some(held) = held.as_deref_mut()
                && let Some(gone) = held.gone()
            {
                ran.target_gone = Some(gone);
            }
            if ran.stop_all || ran.target_gone.is_some() {
                break;
            }
            if !phase.cooldown.as_std().is_zero() {
                tokio::time::sleep(phase.cooldown.as_std()).await;
            }
        }
        Ok(said)
    }
}

/// Which budget a probe of `probe_runs` runs would overrun, after `spent` runs and `elapsed`
/// time, in words (`` `max_runs = 30` ``); `None` while both leave room for it.
fn budget_spent(
    plan: &PhaseSearch,
    spent: u32,
    probe_runs: u32,
    elapsed: std::time::Duration,
) -> Option<String> {
    if spent.saturating_add(probe_runs) > plan.max_runs {
        return Some(format!("`max_runs = {}`", plan.max_runs));
    }
    (elapsed >= plan.max_time.as_std()).then(|| format!("`max_time = \"{}\"`", plan.max_time))
}

/// The results' matrix points of `phase`: where the probes made are recorded.
fn planned_points<'a>(outcome: &'a mut Outcome, phase: &str) -> &'a mut Vec<Point> {
    let phases = &mut outcome.results.matrix.phases;
    let k = phases.iter().position(|p| p.name == phase).unwrap_or(0);
    &mut phases[k].points
}

/// The point of a probe: resolved at `load`, scaled down with `--quick` like every point, and
/// held for the probe hold when it explores.
fn probe_point(
    matrix: &RunMatrix,
    phase: &MatrixPhase,
    options: &RunOptions,
    index: usize,
    load: f64,
    stage: Stage,
) -> Result<Point, RunError> {
    let mut point = headroom_compiler::matrix::probe_point(phase, &matrix.target, index, load)
        .map_err(RunError::Search)?;
    if options.quick {
        crate::quick::shrink_point(&mut point, crate::quick::connect_rate(phase));
    }
    if stage == Stage::Explore
        && let Some(plan) = &phase.search
    {
        for scenario in &mut point.scenarios {
            let stages = scenario.stages_mut();
            stages.hold = Some(
                stages
                    .hold
                    .map_or(plan.probe_hold, |h| h.min(plan.probe_hold)),
            );
        }
    }
    point.run_time = headroom_matrix::run_time(&point.scenarios, &phase.measure, phase.cooldown);
    Ok(point)
}

/// The longest hold of a point's scenarios, in seconds.
fn longest_hold(point: &Point) -> f64 {
    point
        .scenarios
        .iter()
        .filter_map(|s| s.stages().hold)
        .map(|hold| hold.as_secs_f64())
        .fold(0.0, f64::max)
}

/// The bracket in words: its confirmed pass, the pass no full hold confirmed, and its top
/// (a fail, or a load whose runs split: `splits at 3,400 (1 of 3 passed)`).
fn bracket_words(
    ends: &SearchEnds,
    probes: &[SearchProbe],
    reported: &crate::search::Reported,
) -> String {
    let show = |load: f64| ends.value(load).to_string();
    let top = |fail: f64| {
        let at = ends.value(fail);
        match probes.iter().rev().find(|p| p.load == at) {
            Some(probe) if probe.verdict == crate::results::ProbeOutcome::Split => format!(
                "splits at {} ({} of {} runs passed)",
                show(fail),
                probe.passes,
                probe.runs
            ),
            _ => format!("fails at {}", show(fail)),
        }
    };
    let unconfirmed = |load: f64| {
        format!(
            "{} passed a shorter probe that no full-hold probe confirmed",
            show(load)
        )
    };
    match (reported.pass, reported.unconfirmed, reported.fail) {
        (Some(p), None, Some(f)) => format!("passes at {}, {}", show(p), top(f)),
        (Some(p), Some(u), Some(f)) => {
            format!("passes at {}, {}; {}", show(p), top(f), unconfirmed(u))
        }
        (Some(p), None, None) => format!("passes at {}", show(p)),
        (Some(p), Some(u), None) => format!("passes at {}; {}", show(p), unconfirmed(u)),
        (None, Some(u), fail) => format!(
            "not confirmed: {}{}",
            unconfirmed(u),
            fail.map_or_else(String::new, |f| format!(", {}", top(f)))
        ),
        (None, None, Some(f)) => format!("{}, nothing passed", top(f)),
        (None, None, None) => "nothing passed or failed".to_owned(),
    }
}

/// What a search spent: its runs and its wall time.
struct Spend {
    runs: u32,
    wall_s: f64,
}

/// The search's record: its probes, how it ended and in words, its bracket (the one
/// [`Search::reported`] decides) and its spend.
fn record_of(
    plan: &PhaseSearch,
    ends: &SearchEnds,
    probes: Vec<SearchProbe>,
    ending: &Ending,
    reported: crate::search::Reported,
    spend: Spend,
) -> SearchRecord {
    let Spend { runs, wall_s } = spend;
    let show = |load: f64| ends.value(load).to_string();
    let bracket = bracket_words(ends, &probes, &reported);
    let (kind, said) = match ending {
        Ending::Converged { pass, fail } => (
            SearchEnding::Converged,
            format!("{bracket} (within {:.1} %)", (fail - pass) / pass * 100.0),
        ),
        Ending::LowerBound { pass } => (
            SearchEnding::LowerBound,
            format!(
                "passes at {}, the most it probes ({}): the ceiling is at least that; raise `to` to find it",
                show(*pass),
                if plan.capped {
                    "`[capacity] cap`"
                } else {
                    "its `to`"
                }
            ),
        ),
        Ending::BelowFrom { fail } => (
            SearchEnding::BelowFrom,
            format!(
                "{}, where it starts: the ceiling is below it; lower `from`",
                bracket_words(
                    ends,
                    &probes,
                    &crate::search::Reported {
                        fail: Some(*fail),
                        ..Default::default()
                    }
                )
                .trim_end_matches(", nothing passed")
            ),
        ),
        Ending::GeneratorBound { at, why } => (
            SearchEnding::GeneratorBound,
            format!(
                "the generator could not send {}: {why}. The ceiling is beyond what this machine can send ({bracket}); split the load over machines (`run --segment`), give the target fewer cores, or pin it to its own (`[target] limits`, `pin = true`)",
                show(*at),
            ),
        ),
        Ending::Unjudged { at, why } => (
            SearchEnding::Unjudged,
            format!(
                "the probe at {} said nothing of the load: {why} ({bracket})",
                show(*at),
            ),
        ),
        Ending::OutOfBudget { why } => (
            SearchEnding::OutOfBudget,
            format!("stopped by {why}: {bracket}"),
        ),
    };
    let crate::search::Reported {
        pass,
        unconfirmed,
        fail,
    } = reported;
    SearchRecord {
        variable: plan.variable.clone(),
        probes,
        ending: kind,
        said,
        pass: pass.map(|p| ends.value(p)),
        unconfirmed: unconfirmed.map(|u| ends.value(u)),
        fail: fail.map(|f| ends.value(f)),
        precision: plan.precision.fraction(),
        precision_reached: pass.zip(fail).map(|(p, f)| (f - p) / p),
        runs,
        wall_s,
        warm_start: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max_time`: the search ends with the bracket it had, naming the budget.
    #[test]
    fn a_probe_past_the_budget_does_not_start() {
        let plan = PhaseSearch {
            variable: "rate".to_owned(),
            from: headroom_spec::VarValue::Text("25/s".to_owned()),
            to: headroom_spec::VarValue::Text("3200/s".to_owned()),
            capped: false,
            precision: headroom_spec::Percent::new(5.0),
            probe_hold: headroom_spec::Duration::from_secs(5),
            probe_repeats: 1,
            max_runs: 10,
            max_time: headroom_spec::Duration::from_secs(60),
            hold: None,
            scenarios: Vec::new(),
        };
        let second = std::time::Duration::from_secs(1);
        assert_eq!(budget_spent(&plan, 9, 1, second), None);
        assert_eq!(
            budget_spent(&plan, 8, 3, second).as_deref(),
            Some("`max_runs = 10`")
        );
        assert_eq!(
            budget_spent(&plan, 2, 1, 60 * second).as_deref(),
            Some("`max_time = \"1m\"`")
        );
    }
}
