//! Checks that need a point's values: what one run would be asked to do (requests, sockets,
//! message sizes), a hold of 0 s, a rate too low to send anything, a ramp too long.

use super::*;

fn describe_point(at: &BTreeMap<String, VarValue>) -> String {
    if at.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = at.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(" (at {})", parts.join(", "))
}

/// Checks that a point's run stays within one machine: requests planned, sockets, message size.
pub(super) fn size_checks(
    scenario: &Scenario,
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
    let seconds = value_or_zero(&stages.ramp_up)
        .saturating_add(
            stages
                .hold
                .as_ref()
                .and_then(Param::value)
                .copied()
                .unwrap_or_default(),
        )
        .saturating_add(value_or_zero(&stages.ramp_down))
        .as_secs_f64();
    match scenario {
        Scenario::Http(http) => {
            if let Some(Param::Value(rate)) = &http.rate {
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
        Scenario::Rooms(rooms) => {
            let number = |p: &Param<u64>| p.value().map_or(0.0, |v| *v as f64);
            let sockets = match (&rooms.peers_per_room, &rooms.peers) {
                (Some(per_room), _) => number(&rooms.rooms) * number(per_room),
                (None, Some(total)) => number(total),
                (None, None) => 0.0,
            };
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
                && let Param::Value(size) = &send.size
                && size.bytes() > MAX_MESSAGE_BYTES
            {
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

/// Checks that need a point's values: a rate too low to send anything, a ramp too long.
pub(super) fn point_checks(
    scenario: &Scenario,
    written: &Scenario,
    base: &str,
    phase_hold: Option<&str>,
    origins: &Origins,
    at: &BTreeMap<String, VarValue>,
    checker: &Checker<'_>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // The baseline point (0 units) measures the server with no load by design.
    let units = checker.spec().capacity.units.as_deref();
    if units.is_some_and(|u| at.get(u) == Some(&VarValue::Integer(0))) {
        return out;
    }
    let stages = scenario.stages();
    let Some(hold) = stages.hold.as_ref().and_then(Param::value).copied() else {
        return out;
    };
    // A 0 s hold measures nothing at any rate: blame the hold, not the rate.
    if hold.as_micros() == 0 {
        // The phase's `hold` overrides the scenario's: blame the one that set it.
        let pointer = match phase_hold {
            Some(pointer) => pointer.to_owned(),
            None => origins.blame(
                &format!("{base}/stages/hold"),
                written.stages().hold.as_ref().and_then(Param::var),
            ),
        };
        let span = checker.document().value_span(&pointer);
        out.push(
            Diagnostic::new(
                Code::OutOfRange,
                format!(
                    "scenario `{}` holds its load for 0s{}: nothing would be measured",
                    scenario.name(),
                    describe_point(at)
                ),
            )
            .at(&pointer, span)
            .label("the hold is where every figure is measured")
            .hint("hold the load long enough to measure it: `hold = \"30s\"`"),
        );
        return out;
    }
    let mut zero_rate = |pointer: String, what: String, expected: f64, noun: &str| {
        let span = checker.document().value_span(&pointer);
        out.push(
            Diagnostic::new(
                Code::RateRoundsToZero,
                format!(
                    "{what} gives {} {noun} in a {hold} hold{}: nothing would be measured",
                    if expected < 0.01 {
                        "fewer than 0.01".to_owned()
                    } else {
                        format!("{expected:.2}")
                    },
                    describe_point(at)
                ),
            )
            .at(&pointer, span)
            .label("rounds to zero over the hold")
            .hint(format!(
                "raise the rate or hold longer: at least one event must fall into the {hold} hold"
            )),
        );
    };
    match scenario {
        Scenario::Http(http) if http.executor.is_open() => {
            if let Some(Param::Value(rate)) = &http.rate {
                let expected = rate.expected_in(hold);
                if expected < 1.0 {
                    let var = match written {
                        Scenario::Http(w) => w.rate.as_ref().and_then(Param::var),
                        Scenario::Rooms(_) => None,
                    };
                    let blame = origins.blame(&format!("{base}/rate"), var);
                    zero_rate(
                        blame,
                        format!("scenario `{}` at {rate}", http.name),
                        expected,
                        "requests",
                    );
                }
            }
        }
        Scenario::Http(_) => {}
        Scenario::Rooms(rooms) => {
            let count = |p: &Param<u64>| p.value().copied().unwrap_or(0) as f64;
            let room_count = count(&rooms.rooms);
            // Peers per room on average, whichever way the spec gave them.
            let peers = match (&rooms.peers_per_room, &rooms.peers) {
                (Some(per_room), _) => count(per_room),
                (None, Some(total)) => count(total) / room_count.max(1.0),
                (None, None) => 0.0,
            };
            if let (Some(send), false) = (&rooms.send, rooms.idle)
                && let Param::Value(rate) = &send.rate
            {
                let senders_per_room = if send.senders == Senders::All {
                    peers
                } else {
                    1.0
                };
                let streams = match send.per {
                    RatePer::Sender => room_count * senders_per_room,
                    RatePer::Room => room_count,
                    RatePer::Scenario => 1.0,
                };
                let expected = rate.expected_in(hold) * streams;
                if expected < 1.0 {
                    let blame = origins.blame(
                        &format!("{base}/send/rate"),
                        written_rooms(written)
                            .and_then(|w| w.send.as_ref())
                            .and_then(|s| s.rate.var()),
                    );
                    zero_rate(
                        blame,
                        format!("scenario `{}` at {rate}", rooms.name),
                        expected,
                        "messages",
                    );
                }
            }
            if let Some(reload) = &rooms.reload
                && let Param::Value(every) = &reload.every
            {
                let expected =
                    room_count * peers * hold.as_secs_f64() / every.as_secs_f64().max(1e-9);
                if expected < 1.0 {
                    let blame = origins.blame(
                        &format!("{base}/reload/every"),
                        written_rooms(written)
                            .and_then(|w| w.reload.as_ref())
                            .and_then(|r| r.every.var()),
                    );
                    zero_rate(
                        blame,
                        format!("scenario `{}` reloading every {every}", rooms.name),
                        expected,
                        "reloads",
                    );
                }
            }
            if let (Some(Param::Value(over)), Param::Value(ramp_up)) =
                (&rooms.connect_over, &stages.ramp_up)
                && over > ramp_up
            {
                let pointer = format!("{base}/connect_over");
                let blame = origins.blame(
                    &pointer,
                    written_rooms(written)
                        .and_then(|w| w.connect_over.as_ref())
                        .and_then(Param::var),
                );
                out.push(
                        Diagnostic::new(
                            Code::RampTooLong,
                            format!(
                                "scenario `{}` opens its sockets over {over}, longer than its {ramp_up} ramp-up{}",
                                rooms.name,
                                describe_point(at)
                            ),
                        )
                        .at(&blame, checker.document().value_span(&blame))
                        .label("longer than `stages.ramp_up`")
                        .hint(format!("shorten `connect_over` to at most {ramp_up}, or lengthen `stages.ramp_up`; sockets still opening would be measured in the hold")),
                    );
            }
        }
    }
    out
}

pub(super) fn written_rooms(written: &Scenario) -> Option<&headroom_spec::RoomsScenario> {
    match written {
        Scenario::Rooms(rooms) => Some(rooms),
        Scenario::Http(_) => None,
    }
}
