//! Like with like: two sides measured on different machines, or under different limits, differ
//! by the machine as much as by the change, and no verdict should say which.

use headroom_results::{Environment, PointResults, RunLimits};

/// How `new`'s machine differs from `base`'s, one phrase a difference; empty when alike.
/// The `[vars]` values that differ between two runs, one phrase each (`workers: 1 → 2`,
/// with `(--set)` where a side set it from the command line; a variable only one side has
/// reads `–` on the other), then the environment variables `{env:…}` filled that differ.
pub fn levers(
    base_results: &headroom_results::Results,
    new_results: &headroom_results::Results,
) -> Vec<String> {
    let (base, new) = (&base_results.matrix, &new_results.matrix);
    let names: std::collections::BTreeSet<&String> =
        base.vars.keys().chain(new.vars.keys()).collect();
    let mut levers = Vec::new();
    for name in names {
        let (was, is) = (base.vars.get(name), new.vars.get(name));
        if was == is {
            continue;
        }
        let show = |value: Option<&headroom_spec::VarValue>| {
            value.map_or("–".to_owned(), ToString::to_string)
        };
        let set = if base.set.contains_key(name) || new.set.contains_key(name) {
            " (--set)"
        } else {
            ""
        };
        levers.push(format!("{name}: {} → {}{set}", show(was), show(is)));
    }
    levers.extend(env_levers(&base_results.env, &new_results.env));
    levers
}

/// The environment variables `{env:…}` filled that differ, without their values, which the
/// results never hold (`env TOKEN: changed`, `env WORKERS: unset → set`): a lever to show by
/// value is a `[vars]` variable.
fn env_levers(
    base: &std::collections::BTreeMap<String, headroom_results::EnvFill>,
    new: &std::collections::BTreeMap<String, headroom_results::EnvFill>,
) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = base.keys().chain(new.keys()).collect();
    let mut levers = Vec::new();
    for name in names {
        match (base.get(name), new.get(name)) {
            (Some(was), Some(is)) if was.differs_from(is) => {
                levers.push(format!("env {name}: changed"));
            }
            (Some(_), None) => levers.push(format!("env {name}: set → unset")),
            (None, Some(_)) => levers.push(format!("env {name}: unset → set")),
            _ => {}
        }
    }
    levers
}

/// How the new side's machine differs from the base's, a phrase each (`2 → 4 cores`); empty
/// when alike.
pub fn machine_differences(base: &Environment, new: &Environment) -> Vec<String> {
    let mut differences = Vec::new();
    if base.cpu_model != new.cpu_model {
        differences.push(format!(
            "CPU `{}` against `{}`",
            base.cpu_model, new.cpu_model
        ));
    }
    if base.logical_cores != new.logical_cores {
        differences.push(format!(
            "{} cores against {}",
            count(base.logical_cores),
            count(new.logical_cores)
        ));
    }
    if base.memory_bytes != new.memory_bytes {
        let gib = |bytes: Option<u64>| {
            bytes.map_or("unknown".to_owned(), |b| {
                format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
            })
        };
        differences.push(format!(
            "{} of memory against {}",
            gib(base.memory_bytes),
            gib(new.memory_bytes)
        ));
    }
    if base.kernel != new.kernel {
        differences.push(format!("kernel {} against {}", base.kernel, new.kernel));
    }
    differences
}

fn count(cores: Option<usize>) -> String {
    cores.map_or("unknown".to_owned(), |n| n.to_string())
}

/// The instance shape a point's target ran in, in words (its first run's).
pub fn shape(point: &PointResults) -> String {
    match point.runs.first().and_then(|run| run.limits.as_ref()) {
        Some(RunLimits::Applied(limits)) => limits.describe(),
        Some(RunLimits::Ignored) => "the whole machine (--ignore-limits)".to_owned(),
        None => "the whole machine".to_owned(),
    }
}

/// Runs of a point where the generator, not the server, may have set the figures, in words
/// (`side` names the file). The machine's load average is not judged here: the bench's own
/// target and generator count in it.
pub fn disturbed(side: &str, place: &str, point: &PointResults) -> Vec<String> {
    let bound: Vec<&str> = point
        .runs
        .iter()
        .filter(|run| run.generator.bound)
        .map(|run| {
            run.generator
                .reason
                .as_deref()
                .unwrap_or("no reason recorded")
        })
        .collect();
    bound
        .first()
        .map(|reason| {
            format!(
                "{side}, {place}: the generator was the bottleneck in {} of {} runs ({reason}): those figures are not the server's",
                bound.len(),
                point.runs.len()
            )
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_differ_by_what_was_recorded() {
        let base = Environment {
            cpu_model: "AMD EPYC".to_owned(),
            logical_cores: Some(2),
            memory_bytes: Some(24 << 30),
            kernel: "6.1.0".to_owned(),
            ..Environment::default()
        };
        assert!(machine_differences(&base, &base.clone()).is_empty());
        let new = Environment {
            cpu_model: "Apple M2".to_owned(),
            logical_cores: Some(8),
            ..base.clone()
        };
        assert_eq!(
            machine_differences(&base, &new),
            ["CPU `AMD EPYC` against `Apple M2`", "2 cores against 8"]
        );
    }
}
