//! `process = "per-phase"`: one target for a whole phase can only be kept when every point of
//! the phase would start the same one, and a step run once a phase is the same at every point.

use headroom_spec::target::StepScope;

use crate::checks::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use headroom_matrix::{MatrixPhase, Point, resolved};
use headroom_spec::Spec;
use headroom_spec::target::ProcessMode;
use std::collections::{BTreeMap, HashSet};

/// A part of the target that differs between two points: where it is written, and what it is.
struct Difference {
    pointer: String,
    what: String,
}

/// Where in an argv two points differ: the first argument that is not the same, or the whole
/// list when their lengths differ.
fn argv_pointer(base: String, a: &[String], b: &[String]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) if a.len() == b.len() => format!("{base}/{i}"),
        _ => base,
    }
}

/// Where in an environment two points differ: the first variable that is not the same.
fn env_pointer(base: String, a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> String {
    match a.iter().find(|(key, value)| b.get(*key) != Some(*value)) {
        Some((key, _)) => format!("{base}/{}", escape(key)),
        None => base,
    }
}

/// The parts of the target (and of the steps run once a phase) that differ between `a` and
/// `b`, in the order they are written.
fn differences(a: &resolved::Target, b: &resolved::Target) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |same: bool, pointer: String, what: String| {
        if !same {
            out.push(Difference { pointer, what });
        }
    };
    let command = match (&a.command, &b.command) {
        (Some(x), Some(y)) => argv_pointer("/target/command".into(), x, y),
        _ => "/target/command".into(),
    };
    differ(a.command == b.command, command, "its `command`".into());
    differ(a.cwd == b.cwd, "/target/cwd".into(), "its `cwd`".into());
    let env = env_pointer("/target/env".into(), &a.env, &b.env);
    differ(a.env == b.env, env, "its `env`".into());
    differ(
        a.ready == b.ready,
        "/target/ready".into(),
        "its `ready`".into(),
    );
    differ(
        a.metrics == b.metrics,
        "/target/metrics".into(),
        "its `metrics`".into(),
    );
    differ(
        a.limits == b.limits,
        "/target/limits".into(),
        "its `limits`".into(),
    );
    for (x, y) in a.services.iter().zip(&b.services) {
        let base = format!("/target/services/{}", escape(&x.name));
        let service = &x.name;
        for (same, key, pointer) in [
            (
                x.command == y.command,
                "command",
                argv_pointer(format!("{base}/command"), &x.command, &y.command),
            ),
            (x.cwd == y.cwd, "cwd", format!("{base}/cwd")),
            (
                x.env == y.env,
                "env",
                env_pointer(format!("{base}/env"), &x.env, &y.env),
            ),
            (x.ready == y.ready, "ready", format!("{base}/ready")),
            (x.limits == y.limits, "limits", format!("{base}/limits")),
        ] {
            differ(same, pointer, format!("service `{service}`'s `{key}`"));
        }
    }
    for (list, x_steps, y_steps) in [
        ("setup", &a.setup, &b.setup),
        ("teardown", &a.teardown, &b.teardown),
    ] {
        for (k, (x, y)) in x_steps.iter().zip(y_steps).enumerate() {
            if x.per != StepScope::Phase {
                continue;
            }
            let pointer = if x.command == y.command {
                format!("/target/{list}/{k}")
            } else {
                argv_pointer(
                    format!("/target/{list}/{k}/command"),
                    &x.command,
                    &y.command,
                )
            };
            differ(
                x == y,
                pointer,
                format!("the {list} step `{}` run once a phase", x.name),
            );
        }
    }
    out
}

/// How a point is named in a diagnostic: its swept values.
fn point_words(point: &Point) -> String {
    headroom_spec::vars::point_label(&point.at)
}

/// With `process = "per-phase"` (and headroom starting the target), every point of `phase`
/// must start the same target; each part that differs is reported once, at where it is
/// written.
pub(super) fn phase_target_checks(
    spec: &Spec,
    phase: &MatrixPhase,
    checker: &Checker<'_>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if spec.target.process != ProcessMode::PerPhase {
        return out;
    }
    let Some(first) = phase.points.first() else {
        return out;
    };
    if !first.target.is_started() {
        return out;
    }
    let mut seen = HashSet::new();
    for point in &phase.points[1..] {
        for difference in differences(&first.target, &point.target) {
            if !seen.insert(difference.pointer.clone()) {
                continue;
            }
            let span = checker
                .document()
                .value_span(&difference.pointer)
                .or_else(|| checker.document().key_span(&difference.pointer));
            out.push(
                Diagnostic::new(
                    Code::PhaseTarget,
                    format!(
                        "phase `{}` keeps one target for all its points (`process = \"per-phase\"`), but {} differs between them",
                        phase.name, difference.what
                    ),
                )
                .at(&difference.pointer, span)
                .label(format!(
                    "not the same at {} and at {}",
                    point_words(first),
                    point_words(point)
                ))
                .hint("keep the phase's swept variables out of the target (use them in the scenarios, or in steps run at every point), or remove `process = \"per-phase\"` (a fresh target per point)"),
            );
        }
    }
    out
}
