//! The terminal view of the run in flight: what the runner's events say, kept as figures
//! ([`ViewState`]) and drawn as a panel redrawn every second on a terminal ([`frame`]) or a
//! plain line every few seconds off one ([`plain_line`]). Both are functions of the state
//! alone, so a frame is a snapshot test.

use hdrhistogram::Histogram;
use headroom_matrix::Point;
use headroom_matrix::resolved::Scenario;
use headroom_runner::live::Gauges;
use headroom_runner::results::{
    ErrorCounts, ProcessSample, Window, deserialize_histogram, histogram_summary,
};
use headroom_spec::numbers::{count, mib};

/// Everything the view shows, from the events so far.
#[derive(Default)]
pub(crate) struct ViewState {
    /// The run in flight; `None` between runs.
    pub(crate) run: Option<RunHeader>,
    /// Its scenarios, in the spec's order.
    pub(crate) scenarios: Vec<ScenarioView>,
    /// The server's last reading (the target, or a stack's sum).
    pub(crate) server: Option<ProcessSample>,
    /// The generator's CPU over the last second, in cores.
    pub(crate) generator_cores: Option<f64>,
    /// Of a target held to limits: the share of its CPU periods throttled in the last second.
    pub(crate) throttled: Option<f64>,
    /// Seconds since the run's load started.
    pub(crate) elapsed_s: f64,
}

/// Which run is in flight.
pub(crate) struct RunHeader {
    pub(crate) phase: String,
    /// The point's place in its phase, from 1, and its swept values in words.
    pub(crate) point: usize,
    pub(crate) at: String,
    pub(crate) repeat: u32,
    /// Its number among all runs, from 1, and the runs in all.
    pub(crate) number: usize,
    pub(crate) runs: usize,
}

/// One scenario of the run in flight.
pub(crate) struct ScenarioView {
    pub(crate) name: String,
    /// Ramp-up, hold (none: the whole run is measured) and ramp-down, in seconds.
    pub(crate) stages: (f64, Option<f64>, f64),
    pub(crate) load: Intended,
    /// The last second closed, and the gauges as it closed.
    pub(crate) last: Option<(Window, Gauges)>,
    /// The latencies of the seconds of the hold so far.
    pub(crate) hold: Histogram<u64>,
    /// Errors of every second so far, by why.
    pub(crate) errors: ErrorCounts,
}

/// What a scenario is meant to send at full load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Intended {
    /// Arrivals a second, ramping from the first figure to the second.
    Rate(f64, f64),
    /// Virtual users, ramping from the first figure to the second.
    Users(u64, u64),
    /// Sockets open, in rooms.
    Sockets(u64),
}

impl ScenarioView {
    /// The scenario as a point runs it, nothing measured yet.
    pub(crate) fn of(scenario: &Scenario) -> ScenarioView {
        let stages = scenario.stages();
        let load = match scenario {
            Scenario::Http(http) if http.executor.is_open() => Intended::Rate(
                http.start_rate.map_or(0.0, |r| r.as_per_second()),
                http.rate.map_or(0.0, |r| r.as_per_second()),
            ),
            Scenario::Http(http) => {
                Intended::Users(http.start_vus.unwrap_or(0), http.vus.unwrap_or(0))
            }
            Scenario::Rooms(rooms) => Intended::Sockets(rooms.sockets()),
        };
        ScenarioView {
            name: scenario.name().to_owned(),
            stages: (
                stages.ramp_up.as_secs_f64(),
                stages.hold.map(|hold| hold.as_secs_f64()),
                stages.ramp_down.as_secs_f64(),
            ),
            load,
            last: None,
            hold: headroom_runner::results::histogram::new(),
            errors: ErrorCounts::default(),
        }
    }

    /// A second closed: the last one, and the hold's latencies and the errors so far.
    pub(crate) fn second(&mut self, window: &Window, gauges: &Gauges) {
        let (ramp_up, hold, _) = self.stages;
        let t = window.t_s as f64;
        let in_hold = hold.is_none_or(|hold| t >= ramp_up && t < ramp_up + hold);
        if in_hold
            && let Some(latencies) = window.histogram.as_deref().and_then(deserialize_histogram)
        {
            let _ = self.hold.add(&latencies);
        }
        if let Some(kinds) = &window.errors_by_kind {
            let e = &mut self.errors;
            e.connect += kinds.connect;
            e.timeout += kinds.timeout;
            e.status += kinds.status;
            e.protocol += kinds.protocol;
            e.check += kinds.check;
        }
        self.last = Some((window.clone(), gauges.clone()));
    }

