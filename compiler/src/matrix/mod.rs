//! Making the run matrix ([`headroom_matrix::RunMatrix`]): every phase expanded into points (the product of its axes), every point
//! resolved (variables substituted, defaults applied), in a deterministic order, with an
//! estimate of the wall time.

use std::collections::BTreeMap;

use headroom_matrix::ResolvedMeasure;
use headroom_spec::phase::MeasureDefaults;
use headroom_spec::{Duration, Measure};

mod emulation;
mod expansion;
mod phase_target;
mod point_checks;
mod resolve;
mod scaling;
mod search;

pub use emulation::{emulate, emulated_name};
pub use expansion::expand;
pub use scaling::scale_cores;
pub use search::probe_point;

/// Points one phase may have: the product of its axes, counted before they are expanded.
pub const MAX_POINTS_PER_PHASE: u64 = 10_000;
/// Requests one HTTP scenario may plan in one run (its rate over its ramps and hold).
pub const MAX_REQUESTS_PER_RUN: f64 = 50_000_000.0;
/// Sockets one rooms scenario may open in one run.
pub const MAX_SOCKETS_PER_RUN: f64 = 200_000.0;
/// The largest message a rooms scenario may send.
pub const MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// Where a variable's value at a point was written, for diagnostics about that value.
struct Origins {
    pointers: BTreeMap<String, String>,
}

impl Origins {
    /// The pointer to blame for a field: its variable's value if the spec wrote a variable.
    fn blame(&self, field: &str, var: Option<&str>) -> String {
        var.and_then(|name| self.pointers.get(name))
            .cloned()
            .unwrap_or_else(|| field.to_owned())
    }
}

fn resolve_measure(global: &Measure, phase: Option<&Measure>) -> ResolvedMeasure {
    let pick = |f: fn(&Measure) -> Option<Duration>| phase.and_then(f).or_else(|| f(global));
    ResolvedMeasure {
        sample_every: pick(|m| m.sample_every).unwrap_or(MeasureDefaults::SAMPLE_EVERY),
        steady_state: phase
            .and_then(|m| m.steady_state.clone())
            .or_else(|| global.steady_state.clone())
            .unwrap_or_default(),
        series: global
            .series
            .iter()
            .filter(|s| !phase.is_some_and(|m| m.series.iter().any(|o| o.name == s.name)))
            .chain(phase.into_iter().flat_map(|m| m.series.iter()))
            .cloned()
            .collect(),
    }
}
