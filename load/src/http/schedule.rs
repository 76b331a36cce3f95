//! An HTTP scenario's stages: ramp-up, hold and ramp-down, and the load at any moment.

use headroom_matrix::resolved::HttpScenario;
use std::time::Duration;

/// Ramp-up, hold and ramp-down, and the load at any moment of them.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub(super) ramp_up: f64,
    pub(super) hold: f64,
    pub(super) ramp_down: f64,
}

impl Schedule {
    /// Ramp-up, hold and ramp-down of `seconds` each.
    pub fn new(ramp_up: f64, hold: f64, ramp_down: f64) -> Schedule {
        Schedule {
            ramp_up,
            hold,
            ramp_down,
        }
    }

    /// The stages of a scenario, in seconds.
    pub fn of(scenario: &HttpScenario) -> Schedule {
        let stages = &scenario.stages;
        Schedule {
            ramp_up: stages.ramp_up.as_secs_f64(),
            hold: stages.hold.map_or(0.0, |hold| hold.as_secs_f64()),
            ramp_down: stages.ramp_down.as_secs_f64(),
        }
    }

    /// Ramp-up, hold and ramp-down, in seconds.
    pub fn stages(&self) -> (f64, f64, f64) {
        (self.ramp_up, self.hold, self.ramp_down)
    }

    /// Ramp-up, hold and ramp-down together.
    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.ramp_up + self.hold + self.ramp_down)
    }

    /// The load at `t` seconds: `start` at the ends of the ramps, `peak` during the hold.
    pub fn at(&self, t: f64, start: f64, peak: f64) -> f64 {
        if t < self.ramp_up {
            start + (peak - start) * t / self.ramp_up
        } else if t < self.ramp_up + self.hold {
            peak
        } else if self.ramp_down > 0.0 {
            peak + (start - peak) * ((t - self.ramp_up - self.hold) / self.ramp_down).min(1.0)
        } else {
            peak
        }
    }
}
