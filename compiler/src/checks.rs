//! Semantic checks: what the schema cannot see. Every check reports by JSON pointer, so the
//! spec types stay free of spans.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use headroom_pricing::PriceTable;
use headroom_spec::placeholder::{self, PlaceholderName, builtin};
use headroom_spec::scenario::Executor;
use headroom_spec::{Param, ParamValue, Scenario, Spec, ValueKind, VarValue};
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Document, escape};
use crate::slo::{self, SloErrorKind, SloRule};
use crate::suggest::{did_you_mean, did_you_mean_placeholder};

/// Where a variable is used, and as what (`None`: inside a string, any value will do).
#[derive(Debug, Clone)]
pub struct Usage {
    pub kind: Option<ValueKind>,
    pub pointer: String,
}

pub struct Checker<'a> {
    source: &'a str,
    spec: &'a Spec,
    document: &'a Document,
    prices: &'a PriceTable,
    pub diagnostics: Vec<Diagnostic>,
    pub usages: BTreeMap<String, Vec<Usage>>,
    /// Typed uses that do not change the load (the unit count), for type checks only.
    typed_only: Vec<(String, Usage)>,
    pub slo: Vec<SloRule>,
}

impl<'a> Checker<'a> {
    pub fn new(
        source: &'a str,
        spec: &'a Spec,
        document: &'a Document,
        prices: &'a PriceTable,
    ) -> Checker<'a> {
        Checker {
            source,
            spec,
            document,
            prices,
            diagnostics: Vec::new(),
            usages: BTreeMap::new(),
            typed_only: Vec::new(),
            slo: Vec::new(),
        }
    }

    pub fn run(mut self) -> Self {
        self.variable_names();
        self.target();
        self.scenarios();
        self.units_usage();
        self.variable_types();
        self.phases();
        self.measure();
        self.slos();
        self.capacity();
        self.plan();
        self.unused_variables();
        self
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    pub fn spec(&self) -> &'a Spec {
        self.spec
    }

    pub fn document(&self) -> &'a Document {
        self.document
    }

    fn value_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.document.value_span(pointer)
    }

    fn key_span(&self, pointer: &str) -> Option<Range<usize>> {
        self.document.key_span(pointer)
    }

    /// The span of `range` inside the string value at `pointer`, when the source writes the
    /// string without escapes (so offsets match); the whole value otherwise.
    pub fn inner_span(&self, pointer: &str, range: Range<usize>) -> Option<Range<usize>> {
        let span = self.value_span(pointer)?;
        let written = self.document_source_slice(&span)?;
        let decoded = self
            .document
            .json
            .pointer(pointer)
            .and_then(Value::as_str)?;
        for quote in ["\"\"\"", "'''", "\"", "'"] {
            if let Some(inner) = written
                .strip_prefix(quote)
                .and_then(|w| w.strip_suffix(quote))
                && inner == decoded
            {
                let start = span.start + quote.len();
                return Some(start + range.start..start + range.end);
            }
        }
        Some(span)
    }

    fn document_source_slice(&self, span: &Range<usize>) -> Option<&'a str> {
        self.source.get(span.clone())
    }
}

