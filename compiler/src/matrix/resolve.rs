//! Resolution at a point: the spec's `[target]` and `[[scenario]]` with every `"{variable}"`
//! replaced by its value there and every string's `{name}` filled, into the run matrix's
//! [`headroom_matrix::resolved`] types. `{port}`, `{env:…}`, `{row.…}` and captures are left
//! for the runner and the generator.

use std::collections::BTreeMap;

use headroom_matrix::resolved::{self, Bench, Limits, Messages, Reload, ThinkTime};
use headroom_spec::placeholder::{self, PlaceholderName};
use headroom_spec::scenario::{
    Messages as WrittenMessages, Reload as WrittenReload, RoomsProtocol, SocketIo, Sse,
};
use headroom_spec::target::{Limits as WrittenLimits, Step};
use headroom_spec::think::Think;
use headroom_spec::{Duration, Param, ParamValue, Scenario, Target, VarValue};

/// `[bench]` with `people_per_unit` at these variables' values.
pub(super) fn bench_at(
    written: &headroom_spec::Bench,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Bench, String> {
    Ok(Bench {
        name: written.name.clone(),
        description: written.description.clone(),
        unit: written.unit.clone(),
        people_per_unit: value(&written.people_per_unit, vars)?,
    })
}

/// The think time written in the spec at these variables' values.
pub(super) fn think_at(
    think: &Think,
    vars: &BTreeMap<String, VarValue>,
) -> Result<ThinkTime, String> {
    Ok(match think {
        Think::Fixed(fixed) => ThinkTime::Fixed(value(fixed, vars)?),
        Think::Drawn(drawn) => match (&drawn.uniform, &drawn.exponential) {
            (Some([least, most]), None) => ThinkTime::Uniform {
                uniform: [value(least, vars)?, value(most, vars)?],
            },
            (None, Some(mean)) => ThinkTime::Exponential {
                exponential: value(mean, vars)?,
            },
            // The checks refuse both and neither, with their place.
            _ => return Err("`think` takes one of `uniform` and `exponential`".to_owned()),
        },
    })
}

/// A parameter's value at a point: the literal, or the variable's value there.
pub(super) fn value<T: ParamValue>(
    param: &Param<T>,
    vars: &BTreeMap<String, VarValue>,
) -> Result<T, String> {
    match param {
        Param::Value(value) => Ok(value.clone()),
        Param::Var(name) => {
            let value = vars
                .get(name.as_str())
                .ok_or_else(|| format!("no variable `{name}`"))?;
            T::from_var(value)
        }
    }
}

/// An optional parameter's value at a point.
pub(super) fn optional<T: ParamValue>(
    param: Option<&Param<T>>,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Option<T>, String> {
    param.map(|p| value(p, vars)).transpose()
}

/// `[target.limits]` at these variables' values.
pub(super) fn limits_at(
    written: &WrittenLimits,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Limits, String> {
    Ok(Limits {
        cpus: optional(written.cpus.as_ref(), vars)?,
        memory: optional(written.memory.as_ref(), vars)?,
        pin: written.pin,
    })
}

/// What the peers of a rooms scenario send, at these variables' values.
pub(super) fn messages_at(
    written: &WrittenMessages,
    template: String,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Messages, String> {
    Ok(Messages {
        rate: value(&written.rate, vars)?,
        per: written.per,
        senders: written.senders,
        arrivals: written.arrivals,
        size: value(&written.size, vars)?,
        template,
        stamp: written.stamp,
    })
}

/// A page reload at these variables' values.
pub(super) fn reload_at(
    written: &WrittenReload,
    url: String,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Reload, String> {
    Ok(Reload {
        url,
        every: value(&written.every, vars)?,
        arrivals: written.arrivals,
    })
}

pub(super) fn fill(text: &mut String, vars: &BTreeMap<String, VarValue>) {
    *text = placeholder::fill(text, |name| match name {
        PlaceholderName::Name(name) => vars.get(name).map(ToString::to_string),
        PlaceholderName::Env(_)
        | PlaceholderName::Row(_)
        | PlaceholderName::Capture(_)
        | PlaceholderName::Port(_) => None,
    });
}

/// The target at a point: its strings with the point's variables filled, its limits resolved.
pub(super) fn target_at(
    written: &Target,
    vars: &BTreeMap<String, VarValue>,
) -> Result<resolved::Target, String> {
    let filled = |text: &String| {
        let mut text = text.clone();
        fill(&mut text, vars);
        text
    };
    let mut ready = written.ready.clone();
    if let Some(http) = &mut ready.http {
        fill(http, vars);
    }
    Ok(resolved::Target {
        command: written
            .command
            .as_ref()
            .map(|argv| argv.iter().map(filled).collect()),
        cwd: written.cwd.as_ref().map(filled),
        env: written
            .env
            .iter()
            .map(|(key, value)| (key.clone(), filled(value)))
            .collect(),
        url: written.url.as_ref().map(filled),
        pid_file: written.pid_file.clone(),
        ready,
        metrics: written.metrics.as_ref().map(filled),
        stop: written.stop.clone(),
        process: written.process,
        limits: written
            .limits
            .as_ref()
            .map(|limits| limits_at(limits, vars))
            .transpose()?,
        allow_hosts: written.allow_hosts.clone(),
        ca: written.ca.clone(),
        insecure_skip_verify: written.insecure_skip_verify,
        services: services_at(written, vars)?,
        front: front_of(written),
        setup: written
            .setup
            .iter()
            .map(|step| step_at(step, vars))
            .collect(),
        teardown: written
            .teardown
            .iter()
            .map(|step| step_at(step, vars))
            .collect(),
    })
}

/// The service the load goes to: the one named, or a stack's only service.
fn front_of(written: &Target) -> Option<String> {
    match (&written.front, written.services.len()) {
        (Some(front), _) => Some(front.clone()),
        (None, 1) => written.services.keys().next().cloned(),
        (None, _) => None,
    }
}

/// A setup or teardown step with the point's variables filled.
fn step_at(written: &Step, vars: &BTreeMap<String, VarValue>) -> Step {
    let mut step = written.clone();
    for arg in &mut step.command {
        fill(arg, vars);
    }
    for value in step.env.values_mut() {
        fill(value, vars);
    }
    if let Some(cwd) = &mut step.cwd {
        fill(cwd, vars);
    }
    step
}

/// A stack's services at a point, in start order: each after every service its `after`
/// names (then by name). A cycle or an unknown name is the checks' to report; here it fails.
fn services_at(
    written: &Target,
    vars: &BTreeMap<String, VarValue>,
) -> Result<Vec<resolved::Service>, String> {
    let order = headroom_spec::target::start_order(&written.services)
        .map_err(|name| format!("the services' `after` lists go round in a circle at `{name}`"))?;
    order
        .into_iter()
        .map(|name| {
            let service = &written.services[name];
            let filled = |text: &String| {
                let mut text = text.clone();
                fill(&mut text, vars);
                text
            };
            let mut ready = service.ready.clone();
            if let Some(http) = &mut ready.http {
                fill(http, vars);
            }
            Ok(resolved::Service {
                name: name.clone(),
                command: service.command.iter().map(filled).collect(),
                cwd: service.cwd.as_ref().map(filled),
                env: service
                    .env
                    .iter()
                    .map(|(key, value)| (key.clone(), filled(value)))
                    .collect(),
                ready,
                stop: service.stop.clone(),
                limits: service
                    .limits
                    .as_ref()
                    .map(|limits| limits_at(limits, vars))
                    .transpose()?,
                after: service.after.clone(),
            })
        })
        .collect()
}

/// A scenario at a point: every parameter its value there, its strings filled; a phase's
/// `hold` replaces the scenario's.
pub(super) fn scenario_at(
    written: &Scenario,
    phase_hold: Option<Duration>,
    vars: &BTreeMap<String, VarValue>,
) -> Result<resolved::Scenario, String> {
    let filled = |text: &String| {
        let mut text = text.clone();
        fill(&mut text, vars);
        text
    };
    let stages = |stages: &headroom_spec::Stages| -> Result<resolved::Stages, String> {
        Ok(resolved::Stages {
            ramp_up: value(&stages.ramp_up, vars)?,
            hold: match phase_hold {
                Some(hold) => Some(hold),
                None => optional(stages.hold.as_ref(), vars)?,
            },
            ramp_down: value(&stages.ramp_down, vars)?,
        })
    };
    Ok(match written {
        Scenario::Http(http) => resolved::Scenario::Http(resolved::HttpScenario {
            name: http.name.clone(),
            executor: http.executor,
            rate: optional(http.rate.as_ref(), vars)?,
            start_rate: optional(http.start_rate.as_ref(), vars)?,
            vus: optional(http.vus.as_ref(), vars)?,
            start_vus: http.start_vus,
            think: http
                .think
                .as_ref()
                .map(|think| think_at(think, vars))
                .transpose()?,
            start: http.start.unwrap_or_default(),
            arrivals: http.arrivals,
            max_in_flight: http.max_in_flight,
            max_connections: http.max_connections.unwrap_or(http.max_in_flight),
            timeout: http.timeout,
            connect_timeout: http.connect_timeout,
            http_version: http.http_version,
            data: http.data.clone(),
            stages: stages(&http.stages)?,
            requests: http
                .requests
                .iter()
                .map(|request| headroom_spec::scenario::Request {
                    url: filled(&request.url),
                    headers: request
                        .headers
                        .iter()
                        .map(|(key, value)| (key.clone(), filled(value)))
                        .collect(),
                    body: request.body.as_ref().map(filled),
                    ..request.clone()
                })
                .collect(),
        }),
        Scenario::Rooms(rooms) => resolved::Scenario::Rooms(resolved::RoomsScenario {
            name: rooms.name.clone(),
            url: filled(&rooms.url),
            protocol: protocol_at(rooms, &filled),
            rooms: value(&rooms.rooms, vars)?,
            peers_per_room: optional(rooms.peers_per_room.as_ref(), vars)?,
            peers: optional(rooms.peers.as_ref(), vars)?,
            join: rooms.join.as_ref().map(filled),
            idle: rooms.idle,
            send: rooms
                .send
                .as_ref()
                .map(|send| messages_at(send, filled(&send.template), vars))
                .transpose()?,
            ping: rooms.ping.clone(),
            reload: rooms
                .reload
                .as_ref()
                .map(|reload| reload_at(reload, filled(&reload.url), vars))
                .transpose()?,
            deadline: rooms.deadline,
            connect_timeout: rooms.connect_timeout,
            connect_over: optional(rooms.connect_over.as_ref(), vars)?,
            stages: stages(&rooms.stages)?,
        }),
    })
}

/// What a rooms scenario speaks, its Socket.IO strings filled at the point.
fn protocol_at(
    rooms: &headroom_spec::RoomsScenario,
    filled: &dyn Fn(&String) -> String,
) -> resolved::Protocol {
    match rooms.protocol {
        RoomsProtocol::WebSocket => resolved::Protocol::WebSocket,
        RoomsProtocol::SocketIo => {
            let written = rooms.socket_io.clone().unwrap_or_default();
            resolved::Protocol::SocketIo(SocketIo {
                path: filled(&written.path),
                namespace: filled(&written.namespace),
                auth: written.auth.as_ref().map(filled),
                joins: written.joins.iter().map(filled).collect(),
                event: filled(&written.event),
                ..written
            })
        }
        RoomsProtocol::Sse => {
            let written = rooms.sse.as_deref().cloned().unwrap_or_else(|| Sse {
                publish: String::new(),
                publish_headers: Default::default(),
                headers: Default::default(),
                reconnect: false,
            });
            let headers = |map: &std::collections::BTreeMap<String, String>| {
                map.iter()
                    .map(|(name, value)| (name.clone(), filled(value)))
                    .collect()
            };
            resolved::Protocol::Sse(Sse {
                publish: filled(&written.publish),
                publish_headers: headers(&written.publish_headers),
                headers: headers(&written.headers),
                reconnect: written.reconnect,
            })
        }
    }
}
