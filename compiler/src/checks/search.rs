//! A phase that searches its ceiling (`vary = { rate = { search = … } }`): one variable, a
//! precision between 0 and 100 %, a probe hold within the hold, a budget that can confirm
//! both ends, no setting a search would leave unused.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use headroom_spec::search::Search;
use headroom_spec::{Duration, Param};

/// The shortest probe hold: a verdict is read over it.
const SHORTEST_PROBE_HOLD: Duration = Duration::from_secs(1);
/// The longest search budget: past it, a budget is a typo (`max_time = "300d"`).
const LONGEST_SEARCH: Duration = Duration::from_secs(7 * 24 * 3600);

impl Checker<'_> {
    /// The search of `name` in `phase` (at `base`, `/phase/N`).
    pub(super) fn search(
        &mut self,
        phase: &headroom_spec::Phase,
        base: &str,
        name: &str,
        search: &Search,
    ) {
        let pointer = format!("{base}/vary/{}/search", escape(name));
        self.searched_alone(phase, base, name, &pointer);
        self.search_bounds(phase, &pointer, name, search);
        self.search_holds(phase, &pointer, search);
        self.search_settings(phase, base);
        self.closed_model_search(phase, &pointer, name);
    }

    /// A search is of one variable, alone in its phase, judged by the spec's SLOs.
    fn searched_alone(
        &mut self,
        phase: &headroom_spec::Phase,
        base: &str,
        name: &str,
        pointer: &str,
    ) {
        let others: Vec<&str> = phase
            .vary
            .keys()
            .map(String::as_str)
            .filter(|other| *other != name)
            .collect();
        if let Some(other) = others.first() {
            let vary = format!("{base}/vary");
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!(
                        "phase `{}` searches `{name}` and also varies `{other}`: a search finds the ceiling of one variable",
                        phase.name
                    ),
                )
                .at(&vary, self.key_span(&vary))
                .label("one variable may be searched, alone")
                .hint(format!(
                    "give each value of `{other}` its own phase with `set = {{ {other} = … }}`, each searching `{name}`"
                )),
            );
        }
        if self.spec.slo.is_empty() {
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!("phase `{}` searches `{name}`, and the spec has no `[slo]`: nothing would judge a probe", phase.name),
                )
                .at(pointer, self.key_span(pointer))
                .label("a search looks for the highest value that passes every SLO")
                .hint("add the SLOs the server is held to, e.g. `[slo]` `p95 = \"api.latency.p95 < 200ms\"`"),
            );
        }
    }

    /// A search's precision, its budget of runs, and its start below `[capacity] cap`.
    fn search_bounds(
        &mut self,
        phase: &headroom_spec::Phase,
        pointer: &str,
        name: &str,
        search: &Search,
    ) {
        let percent = search.precision.percent();
        if !(percent > 0.0 && percent < 100.0) {
            let at = format!("{pointer}/precision");
            self.push(
                Diagnostic::new(
                    Code::OutOfRange,
                    format!(
                        "a search's precision is a share above 0 % and under 100 %, found {}",
                        search.precision
                    ),
                )
                .at(&at, self.value_span(&at))
                .label("no bracket is this wide or this narrow")
                .hint(
                    "`precision = \"5%\"` stops when the first fail is within 5 % of the last pass",
                ),
            );
        }
        let needed = 2 * phase.repeats + search.probe_repeats;
        if search.max_runs < needed {
            let at = format!("{pointer}/max_runs");
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!(
                        "a budget of {} runs cannot find a ceiling: the first probe takes {}, and confirming the two ends at `repeats = {}` takes {} more",
                        search.max_runs,
                        search.probe_repeats,
                        phase.repeats,
                        2 * phase.repeats
                    ),
                )
                .at(&at, self.value_span(&at))
                .label("too few runs")
                .hint(format!("allow at least {needed} runs; 30 (the default) bracket a ×200 span to 5 %")),
            );
        }
        let spec = self.spec;
        if spec.capacity.units.as_deref() == Some(name)
            && let (Some(cap), Ok(ends)) = (spec.capacity.cap, search.ends())
            && cap as f64 <= ends.from
        {
            let at = format!("{pointer}/from");
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!(
                        "the search of `{name}` starts at {}, at or past `[capacity] cap` ({cap})",
                        search.from
                    ),
                )
                .at(&at, self.value_span(&at))
                .label("the server holds no more than its cap")
                .hint("start the search below the cap; it stops at the cap by itself"),
            );
        }
    }

    /// A search of a closed model's users: said, with why an open model searches a rate
    /// better (a stuck server slows its users down, and they send less).
    fn closed_model_search(&mut self, phase: &headroom_spec::Phase, pointer: &str, name: &str) {
        let closed = self
            .spec
            .scenarios
            .iter()
            .find_map(|scenario| match scenario {
                headroom_spec::Scenario::Http(http)
                    if !http.executor.is_open()
                        && http.vus.as_ref().and_then(Param::var) == Some(name) =>
                {
                    Some(http.name.clone())
                }
                _ => None,
            });
        let Some(scenario) = closed else {
            return;
        };
        self.push(
            Diagnostic::new(
                Code::ClosedModelSearch,
                format!(
                    "phase `{}` searches `{name}`, the virtual users of closed-model scenario `{scenario}`: a closed model hides overload, since users held by a slow server send less",
                    phase.name
                ),
            )
            .at(pointer, self.key_span(pointer))
            .label("users wait for their answers before they send again")
            .hint("a probe whose users send under 90 % of their pace fails as \"users stuck\"; to find the rate the server holds, search an open model's rate (`executor = \"constant-arrival-rate\"`, `rate = \"{rate}\"`)"),
        );
    }

    /// The longest hold of the phase's scenarios (the phase's own, else their stages').
    fn search_hold(&self, phase: &headroom_spec::Phase) -> Option<Duration> {
        match phase.hold {
            Some(hold) => Some(hold),
            None => self
                .phase_scenarios(phase)
                .iter()
                .filter_map(|s| s.stages().hold.as_ref().and_then(|h| h.value().copied()))
                .max(),
        }
    }

    /// A probe hold that measures nothing or is longer than the hold it shortens, and a time
    /// budget that cannot confirm both ends or is past any search (each a typo, found here
    /// rather than by a run that does nothing and exits 0).
    fn search_holds(&mut self, phase: &headroom_spec::Phase, pointer: &str, search: &Search) {
        let hold = self.search_hold(phase);
        if let Some(probe_hold) = search.probe_hold {
            let at = format!("{pointer}/probe_hold");
            if probe_hold < SHORTEST_PROBE_HOLD {
                self.push(
                    Diagnostic::new(
                        Code::BadSearch,
                        format!("a probe held {probe_hold} measures nothing: a probe's verdict is read over its hold"),
                    )
                    .at(&at, self.value_span(&at))
                    .label(format!("at least {SHORTEST_PROBE_HOLD}"))
                    .hint("leave it out (a quarter of the hold, 5 s at least) or write a hold of seconds"),
                );
            } else if let Some(hold) = hold.filter(|hold| probe_hold > *hold) {
                self.push(
                    Diagnostic::new(
                        Code::BadSearch,
                        format!(
                            "`probe_hold` ({probe_hold}) is longer than the hold it shortens ({hold})"
                        ),
                    )
                    .at(&at, self.value_span(&at))
                    .label("a probe that brackets runs shorter than the hold, not longer")
                    .hint("leave it out (a quarter of the hold) or write a shorter one"),
                );
            }
        }
        let at = format!("{pointer}/max_time");
        let hold = hold.unwrap_or(Duration::from_secs(5));
        let probe = search.probe_hold.unwrap_or_else(|| {
            Duration::from_micros(hold.as_micros() / 4)
                .max(Duration::from_secs(5))
                .min(hold)
        });
        let confirming = 2 * u64::from(phase.repeats);
        let least = Duration::from_micros(
            probe.as_micros() * u64::from(search.probe_repeats) + hold.as_micros() * confirming,
        );
        if search.max_time < least {
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!(
                        "a budget of {} cannot find a ceiling: the first probe holds {probe} (`probe_repeats = {}`), and confirming the two ends at `repeats = {}` holds {} more",
                        search.max_time,
                        search.probe_repeats,
                        phase.repeats,
                        Duration::from_micros(hold.as_micros() * confirming)
                    ),
                )
                .at(&at, self.value_span(&at))
                .label("too short to confirm a ceiling")
                .hint(format!(
                    "allow at least {least} (the holds alone, before ramps and starts); leave it out for 30m"
                )),
            );
        } else if search.max_time > LONGEST_SEARCH {
            self.push(
                Diagnostic::new(
                    Code::BadSearch,
                    format!(
                        "a search budget of {} is past any search: one brackets a ×200 span to 5 % in about 30 probes",
                        search.max_time
                    ),
                )
                .at(&at, self.value_span(&at))
                .label(format!("at most {LONGEST_SEARCH}"))
                .hint("leave it out for 30m, or give the hours the probes need"),
            );
        }
    }

    /// `order` and `on_failure` say how listed points run; a search makes its own: each
    /// probe's repeats together, a failed run judged by the search.
    fn search_settings(&mut self, phase: &headroom_spec::Phase, base: &str) {
        for (key, why) in [
            (
                "order",
                "a search runs each probe's repeats together, then decides the next probe",
            ),
            (
                "on_failure",
                "a search stops by itself: a run the server fails under load is a failed probe, any other failed run ends the search",
            ),
        ] {
            let at = format!("{base}/{key}");
            if self.document().json.pointer(&at).is_some() {
                let span = self.key_span(&at);
                self.push(
                    Diagnostic::new(
                        Code::ConflictingSettings,
                        format!("phase `{}` searches, so `{key}` does nothing", phase.name),
                    )
                    .at(&at, span)
                    .label(why)
                    .hint(format!("remove `{key}` from the phase")),
                );
            }
        }
    }
}