    /// Which stage `elapsed_s` is in, and how far: `hold 42s of 120s`; past the ramp-down,
    /// the load is over (the steady state is measured, the rooms drain).
    fn stage_at(&self, elapsed_s: f64) -> String {
        let (ramp_up, hold, ramp_down) = self.stages;
        let Some(hold) = hold else {
            return format!("{} of {}", seconds(elapsed_s), seconds(ramp_up + ramp_down));
        };
        if elapsed_s < ramp_up {
            format!("ramp-up {} of {}", seconds(elapsed_s), seconds(ramp_up))
        } else if elapsed_s < ramp_up + hold {
            format!("hold {} of {}", seconds(elapsed_s - ramp_up), seconds(hold))
        } else if elapsed_s < ramp_up + hold + ramp_down {
            let down = elapsed_s - ramp_up - hold;
            format!("ramp-down {} of {}", seconds(down), seconds(ramp_down))
        } else {
            "load over, measuring the steady state".to_owned()
        }
    }

    /// What it is meant to send at `elapsed_s`, in words: `400/s intended`: the generator's
    /// own schedule (`headroom_load::http::Schedule`), back to the start rate over the
    /// ramp-down; nothing once the load is over.
    fn intended_at(&self, elapsed_s: f64) -> String {
        let (ramp_up, hold, ramp_down) = self.stages;
        let schedule = headroom_load::http::Schedule::new(ramp_up, hold.unwrap_or(0.0), ramp_down);
        let over = elapsed_s >= schedule.total().as_secs_f64() && hold.is_some();
        let share = |from: f64, to: f64| {
            if over {
                0.0
            } else {
                schedule.at(elapsed_s, from, to)
            }
        };
        match self.load {
            Intended::Rate(from, to) => format!("{}/s intended", count(share(from, to))),
            Intended::Users(from, to) => {
                format!("{} users", count(share(from as f64, to as f64)))
            }
            Intended::Sockets(sockets) => format!("{} sockets", count(sockets as f64)),
        }
    }
}

impl ViewState {
    /// A run starts: its header and its scenarios, nothing measured yet.
    pub(crate) fn start(&mut self, header: RunHeader, point: &Point) {
        self.run = Some(header);
        self.scenarios = point.scenarios.iter().map(ScenarioView::of).collect();
        self.server = None;
        self.generator_cores = None;
        self.throttled = None;
        self.elapsed_s = 0.0;
    }

    /// A second of `scenario` closed.
    pub(crate) fn second(&mut self, scenario: &str, window: &Window, gauges: &Gauges) {
        if let Some(view) = self.scenarios.iter_mut().find(|s| s.name == scenario) {
            view.second(window, gauges);
        }
    }
}

/// Seconds as a person reads a stage: whole ones, or one decimal under ten (`0.5s`, `42s`).
fn seconds(value: f64) -> String {
    if value < 10.0 && value.fract() != 0.0 {
        format!("{value:.1}s")
    } else {
        format!("{value:.0}s")
    }
}

/// Milliseconds as the run's tables write them.
fn ms(value: f64) -> String {
    headroom_templates::format::duration_ms(value)
}

