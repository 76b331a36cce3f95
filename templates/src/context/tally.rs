//! What the runs add up to over the whole file.

use super::stat::Stat;
use super::{Generator, RunCounts, Spread};

/// What the runs add up to over the whole file: how many ran and failed, the load average,
/// the generator's cores and lag.
#[derive(Default)]
pub(super) struct RunTally {
    pub(super) runs: RunCounts,
    loads: Vec<f64>,
    generator_cores: Vec<f64>,
    /// The largest seen.
    generator_lag: Option<f64>,
    generator_available: Option<u64>,
}

impl RunTally {
    pub(super) fn count(&mut self, run: &headroom_results::RunResult) {
        self.runs.total += 1;
        if run.failure.is_some() {
            self.runs.failed += 1;
        }
        if run.generator.bound {
            self.runs.generator_bound += 1;
        }
        let outside = run
            .scenarios
            .values()
            .filter_map(|s| s.outside_hold.as_ref());
        let mut failed_outside = false;
        for counts in outside.filter(|c| c.errors.total() > 0) {
            failed_outside = true;
            self.runs.outside_hold_errors.add(&counts.errors);
        }
        self.runs.failed_outside_hold += u64::from(failed_outside);
        if run.generator.paused.is_some() {
            self.runs.machine_paused += 1;
            if let Some(pauses) = run.generator.pauses {
                let longest = self
                    .runs
                    .longest_pause_ms
                    .unwrap_or(0.0)
                    .max(pauses.longest_ms);
                self.runs.longest_pause_ms = Some(longest);
            }
        }
        if let Some(machine) = run.machine_cpu {
            if machine.competed() {
                self.runs.machine_competed += 1;
            }
            let most = |seen: Option<f64>, now: f64| Some(seen.unwrap_or(0.0).max(now));
            self.runs.most_others_cores = most(self.runs.most_others_cores, machine.others_cores);
            self.runs.most_stolen_cores = most(self.runs.most_stolen_cores, machine.stolen_cores);
        }
        // A run that ended before its load (never ready, exited early) measured neither the
        // generator nor the load average: its zeros are not figures.
        if run.scenarios.is_empty() {
            return;
        }
        let generator = &run.generator;
        self.generator_cores.push(generator.cpu_cores);
        let lag = generator.schedule_lag_p99_ms;
        self.generator_lag = Some(self.generator_lag.map_or(lag, |l| l.max(lag)));
        let cores = generator.cores_available as u64;
        self.generator_available = Some(self.generator_available.map_or(cores, |c| c.max(cores)));
        self.loads
            .extend([run.load_average.min, run.load_average.max]);
    }

    pub(super) fn finish(self) -> (RunCounts, Option<Spread>, Option<Generator>) {
        let load_average = Stat::of(&self.loads).map(|s| Spread {
            min: s.min,
            max: s.max,
        });
        let generator = Stat::of(&self.generator_cores).map(|cores| Generator {
            cpu_cores: Spread {
                min: cores.min,
                max: cores.max,
            },
            cores_available: self.generator_available,
            schedule_lag_p99_ms: self.generator_lag,
        });
        (self.runs, load_average, generator)
    }
}
