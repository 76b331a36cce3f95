//! `[target.services]`, `front`, setup and teardown steps, and `[measure]` series read by a
//! command: a stack that can start in order, steps that can run, a series read one way.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use crate::suggest::did_you_mean;
use headroom_spec::placeholder::builtin;
use headroom_spec::target::{ProcessMode, StepScope};
use std::collections::BTreeSet;

/// What a `[target]` with services may not set itself: each service has its own.
const SERVICE_KEYS: &[&str] = &["cwd", "env", "ready", "stop", "limits", "pid_file"];

impl<'a> Checker<'a> {
    pub(super) fn stack(&mut self) {
        let target = &self.spec.target;
        let services = &target.services;
        let context: Vec<&str> = builtin::EVERYWHERE
            .iter()
            .copied()
            .chain([builtin::SERVICE_PORTS])
            .collect();
        for (name, service) in services {
            let base = format!("/target/services/{}", escape(name));
            self.service_name(&base, name);
            let what = format!("service `{name}`");
            for (i, arg) in service.command.iter().enumerate() {
                self.string(&format!("{base}/command/{i}"), arg, &context, &what);
            }
            for (key, value) in &service.env {
                self.string(
                    &format!("{base}/env/{}", escape(key)),
                    value,
                    &context,
                    &what,
                );
            }
            if let Some(cwd) = &service.cwd {
                self.string(&format!("{base}/cwd"), cwd, &context, &what);
            }
            if let Some(http) = &service.ready.http {
                self.string(&format!("{base}/ready/http"), http, &context, &what);
                self.host(&format!("{base}/ready/http"), http);
            }
            self.readiness_of(&format!("{base}/ready"), &service.ready, true);
            if let Some(limits) = &service.limits {
                self.service_limits(&base, limits);
            }
            self.service_after(&base, name, &service.after);
        }
        if let Err(stuck) = headroom_spec::target::start_order(services) {
            let pointer = format!("/target/services/{}/after", escape(stuck));
            self.push(
                Diagnostic::new(Code::Stack, format!("the services' `after` lists go round in a circle through `{stuck}`"))
                    .at(&pointer, self.value_span(&pointer))
                    .label("no service of the circle can start first")
                    .hint("remove one `after` of the circle: the service that needs the other's port at start-up keeps it"),
            );
        }
        self.front();
        self.stack_lifecycle();
        self.steps(&context);
        self.series_commands(&context);
    }

    /// A service's `[limits]`: its values, and `pin`, which a stack does not carry out.
    fn service_limits(&mut self, base: &str, limits: &headroom_spec::target::Limits) {
        if let Some(cpus) = &limits.cpus {
            self.param(&format!("{base}/limits/cpus"), cpus);
        }
        if let Some(memory) = &limits.memory {
            self.param(&format!("{base}/limits/memory"), memory);
        }
        if limits.pin {
            let pointer = format!("{base}/limits/pin");
            self.push(
                Diagnostic::new(
                    Code::NotImplemented,
                    "`pin` is not carried out for a stack's services yet",
                )
                .at(&pointer, self.key_span(&pointer))
                .label("cores are not split between services")
                .hint("remove `pin`: each service is held to its `cpus` by a CPU quota"),
            );
        }
    }

