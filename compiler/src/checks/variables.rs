//! Variables and placeholders: every `{name}` names something, every variable fits each use.

use super::{Checker, Usage};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use crate::suggest::{did_you_mean, did_you_mean_placeholder};
use headroom_spec::placeholder::{PlaceholderName, builtin};
use headroom_spec::{Param, ParamValue, ValueKind, VarValue, placeholder};
use std::collections::BTreeSet;

impl<'a> Checker<'a> {
    pub(super) fn variable_names(&mut self) {
        for name in self.spec.vars.keys() {
            if builtin::ALL.contains(&name.as_str()) || name == "env" {
                let pointer = format!("/vars/{}", escape(name));
                self.push(
                    Diagnostic::new(Code::ReservedName, format!("`{name}` is a built-in placeholder and cannot be a variable"))
                        .at(&pointer, self.key_span(&pointer))
                        .label("reserved name")
                        .hint(format!("rename it, e.g. `{name}s` or `my_{name}`; the runner fills `{{{name}}}` itself")),
                );
            }
        }
    }

    /// Checks the placeholders of one string and records the variables it uses.
    pub(super) fn string(
        &mut self,
        pointer: &str,
        text: &str,
        context: &[&str],
        context_name: &str,
    ) {
        for found in placeholder::scan(text) {
            match found {
                Err(unclosed) => {
                    let span = self.inner_span(pointer, unclosed.range.clone());
                    self.push(
                        Diagnostic::new(
                            Code::UnclosedPlaceholder,
                            format!(
                                "`{}` opens a placeholder but never closes it",
                                &text[unclosed.range.clone()]
                            ),
                        )
                        .at(pointer, span)
                        .label("no closing `}`")
                        .hint("close it with `}`, e.g. `{port}`"),
                    );
                }
                Ok(found) => match found.name {
                    PlaceholderName::Env(_) => {}
                    PlaceholderName::Row(column) => {
                        self.row_placeholder(pointer, column, found.range.clone());
                    }
                    PlaceholderName::Capture(name) => {
                        self.capture_placeholder(pointer, name, found.range.clone());
                    }
                    PlaceholderName::Port(service) => {
                        self.port_placeholder(
                            pointer,
                            service,
                            found.range.clone(),
                            context,
                            context_name,
                        );
                    }
                    PlaceholderName::Name(name) => {
                        if context.contains(&name) {
                            continue;
                        }
                        if self.spec.vars.contains_key(name) {
                            self.usages.entry(name.to_owned()).or_default().push(Usage {
                                kind: None,
                                pointer: pointer.to_owned(),
                            });
                            continue;
                        }
                        let span = self.inner_span(pointer, found.range.clone());
                        let candidates: Vec<&str> = context
                            .iter()
                            .copied()
                            .chain(self.spec.vars.keys().map(String::as_str))
                            .collect();
                        let hint = if builtin::ALL.contains(&name) {
                            format!(
                                "`{{{name}}}` is not filled in {context_name}; {}",
                                where_builtin(name)
                            )
                        } else {
                            did_you_mean_placeholder(name, candidates.iter().copied()).unwrap_or_else(
                                || format!("declare `{name}` under [vars] with a default value, or use one of: {}", braces(&candidates)),
                            )
                        };
                        self.push(
                            Diagnostic::new(
                                Code::UnknownPlaceholder,
                                format!("unknown placeholder `{{{name}}}`"),
                            )
                            .at(pointer, span)
                            .label("names no variable or built-in")
                            .hint(hint),
                        );
                    }
                },
            }
        }
    }

    /// `{port.NAME}`: a service of the stack, where service ports are filled.
    fn port_placeholder(
        &mut self,
        pointer: &str,
        service: &str,
        range: std::ops::Range<usize>,
        context: &[&str],
        context_name: &str,
    ) {
        let known = self.spec.target.services.contains_key(service);
        if known && context.contains(&builtin::SERVICE_PORTS) {
            return;
        }
        let span = self.inner_span(pointer, range);
        let services: Vec<&str> = self
            .spec
            .target
            .services
            .keys()
            .map(String::as_str)
            .collect();
        let (label, hint) = if !context.contains(&builtin::SERVICE_PORTS) {
            (
                "not filled here".to_owned(),
                format!(
                    "`{{port.NAME}}` is filled in [target] (services, setup and teardown steps, `metrics`) and in `[measure]` series commands; {context_name} takes `{{port}}`, the front service's"
                ),
            )
        } else if services.is_empty() {
            (
                "this spec has no services".to_owned(),
                "describe the stack under `[target.services.NAME]`, or write `{port}`".to_owned(),
            )
        } else {
            (
                "names no service".to_owned(),
                format!("the services are: {}", services.join(", ")),
            )
        };
        self.push(
            Diagnostic::new(
                Code::UnknownPlaceholder,
                format!("unknown placeholder `{{port.{service}}}`"),
            )
            .at(pointer, span)
            .label(label)
            .hint(hint),
        );
    }

