//! Checks that need a point's values: what one run would be asked to do (requests, sockets,
//! message sizes), a hold of 0 s, a rate too low to send anything, a ramp too long.

use super::{MAX_MESSAGE_BYTES, MAX_REQUESTS_PER_RUN, MAX_SOCKETS_PER_RUN, Origins};
use crate::checks::Checker;
use crate::diagnostic::{Code, Diagnostic};
use headroom_matrix::resolved;
use headroom_spec::numbers::count;
use headroom_spec::{Duration, Param, Scenario, VarValue};
use std::collections::BTreeMap;

fn describe_point(at: &BTreeMap<String, VarValue>) -> String {
    if at.is_empty() {
        return String::new();
    }
    format!(" (at {})", headroom_spec::vars::point_label(at))
}

/// Checks that a point's run stays within one machine: requests planned, sockets, message size.
pub(super) fn size_checks(
    scenario: &resolved::Scenario,
    base: &str,
    at: &BTreeMap<String, VarValue>,
    checker: &Checker<'_>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut too_large = |pointer: String, message: String, hint: &str| {
        let span = checker.document().value_span(&pointer);
        out.push(
            Diagnostic::new(Code::TooLarge, format!("{message}{}", describe_point(at)))
                .at(&pointer, span)
                .label("more than one run should be asked to do")
                .hint(hint),
        );
    };
    let stages = scenario.stages();
    let seconds = stages
        .ramp_up
        .saturating_add(stages.hold.unwrap_or_default())
        .saturating_add(stages.ramp_down)
        .as_secs_f64();
    match scenario {
        resolved::Scenario::Http(http) => {
            if let Some(rate) = &http.rate {
                let planned = rate.as_per_second() * seconds;
                if planned > MAX_REQUESTS_PER_RUN {
                    too_large(
                        format!("{base}/rate"),
                        format!(
                            "scenario `{}` at {rate} plans {} requests in one run: at most {}",
                            http.name,
                            count(planned),
                            count(MAX_REQUESTS_PER_RUN)
                        ),
                        "lower the rate or shorten the stages; one generator sends a few tens of thousands of requests a second",
                    );
                }
            }
        }
        resolved::Scenario::Rooms(rooms) => {
            let sockets = rooms.sockets() as f64;
            if sockets > MAX_SOCKETS_PER_RUN {
                too_large(
                    format!("{base}/rooms"),
                    format!(
                        "scenario `{}` opens {} sockets in one run: at most {}",
                        rooms.name,
                        count(sockets),
                        count(MAX_SOCKETS_PER_RUN)
                    ),
                    "open fewer rooms or peers; each socket takes a file descriptor and memory on both sides",
                );
            }
            if let Some(send) = &rooms.send
                && send.size.bytes() > MAX_MESSAGE_BYTES
            {
                let size = send.size;
                too_large(
                    format!("{base}/send/size"),
                    format!(
                        "scenario `{}` sends messages of {size}: at most 16MiB",
                        rooms.name
                    ),
                    "send smaller messages",
                );
            }
        }
    }
    out
}

/// The fewest CPUs a limit may give: a quota of 1 ms in every 100 ms period.
pub const MIN_LIMIT_CPUS: f64 = 0.01;
/// The least memory a limit may give: below it no server starts.
pub const MIN_LIMIT_MEMORY: u64 = 16 << 20;

/// A point's `[target] limits`: a CPU quota the kernel can carry out, memory a server can
/// start in. Whether the machine has them is the runner's check, at run start.
pub(super) fn limits_checks(
    limits: &resolved::Limits,
    origins: &Origins,
    at: &BTreeMap<String, VarValue>,
    checker: &Checker<'_>,
) -> Vec<Diagnostic> {
    let written = checker.spec().target.limits.as_ref();
    let mut out = Vec::new();
    let mut out_of_range = |key: &str, variable: Option<&str>, message: String, hint: &str| {
        let pointer = origins.blame(&format!("/target/limits/{key}"), variable);
        let span = checker.document().value_span(&pointer);
        out.push(
            Diagnostic::new(Code::OutOfRange, format!("{message}{}", describe_point(at)))
                .at(&pointer, span)
                .label("no instance has this")
                .hint(hint),
        );
    };
    if let Some(cpus) = limits.cpus
        && !(MIN_LIMIT_CPUS..=1024.0).contains(&cpus)
    {
        out_of_range(
            "cpus",
            written.and_then(|l| l.cpus.as_ref()).and_then(Param::var),
            format!("`cpus = {cpus}` is not a CPU quota: 0.01 to 1024 CPUs"),
            "give the instance's vCPUs: `cpus = 2`, or `0.5` for half a CPU",
        );
    }
    if let Some(memory) = limits.memory
        && memory.bytes() < MIN_LIMIT_MEMORY
    {
        out_of_range(
            "memory",
            written.and_then(|l| l.memory.as_ref()).and_then(Param::var),
            format!("`memory = \"{memory}\"` is less than a server starts in: at least 16MiB"),
            "give the instance's memory less the reserve: `memory = \"3.5GiB\"`",
        );
    }
    out
}