impl<'a> Checker<'a> {
    fn variable_names(&mut self) {
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
    fn string(&mut self, pointer: &str, text: &str, context: &[&str], context_name: &str) {
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

    /// Records a typed use of a variable, or reports a variable nobody declared.
    fn param<T: ParamValue>(&mut self, pointer: &str, param: &Param<T>) {
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

    fn target(&mut self) {
        let target = &self.spec.target;
        let everywhere = builtin::EVERYWHERE;
        for (i, arg) in target.command.iter().flatten().enumerate() {
            self.string(
                &format!("/target/command/{i}"),
                arg,
                everywhere,
                "the target",
            );
        }
        for (key, value) in &target.env {
            self.string(
                &format!("/target/env/{}", escape(key)),
                value,
                everywhere,
                "the target",
            );
        }
        if let Some(cwd) = &target.cwd {
            self.string("/target/cwd", cwd, everywhere, "the target");
        }
        if let Some(url) = &target.url {
            self.string("/target/url", url, everywhere, "the target");
            self.host("/target/url", url);
        }
        if let Some(metrics) = &target.metrics {
            self.string("/target/metrics", metrics, everywhere, "the target");
            self.host("/target/metrics", metrics);
        }
        if let Some(http) = &target.ready.http {
            self.string("/target/ready/http", http, everywhere, "the target");
            self.host("/target/ready/http", http);
        }
        if let Some(limits) = &target.limits {
            if let Some(cpus) = &limits.cpus {
                self.param("/target/limits/cpus", cpus);
            }
            if let Some(memory) = &limits.memory {
                self.param("/target/limits/memory", memory);
            }
        }
        self.param(
            "/bench/people_per_unit",
            &self.spec.bench.people_per_unit.clone(),
        );

        match (&target.command, &target.url) {
            (Some(_), Some(_)) => self.push(
                Diagnostic::new(Code::ConflictingSettings, "[target] has both `command` and `url`")
                    .at("/target/url", self.key_span("/target/url"))
                    .label("a target is started by headroom or runs elsewhere, not both")
                    .hint("keep `command` to let headroom start a fresh server per point, or `url` for an external server"),
            ),
            (None, None) => self.push(
                Diagnostic::new(Code::MissingSetting, "[target] has neither `command` nor `url`")
                    .at("/target", self.key_span("/target"))
                    .label("nothing to start and nowhere to send load")
                    .hint("add `command = [\"{headroom}\", \"demo-target\", \"--port\", \"{port}\"]` or `url = \"http://127.0.0.1:8080\"`"),
            ),
            (None, Some(_)) => {
                // An external target has no lifecycle: settings about starting it mean nothing.
                let lifecycle = ["cwd", "env", "stop", "process", "limits"];
                for key in lifecycle {
                    let pointer = format!("/target/{key}");
                    if self.document.place(&pointer).is_some() {
                        self.push(
                            Diagnostic::new(Code::ConflictingSettings, format!("`{key}` has no effect on an external target (`url`)"))
                                .at(&pointer, self.key_span(&pointer))
                                .label("headroom does not start or stop this server")
                                .hint(format!("remove `{key}`, or start the server with `command` instead of `url`")),
                        );
                    }
                }
            }
            (Some(_), None) => {
                if self.document.place("/target/pid_file").is_some() {
                    self.push(
                        Diagnostic::new(Code::ConflictingSettings, "`pid_file` is for an external target; headroom knows the pid of the server it starts")
                            .at("/target/pid_file", self.key_span("/target/pid_file"))
                            .label("not used with `command`")
                            .hint("remove `pid_file`"),
                    );
                }
            }
        }
        let ready = [
            ("http", target.ready.http.is_some()),
            ("tcp", target.ready.tcp.is_some()),
            ("log", target.ready.log.is_some()),
        ];
        let set: Vec<&str> = ready
            .iter()
            .filter(|(_, set)| *set)
            .map(|(k, _)| *k)
            .collect();
        if set.len() > 1 {
            let pointer = format!("/target/ready/{}", set[1]);
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    format!("`ready` has both `{}` and `{}`", set[0], set[1]),
                )
                .at(&pointer, self.key_span(&pointer))
                .label("one readiness check at a time")
                .hint("keep one of `http`, `tcp` and `log`"),
            );
        }
    }

    /// Load goes to loopback, or to a host the spec allows by name.
    fn host(&mut self, pointer: &str, url: &str) {
        let Some(rest) = url.split_once("://").map(|(_, rest)| rest) else {
            return;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let authority = authority.rsplit('@').next().unwrap_or_default();
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or_default()
        } else {
            authority.split(':').next().unwrap_or_default()
        };
        if host.is_empty() || host.contains('{') {
            return;
        }
        let loopback = host == "localhost"
            || host == "::1"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        if loopback || self.spec.target.allow_hosts.iter().any(|h| h == host) {
            return;
        }
        let start = url.find(host).unwrap_or(0);
        let span = self.inner_span(pointer, start..start + host.len());
        self.push(
            Diagnostic::new(Code::HostNotAllowed, format!("load to `{host}` is not allowed: it is not loopback"))
                .at(pointer, span)
                .label("not 127.0.0.1, ::1 or localhost")
                .hint(format!("use 127.0.0.1, or add `allow_hosts = [\"{host}\"]` to [target] if this host is yours to load")),
        );
    }

    fn scenarios(&mut self) {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        let spec = self.spec;
        for (i, scenario) in spec.scenarios.iter().enumerate() {
            let base = format!("/scenario/{i}");
            if let Some(first) = seen.insert(scenario.name(), i) {
                let pointer = format!("{base}/name");
                self.push(
                    Diagnostic::new(Code::DuplicateName, format!("two scenarios are named `{}`", scenario.name()))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("scenario #{} has this name too", first + 1))
                        .hint("give each scenario its own name: SLOs and results refer to scenarios by name"),
                );
            }
            let stages = scenario.stages();
            self.param(&format!("{base}/stages/ramp_up"), &stages.ramp_up);
            self.param(&format!("{base}/stages/ramp_down"), &stages.ramp_down);
            if let Some(hold) = &stages.hold {
                self.param(&format!("{base}/stages/hold"), hold);
            }
            match scenario {
                Scenario::Http(http) => self.http(&base, http),
                Scenario::Rooms(rooms) => self.rooms(&base, rooms),
            }
        }
    }

