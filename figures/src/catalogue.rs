//! Every figure a user can name, defined once: its name, unit, what produces it, how it is
//! computed from the recorded histograms and counts, and which way is better. The SLO
//! verdicts, the run table, the page, `compare` and `merge` read figures through
//! [`crate::read`], which computes each as its definition here says; docs/spec.md's table of
//! figures is generated from [`markdown`] (checked by `tests/docs.rs`).

use headroom_matrix::slo::{FigureUnit, PointFigure, ScenarioFigure, Statistic};
use headroom_spec::Better;

/// One figure: what a user writes and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// As an SLO, a gate and `compare` write it (after `SCENARIO.`): `seen_by_all`, `rss`.
    pub name: &'static str,
    /// Its unit, which decides how a threshold is written.
    pub unit: FigureUnit,
    /// Which scenarios (or the point itself) produce it.
    pub produced_by: &'static str,
    /// How it is computed from what a run recorded.
    pub computed: &'static str,
    /// Which way is better; `None` for a count that only says how much load there was.
    pub better: Option<Better>,
}

impl Definition {
    /// Whether it is a distribution, named with a statistic (`latency.p95`).
    pub fn is_distribution(&self) -> bool {
        self.unit == FigureUnit::Latency
    }
}

/// The statistics `compare` judges for a distribution: the tail and the middle, not the
/// extremes (one repeat's `max` is one request).
pub const COMPARED_STATISTICS: [Statistic; 4] = [
    Statistic::P50,
    Statistic::P90,
    Statistic::P95,
    Statistic::P99,
];

const HTTP: &str = "HTTP";
const HTTP_AND_REQUESTS: &str = "HTTP, and each named request of a scenario of several";
const ROOMS: &str = "rooms";
const ROOMS_SENDING: &str = "rooms that send";
const ROOMS_RELOADING: &str = "rooms that reload";
const ROOMS_ACKING: &str = "Socket.IO rooms that ask acks";

/// The definition of a scenario's figure.
pub fn of_scenario(figure: ScenarioFigure) -> Definition {
    let (produced_by, better) = produced_by(figure);
    Definition {
        name: figure.as_str(),
        unit: figure.unit(),
        produced_by,
        computed: computed(figure),
        better,
    }
}

/// Which scenarios produce a scenario's figure, and which way of it is better.
fn produced_by(figure: ScenarioFigure) -> (&'static str, Option<Better>) {
    use ScenarioFigure as F;
    match figure {
        F::Latency => (HTTP_AND_REQUESTS, Some(Better::Lower)),
        F::Failed => (HTTP_AND_REQUESTS, Some(Better::Lower)),
        F::Dropped => (HTTP, Some(Better::Lower)),
        F::Rate => (HTTP, Some(Better::Higher)),
        F::Requests => (HTTP_AND_REQUESTS, None),
        F::Connect => (ROOMS, Some(Better::Lower)),
        F::SocketsFailed => (ROOMS, Some(Better::Lower)),
        F::ClosedByServer => (ROOMS, Some(Better::Lower)),
        F::Seen => (ROOMS_SENDING, Some(Better::Lower)),
        F::SeenByAll => (ROOMS_SENDING, Some(Better::Lower)),
        F::Delivered => (ROOMS_SENDING, Some(Better::Higher)),
        F::Reach => (ROOMS_SENDING, Some(Better::Higher)),
        F::Late => (ROOMS_SENDING, Some(Better::Lower)),
        F::Messages => (ROOMS_SENDING, None),
        F::Misrouted => (ROOMS_SENDING, Some(Better::Lower)),
        F::Duplicates => (ROOMS_SENDING, Some(Better::Lower)),
        F::Reload => (ROOMS_RELOADING, Some(Better::Lower)),
        F::ReloadFailed => (ROOMS_RELOADING, Some(Better::Lower)),
        F::Ack => (ROOMS_ACKING, Some(Better::Lower)),
        F::Unacked => (ROOMS_ACKING, Some(Better::Lower)),
    }
}

/// How a scenario's figure is computed from what a run recorded.
fn computed(figure: ScenarioFigure) -> &'static str {
    use ScenarioFigure as F;
    match figure {
        F::Latency => {
            "from each request's intended send time to the last byte of its answer, over the \
             answers that met `expect` in the hold; a request with no answer has none, and \
             unexpected answers are kept apart (`unexpected_latency` in the results)"
        }
        F::Failed => {
            "requests that failed (no answer, or one that did not meet `expect`) over the \
             requests that ended, the whole run's: those intended in the hold and outside it \
             (a request that timed out during a ramp is a failure all the same)"
        }
        F::Dropped => "starts due in the hold but skipped at `max_in_flight`, over the starts due",
        F::Rate => {
            "requests that ended in the hold, per second of the hold; not measured when none \
             ended"
        }
        F::Requests => "requests that ended in the hold",
        F::Connect => {
            "from a socket's scheduled connect time to its open WebSocket (join sent; with \
             Socket.IO, its namespace connected and its joins sent or acknowledged), over the \
             sockets that opened"
        }
        F::SocketsFailed => "planned sockets that did not open, over the sockets planned",
        F::ClosedByServer => "open sockets the server closed, over the sockets that opened",
        F::Seen => {
            "from a message's intended send time to its arrival, at each recipient that got it"
        }
        F::SeenByAll => {
            "from a message's intended send time until its last expected recipient had it, over \
             every message that expected someone: a message that never reached everyone counts \
             as never, so a statistic that falls among those is `never` (a failed SLO, with no \
             value)"
        }
        F::Delivered => {
            "frames that arrived, on time or late, over the frames expected (each message's \
             open peers, the sender excluded)"
        }
        F::Reach => "frames that arrived within the deadline, over the frames expected",
        F::Late => "frames that arrived after the deadline, over the frames expected",
        F::Messages => "messages sent in the hold",
        F::Misrouted => {
            "copies of messages that arrived at a socket outside the sender's room (a server              that leaks messages across rooms); never delivered, and any fails the run"
        }
        F::Duplicates => {
            "second and later copies of one message at one recipient; the first is the              delivery, the others are not, and any fails the run"
        }
        F::Reload => {
            "from a reload's intended time to the last byte of the page (or its failure), over \
             the reloads that ended"
        }
        F::ReloadFailed => "reloads that failed, over the reloads that ended",
        F::Ack => {
            "from a message's intended send time to the server's acknowledgement (`43<id>`), \
             over the acks that came"
        }
        F::Unacked => {
            "messages sent asking an ack whose ack never came (before the socket closed), over \
             the messages that asked"
        }
    }
}

