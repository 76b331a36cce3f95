//! SLO rules as the compiler parsed them, and the names of the figures they read: what a
//! scenario or the whole point produces (`ScenarioFigure`, `PointFigure`), its unit and its
//! statistics. The compiler's catalogue offers these names; the runner's verdicts, the
//! figures crate and every screen read them.

use headroom_spec::{Duration, Percent, Rate, Size};
use serde::{Deserialize, Serialize};

/// A statistic of a latency distribution, as an SLO names it (`p95`, `max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Statistic {
    /// The median.
    #[serde(rename = "p50")]
    P50,
    /// The 90th percentile.
    #[serde(rename = "p90")]
    P90,
    /// The 95th percentile.
    #[serde(rename = "p95")]
    P95,
    /// The 99th percentile.
    #[serde(rename = "p99")]
    P99,
    /// The 99.9th percentile.
    #[serde(rename = "p99.9")]
    P999,
    /// The largest.
    #[serde(rename = "max")]
    Max,
    /// The arithmetic mean.
    #[serde(rename = "mean")]
    Mean,
    /// The smallest.
    #[serde(rename = "min")]
    Min,
}

impl Statistic {
    /// Every statistic, in the order hints list them.
    pub const ALL: [Statistic; 8] = [
        Statistic::P50,
        Statistic::P90,
        Statistic::P95,
        Statistic::P99,
        Statistic::P999,
        Statistic::Max,
        Statistic::Mean,
        Statistic::Min,
    ];

    /// As an SLO writes it, and as the results file stores it: `p99.9`.
    pub fn as_str(self) -> &'static str {
        match self {
            Statistic::P50 => "p50",
            Statistic::P90 => "p90",
            Statistic::P95 => "p95",
            Statistic::P99 => "p99",
            Statistic::P999 => "p99.9",
            Statistic::Max => "max",
            Statistic::Mean => "mean",
            Statistic::Min => "min",
        }
    }

    /// The statistic written `text`, if it is one.
    pub fn parse(text: &str) -> Option<Statistic> {
        Statistic::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The quantile a percentile (or `max`) is; `None` for `mean` and `min`.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Statistic::P50 => Some(0.50),
            Statistic::P90 => Some(0.90),
            Statistic::P95 => Some(0.95),
            Statistic::P99 => Some(0.99),
            Statistic::P999 => Some(0.999),
            Statistic::Max => Some(1.0),
            Statistic::Mean | Statistic::Min => None,
        }
    }

    /// Every statistic's name, for hints: `p50, p90, …, min`.
    pub fn listed() -> String {
        Statistic::ALL.map(Statistic::as_str).join(", ")
    }
}

/// What a figure measures, which decides the unit its threshold is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FigureUnit {
    /// A latency distribution; needs a statistic and a duration.
    Latency,
    /// A share of a total (failed requests); a percentage.
    Ratio,
    /// Bytes; a size.
    Size,
    /// Events per second; a rate.
    Rate,
    /// A plain count or value.
    Count,
    /// Seconds, as a single value (a series in seconds); a duration.
    Time,
    /// CPU in percent of one core; a percentage.
    Cpu,
}

impl FigureUnit {
    /// How a threshold of this unit is written, for hints: `a duration such as "1s"`.
    pub fn threshold_forms(self) -> &'static str {
        match self {
            FigureUnit::Latency | FigureUnit::Time => "a duration such as \"1s\" or \"250ms\"",
            FigureUnit::Ratio => "a percentage such as \"1%\"",
            FigureUnit::Cpu => "a percentage of one core such as \"150%\"",
            FigureUnit::Size => "a size such as \"3GiB\"",
            FigureUnit::Rate => "a rate such as \"100/s\"",
            FigureUnit::Count => "a plain number",
        }
    }
}

/// A figure of one scenario, by its name in an SLO (`browse.latency.p95`): the one list of
/// names the compiler's catalogue offers and the runner's verdicts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioFigure {
    /// HTTP: the latency of completed requests.
    Latency,
    /// HTTP: the share of requests that failed.
    Failed,
    /// HTTP: the share of due starts dropped at `max_in_flight`.
    Dropped,
    /// HTTP: requests sent per second.
    Rate,
    /// HTTP: requests sent.
    Requests,
    /// Rooms: the time to open a socket.
    Connect,
    /// Rooms: the share of planned sockets that did not open.
    SocketsFailed,
    /// Rooms: the share of open sockets the server closed.
    ClosedByServer,
    /// Rooms: the latency of each message at each recipient.
    Seen,
    /// Rooms: the time until a message reached every recipient.
    SeenByAll,
    /// Rooms: the share of expected deliveries that arrived.
    Delivered,
    /// Rooms: the share of expected deliveries that arrived within the deadline.
    Reach,
    /// Rooms: the share of expected deliveries that arrived after the deadline.
    Late,
    /// Rooms: messages sent.
    Messages,
    /// Rooms: copies that arrived at a socket outside the sender's room.
    Misrouted,
    /// Rooms: second and later copies of one message at one recipient.
    Duplicates,
    /// Rooms: the latency of page reloads.
    Reload,
    /// Rooms: the share of page reloads that failed.
    ReloadFailed,
    /// Socket.IO rooms: from a message's intended send time to its acknowledgement.
    Ack,
    /// Socket.IO rooms: the share of messages whose acknowledgement never came.
    Unacked,
}