    /// Records a typed use of a variable, or reports a variable nobody declared.
    pub(super) fn param<T: ParamValue>(&mut self, pointer: &str, param: &Param<T>) {
        let Param::Var(name) = param else { return };
        if self.spec.vars.contains_key(name) {
            self.usages.entry(name.clone()).or_default().push(Usage {
                kind: Some(T::KIND),
                pointer: pointer.to_owned(),
            });
            return;
        }
        let hint = did_you_mean_placeholder(name, self.spec.vars.keys().map(String::as_str))
            .unwrap_or_else(|| {
                format!(
                    "declare it under [vars] with a default: `{name} = {}`",
                    T::KIND.sample()
                )
            });
        self.push(
            Diagnostic::new(
                Code::UnknownPlaceholder,
                format!("unknown placeholder `{{{name}}}`: no variable `{name}`"),
            )
            .at(pointer, self.value_span(pointer))
            .label("names no variable")
            .hint(hint),
        );
    }

    /// The unit count is a whole number (0 or more) or a rate at every point.
    pub(super) fn units_usage(&mut self) {
        if let Some(units) = &self.spec.capacity.units
            && self.spec.vars.contains_key(units)
        {
            self.typed_only.push((
                units.clone(),
                Usage {
                    kind: Some(ValueKind::Units),
                    pointer: "/capacity/units".to_owned(),
                },
            ));
        }
    }

    /// Every typed use of a variable must accept the variable's values: the default and every
    /// value a phase gives it.
    pub(super) fn variable_types(&mut self) {
        let spec = self.spec;
        let mut all = self.usages.clone();
        for (name, usage) in &self.typed_only {
            all.entry(name.clone()).or_default().push(usage.clone());
        }
        for (name, usages) in all {
            let typed: Vec<&Usage> = usages.iter().filter(|u| u.kind.is_some()).collect();
            if typed.is_empty() {
                continue;
            }
            let mut values: Vec<(String, &VarValue)> = Vec::new();
            if let Some(default) = spec.vars.get(&name) {
                values.push((format!("/vars/{}", escape(&name)), default));
            }
            for (p, phase) in spec.phases.iter().enumerate() {
                if let Some(value) = phase.set.get(&name) {
                    values.push((format!("/phase/{p}/set/{}", escape(&name)), value));
                }
                if let Some(headroom_spec::Sweep::List(list)) = phase.vary.get(&name) {
                    for (k, value) in list.iter().enumerate() {
                        values.push((format!("/phase/{p}/vary/{}/{k}", escape(&name)), value));
                    }
                }
            }
            let baseline = spec.capacity.units.as_deref() == Some(name.as_str());
            for (pointer, value) in values {
                for usage in &typed {
                    let Some(kind) = usage.kind else { continue };
                    // The units variable's 0 is the baseline point: no users, no rooms.
                    if baseline && kind == ValueKind::Count && *value == VarValue::Integer(0) {
                        continue;
                    }
                    if let Err(reason) = kind.check(value) {
                        let used_at = usage.pointer.trim_start_matches('/').replace('/', ".");
                        self.push(
                            Diagnostic::new(Code::VariableType, format!("this value of `{name}` does not fit where `{{{name}}}` is used: {reason}"))
                                .at(&pointer, self.value_span(&pointer))
                                .label(format!("expected {}", kind.describe()))
                                .hint(format!("`{{{name}}}` is used at `{used_at}`, which takes {}: {}", kind.describe(), kind.example())),
                        );
                        break;
                    }
                }
            }
        }
    }

    pub(super) fn unused_variables(&mut self) {
        let spec = self.spec;
        let varied: BTreeSet<&str> = spec
            .phases
            .iter()
            .flat_map(|p| p.vary.keys().map(String::as_str))
            .collect();
        for name in spec.vars.keys() {
            let used = self.usages.get(name).is_some_and(|u| !u.is_empty())
                || spec.capacity.units.as_deref() == Some(name.as_str());
            if !used && !varied.contains(name.as_str()) && !builtin::ALL.contains(&name.as_str()) {
                let pointer = format!("/vars/{}", escape(name));
                self.push(
                    Diagnostic::new(
                        Code::UnusedVariable,
                        format!("variable `{name}` is never used"),
                    )
                    .at(&pointer, self.key_span(&pointer))
                    .label("no placeholder names it")
                    .hint(format!("use it as \"{{{name}}}\", or remove it")),
                );
            }
        }
    }

    pub(super) fn unknown_variable(&mut self, pointer: &str, name: &str, verb: &str) {
        let hint = did_you_mean(name, self.spec.vars.keys().map(String::as_str))
            .unwrap_or_else(|| format!("declare it under [vars] with its default: `{name} = …`"));
        self.push(
            Diagnostic::new(
                Code::UnknownVariable,
                format!("the phase {verb} `{name}`, which [vars] does not declare"),
            )
            .at(pointer, self.key_span(pointer))
            .label("not a variable")
            .hint(hint),
        );
    }
}

fn where_builtin(name: &str) -> &'static str {
    match name {
        "room" | "peer" => "it is filled in a rooms scenario's `url`, `join` and `reload.url`",
        "seq" | "stamp" | "payload" => "it is filled in a rooms scenario's `send.template`",
        _ => "it is filled everywhere else",
    }
}

fn braces(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{{{n}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}