    fn http(&mut self, base: &str, http: &headroom_spec::HttpScenario) {
        let everywhere = builtin::EVERYWHERE;
        for (j, request) in http.requests.iter().enumerate() {
            let pointer = format!("{base}/requests/{j}");
            self.string(
                &format!("{pointer}/url"),
                &request.url,
                everywhere,
                "an HTTP scenario",
            );
            self.host(&format!("{pointer}/url"), &request.url);
            for (key, value) in &request.headers {
                self.string(
                    &format!("{pointer}/headers/{}", escape(key)),
                    value,
                    everywhere,
                    "an HTTP scenario",
                );
            }
            if let Some(body) = &request.body {
                self.string(
                    &format!("{pointer}/body"),
                    body,
                    everywhere,
                    "an HTTP scenario",
                );
            }
        }
        for (key, param) in [("rate", &http.rate), ("start_rate", &http.start_rate)] {
            if let Some(param) = param {
                self.param(&format!("{base}/{key}"), param);
            }
        }
        if let Some(vus) = &http.vus {
            self.param(&format!("{base}/vus"), vus);
        }
        if let Some(think) = &http.think {
            self.param(&format!("{base}/think"), think);
        }
        let executor = http.executor;
        let (wanted, unused): (&str, &[&str]) = if executor.is_open() {
            ("rate", &["vus", "start_vus", "think"])
        } else {
            ("vus", &["rate", "start_rate"])
        };
        for key in unused {
            let pointer = format!("{base}/{key}");
            if self.document.place(&pointer).is_some() {
                let model = if executor.is_open() {
                    "an open-model (arrival-rate)"
                } else {
                    "a closed-model (virtual-user)"
                };
                let other = if executor.is_open() {
                    "constant-vus` or `ramping-vus"
                } else {
                    "constant-arrival-rate` or `ramping-arrival-rate"
                };
                self.push(
                    Diagnostic::new(
                        Code::ExecutorConflict,
                        format!(
                            "`{key}` does not apply to executor \"{}\"",
                            executor.as_str()
                        ),
                    )
                    .at(&pointer, self.key_span(&pointer))
                    .label(format!("not used by {model} executor"))
                    .hint(format!("remove `{key}`, or use executor `{other}`")),
                );
            }
        }
        if !executor.is_ramping() {
            let ramp_key = if executor.is_open() {
                "start_rate"
            } else {
                "start_vus"
            };
            let pointer = format!("{base}/{ramp_key}");
            if self.document.place(&pointer).is_some() {
                self.push(
                    Diagnostic::new(
                        Code::ExecutorConflict,
                        format!(
                            "`{ramp_key}` needs a ramping executor, not \"{}\"",
                            executor.as_str()
                        ),
                    )
                    .at(&pointer, self.key_span(&pointer))
                    .label("a constant executor does not ramp")
                    .hint(format!(
                        "use executor \"{}\" or remove `{ramp_key}`",
                        if executor.is_open() {
                            Executor::RampingArrivalRate.as_str()
                        } else {
                            Executor::RampingVus.as_str()
                        }
                    )),
                );
            }
        }
        let missing = if executor.is_open() {
            http.rate.is_none()
        } else {
            http.vus.is_none()
        };
        if missing {
            let example = if executor.is_open() {
                "rate = \"20/s\""
            } else {
                "vus = 10"
            };
            self.push(
                Diagnostic::new(
                    Code::MissingSetting,
                    format!("executor \"{}\" needs `{wanted}`", executor.as_str()),
                )
                .at(
                    format!("{base}/executor"),
                    self.value_span(&format!("{base}/executor")),
                )
                .label(format!("this executor needs `{wanted}`"))
                .hint(format!("add `{example}` to the scenario")),
            );
        }
    }

