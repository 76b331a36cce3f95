//! Which sweep each ceiling comes from, and the ceiling an SLO sweep gives. The page calls the
//! same two choosers, so a page and `headroom plan` never disagree.

use crate::points::MeasuredSweep;
use serde::Serialize;

/// The ceiling an SLO sweep gives: the largest point that passes every SLO.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SloCeiling {
    /// The phase the verdicts come from, and why the planner took it.
    pub phase: String,
    /// Why this phase (`capacity.ceiling_phase`, or its rule).
    pub chosen_because: String,
    /// The last point that passed every SLO; `None` when they failed already at the first.
    pub units: Option<f64>,
    /// The first step where something failed; `None` when every step passed.
    pub first_failing: Option<f64>,
    /// What did not hold at the first failing point.
    pub broke: Vec<String>,
    /// Whether an SLO was over its threshold at the first failing point, or only runs
    /// failed and figures went unmeasured there (nothing says the ceiling is below it).
    pub breached: bool,
    /// No point failed: the ceiling is at least this, the most tested.
    pub lower_bound: bool,
    /// How a searched phase found it: its bracket's precision and what it took.
    pub search: Option<SearchedCeiling>,
}

/// How a phase that searched found its ceiling (its bracket is the ceiling's `units` and
/// `first_failing`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchedCeiling {
    /// How the search ended.
    pub ending: headroom_results::SearchEnding,
    /// How it ended, in words.
    pub said: String,
    /// The precision asked, as a fraction (0.05).
    pub precision: f64,
    /// `(fail − pass) / pass` of its bracket, when it has both ends.
    pub precision_reached: Option<f64>,
    /// A load above the ceiling that passed a shorter exploring probe and that no full-hold
    /// probe confirmed: said, never priced.
    pub unconfirmed: Option<f64>,
    /// Runs it took.
    pub runs: u32,
    /// Seconds it took.
    pub wall_s: f64,
    /// It started from another instance's bracket, in words.
    pub warm_start: Option<String>,
}

impl SearchedCeiling {
    /// What it took, in words: `13 runs in 1.5 min`.
    pub fn spent(&self) -> String {
        search_spent(self.runs, self.wall_s)
    }

    /// How narrow its bracket is, in words: ` (±4.8 %, 5 % asked)`; empty without a bracket.
    pub fn within(&self) -> String {
        self.precision_reached.map_or_else(String::new, |reached| {
            format!(
                " (±{:.1} %, {:.0} % asked)",
                reached * 100.0,
                self.precision * 100.0
            )
        })
    }

    /// Where it started, after a `; `, when it started from another instance's bracket.
    pub fn warm(&self) -> String {
        self.warm_start
            .as_ref()
            .map_or_else(String::new, |warm| format!("; {warm}"))
    }
}

/// What a search took, in words: `13 runs in 1.5 min`, `4 runs in 40 s`.
pub fn search_spent(runs: u32, wall_s: f64) -> String {
    let minutes = wall_s / 60.0;
    let time = if minutes < 1.0 {
        format!("{wall_s:.0} s")
    } else {
        format!("{minutes:.1} min")
    };
    let noun = if runs == 1 { "run" } else { "runs" };
    format!("{runs} {noun} in {time}")
}

/// The SLO ceiling of a searched phase: the last pass of its bracket, the first fail above it
/// and why that failed.
fn searched_ceiling(
    sweep: &MeasuredSweep,
    record: &headroom_results::SearchRecord,
    chosen_because: &str,
) -> SloCeiling {
    // The confirmed pass only: a load that passed a shorter probe is no ceiling to price.
    let units = record.pass_number();
    // A split bounds the ceiling as a fail does (files before issue 41 recorded a split's
    // load apart from the bracket).
    let first_failing = record
        .fail_number()
        .or_else(|| record.boundary().and_then(|p| p.load_number()));
    let broke = record.fail_why().map(str::to_owned).into_iter().collect();
    SloCeiling {
        phase: sweep.name.clone(),
        chosen_because: chosen_because.to_owned(),
        units,
        first_failing,
        broke,
        breached: first_failing.is_some(),
        lower_bound: units.is_some() && first_failing.is_none(),
        search: Some(SearchedCeiling {
            ending: record.ending,
            said: record.said.clone(),
            precision: record.precision,
            precision_reached: record.precision_reached,
            unconfirmed: record.unconfirmed_number(),
            runs: record.runs,
            wall_s: record.wall_s,
            warm_start: record.warm_start.as_ref().map(|warm| {
                format!(
                    "started at {}: `{}`'s last pass {} × {} (the vCPU ratio)",
                    warm.start, warm.from_phase, warm.its_pass, warm.scale
                )
            }),
        }),
    }
}

/// The SLO ceiling of a sweep: the last passing point before the first failing one; of a
/// searched phase, its bracket. `None` when nothing in the sweep was judged.
pub fn slo_ceiling(sweep: &MeasuredSweep, chosen_because: &str) -> Option<SloCeiling> {
    if let Some(record) = &sweep.search {
        return Some(searched_ceiling(sweep, record, chosen_because));
    }
    if sweep.verdicts.is_empty() {
        return None;
    }
    let mut last_pass = None;
    for (x, verdict) in &sweep.verdicts {
        if !verdict.pass {
            return Some(SloCeiling {
                phase: sweep.name.clone(),
                chosen_because: chosen_because.to_owned(),
                units: last_pass,
                first_failing: Some(x.0),
                broke: verdict.broke.clone(),
                breached: verdict.measured_breach,
                lower_bound: false,
                search: None,
            });
        }
        last_pass = Some(x.0);
    }
    Some(SloCeiling {
        phase: sweep.name.clone(),
        chosen_because: chosen_because.to_owned(),
        units: last_pass,
        first_failing: None,
        broke: Vec::new(),
        breached: false,
        lower_bound: true,
        search: None,
    })
}