    /// A service's `after`: each an other service of the stack.
    fn service_after(&mut self, base: &str, name: &str, after: &[String]) {
        for (k, before) in after.iter().enumerate() {
            let pointer = format!("{base}/after/{k}");
            if before == name {
                self.push(
                    Diagnostic::new(Code::Stack, format!("service `{name}` starts after itself"))
                        .at(&pointer, self.value_span(&pointer))
                        .label("a service cannot wait for itself")
                        .hint("remove it from `after`"),
                );
            } else if !self.spec.target.services.contains_key(before) {
                let known: Vec<&str> = self
                    .spec
                    .target
                    .services
                    .keys()
                    .map(String::as_str)
                    .collect();
                self.push(
                    Diagnostic::new(
                        Code::Stack,
                        format!("service `{name}` starts after `{before}`, which is no service"),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label("names no service")
                    .hint(
                        did_you_mean(before, known.iter().copied())
                            .unwrap_or_else(|| format!("the services are: {}", known.join(", "))),
                    ),
                );
            }
        }
    }

    /// A service name is a placeholder's (`{port.db}`) and a file name's.
    fn service_name(&mut self, base: &str, name: &str) {
        let fits = !name.is_empty()
            && name
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-');
        if !fits {
            self.push(
                Diagnostic::new(Code::BadName, format!("`{name}` cannot name a service"))
                    .at(base, self.key_span(base))
                    .label("lower-case letters, digits, `-` and `_` only")
                    .hint("name it like `db`, `api` or `worker-1`: `{port.NAME}` names it"),
            );
        }
    }

    /// `front` names a service, and a stack of several has one.
    fn front(&mut self) {
        let target = &self.spec.target;
        let services = &target.services;
        match &target.front {
            Some(front) if services.is_empty() => self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    "`front` is set, and [target] has no services",
                )
                .at("/target/front", self.key_span("/target/front"))
                .label("names the service load goes to, in a stack")
                .hint(format!(
                    "remove `front`, or describe the stack under `[target.services.{front}]`"
                )),
            ),
            Some(front) if !services.contains_key(front) => {
                let known: Vec<&str> = services.keys().map(String::as_str).collect();
                self.push(
                    Diagnostic::new(
                        Code::Stack,
                        format!("`front = \"{front}\"` names no service"),
                    )
                    .at("/target/front", self.value_span("/target/front"))
                    .label("not under [target.services]")
                    .hint(
                        did_you_mean(front, known.iter().copied())
                            .unwrap_or_else(|| format!("the services are: {}", known.join(", "))),
                    ),
                );
            }
            None if services.len() > 1 => {
                let known: Vec<&str> = services.keys().map(String::as_str).collect();
                self.push(
                    Diagnostic::new(Code::Stack, "a stack of several services and no `front`")
                        .at("/target/services", self.key_span("/target/services"))
                        .label("which service does the load go to?")
                        .hint(format!("add `front = \"{}\"` to [target]: its port is `{{port}}` in the scenarios, `ready.http` and `metrics`", known.last().copied().unwrap_or("api"))),
                );
            }
            _ => {}
        }
    }

    /// A stack is instead of `command` and `url`; what a process has is set per service.
    fn stack_lifecycle(&mut self) {
        let target = &self.spec.target;
        if target.services.is_empty() {
            return;
        }
        for key in ["command", "url"] {
            let pointer = format!("/target/{key}");
            if self.document.place(&pointer).is_some() {
                self.push(
                    Diagnostic::new(
                        Code::ConflictingSettings,
                        format!("[target] has both `{key}` and services"),
                    )
                    .at(&pointer, self.key_span(&pointer))
                    .label("a target is one command, a URL or a stack")
                    .hint(format!(
                        "remove `{key}`, or describe the target as a stack only"
                    )),
                );
            }
        }
        for key in SERVICE_KEYS {
            let pointer = format!("/target/{key}");
            if self.document.place(&pointer).is_some() {
                self.push(
                    Diagnostic::new(
                        Code::Stack,
                        format!("`{key}` in [target] has no effect on a stack"),
                    )
                    .at(&pointer, self.key_span(&pointer))
                    .label("each service has its own")
                    .hint(format!(
                        "move `{key}` into the service it belongs to: `[target.services.NAME]`"
                    )),
                );
            }
        }
        if self.spec.plan.as_ref().is_some_and(|plan| plan.emulate) {
            self.push(
                Diagnostic::new(Code::NotImplemented, "`emulate` is not carried out for a stack yet")
                    .at("/plan/emulate", self.value_span("/plan/emulate"))
                    .label("which services would share the instance?")
                    .hint("remove `emulate`; give each service the `limits` of the instance it would run on"),
            );
        }
    }

    /// Setup and teardown steps: their strings fill, their names differ, their time is not 0.
    fn steps(&mut self, context: &[&str]) {
        let target = &self.spec.target;
        for (list, steps) in [("setup", &target.setup), ("teardown", &target.teardown)] {
            let mut seen = BTreeSet::new();
            for (k, step) in steps.iter().enumerate() {
                let base = format!("/target/{list}/{k}");
                let what = format!("{list} step `{}`", step.name);
                for (i, arg) in step.command.iter().enumerate() {
                    self.string(&format!("{base}/command/{i}"), arg, context, &what);
                }
                for (key, value) in &step.env {
                    self.string(
                        &format!("{base}/env/{}", escape(key)),
                        value,
                        context,
                        &what,
                    );
                }
                if let Some(cwd) = &step.cwd {
                    self.string(&format!("{base}/cwd"), cwd, context, &what);
                }
                if !seen.insert(step.name.as_str()) {
                    let pointer = format!("{base}/name");
                    self.push(
                        Diagnostic::new(
                            Code::DuplicateName,
                            format!("two {list} steps are named `{}`", step.name),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("already defined above")
                        .hint("give each step its own name: results and failures name it"),
                    );
                }
                if step.per == StepScope::Phase
                    && target.process == ProcessMode::PerPoint
                    && target.url.is_none()
                {
                    let pointer = format!("{base}/per");
                    self.push(
                        Diagnostic::new(
                            Code::PhaseTarget,
                            format!("{what} runs once a phase, but every point starts a fresh target"),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("no target lives for the whole phase")
                        .hint("set `process = \"per-phase\"` in [target] (one target for the phase), or remove `per` (the step runs at every point)"),
                    );
                }
                if step.timeout.as_micros() == 0 {
                    let pointer = format!("{base}/timeout");
                    self.push(
                        Diagnostic::new(
                            Code::OutOfRange,
                            "`timeout = \"0s\"` gives the step no time to run",
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("every run would fail here")
                        .hint("give it time: `timeout = \"60s\"` (the default)"),
                    );
                }
            }
        }
    }

    /// A series is read from the metrics (`metric`) or by a command, one of the two.
    fn series_commands(&mut self, context: &[&str]) {
        for (base, series) in self.series_lists() {
            for (k, s) in series.iter().enumerate() {
                let at = format!("{base}/{k}");
                let what = format!("series `{}`", s.name);
                match (&s.metric, &s.command) {
                    (Some(_), Some(_)) => {
                        let pointer = format!("{at}/command");
                        self.push(
                            Diagnostic::new(Code::ConflictingSettings, format!("series `{}` has both `metric` and `command`", s.name))
                                .at(&pointer, self.key_span(&pointer))
                                .label("a series is read one way")
                                .hint("keep `metric` (scraped from the target's metrics) or `command` (run during the load)"),
                        );
                    }
                    (None, None) => self.push(
                        Diagnostic::new(Code::MissingSetting, format!("series `{}` has neither `metric` nor `command`", s.name))
                            .at(&at, self.key_span(&at))
                            .label("nothing to read")
                            .hint("add `metric = \"name_of_the_metric\"`, or `command = [\"psql\", \"-Atc\", \"select count(*) from pg_stat_activity\"]`"),
                    ),
                    _ => {}
                }
                if let Some(command) = &s.command {
                    for (i, arg) in command.iter().enumerate() {
                        self.string(&format!("{at}/command/{i}"), arg, context, &what);
                    }
                    let pointer = format!("{at}/labels");
                    if self.document.place(&pointer).is_some() {
                        self.push(
                            Diagnostic::new(
                                Code::ConflictingSettings,
                                format!("series `{}` reads a command and has `labels`", s.name),
                            )
                            .at(&pointer, self.key_span(&pointer))
                            .label("labels pick a metric's samples")
                            .hint("remove `labels`: the command's output is the value"),
                        );
                    }
                } else if s.every.is_some() {
                    let pointer = format!("{at}/every");
                    self.push(
                        Diagnostic::new(Code::ConflictingSettings, format!("series `{}` has `every` and no `command`", s.name))
                            .at(&pointer, self.key_span(&pointer))
                            .label("a metric is scraped at the steady state, as [measure] steady_state says")
                            .hint("remove `every`, or read the series with `command`"),
                    );
                }
                if s.every.is_some_and(|every| every.as_micros() == 0) {
                    let pointer = format!("{at}/every");
                    self.push(
                        Diagnostic::new(
                            Code::OutOfRange,
                            "`every = \"0s\"` would run the command without a pause",
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label("no time between readings")
                        .hint("read it every few seconds: `every = \"2s\"`"),
                    );
                }
            }
        }
    }
}