/// The scenario's figures, one line: done, latencies of the last second and of the hold,
/// errors, connections, lag; of rooms, sockets, deliveries and seen-by-everyone.
fn scenario_line(view: &ScenarioView, elapsed_s: f64) -> String {
    let mut parts = vec![view.intended_at(elapsed_s)];
    let Some((window, gauges)) = &view.last else {
        parts.push("no second closed yet".to_owned());
        return parts.join(" · ");
    };
    if let Some(rooms) = &gauges.rooms {
        parts[0] = format!("{} sockets open", count(gauges.connections as f64));
        let delivered = if rooms.expected == 0 {
            "none expected yet".to_owned()
        } else {
            // Two decimals: ten missing of 48,000 must not read 100.0 %.
            format!(
                "{} of {} delivered ({:.2} %)",
                count(rooms.delivered as f64),
                count(rooms.expected as f64),
                100.0 * rooms.delivered as f64 / rooms.expected as f64
            )
        };
        parts.push(delivered);
        parts.push(format!(
            "seen p95 {}",
            if window.requests > 0 {
                ms(window.p95_ms)
            } else {
                "–".to_owned()
            }
        ));
        parts.push(format!(
            "seen by all p95 of the complete messages {}",
            rooms
                .seen_by_all_completed_p95_ms
                .map_or_else(|| "–".to_owned(), ms)
        ));
        return parts.join(" · ");
    }
    parts.push(format!("{}/s done", count(window.requests as f64)));
    if window.requests > window.errors {
        parts.push(format!(
            "p50 {} p95 {} p99 {}",
            ms(window.p50_ms),
            ms(window.p95_ms),
            ms(window.p99_ms)
        ));
    }
    if !view.hold.is_empty() {
        parts.push(format!(
            "hold p95 {}",
            ms(histogram_summary(&view.hold).p95_ms)
        ));
    }
    parts.push(match view.errors.total() {
        0 => "no errors so far".to_owned(),
        _ => format!("errors so far: {}", view.errors.describe()),
    });
    parts.push(format!("{} connections", count(gauges.connections as f64)));
    if gauges.dropped > 0 {
        parts.push(format!("{} dropped", count(gauges.dropped as f64)));
    }
    if let Some(lag) = gauges.lag_max_ms {
        parts.push(format!("lag max {}", ms(lag)));
    }
    parts.join(" · ")
}

/// The server's and the generator's figures: `server 112.4 MiB, 0.41 cores · generator 0.05 cores`.
fn machine_line(state: &ViewState) -> String {
    let server = match &state.server {
        Some(sample) => format!(
            "server {}, {} cores",
            mib(sample.rss_bytes as f64, None),
            sample
                .cpu_pct
                .map_or_else(|| "–".to_owned(), |pct| format!("{:.2}", pct / 100.0))
        ),
        None => "server not read yet".to_owned(),
    };
    let server = match state.throttled {
        Some(share) => format!(
            "{server}, throttled in {:.0} % of its CPU periods",
            share * 100.0
        ),
        None => server,
    };
    let generator = state
        .generator_cores
        .map_or_else(|| "–".to_owned(), |cores| format!("{cores:.2}"));
    format!("{server} · generator {generator} cores")
}

/// The header: `load point 3 (readers=400) repeat 1 · run 7 of 15 · hold 42s of 120s`.
fn header(state: &ViewState, eta: Option<&str>) -> Option<String> {
    let run = state.run.as_ref()?;
    let stage = state
        .scenarios
        .first()
        .map(|s| format!(" · {}", s.stage_at(state.elapsed_s)))
        .unwrap_or_default();
    let eta = eta.map(|eta| format!(" · ETA {eta}")).unwrap_or_default();
    Some(format!(
        "{} point {} {} repeat {} · run {} of {}{stage}{eta}",
        run.phase,
        run.point,
        crate::live::in_parens(&run.at),
        run.repeat,
        run.number,
        run.runs
    ))
}

/// The panel drawn on a terminal: the run, a line per scenario, the server and the
/// generator. Empty between runs.
pub(crate) fn frame(state: &ViewState, eta: Option<&str>) -> String {
    let Some(header) = header(state, eta) else {
        return String::new();
    };
    let width = state
        .scenarios
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    let mut lines = vec![header];
    for view in &state.scenarios {
        lines.push(format!(
            "  {:width$}  {}",
            view.name,
            scenario_line(view, state.elapsed_s)
        ));
    }
    lines.push(format!("  {}", machine_line(state)));
    lines.join("\n")
}

/// The same in one line, for a log: what CI shows every few seconds.
pub(crate) fn plain_line(state: &ViewState, eta: Option<&str>) -> Option<String> {
    let mut parts = vec![header(state, eta)?];
    for view in &state.scenarios {
        parts.push(format!(
            "{}: {}",
            view.name,
            scenario_line(view, state.elapsed_s)
        ));
    }
    parts.push(machine_line(state));
    Some(format!("  {}", parts.join("; ")))
}

#[cfg(test)]
mod tests;