    fn rooms(&mut self, base: &str, rooms: &headroom_spec::RoomsScenario) {
        let mut context: Vec<&str> = builtin::EVERYWHERE.to_vec();
        context.extend_from_slice(builtin::IN_ROOMS);
        self.string(
            &format!("{base}/url"),
            &rooms.url,
            &context,
            "a rooms scenario",
        );
        self.host(&format!("{base}/url"), &rooms.url);
        if let Some(join) = &rooms.join {
            self.string(&format!("{base}/join"), join, &context, "a rooms scenario");
        }
        self.param(&format!("{base}/rooms"), &rooms.rooms);
        if let Some(peers) = &rooms.peers_per_room {
            self.param(&format!("{base}/peers_per_room"), peers);
        }
        if let Some(peers) = &rooms.peers {
            self.param(&format!("{base}/peers"), peers);
        }
        match (&rooms.peers_per_room, &rooms.peers) {
            (Some(_), Some(_)) => self.push(
                Diagnostic::new(Code::ConflictingSettings, "a rooms scenario takes `peers_per_room` or `peers`, not both")
                    .at(format!("{base}/peers"), self.key_span(&format!("{base}/peers")))
                    .label("also `peers_per_room`")
                    .hint("keep `peers_per_room` (sockets in each room) or `peers` (sockets in all, spread evenly over the rooms)"),
            ),
            (None, None) => self.push(
                Diagnostic::new(Code::MissingSetting, "a rooms scenario needs `peers_per_room` or `peers`")
                    .at(base, self.key_span(base))
                    .label("how many sockets?")
                    .hint("add `peers_per_room = 2`, or `peers = 1000` to spread 1,000 sockets evenly over the rooms"),
            ),
            _ => {}
        }
        if let Some(over) = &rooms.connect_over {
            self.param(&format!("{base}/connect_over"), over);
        }
        if let Some(send) = &rooms.send {
            self.param(&format!("{base}/send/rate"), &send.rate);
            self.param(&format!("{base}/send/size"), &send.size);
            let mut message_context: Vec<&str> = builtin::EVERYWHERE.to_vec();
            message_context.extend_from_slice(builtin::IN_MESSAGES);
            self.string(
                &format!("{base}/send/template"),
                &send.template,
                &message_context,
                "a message template",
            );
        }
        if let Some(reload) = &rooms.reload {
            self.string(
                &format!("{base}/reload/url"),
                &reload.url,
                &context,
                "a rooms scenario",
            );
            self.host(&format!("{base}/reload/url"), &reload.url);
            self.param(&format!("{base}/reload/every"), &reload.every);
        }
        match (rooms.idle, &rooms.send) {
            (true, Some(_)) => self.push(
                Diagnostic::new(Code::ConflictingSettings, "an idle scenario cannot `send`")
                    .at(
                        format!("{base}/send"),
                        self.key_span(&format!("{base}/send")),
                    )
                    .label("`idle = true` holds sockets without messages")
                    .hint("remove `send`, or remove `idle = true`"),
            ),
            (false, None) => self.push(
                Diagnostic::new(
                    Code::MissingSetting,
                    "a rooms scenario needs `send` or `idle = true`",
                )
                .at(base, self.key_span(base))
                .label("this scenario neither sends nor says it is idle")
                .hint("add `send = { rate = \"1/s\" }`, or `idle = true` to hold sockets only"),
            ),
            _ => {}
        }
    }

