//! One phase expanded: its axes, the product of their values, and every point resolved and
//! checked.

use super::point_checks::{holds_apart, limits_checks, point_checks, size_checks};
use super::resolve::{bench_at, scenario_at, target_at};
use super::{MAX_POINTS_PER_PHASE, Origins, emulation, phase_target, resolve_measure, search};
use crate::checks::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use headroom_matrix::{
    Axis, MATRIX_FORMAT, MatrixPhase, Point, ResolvedMeasure, RunMatrix, run_time,
};
use headroom_spec::numbers::count;
use headroom_spec::{Duration, Scenario, Spec, VarValue};
use std::collections::{BTreeMap, HashSet};

/// A phase's axes, or `None` when a sweep has no values (the checker said why) or their
/// product is more points than may run (said here).
pub(super) fn phase_axes(
    phase: &headroom_spec::Phase,
    p: usize,
    checker: &Checker<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Axis>> {
    let mut axes = Vec::new();
    for (name, sweep) in &phase.vary {
        match sweep.values() {
            Ok(values) if !values.is_empty() => axes.push(Axis {
                variable: name.clone(),
                values,
            }),
            _ => return None,
        }
    }
    // Counted before anything is expanded: a product of long axes must not fill memory.
    let points = axes.iter().fold(1u64, |product, axis| {
        product.saturating_mul(axis.values.len() as u64)
    });
    if points > MAX_POINTS_PER_PHASE {
        let pointer = format!("/phase/{p}/vary");
        let sizes: Vec<String> = axes
            .iter()
            .map(|a| format!("{} `{}`", count(a.values.len() as f64), a.variable))
            .collect();
        diagnostics.push(
            Diagnostic::new(
                Code::TooLarge,
                format!(
                    "phase `{}` has {} points ({}): at most {} can run",
                    phase.name,
                    count(points as f64),
                    sizes.join(" × "),
                    count(MAX_POINTS_PER_PHASE as f64)
                ),
            )
            .at(&pointer, checker.document().key_span(&pointer))
            .label("the product of these axes")
            .hint(
                "sweep fewer values (a geometric range needs few), or split the sweep into phases",
            ),
        );
        return None;
    }
    Some(axes)
}

/// One phase being expanded: what it reads, and what it reports.
pub(super) struct Expansion<'s, 'd> {
    pub(super) spec: &'s Spec,
    pub(super) checker: &'s Checker<'s>,
    /// The phase's index in the spec, for pointers.
    pub(super) p: usize,
    pub(super) phase: &'s headroom_spec::Phase,
    /// Each diagnostic once per place, however many points share it.
    pub(super) reported: &'d mut HashSet<(Code, String)>,
    pub(super) diagnostics: &'d mut Vec<Diagnostic>,
    /// A point could not be resolved: the plan is not made.
    pub(super) failed: bool,
}

impl Expansion<'_, '_> {
    /// The phase with every point of its axes' product resolved.
    pub(super) fn phase(&mut self, axes: Vec<Axis>) -> MatrixPhase {
        let (spec, phase) = (self.spec, self.phase);
        let scenarios: Vec<&Scenario> = self.checker.phase_scenarios(phase);
        let measure = resolve_measure(&spec.measure, phase.measure.as_ref());
        let points: Vec<Point> = combinations(&axes)
            .into_iter()
            .enumerate()
            .filter_map(|(index, combination)| {
                self.point(index, &axes, &combination, &scenarios, &measure)
            })
            .collect();
        let estimated = points.iter().fold(Duration::ZERO, |sum, point| {
            sum.saturating_add(point.run_time.saturating_mul(u64::from(phase.repeats)))
        });
        let search = points
            .first()
            .and_then(|first| search::phase_search(spec, phase, &scenarios, first));
        let mut expanded = MatrixPhase {
            name: phase.name.clone(),
            description: phase.description.clone(),
            axes,
            repeats: phase.repeats,
            cooldown: phase.cooldown,
            on_failure: phase.on_failure,
            order: phase.order,
            process: spec.target.process,
            measure,
            scenarios: scenarios.iter().map(|s| s.name().to_owned()).collect(),
            points,
            estimated,
            emulates: None,
            scales: None,
            search,
        };
        if let Some(worst) = expanded.search_worst_case() {
            expanded.estimated = worst;
        }
        expanded
    }

    /// The point at `combination` of the axes: its variables, each scenario and the target
    /// resolved, its checks reported; `None` when its target could not be resolved.
    fn point(
        &mut self,
        index: usize,
        axes: &[Axis],
        combination: &[usize],
        scenarios: &[&Scenario],
        measure: &ResolvedMeasure,
    ) -> Option<Point> {
        let (spec, phase, p) = (self.spec, self.phase, self.p);
        let (vars, at, origins) = point_vars(spec, phase, p, axes, combination);
        let mut resolved = Vec::new();
        for scenario in scenarios {
            let i = spec
                .scenarios
                .iter()
                .position(|s| s.name() == scenario.name())
                .unwrap_or(0);
            let base = format!("/scenario/{i}");
            let Ok(scenario) = scenario_at(scenario, phase.hold, &vars) else {
                // The value's type was reported by the checker; this point cannot run.
                self.failed = true;
                continue;
            };
            let written = &spec.scenarios[i];
            let phase_hold = phase.hold.map(|_| format!("/phase/{p}/hold"));
            for diagnostic in point_checks(
                &scenario,
                written,
                &base,
                phase_hold.as_deref(),
                &origins,
                &at,
                self.checker,
            )
            .into_iter()
            .chain(size_checks(&scenario, &base, &at, self.checker))
            {
                if self
                    .reported
                    .insert((diagnostic.code, diagnostic.pointer.clone()))
                {
                    self.diagnostics.push(diagnostic);
                }
            }
            resolved.push(scenario);
        }
        if let Some(diagnostic) = holds_apart(&resolved, scenarios, p, &at, self.checker)
            && self
                .reported
                .insert((diagnostic.code, diagnostic.pointer.clone()))
        {
            self.diagnostics.push(diagnostic);
        }
        let Ok(target) = target_at(&spec.target, &vars) else {
            self.failed = true;
            return None;
        };
        if let Some(limits) = &target.limits {
            for diagnostic in limits_checks(limits, &origins, &at, self.checker) {
                if self
                    .reported
                    .insert((diagnostic.code, diagnostic.pointer.clone()))
                {
                    self.diagnostics.push(diagnostic);
                }
            }
        }
        let run_time = run_time(&resolved, measure, phase.cooldown);
        Some(Point {
            index,
            at,
            vars,
            target,
            scenarios: resolved,
            run_time,
        })
    }
}

/// A point's variables (`[vars]`, the phase's `set`, then its axes' values), the axes' values
/// alone, and where each variable was written.
fn point_vars(
    spec: &Spec,
    phase: &headroom_spec::Phase,
    p: usize,
    axes: &[Axis],
    combination: &[usize],
) -> (
    BTreeMap<String, VarValue>,
    BTreeMap<String, VarValue>,
    Origins,
) {
    let mut vars = spec.vars.clone();
    let mut origins = Origins {
        pointers: BTreeMap::new(),
    };
    for name in spec.vars.keys() {
        origins
            .pointers
            .insert(name.clone(), format!("/vars/{}", escape(name)));
    }
    for (name, value) in &phase.set {
        vars.insert(name.clone(), value.clone());
        origins
            .pointers
            .insert(name.clone(), format!("/phase/{p}/set/{}", escape(name)));
    }
    let mut at = BTreeMap::new();
    for (axis, k) in axes.iter().zip(combination) {
        let value = axis.values[*k].clone();
        vars.insert(axis.variable.clone(), value.clone());
        at.insert(axis.variable.clone(), value);
        let origin = match phase.vary.get(&axis.variable) {
            Some(headroom_spec::Sweep::List(_)) => {
                format!("/phase/{p}/vary/{}/{k}", escape(&axis.variable))
            }
            _ => format!("/phase/{p}/vary/{}", escape(&axis.variable)),
        };
        origins.pointers.insert(axis.variable.clone(), origin);
    }
    (vars, at, origins)
}

/// Index tuples of the axes' product, the last axis changing fastest.
fn combinations(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in axes {
        let mut next = Vec::with_capacity(out.len() * axis.values.len());
        for prefix in &out {
            for k in 0..axis.values.len() {
                let mut combination = prefix.clone();
                combination.push(k);
                next.push(combination);
            }
        }
        out = next;
    }
    out
}

/// Expands the phases. Returns the plan, or `None` with the diagnostics found on the way.
pub fn expand(
    spec: &Spec,
    checker: &Checker<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<RunMatrix> {
    let mut phases = Vec::new();
    let mut reported: HashSet<(Code, String)> = HashSet::new();
    let mut failed = false;
    for (p, phase) in spec.phases.iter().enumerate() {
        let axes = phase_axes(phase, p, checker, diagnostics);
        // Once a phase failed, the rest are not expanded: the plan is not made anyway.
        let Some(axes) = axes.filter(|_| !failed) else {
            failed = true;
            continue;
        };
        let mut expansion = Expansion {
            spec,
            checker,
            p,
            phase,
            reported: &mut reported,
            diagnostics,
            failed: false,
        };
        let expanded = expansion.phase(axes);
        failed |= expansion.failed;
        let kept = phase_target::phase_target_checks(spec, &expanded, checker);
        failed |= !kept.is_empty();
        diagnostics.extend(kept);
        phases.push(expanded);
    }
    if failed {
        return None;
    }
    // People per unit is one number for the whole bench: a `"{var}"` takes the variable's
    // value in [vars] (the checker refuses one that a phase varies).
    let bench = bench_at(&spec.bench, &spec.vars).ok()?;
    // Runs go phase by phase, in each in rounds or point by point (its `order`).
    let runs = emulation::runs_of(&phases);
    let estimated = phases
        .iter()
        .fold(Duration::ZERO, |sum, p| sum.saturating_add(p.estimated));
    Some(RunMatrix {
        format: MATRIX_FORMAT,
        bench,
        vars: spec.vars.clone(),
        set: BTreeMap::new(),
        target: spec.target.clone(),
        generator: spec.generator.clone(),
        slo: checker.slo.clone(),
        capacity: spec.capacity.clone(),
        plan: spec.plan.clone(),
        gates: checker.gates.clone(),
        phases,
        runs,
        estimated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_run_the_last_axis_fastest() {
        let axes = vec![
            Axis {
                variable: "a".into(),
                values: vec![VarValue::Integer(1), VarValue::Integer(2)],
            },
            Axis {
                variable: "b".into(),
                values: vec![
                    VarValue::Integer(10),
                    VarValue::Integer(20),
                    VarValue::Integer(30),
                ],
            },
        ];
        let all = combinations(&axes);
        assert_eq!(all.len(), 6);
        assert_eq!(all[0], [0, 0]);
        assert_eq!(all[1], [0, 1]);
        assert_eq!(all[3], [1, 0]);
        assert_eq!(combinations(&[]), vec![Vec::<usize>::new()]);
    }
}
