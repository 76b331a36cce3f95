//! `[[scenario]]`: names, executors and their settings, rooms that send or idle.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use headroom_spec::Scenario;
use headroom_spec::placeholder::builtin;
use headroom_spec::scenario::Executor;
use std::collections::BTreeMap;

impl<'a> Checker<'a> {
    pub(super) fn scenarios(&mut self) {
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

    /// `expect = { body_regex, json }`: a regex that compiles, pointers from the root.
    fn answer_checks(&mut self, pointer: &str, checks: &headroom_spec::scenario::Checks) {
        if let Some(pattern) = &checks.body_regex
            && let Err(error) = regex::Regex::new(pattern)
        {
            let at = format!("{pointer}/expect/body_regex");
            self.push(
                Diagnostic::new(
                    Code::BadPattern,
                    format!("`body_regex` is not a regular expression: {}", super::target::regex_error(&error)),
                )
                .at(&at, self.value_span(&at))
                .label("does not compile")
                .hint("write a Rust regex (https://docs.rs/regex); escape `.`, `(`, `[` and `{` to match them literally"),
            );
        }
        for key in checks.json.keys() {
            if !key.is_empty() && !key.starts_with('/') {
                let at = format!("{pointer}/expect/json/{}", escape(key));
                self.push(
                    Diagnostic::new(Code::WrongType, format!("`{key}` is not a JSON pointer"))
                        .at(&at, self.key_span(&at))
                        .label("a JSON pointer starts at the root, with `/`")
                        .hint(format!(
                            "write `\"/{key}\"` (RFC 6901: `/user/id`, `/items/0`)"
                        )),
                );
            }
        }
    }

    fn http(&mut self, base: &str, http: &headroom_spec::HttpScenario) {
        self.data_and_captures(base, http);
        let everywhere = builtin::EVERYWHERE;
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for (j, request) in http.requests.iter().enumerate() {
            let pointer = format!("{base}/requests/{j}");
            if let Some(checks) = request.expect.as_ref().and_then(|e| e.checks()) {
                self.answer_checks(&pointer, checks);
            }
            if let Some(name) = request.name.as_deref()
                && let Some(first) = names.insert(name, j)
            {
                let at = format!("{pointer}/name");
                self.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!("two requests of `{}` are named `{name}`", http.name),
                    )
                    .at(&at, self.value_span(&at))
                    .label(format!("request #{} has this name too", first + 1))
                    .hint(format!(
                        "give each request its own name: its figures are `{}.{name}.latency.p95` and the like",
                        http.name
                    )),
                );
            }
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
            self.think(&format!("{base}/think"), think);
        }
        self.end_requests(&http.name);
        self.executor_settings(base, http);
    }

    /// A think time: each duration it names, and exactly one distribution with its bounds in
    /// order.
    fn think(&mut self, pointer: &str, think: &headroom_spec::scenario::Think) {
        for (below, param) in think.params() {
            self.param(&format!("{pointer}{below}"), param);
        }
        let headroom_spec::scenario::Think::Drawn(drawn) = think else {
            return;
        };
        match (&drawn.uniform, &drawn.exponential) {
            (Some(_), Some(_)) => self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    "`think` has both `uniform` and `exponential`",
                )
                .at(format!("{pointer}/exponential"), self.key_span(&format!("{pointer}/exponential")))
                .label("one distribution at a time")
                .hint("keep `uniform = [\"0.5s\", \"1.5s\"]` or `exponential = \"1s\"`"),
            ),
            (None, None) => self.push(
                Diagnostic::new(Code::MissingSetting, "`think` names no distribution")
                    .at(pointer, self.value_span(pointer))
                    .label("a table needs `uniform` or `exponential`")
                    .hint("write `think = \"1s\"`, `think = { uniform = [\"0.5s\", \"1.5s\"] }` or `think = { exponential = \"1s\" }`"),
            ),
            (Some([headroom_spec::Param::Value(least), headroom_spec::Param::Value(most)]), None)
                if least > most =>
            {
                let at = format!("{pointer}/uniform");
                self.push(
                    Diagnostic::new(
                        Code::OutOfRange,
                        format!("`uniform` goes from {least} down to {most}"),
                    )
                    .at(&at, self.value_span(&at))
                    .label("the least first, then the most")
                    .hint(format!("write `uniform = [\"{most}\", \"{least}\"]`")),
                );
            }
            _ => {}
        }
    }

    /// The settings an HTTP scenario's executor uses are there, and those it ignores are not.
    fn executor_settings(&mut self, base: &str, http: &headroom_spec::HttpScenario) {
        let executor = http.executor;
        let (wanted, unused): (&str, &[&str]) = if executor.is_open() {
            ("rate", &["vus", "start_vus", "think", "start"])
        } else {
            (
                "vus",
                &[
                    "rate",
                    "start_rate",
                    "arrivals",
                    "max_in_flight",
                    "max_connections",
                ],
            )
        };
        for key in unused {
            self.unused_by_executor(base, key, executor);
        }
        if !executor.is_ramping() {
            self.ramp_without_ramping(base, executor);
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

    /// `key` set where the scenario's executor does not use it.
    fn unused_by_executor(&mut self, base: &str, key: &str, executor: Executor) {
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

    /// A ramp's start (`start_rate`, `start_vus`) with an executor that does not ramp.
    fn ramp_without_ramping(&mut self, base: &str, executor: Executor) {
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
        self.rooms_protocol(base, rooms);
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
            self.stamped(base, send);
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
        self.sends_or_idles(base, rooms);
    }

    /// A text stamp travels where the template says `{stamp}`: a template without one sends
    /// messages no peer can match to their sends, and every delivery would read as lost.
    fn stamped(&mut self, base: &str, send: &headroom_spec::scenario::Messages) {
        let binary = send.stamp == headroom_spec::scenario::StampForm::BinaryPrefix;
        let has_stamp = headroom_spec::placeholder::scan(&send.template)
            .into_iter()
            .flatten()
            .any(|found| {
                found.name == headroom_spec::placeholder::PlaceholderName::Name(builtin::STAMP)
            });
        if !binary && !has_stamp {
            let at = format!("{base}/send/template");
            let span = self
                .value_span(&at)
                .or_else(|| self.key_span(&format!("{base}/send")));
            self.push(
                Diagnostic::new(Code::MissingSetting, "a message template without `{stamp}`")
                    .at(at, span)
                    .label("no `{stamp}`: no message could be told from another, and every delivery would read as lost")
                    .hint("put `{stamp}` in the template (inside a JSON string: `'{\"stamp\":\"{stamp}\",\"text\":\"{payload}\"}'`), or use `stamp = \"binary-prefix\"` for binary frames"),
            );
        }
    }

    /// A rooms scenario sends or says it is idle, not both.
    fn sends_or_idles(&mut self, base: &str, rooms: &headroom_spec::RoomsScenario) {
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
}
