//! Which sweep each ceiling comes from, and the ceiling an SLO sweep gives. The page calls the
//! same two choosers, so a page and `headroom plan` never disagree.

use super::*;
use crate::points::MeasuredSweep;

/// The ceiling an SLO sweep gives: the largest point that passes every SLO.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// The SLO ceiling of a sweep: the last passing point before the first failing one. `None`
/// when nothing in the sweep was judged.
pub fn slo_ceiling(sweep: &MeasuredSweep, chosen_because: &str) -> Option<SloCeiling> {
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
            .filter(|s| s.emulates.is_none())
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
            // A phase run in an instance's shape is that instance's ceiling, not the bench's.
            let over_units = |s: &&MeasuredSweep| {
                s.emulates.is_none()
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