    /// Every typed use of a variable must accept the variable's values: the default and every
    /// value a phase gives it.
    fn variable_types(&mut self) {
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
            for (pointer, value) in values {
                for usage in &typed {
                    let Some(kind) = usage.kind else { continue };
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

    fn phases(&mut self) {
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
                let pointer = format!("{base}/vary/{}", escape(name));
                if !spec.vars.contains_key(name) {
                    self.unknown_variable(&pointer, name, "varies");
                    continue;
                }
                match sweep.values() {
                    Ok(values) if values.is_empty() => self.push(
                        Diagnostic::new(Code::EmptySweep, format!("phase `{}` varies `{name}` over no values", phase.name))
                            .at(&pointer, self.value_span(&pointer))
                            .label("no values")
                            .hint(format!("list the values, e.g. `{name} = [1, 4, 16]`")),
                    ),
                    Ok(_) => {}
                    Err(error) => self.push(
                        Diagnostic::new(Code::BadRange, format!("the range of `{name}` gives no values: {error}"))
                            .at(&pointer, self.value_span(&pointer))
                            .label("bad range")
                            .hint("write `{ from = 16, to = 128, factor = 2 }` or `{ from = 50, to = 500, step = 50 }`, or list the values"),
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
            for name in phase.set.keys() {
                if !spec.vars.contains_key(name) {
                    let pointer = format!("{base}/set/{}", escape(name));
                    self.unknown_variable(&pointer, name, "sets");
                }
            }
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
                                .at(&base, self.key_span(&base))
                                .label("how long is the load held at each point?")
                                .hint(format!("add `hold = \"30s\"` to the phase, or `stages = {{ hold = \"30s\" }}` to scenario `{}`", scenario.name())),
                        );
                    }
                }
            }
        }
    }

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

