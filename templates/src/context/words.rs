//! The spec in words: each scenario, the steady-state rules, the latency SLOs to draw.

use super::{LatencySlo, ScenarioText};
use headroom_matrix::resolved::{HttpScenario, Protocol, RoomsScenario, Scenario, Stages};
use headroom_matrix::slo::{FigureUnit, ScenarioFigure};
use headroom_results::Results;
use headroom_spec::scenario::{DataMode, HttpVersion};
use headroom_spec::think::UserStart;

/// Each scenario in words, from the resolved plan in the results (its first appearance).
pub(super) fn scenario_texts(results: &Results) -> Vec<ScenarioText> {
    let mut out: Vec<ScenarioText> = Vec::new();
    let scenarios = results
        .matrix
        .phases
        .iter()
        .filter_map(|phase| phase.points.first())
        .flat_map(|point| point.scenarios.iter());
    for scenario in scenarios {
        if out.iter().any(|s| s.name == scenario.name()) {
            continue;
        }
        let (kind, mut text) = match scenario {
            Scenario::Http(http) => ("http", http_text(http)),
            Scenario::Rooms(rooms) => ("rooms", rooms_text(rooms)),
        };
        if let Some(sources) = &results.matrix.generator.source_addresses {
            text.push_str(&sources_text(sources));
        }
        out.push(ScenarioText {
            name: scenario.name().to_owned(),
            kind: kind.to_owned(),
            text,
        });
    }
    out
}

/// `5s up, 20s hold, 0s down`.
pub(super) fn stages_text(stages: &Stages) -> String {
    let mut parts = vec![format!("{} up", stages.ramp_up)];
    if let Some(hold) = stages.hold {
        parts.push(format!("{hold} hold"));
    }
    parts.push(format!("{} down", stages.ramp_down));
    parts.join(", ")
}

pub(super) fn http_text(scenario: &HttpScenario) -> String {
    let executor = scenario.executor.as_str();
    let load = match &scenario.vus {
        None => format!(
            "{} arrivals",
            scenario
                .rate
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        ),
        Some(vus) => format!(
            "{} virtual users{}",
            vus,
            scenario
                .think
                .map(|think| {
                    let start = match scenario.start {
                        UserStart::Spread => "their starts spread over a think time",
                        UserStart::Together => "all starting together",
                    };
                    format!(" thinking {} between requests, {start}", think.describe())
                })
                .unwrap_or_default()
        ),
    };
    let requests = &scenario.requests;
    let label = |r: &headroom_spec::scenario::Request| {
        format!("{} {}", r.method.as_str(), r.name.as_deref().unwrap_or(""))
    };
    // A flow's first steps (`once`) are not in the weighted mix.
    let first: Vec<String> = requests.iter().filter(|r| r.once).map(label).collect();
    let picked: Vec<&headroom_spec::scenario::Request> =
        requests.iter().filter(|r| !r.once).collect();
    let names: Vec<String> = picked.iter().map(|r| label(r)).collect();
    let weights: Vec<String> = picked.iter().map(|r| r.weight.to_string()).collect();
    let mix = if picked.len() > 1 {
        format!(" (weighted {})", weights.join(":"))
    } else {
        String::new()
    };
    let steps = if first.is_empty() {
        String::new()
    } else {
        format!("first, once per user, {}; then ", first.join(", "))
    };
    let secure = requests.iter().any(|r| r.url.starts_with("https://"));
    let protocol = match (scenario.http_version, secure) {
        (HttpVersion::Http1, false) => "HTTP",
        (HttpVersion::Http1, true) => "HTTPS",
        (HttpVersion::Http2, false) => "HTTP/2 (h2c)",
        (HttpVersion::Http2, true) => "HTTP/2 over TLS",
    };
    let data = scenario
        .data
        .as_ref()
        .map(|data| {
            let rows = match (data.mode, &scenario.vus) {
                (DataMode::Unique, _) => "each user its own row",
                (_, Some(_)) => "a row per user",
                (_, None) => "a row per request",
            };
            format!(", {rows} of {} ({})", data.file, data_mode(data.mode))
        })
        .unwrap_or_default();
    format!(
        "{protocol}, {load} ({executor}){data}: {steps}{}{mix}; {}",
        names.join(", "),
        stages_text(&scenario.stages)
    )
}

/// `; each client from its own loopback address`: said beside every scenario, since a
/// server's per-address limits read them differently.
fn sources_text(sources: &headroom_spec::source::SourceAddresses) -> String {
    use headroom_spec::source::SourceAddresses;
    match sources {
        SourceAddresses::Named(text) if text == headroom_spec::source::SPREAD => {
            "; each client from its own loopback address".to_owned()
        }
        SourceAddresses::Named(block) => format!("; clients from the addresses of {block} in turn"),
        SourceAddresses::List(list) => {
            format!("; clients from {} in turn", list.join(", "))
        }
    }
}

fn data_mode(mode: DataMode) -> &'static str {
    match mode {
        DataMode::Sequential => "in order",
        DataMode::Random => "at random",
        DataMode::Unique => "unique",
    }
}