impl ScenarioFigure {
    /// What an HTTP scenario produces.
    pub const HTTP: [ScenarioFigure; 5] = [
        ScenarioFigure::Latency,
        ScenarioFigure::Failed,
        ScenarioFigure::Dropped,
        ScenarioFigure::Rate,
        ScenarioFigure::Requests,
    ];
    /// What every rooms scenario produces.
    pub const ROOMS: [ScenarioFigure; 3] = [
        ScenarioFigure::Connect,
        ScenarioFigure::SocketsFailed,
        ScenarioFigure::ClosedByServer,
    ];
    /// What a rooms scenario that sends produces too.
    pub const ROOMS_SENDING: [ScenarioFigure; 8] = [
        ScenarioFigure::Seen,
        ScenarioFigure::SeenByAll,
        ScenarioFigure::Delivered,
        ScenarioFigure::Reach,
        ScenarioFigure::Late,
        ScenarioFigure::Messages,
        ScenarioFigure::Misrouted,
        ScenarioFigure::Duplicates,
    ];
    /// What a rooms scenario that reloads produces too.
    pub const ROOMS_RELOADING: [ScenarioFigure; 2] =
        [ScenarioFigure::Reload, ScenarioFigure::ReloadFailed];
    /// What a Socket.IO rooms scenario that asks acks (`socket_io.ack`) produces too.
    pub const ROOMS_ACKING: [ScenarioFigure; 2] = [ScenarioFigure::Ack, ScenarioFigure::Unacked];
    /// What each named request of an HTTP scenario of several produces
    /// (`browse.list.latency.p95`).
    pub const BY_REQUEST: [ScenarioFigure; 3] = [
        ScenarioFigure::Latency,
        ScenarioFigure::Failed,
        ScenarioFigure::Requests,
    ];

    /// As an SLO writes it: `seen_by_all`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioFigure::Latency => "latency",
            ScenarioFigure::Failed => "failed",
            ScenarioFigure::Dropped => "dropped",
            ScenarioFigure::Rate => "rate",
            ScenarioFigure::Requests => "requests",
            ScenarioFigure::Connect => "connect",
            ScenarioFigure::SocketsFailed => "sockets_failed",
            ScenarioFigure::ClosedByServer => "closed_by_server",
            ScenarioFigure::Seen => "seen",
            ScenarioFigure::SeenByAll => "seen_by_all",
            ScenarioFigure::Delivered => "delivered",
            ScenarioFigure::Reach => "reach",
            ScenarioFigure::Late => "late",
            ScenarioFigure::Messages => "messages",
            ScenarioFigure::Misrouted => "misrouted",
            ScenarioFigure::Duplicates => "duplicates",
            ScenarioFigure::Reload => "reload",
            ScenarioFigure::ReloadFailed => "reload_failed",
            ScenarioFigure::Ack => "ack",
            ScenarioFigure::Unacked => "unacked",
        }
    }

    /// The figure written `name`, if a scenario produces one of that name.
    pub fn parse(name: &str) -> Option<ScenarioFigure> {
        Self::HTTP
            .into_iter()
            .chain(Self::ROOMS)
            .chain(Self::ROOMS_SENDING)
            .chain(Self::ROOMS_RELOADING)
            .chain(Self::ROOMS_ACKING)
            .find(|figure| figure.as_str() == name)
    }

    /// What it measures, which decides its threshold's unit.
    pub fn unit(self) -> FigureUnit {
        match self {
            ScenarioFigure::Latency
            | ScenarioFigure::Connect
            | ScenarioFigure::Seen
            | ScenarioFigure::SeenByAll
            | ScenarioFigure::Reload
            | ScenarioFigure::Ack => FigureUnit::Latency,
            ScenarioFigure::Failed
            | ScenarioFigure::Dropped
            | ScenarioFigure::SocketsFailed
            | ScenarioFigure::ClosedByServer
            | ScenarioFigure::Delivered
            | ScenarioFigure::Reach
            | ScenarioFigure::Late
            | ScenarioFigure::ReloadFailed
            | ScenarioFigure::Unacked => FigureUnit::Ratio,
            ScenarioFigure::Rate => FigureUnit::Rate,
            ScenarioFigure::Requests
            | ScenarioFigure::Messages
            | ScenarioFigure::Misrouted
            | ScenarioFigure::Duplicates => FigureUnit::Count,
        }
    }
}