/// What the planner knows of the spec's capacity model, to choose its sweeps.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// The variable that counts units; `None` takes any sweep.
    pub units: Option<&'a str>,
    /// The series memory is provisioned against.
    pub memory_series: &'a str,
    /// The phase the spec names for the memory fit.
    pub memory_phase: Option<&'a str>,
    /// The phase the spec names for the SLO ceiling.
    pub ceiling_phase: Option<&'a str>,
}

/// A sweep the planner uses, and why that one.
#[derive(Debug, Clone, Copy)]
pub struct Chosen<'a> {
    /// The sweep.
    pub sweep: &'a MeasuredSweep,
    /// Why it, in words.
    pub because: &'static str,
}

/// The sweep memory is fitted over: the one the spec names, else the first over the units
/// variable that carries the memory series. `Err` says why there is none. The page and
/// `headroom plan` both call this, so they never disagree.
pub fn memory_sweep<'a>(
    sweeps: &'a [MeasuredSweep],
    selection: Selection,
) -> Result<Chosen<'a>, String> {
    let has_series = |s: &MeasuredSweep| s.series.iter().any(|p| p.name == selection.memory_series);
    let series = selection.memory_series;
    match selection.memory_phase {
        Some(name) => {
            let sweep = sweeps.iter().find(|s| s.name == name).ok_or_else(|| {
                format!("the memory phase `{name}` is not in the results (or sweeps no single variable)")
            })?;
            if let Some(units) = selection.units
                && sweep.x != units
            {
                return Err(format!(
                    "the memory phase `{name}` sweeps `{}`, not `{units}`: its slope is memory per {}, not per unit, so it gives no memory ceiling",
                    sweep.x, sweep.x
                ));
            }
            if !has_series(sweep) {
                return Err(format!(
                    "the memory phase `{name}` carries no series `{series}`: no memory ceiling"
                ));
            }
            Ok(Chosen {
                sweep,
                because: "named by `capacity.memory_phase`",
            })
        }
        None => sweeps
            .iter()
            .filter(|s| s.emulates.is_none() && s.scales.is_none())
            .find(|s| selection.units.is_none_or(|u| s.x == u) && has_series(s))
            .map(|sweep| Chosen {
                sweep,
                because: "`capacity.memory_phase` is not set: the first phase that sweeps the units and records the memory series",
            })
            .ok_or_else(|| match selection.units {
                Some(units) => format!(
                    "no phase sweeps `{units}` with the series `{series}`: no memory ceiling"
                ),
                None => format!("no sweep carries the memory series `{series}`: no memory ceiling"),
            }),
    }
}

/// The sweep whose SLO verdicts give the ceiling: the one the spec names, else the first over
/// the units variable where an SLO failed, else the first over it judged at several steps.
pub fn ceiling_sweep<'a>(
    sweeps: &'a [MeasuredSweep],
    selection: Selection,
) -> Result<Chosen<'a>, String> {
    match selection.ceiling_phase {
        Some(name) => {
            let sweep = sweeps.iter().find(|s| s.name == name).ok_or_else(|| {
                format!("the ceiling phase `{name}` is not in the results (or sweeps no single variable)")
            })?;
            if sweep.verdicts.is_empty() {
                return Err(format!(
                    "the ceiling phase `{name}` was judged by no SLO: no SLO ceiling"
                ));
            }
            Ok(Chosen {
                sweep,
                because: "named by `capacity.ceiling_phase`",
            })
        }
        None => {
            // A phase run in an instance's shape (or at a core count) is that shape's ceiling,
            // not the bench's.
            let over_units = |s: &&MeasuredSweep| {
                s.emulates.is_none()
                    && s.scales.is_none()
                    && selection.units.is_none_or(|u| s.x == u)
                    && !s.verdicts.is_empty()
            };
            sweeps
                .iter()
                .filter(over_units)
                .find(|s| s.verdicts.values().any(|v| !v.pass))
                .map(|sweep| Chosen {
                    sweep,
                    because: "`capacity.ceiling_phase` is not set: the first phase over the units where an SLO failed",
                })
                .or_else(|| {
                    sweeps
                        .iter()
                        .filter(over_units)
                        .find(|s| s.verdicts.len() > 1)
                        .map(|sweep| Chosen {
                            sweep,
                            because: "`capacity.ceiling_phase` is not set and no SLO failed: the first phase over the units judged at several steps",
                        })
                })
                .ok_or_else(|| "no sweep over the units was judged by SLOs: no SLO ceiling".to_owned())
        }
    }
}

/// The points of a series at the steps that passed their SLOs (or were not judged), and how
/// many were left out.
pub fn passing_points(sweep: &MeasuredSweep, points: &[(f64, f64)]) -> (Vec<(f64, f64)>, usize) {
    let passing: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, _)| {
            sweep
                .verdicts
                .get(&crate::points::OrderedX(*x))
                .is_none_or(|verdict| verdict.pass)
        })
        .copied()
        .collect();
    let left_out = points.len() - passing.len();
    (passing, left_out)
}
