//! `[[phase]]` and `[measure]`: axes that exist and change something, holds, series names.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use crate::suggest::did_you_mean;
use headroom_spec::vars::{MAX_SWEEP_VALUES, RangeError};
use headroom_spec::{Scenario, Sweep, VarValue};
use std::collections::{BTreeMap, BTreeSet};

/// A value as it is written in TOML (`16`, `"1/s"`).
fn toml_value(value: &VarValue) -> String {
    match value {
        VarValue::Text(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}

impl<'a> Checker<'a> {
    pub(super) fn phases(&mut self) {
        let spec = self.spec;
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        let scenario_names: Vec<&str> = spec.scenarios.iter().map(Scenario::name).collect();
        for (p, phase) in spec.phases.iter().enumerate() {
            let base = format!("/phase/{p}");
            if let Some(first) = seen.insert(&phase.name, p) {
                let pointer = format!("{base}/name");
                self.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!("two phases are named `{}`", phase.name),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label(format!("phase #{} has this name too", first + 1))
                    .hint(
                        "give each phase its own name: `--phase NAME` and the results file use it",
                    ),
                );
            }
            for (name, sweep) in &phase.vary {
                self.axis(phase, &base, name, sweep);
                if let Some(search) = sweep.search() {
                    self.search(phase, &base, name, search);
                }
            }
            for name in phase.set.keys() {
                if !spec.vars.contains_key(name) {
                    let pointer = format!("{base}/set/{}", escape(name));
                    self.unknown_variable(&pointer, name, "sets");
                }
            }
            self.phase_runs(phase, &base, &scenario_names);
        }
    }

    /// One axis of `vary`: a declared variable, values to sweep, not also set, used.
    fn axis(&mut self, phase: &headroom_spec::Phase, base: &str, name: &str, sweep: &Sweep) {
        let spec = self.spec;
        let pointer = format!("{base}/vary/{}", escape(name));
        if !spec.vars.contains_key(name) {
            self.unknown_variable(&pointer, name, "varies");
            return;
        }
        match sweep.values() {
            Ok(values) if values.is_empty() => self.push(
                Diagnostic::new(Code::EmptySweep, format!("phase `{}` varies `{name}` over no values", phase.name))
                    .at(&pointer, self.value_span(&pointer))
                    .label("no values")
                    .hint(format!("list the values, e.g. `{name} = [1, 4, 16]`")),
            ),
            Ok(_) => {}
            Err(RangeError::TooLong(n)) => self.push(
                Diagnostic::new(
                    Code::BadRange,
                    format!(
                        "the range of `{name}` has {} values: a sweep may have at most {}",
                        headroom_spec::numbers::count(n as f64),
                        headroom_spec::numbers::count(MAX_SWEEP_VALUES as f64)
                    ),
                )
                .at(&pointer, self.value_span(&pointer))
                .label("too many values")
                .hint(match sweep {
                    Sweep::Range(range) => format!(
                        "a geometric range covers the same span in few values: `{{ from = {}, to = {}, factor = 2 }}`",
                        toml_value(&range.from),
                        toml_value(&range.to)
                    ),
                    Sweep::List(_) | Sweep::Search(_) => "sweep fewer values".to_owned(),
                }),
            ),
            Err(error) => self.push(
                Diagnostic::new(Code::BadRange, match sweep {
                    Sweep::Search(_) => format!("the search of `{name}` cannot run: {error}"),
                    _ => format!("the range of `{name}` gives no values: {error}"),
                })
                    .at(&pointer, self.value_span(&pointer))
                    .label("bad range")
                    .hint(match sweep {
                        Sweep::Search(_) => "write `{ search = { from = \"100/s\", to = \"20000/s\" } }`: `from` above 0, `to` above it, both in one unit".to_owned(),
                        _ => "write `{ from = 16, to = 128, factor = 2 }` or `{ from = 50, to = 500, step = 50 }`, or list the values".to_owned(),
                    }),
            ),
        }
        if phase.set.contains_key(name) {
            let set_pointer = format!("{base}/set/{}", escape(name));
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    format!("phase `{}` both varies and sets `{name}`", phase.name),
                )
                .at(&set_pointer, self.key_span(&set_pointer))
                .label("also in `vary`")
                .hint(format!("remove `{name}` from `set` or from `vary`")),
            );
        }
        let used = self.usages.get(name).is_some_and(|u| !u.is_empty());
        if !used {
            self.push(
                Diagnostic::new(Code::UnusedSweep, format!("phase `{}` varies `{name}`, but nothing uses `{{{name}}}`", phase.name))
                    .at(&pointer, self.key_span(&pointer))
                    .label("every point of this sweep would run the same load")
                    .hint(format!("use it where it should change the load, e.g. `rooms = \"{{{name}}}\"` in a scenario")),
            );
        }
    }

    /// The scenarios a phase runs exist, each point runs more than once, and every scenario
    /// has a hold.
    fn phase_runs(&mut self, phase: &headroom_spec::Phase, base: &str, scenario_names: &[&str]) {
        if let Some(names) = &phase.scenarios {
            for (k, name) in names.iter().enumerate() {
                if !scenario_names.contains(&name.as_str()) {
                    let pointer = format!("{base}/scenarios/{k}");
                    self.push(
                        Diagnostic::new(
                            Code::UnknownReference,
                            format!(
                                "phase `{}` runs scenario `{name}`, which does not exist",
                                phase.name
                            ),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("no scenario has this name")
                        .hint(
                            did_you_mean(name, scenario_names.iter().copied()).unwrap_or_else(
                                || format!("the scenarios are: {}", scenario_names.join(", ")),
                            ),
                        ),
                    );
                }
            }
        }
        if phase.repeats == 1 {
            let pointer = format!("{base}/repeats");
            self.push(
                Diagnostic::new(
                    Code::SingleRepeat,
                    format!("phase `{}` runs every point once", phase.name),
                )
                .at(&pointer, self.value_span(&pointer))
                .label("no spread to tell noise from effect")
                .hint("use `repeats = 3` (the default) so tables show min / median / max"),
            );
        }
        if phase.hold.is_none() {
            for scenario in self.phase_scenarios(phase) {
                if scenario.stages().hold.is_none() {
                    self.push(
                        Diagnostic::new(Code::MissingSetting, format!("phase `{}` gives scenario `{}` no hold time", phase.name, scenario.name()))
                            .at(base, self.key_span(base))
                            .label("how long is the load held at each point?")
                            .hint(format!("add `hold = \"30s\"` to the phase, or `stages = {{ hold = \"30s\" }}` to scenario `{}`", scenario.name())),
                    );
                }
            }
        }
    }

    /// The scenarios a phase runs: those it names, or all of them.
    pub fn phase_scenarios(&self, phase: &headroom_spec::Phase) -> Vec<&'a Scenario> {
        let spec = self.spec;
        spec.scenarios
            .iter()
            .filter(|s| {
                phase
                    .scenarios
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| n == s.name()))
            })
            .collect()
    }

    /// Every `[measure]` series list with its pointer: the spec's and each phase's.
    pub(super) fn series_lists(&self) -> Vec<(String, &'a Vec<headroom_spec::Series>)> {
        let spec = self.spec;
        let mut lists = vec![("/measure/series".to_owned(), &spec.measure.series)];
        for (p, phase) in spec.phases.iter().enumerate() {
            if let Some(measure) = &phase.measure {
                lists.push((format!("/phase/{p}/measure/series"), &measure.series));
            }
        }
        lists
    }

    pub(super) fn measure(&mut self) {
        for (base, series) in self.series_lists() {
            let mut seen = BTreeSet::new();
            for (k, s) in series.iter().enumerate() {
                let pointer = format!("{base}/{k}/name");
                if s.name == "rss" || s.name == "cpu" {
                    self.push(
                        Diagnostic::new(
                            Code::ReservedName,
                            format!("`{}` is the built-in process series", s.name),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("reserved name")
                        .hint(format!(
                            "name the metrics series differently, e.g. `{}_metric`",
                            s.name
                        )),
                    );
                } else if !seen.insert(s.name.as_str()) {
                    self.push(
                        Diagnostic::new(
                            Code::DuplicateName,
                            format!("two series are named `{}`", s.name),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("already defined above")
                        .hint("give each series its own name"),
                    );
                }
            }
        }
    }
}