/// The definition of a figure of the whole point. A `[measure]` series takes its unit and
/// better way from the spec (`unit`, `better`), so its definition here is the general one.
pub fn of_point(figure: PointFigure<'_>) -> Definition {
    match figure {
        PointFigure::Rss => Definition {
            name: "rss",
            unit: FigureUnit::Size,
            produced_by: "the point: the server's process tree",
            computed: "the resident set (PSS when there are several processes) of the target's \
                       process tree, read at the steady state (after the HTTP load, with the \
                       rooms still open)",
            better: Some(Better::Lower),
        },
        PointFigure::Cpu => Definition {
            name: "cpu",
            unit: FigureUnit::Cpu,
            produced_by: "the point: the server's process tree",
            computed: "the CPU time (user and system) the target's process tree used over the \
                       hold, per second of the hold: in cores, written as a percentage of one \
                       core (`150%` is 1.5 cores)",
            better: Some(Better::Lower),
        },
        PointFigure::Series(_) => Definition {
            name: "NAME",
            unit: FigureUnit::Count,
            produced_by: "the point: a `[measure]` series",
            computed: "the series' readings at the steady state, reduced as `[measure] \
                       steady_state.reduce` says; its unit is the series' `unit`, its better \
                       way the series' `better` (`compare` judges only a series that says)",
            better: None,
        },
    }
}

/// Every figure, the point's first, then the scenarios' in the order of the spec language.
pub fn all() -> Vec<Definition> {
    let point = [
        PointFigure::Rss,
        PointFigure::Cpu,
        PointFigure::Series("NAME"),
    ]
    .into_iter()
    .map(of_point);
    let scenario = ScenarioFigure::HTTP
        .into_iter()
        .chain(ScenarioFigure::ROOMS)
        .chain(ScenarioFigure::ROOMS_SENDING)
        .chain(ScenarioFigure::ROOMS_RELOADING)
        .chain(ScenarioFigure::ROOMS_ACKING)
        .map(of_scenario);
    point.chain(scenario).collect()
}

/// The unit as a reader says it.
fn unit_words(unit: FigureUnit) -> &'static str {
    match unit {
        FigureUnit::Latency => "time, with a statistic",
        FigureUnit::Ratio => "share",
        FigureUnit::Size => "bytes",
        FigureUnit::Rate => "per second",
        FigureUnit::Count => "count",
        FigureUnit::Time => "seconds",
        FigureUnit::Cpu => "cores (% of one)",
    }
}

/// The catalogue as a Markdown table: docs/spec.md's list of figures and `headroom figures`.
pub fn markdown() -> String {
    let mut text = String::from(
        "| figure | unit | produced by | computed | better |\n| --- | --- | --- | --- | --- |\n",
    );
    for definition in all() {
        let name = if definition.is_distribution() {
            format!("`{}.STAT`", definition.name)
        } else {
            format!("`{}`", definition.name)
        };
        let better = match definition.better {
            Some(Better::Lower) => "lower",
            Some(Better::Higher) => "higher",
            None => "–",
        };
        // A series' unit is its own (`unit` in `[measure]`), not the definition's.
        let unit = if definition.name == "NAME" {
            "the series' `unit`: bytes, seconds or a count"
        } else {
            unit_words(definition.unit)
        };
        text.push_str(&format!(
            "| {name} | {unit} | {} | {} | {better} |\n",
            definition.produced_by, definition.computed
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name the SLO grammar accepts has a definition, under the same name and unit.
    #[test]
    fn every_figure_an_slo_names_is_defined_once() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|d| d.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a name defined twice: {names:?}");
        for definition in all
            .iter()
            .filter(|d| !matches!(d.name, "rss" | "cpu" | "NAME"))
        {
            let figure = ScenarioFigure::parse(definition.name).expect("an SLO name");
            assert_eq!(figure.unit(), definition.unit, "{}", definition.name);
        }
        assert_eq!(all.len(), 3 + 20);
        assert!(markdown().contains(
            "| `seen_by_all.STAT` | time, with a statistic | rooms that send | from a message's"
        ));
    }
}