pub(super) fn rooms_text(scenario: &RoomsScenario) -> String {
    let peers = match (&scenario.peers_per_room, &scenario.peers) {
        (Some(per_room), _) => format!("{per_room} peers each"),
        (None, peers) => format!(
            "{} peers in all",
            peers.map(|p| p.to_string()).unwrap_or_default()
        ),
    };
    let traffic = match &scenario.send {
        Some(send) if !scenario.idle => format!(
            "{} per {} (senders: {}), {} messages",
            send.rate,
            send.per.as_str(),
            send.senders.as_str().replace('-', " "),
            send.size
        ),
        _ => "idle: no messages".to_owned(),
    };
    // `connect_over` is absent when it is the ramp-up (its default).
    let opened = match &scenario.connect_over {
        None => "the sockets opened over the ramp-up".to_owned(),
        Some(over) => format!("the sockets opened over {over}"),
    };
    let rooms = scenario.rooms.to_string();
    format!(
        "{}, {rooms} room{} of {peers}, {opened}; {traffic}; {}",
        protocol_text(scenario),
        if rooms == "1" { "" } else { "s" },
        stages_text(&scenario.stages)
    )
}

/// What the sockets speak, with what a reader needs to know of a Socket.IO session.
fn protocol_text(scenario: &RoomsScenario) -> String {
    match &scenario.protocol {
        Protocol::WebSocket => "WebSocket rooms".to_owned(),
        Protocol::SocketIo(session) => {
            let joins = match (session.joins.len(), session.join_ack) {
                (0, _) => "no join".to_owned(),
                (n, true) => format!("{n} join event{} acknowledged", plural(n)),
                (n, false) => format!("{n} join event{}", plural(n)),
            };
            let acks = if session.ack { ", acks asked" } else { "" };
            format!(
                "Socket.IO rooms (namespace `{}`, {joins}, messages as `{}` events{acks})",
                session.namespace, session.event
            )
        }
        Protocol::Sse(sse) => {
            let reconnect = if sse.reconnect {
                ", dropped streams reopened with `Last-Event-ID`"
            } else {
                ""
            };
            // The path says where; the scheme and `{port}` are the run's.
            let path = sse
                .publish
                .split_once("://")
                .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
                .unwrap_or("/");
            format!(
                "Server-Sent Events rooms (each peer a stream, messages POSTed to `{path}`{reconnect})"
            )
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The phases' steady-state rules in words; phases that share a rule share a sentence.
pub(super) fn steady_state(results: &Results) -> Vec<String> {
    let mut rules: Vec<(String, Vec<String>)> = Vec::new();
    for phase in &results.matrix.phases {
        let rule = &phase.measure.steady_state;
        let sentence = format!(
            "after the load ends (rooms: once delivery has drained, sockets still open), wait {}, then read the server's memory and metrics {} times {} apart and keep the {}",
            rule.settle,
            rule.scrapes,
            rule.every,
            rule.reduce.as_str()
        );
        let name = phase.name.clone();
        match rules.iter_mut().find(|(s, _)| *s == sentence) {
            Some((_, phases)) => phases.push(name),
            None => rules.push((sentence, vec![name])),
        }
    }
    let all = rules.len() == 1;
    rules
        .into_iter()
        .map(|(sentence, phases)| {
            if all {
                format!("Every phase: {sentence}.")
            } else {
                let names: Vec<String> = phases.iter().map(|p| format!("`{p}`")).collect();
                format!("{}: {sentence}.", names.join(", "))
            }
        })
        .collect()
}

/// The spec's latency SLOs as lines to draw: the figure the page plots per scenario (HTTP
/// `latency`, rooms `seen_by_all`), thresholds in ms.
pub(super) fn latency_slos(results: &Results) -> Vec<LatencySlo> {
    results
        .matrix
        .slo
        .iter()
        .filter(|slo| slo.unit == FigureUnit::Latency)
        .filter(|slo| {
            matches!(
                slo.scenario_figure(),
                Some((_, ScenarioFigure::Latency | ScenarioFigure::SeenByAll))
            )
        })
        .filter_map(|slo| {
            Some(LatencySlo {
                scenario: slo.scenario.clone()?,
                request: slo.request.clone(),
                expression: slo.expression.clone(),
                threshold_ms: slo.threshold_value * 1000.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow's scenario in words: what it speaks, where its rows come from, its first steps
    /// apart from the weighted mix.
    #[test]
    fn a_flow_over_tls_is_described_as_it_runs() {
        let scenario: HttpScenario = serde_json::from_value(serde_json::json!({
            "name": "members",
            "executor": "constant-vus",
            "vus": 10,
            "arrivals": "fixed",
            "max_in_flight": 100,
            "timeout": "30s",
            "http_version": "2",
            "data": { "file": "users.csv", "mode": "unique" },
            "stages": { "ramp_up": "1s", "hold": "5s", "ramp_down": "0s" },
            "requests": [
                { "name": "login", "method": "POST", "url": "https://localhost:1/api/login", "once": true },
                { "name": "notes", "url": "https://localhost:1/api/notes", "weight": 3 },
                { "name": "me", "url": "https://localhost:1/api/me" }
            ]
        }))
        .expect("a scenario");
        assert_eq!(
            http_text(&scenario),
            "HTTP/2 over TLS, 10 virtual users (constant-vus), each user its own row of users.csv (unique): first, once per user, POST login; then GET notes, GET me (weighted 3:1); 1s up, 5s hold, 0s down"
        );
    }
}