/// Checks that need a point's values: a rate too low to send anything, a ramp too long.
pub(super) fn point_checks(
    scenario: &resolved::Scenario,
    written: &Scenario,
    base: &str,
    phase_hold: Option<&str>,
    origins: &Origins,
    at: &BTreeMap<String, VarValue>,
    checker: &Checker<'_>,
) -> Vec<Diagnostic> {
    // The baseline point (0 units) measures the server with no load by design.
    let units = checker.spec().capacity.units.as_deref();
    if units.is_some_and(|u| at.get(u) == Some(&VarValue::Integer(0))) {
        return Vec::new();
    }
    let stages = scenario.stages();
    let Some(hold) = stages.hold else {
        return Vec::new();
    };
    let point = PointCheck {
        written,
        base,
        origins,
        at,
        checker,
        hold,
    };
    // A 0 s hold measures nothing at any rate: blame the hold, not the rate.
    if hold.as_micros() == 0 {
        return vec![point.zero_hold(scenario.name(), phase_hold)];
    }
    match scenario {
        resolved::Scenario::Http(http) if http.executor.is_open() => {
            point.http_rate(http).into_iter().collect()
        }
        resolved::Scenario::Http(_) => Vec::new(),
        resolved::Scenario::Rooms(rooms) => point.rooms(rooms, stages),
    }
}

/// One scenario at one point, as its checks see it.
struct PointCheck<'a> {
    /// The scenario as the spec wrote it, to blame a variable rather than a value.
    written: &'a Scenario,
    /// The scenario's pointer (`/scenario/0`).
    base: &'a str,
    origins: &'a Origins,
    at: &'a BTreeMap<String, VarValue>,
    checker: &'a Checker<'a>,
    hold: Duration,
}

impl PointCheck<'_> {
    fn zero_hold(&self, name: &str, phase_hold: Option<&str>) -> Diagnostic {
        // The phase's `hold` overrides the scenario's: blame the one that set it.
        let pointer = match phase_hold {
            Some(pointer) => pointer.to_owned(),
            None => self.origins.blame(
                &format!("{}/stages/hold", self.base),
                self.written.stages().hold.as_ref().and_then(Param::var),
            ),
        };
        let span = self.checker.document().value_span(&pointer);
        Diagnostic::new(
            Code::OutOfRange,
            format!(
                "scenario `{name}` holds its load for 0s{}: nothing would be measured",
                describe_point(self.at)
            ),
        )
        .at(&pointer, span)
        .label("the hold is where every figure is measured")
        .hint("hold the load long enough to measure it: `hold = \"30s\"`")
    }

    /// `what` gives `expected` events in the hold, fewer than one: nothing would be measured.
    fn zero_rate(&self, pointer: String, what: String, expected: f64, noun: &str) -> Diagnostic {
        let hold = self.hold;
        let span = self.checker.document().value_span(&pointer);
        Diagnostic::new(
            Code::RateRoundsToZero,
            format!(
                "{what} gives {} {noun} in a {hold} hold{}: nothing would be measured",
                if expected < 0.01 {
                    "fewer than 0.01".to_owned()
                } else {
                    format!("{expected:.2}")
                },
                describe_point(self.at)
            ),
        )
        .at(&pointer, span)
        .label("rounds to zero over the hold")
        .hint(format!(
            "raise the rate or hold longer: at least one event must fall into the {hold} hold"
        ))
    }

    /// An open-model HTTP rate that sends no request in the hold.
    fn http_rate(&self, http: &resolved::HttpScenario) -> Option<Diagnostic> {
        let rate = http.rate?;
        let expected = rate.expected_in(self.hold);
        if expected >= 1.0 {
            return None;
        }
        let var = match self.written {
            Scenario::Http(w) => w.rate.as_ref().and_then(Param::var),
            Scenario::Rooms(_) => None,
        };
        let blame = self.origins.blame(&format!("{}/rate", self.base), var);
        Some(self.zero_rate(
            blame,
            format!("scenario `{}` at {rate}", http.name),
            expected,
            "requests",
        ))
    }

    /// A rooms scenario's sends and reloads that fall outside the hold, and sockets still
    /// opening after the ramp-up.
    fn rooms(&self, rooms: &resolved::RoomsScenario, stages: &resolved::Stages) -> Vec<Diagnostic> {
        let (base, hold) = (self.base, self.hold);
        let written = written_rooms(self.written);
        let mut out = Vec::new();
        if let (Some(send), false) = (&rooms.send, rooms.idle) {
            let rate = send.rate;
            let expected = rate.expected_in(hold) * rooms.message_streams() as f64;
            if expected < 1.0 {
                let blame = self.origins.blame(
                    &format!("{base}/send/rate"),
                    written
                        .and_then(|w| w.send.as_ref())
                        .and_then(|s| s.rate.var()),
                );
                out.push(self.zero_rate(
                    blame,
                    format!("scenario `{}` at {rate}", rooms.name),
                    expected,
                    "messages",
                ));
            }
        }
        if let Some(reload) = &rooms.reload {
            let every = reload.every;
            let expected =
                rooms.sockets() as f64 * hold.as_secs_f64() / every.as_secs_f64().max(1e-9);
            if expected < 1.0 {
                let blame = self.origins.blame(
                    &format!("{base}/reload/every"),
                    written
                        .and_then(|w| w.reload.as_ref())
                        .and_then(|r| r.every.var()),
                );
                out.push(self.zero_rate(
                    blame,
                    format!("scenario `{}` reloading every {every}", rooms.name),
                    expected,
                    "reloads",
                ));
            }
        }
        if let Some(over) = rooms.connect_over
            && over > stages.ramp_up
        {
            let ramp_up = stages.ramp_up;
            let blame = self.origins.blame(
                &format!("{base}/connect_over"),
                written
                    .and_then(|w| w.connect_over.as_ref())
                    .and_then(Param::var),
            );
            out.push(
                Diagnostic::new(
                    Code::RampTooLong,
                    format!(
                        "scenario `{}` opens its sockets over {over}, longer than its {ramp_up} ramp-up{}",
                        rooms.name,
                        describe_point(self.at)
                    ),
                )
                .at(&blame, self.checker.document().value_span(&blame))
                .label("longer than `stages.ramp_up`")
                .hint(format!("shorten `connect_over` to at most {ramp_up}, or lengthen `stages.ramp_up`; sockets still opening would be measured in the hold")),
            );
        }
        out
    }
}