/// A figure of the whole point: the server's process, or a `[measure]` series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointFigure<'a> {
    /// The process group's resident set.
    Rss,
    /// The process group's CPU use, in cores.
    Cpu,
    /// A Prometheus series of `[measure]`, by name.
    Series(&'a str),
}

impl<'a> PointFigure<'a> {
    /// The figure written `name` (with no scenario before it).
    pub fn parse(name: &'a str) -> PointFigure<'a> {
        match name {
            "rss" => PointFigure::Rss,
            "cpu" => PointFigure::Cpu,
            series => PointFigure::Series(series),
        }
    }
}

/// How a figure is compared with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Comparison {
    /// `<`
    #[serde(rename = "<")]
    Below,
    /// `<=`
    #[serde(rename = "<=")]
    AtMost,
    /// `>`
    #[serde(rename = ">")]
    Above,
    /// `>=`
    #[serde(rename = ">=")]
    AtLeast,
    /// `==`, within rounding.
    #[serde(rename = "==")]
    Equal,
}

impl Comparison {
    /// Whether `figure` compared with `threshold` holds.
    pub fn holds(self, figure: f64, threshold: f64) -> bool {
        match self {
            Comparison::Below => figure < threshold,
            Comparison::AtMost => figure <= threshold,
            Comparison::Above => figure > threshold,
            Comparison::AtLeast => figure >= threshold,
            Comparison::Equal => {
                (figure - threshold).abs() <= f64::EPSILON * threshold.abs().max(1.0)
            }
        }
    }
}

/// A threshold in the unit of its figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Threshold {
    /// A time (`1s`, `250ms`).
    Duration(Duration),
    /// A share (`1%`).
    Percent(Percent),
    /// A size (`3GiB`).
    Size(Size),
    /// A rate (`50/s`).
    Rate(Rate),
    /// A plain number.
    Number(f64),
}

impl Threshold {
    /// The value in the unit results use: seconds, a fraction, bytes, per second, or as is.
    pub fn value(&self) -> f64 {
        match self {
            Threshold::Duration(d) => d.as_secs_f64(),
            Threshold::Percent(p) => p.fraction(),
            Threshold::Size(s) => s.bytes() as f64,
            Threshold::Rate(r) => r.as_per_second(),
            Threshold::Number(x) => *x,
        }
    }
}

/// A parsed SLO rule, as the runner evaluates it at every point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SloRule {
    /// Its key in `[slo]`.
    pub name: String,
    /// As written: `browse.latency.p95 < 1s`.
    pub expression: String,
    /// The scenario the figure belongs to; `None` for a figure of the whole point (`rss`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The scenario's named request whose figure it is, measured apart (`list` in
    /// `browse.list.latency.p95`); `None` for the scenario's own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The figure: `latency`, `failed`, `seen_by_all`, `rss`, a series…
    pub figure: String,
    /// `p95`, `max`…, for a distribution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistic: Option<Statistic>,
    /// What the figure measures, which decides the threshold's unit.
    pub unit: FigureUnit,
    /// How the figure is compared with the threshold.
    pub comparison: Comparison,
    /// The threshold as written, in its unit.
    pub threshold: Threshold,
    /// The threshold in result units (seconds, fraction, bytes, per second).
    pub threshold_value: f64,
}

impl SloRule {
    /// The scenario and its figure, when the rule is over a scenario's figure.
    pub fn scenario_figure(&self) -> Option<(&str, ScenarioFigure)> {
        let scenario = self.scenario.as_deref()?;
        Some((scenario, ScenarioFigure::parse(&self.figure)?))
    }

    /// The figure of the whole point, when the rule is over one (no scenario).
    pub fn point_figure(&self) -> Option<PointFigure<'_>> {
        self.scenario
            .is_none()
            .then(|| PointFigure::parse(&self.figure))
    }
}

#[cfg(test)]
mod tests {
    use super::{Comparison, ScenarioFigure, Statistic};

    #[test]
    fn comparisons_hold() {
        assert!(Comparison::Below.holds(0.9, 1.0));
        assert!(!Comparison::Below.holds(1.0, 1.0));
        assert!(Comparison::AtLeast.holds(0.995, 0.995));
        assert!(Comparison::Equal.holds(0.0, 0.0));
    }

    #[test]
    fn names_read_back() {
        for statistic in Statistic::ALL {
            assert_eq!(Statistic::parse(statistic.as_str()), Some(statistic));
        }
        assert_eq!(
            ScenarioFigure::parse("seen_by_all"),
            Some(ScenarioFigure::SeenByAll)
        );
        assert_eq!(ScenarioFigure::parse("seen_by_all_completed"), None);
    }
}