    fn unknown_variable(&mut self, pointer: &str, name: &str, verb: &str) {
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

    fn measure(&mut self) {
        let spec = self.spec;
        let mut lists: Vec<(String, &Vec<headroom_spec::Series>)> =
            vec![("/measure/series".to_owned(), &spec.measure.series)];
        for (p, phase) in spec.phases.iter().enumerate() {
            if let Some(measure) = &phase.measure {
                lists.push((format!("/phase/{p}/measure/series"), &measure.series));
            }
        }
        for (base, series) in lists {
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

    fn slos(&mut self) {
        let figures = slo::catalogue(self.spec);
        for (name, expression) in &self.spec.slo {
            let pointer = format!("/slo/{}", escape(name));
            match slo::parse(name, expression, &figures) {
                Ok(rule) => self.slo.push(rule),
                Err(error) => {
                    let code = match error.kind {
                        SloErrorKind::Syntax => Code::BadSlo,
                        SloErrorKind::UnknownFigure => Code::UnknownFigure,
                        SloErrorKind::Unit => Code::SloUnit,
                    };
                    let span = self.inner_span(&pointer, error.range.clone());
                    let label = match error.kind {
                        SloErrorKind::Syntax => "not `figure < value`",
                        SloErrorKind::UnknownFigure => "no scenario produces this",
                        SloErrorKind::Unit => "wrong unit for this figure",
                    };
                    self.push(
                        Diagnostic::new(code, error.message)
                            .at(&pointer, span)
                            .label(label)
                            .hint(error.hint),
                    );
                }
            }
        }
    }

    /// The unit count is a whole number at every point.
    fn units_usage(&mut self) {
        if let Some(units) = &self.spec.capacity.units
            && self.spec.vars.contains_key(units)
        {
            self.typed_only.push((
                units.clone(),
                Usage {
                    kind: Some(ValueKind::Count),
                    pointer: "/capacity/units".to_owned(),
                },
            ));
        }
    }

    fn capacity(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        if let Some(units) = &capacity.units
            && !spec.vars.contains_key(units)
        {
            let hint =
                did_you_mean(units, spec.vars.keys().map(String::as_str)).unwrap_or_else(|| {
                    format!(
                        "name the variable that counts {}s, e.g. `units = \"rooms\"`",
                        spec.bench.unit
                    )
                });
            self.push(
                Diagnostic::new(
                    Code::UnknownVariable,
                    format!("`units` names `{units}`, which [vars] does not declare"),
                )
                .at("/capacity/units", self.value_span("/capacity/units"))
                .label("not a variable")
                .hint(hint),
            );
        }
        let mut series: Vec<&str> = vec!["rss"];
        series.extend(spec.measure.series.iter().map(|s| s.name.as_str()));
        for phase in &spec.phases {
            series.extend(
                phase
                    .measure
                    .iter()
                    .flat_map(|m| m.series.iter().map(|s| s.name.as_str())),
            );
        }
        if !series.contains(&capacity.memory.as_str()) {
            self.push(
                Diagnostic::new(
                    Code::UnknownReference,
                    format!(
                        "`memory` names series `{}`, which nothing measures",
                        capacity.memory
                    ),
                )
                .at("/capacity/memory", self.value_span("/capacity/memory"))
                .label("no such series")
                .hint(
                    did_you_mean(&capacity.memory, series.iter().copied()).unwrap_or_else(|| {
                        format!("use `rss` or a series of [measure]: {}", series.join(", "))
                    }),
                ),
            );
        }
        if let Some(units) = capacity
            .units
            .as_deref()
            .filter(|u| spec.vars.contains_key(*u))
        {
            let unit = &spec.bench.unit;
            let roles = [
                (
                    "memory_phase",
                    &capacity.memory_phase,
                    format!("a memory fit per {unit}"),
                ),
                (
                    "ceiling_phase",
                    &capacity.ceiling_phase,
                    format!("a ceiling in {unit}s"),
                ),
            ];
            for (key, name, gives) in roles {
                let Some(phase) = name
                    .as_ref()
                    .and_then(|n| spec.phases.iter().find(|p| &p.name == n))
                else {
                    continue;
                };
                if !phase.vary.contains_key(units) {
                    let pointer = format!("/capacity/{key}");
                    self.push(
                        Diagnostic::new(
                            Code::PhaseMissesUnits,
                            format!(
                                "phase `{}` does not vary `{units}`, so it cannot give {gives}",
                                phase.name
                            ),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("this phase keeps `{units}` fixed"))
                        .hint(format!(
                            "vary `{units}` in phase `{}`, or name a phase that does",
                            phase.name
                        )),
                    );
                }
            }
        }
        if spec.plan.is_some() && capacity.units.is_none() {
            self.push(
                Diagnostic::new(Code::PlanWithoutUnits, "[plan] prices instances, but [capacity] names no `units` variable")
                    .at("/plan", self.key_span("/plan"))
                    .label("costs cannot be given per unit")
                    .hint(format!(
                        "add `units = \"…\"` to [capacity], naming the variable that counts {}s, so costs come per {}-month",
                        spec.bench.unit, spec.bench.unit
                    )),
            );
        }
        let phases: Vec<&str> = spec.phases.iter().map(|p| p.name.as_str()).collect();
        for (key, value) in [
            ("memory_phase", &capacity.memory_phase),
            ("ceiling_phase", &capacity.ceiling_phase),
        ] {
            if let Some(name) = value
                && !phases.contains(&name.as_str())
            {
                let pointer = format!("/capacity/{key}");
                self.push(
                    Diagnostic::new(
                        Code::UnknownReference,
                        format!("`{key}` names phase `{name}`, which does not exist"),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label("no phase has this name")
                    .hint(
                        did_you_mean(name, phases.iter().copied())
                            .unwrap_or_else(|| format!("the phases are: {}", phases.join(", "))),
                    ),
                );
            }
        }
    }

    fn plan(&mut self) {
        let Some(plan) = &self.spec.plan else { return };
        let provider = plan.provider.as_str();
        let ids: Vec<&str> = self.prices.instance_ids(provider).collect();
        let mut seen = BTreeSet::new();
        for (i, instance) in plan.instances.iter().enumerate() {
            let pointer = format!("/plan/instances/{i}");
            if !seen.insert(instance.as_str()) {
                self.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!("instance `{instance}` is listed twice"),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label("already listed")
                    .hint("list each instance type once"),
                );
                continue;
            }
            match self.prices.instance(instance) {
                Some(found) if found.provider == provider => {}
                Some(found) => self.push(
                    Diagnostic::new(Code::UnknownInstance, format!("`{instance}` is a {} instance, but the plan prices {provider}", found.provider))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("not in the {provider} part of the price table"))
                        .hint(format!("set `provider = \"{}\"` in [plan], or pick an instance of provider {provider}", found.provider)),
                ),
                None => self.push(
                    Diagnostic::new(Code::UnknownInstance, format!("`{instance}` is not in the price table"))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("no instance of provider {provider} has this name"))
                        .hint(did_you_mean(instance, ids.iter().copied()).unwrap_or_else(|| {
                            "the known types are in pricing/data/prices.toml; add others with `prices = \"my-prices.toml\"` in [plan]".to_owned()
                        })),
                ),
            }
        }
        if let Some(rds) = &plan.rds {
            if plan.provider != headroom_spec::Provider::Aws {
                self.push(
                    Diagnostic::new(
                        Code::ConflictingSettings,
                        format!("`rds` is an AWS database, but the plan prices {provider}"),
                    )
                    .at("/plan/rds", self.key_span("/plan/rds"))
                    .label("not available from this provider")
                    .hint("remove `rds`, or set `provider = \"aws\"`"),
                );
            } else {
                match self.prices.database(rds) {
                    None => self.push(
                        Diagnostic::new(Code::UnknownDatabase, format!("database class `{rds}` is not in the price table"))
                            .at("/plan/rds", self.value_span("/plan/rds"))
                            .label("unknown database class")
                            .hint(did_you_mean(rds, self.prices.database_ids()).unwrap_or_else(|| {
                                format!("known classes: {}", self.prices.database_ids().collect::<Vec<_>>().join(", "))
                            })),
                    ),
                    Some(database) if database.usd_per_hour.is_none() => self.push(
                        Diagnostic::new(Code::UnsourcedPrice, format!("`{rds}` has no sourced price, so the plan cannot cost it"))
                            .at("/plan/rds", self.value_span("/plan/rds"))
                            .label("no list price in the table")
                            .hint("pick a class with a price (see pricing/data/prices.toml), or give one with `prices = \"my-prices.toml\"` in [plan]"),
                    ),
                    Some(_) => {}
                }
            }
        }
    }

    fn unused_variables(&mut self) {
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