/// A point's scenarios that cannot hold their loads together: one run measures all of them
/// over the one window in which every scenario is at its load, so they need one hold (the
/// phase's, or the same `stages.hold`), or none at all (each measured over its whole run).
pub(super) fn holds_apart(
    resolved: &[resolved::Scenario],
    written: &[&Scenario],
    phase: usize,
    at: &BTreeMap<String, VarValue>,
    checker: &Checker<'_>,
) -> Option<Diagnostic> {
    let first = resolved.first()?;
    let hold_of = |scenario: &resolved::Scenario| scenario.stages().hold;
    let other = resolved
        .iter()
        .find(|scenario| hold_of(scenario) != hold_of(first))?;
    let says = |scenario: &resolved::Scenario| match hold_of(scenario) {
        Some(hold) => format!("`{}` holds {hold}", scenario.name()),
        None => format!("`{}` has no hold", scenario.name()),
    };
    // Blame the scenario whose hold differs from the first's: its `stages.hold`, or its
    // stages when it has none.
    let index = checker
        .spec()
        .scenarios
        .iter()
        .position(|s| s.name() == other.name())
        .unwrap_or(0);
    let wrote_hold = written
        .iter()
        .find(|s| s.name() == other.name())
        .is_some_and(|s| s.stages().hold.is_some());
    let pointer = if wrote_hold {
        format!("/scenario/{index}/stages/hold")
    } else {
        format!("/scenario/{index}")
    };
    let span = checker.document().value_span(&pointer);
    Some(
        Diagnostic::new(
            Code::HoldsApart,
            format!(
                "scenarios `{}` and `{}` of phase `{}` cannot hold their loads together: {}, {}{}",
                first.name(),
                other.name(),
                checker
                    .spec()
                    .phases
                    .get(phase)
                    .map_or("", |phase| phase.name.as_str()),
                says(first),
                says(other),
                describe_point(at)
            ),
        )
        .at(&pointer, span)
        .label("one run measures every scenario over one common hold")
        .hint("give them one hold: the phase's `hold = \"30s\"` (it overrides the scenarios'), or the same `stages.hold` in each"),
    )
}

pub(super) fn written_rooms(written: &Scenario) -> Option<&headroom_spec::RoomsScenario> {
    match written {
        Scenario::Rooms(rooms) => Some(rooms),
        Scenario::Http(_) => None,
    }
}
