//! A run's target brought up: the `[target] command` or a stack's services started and ready,
//! or an external target's host and process found.

use crate::target::ReadyCheck;
use std::collections::BTreeMap;

use super::RunOptions;
use crate::cgroup::Cgroup;
use crate::external::{external_pid, external_url_allowed};
use crate::limits::Emulation;
use crate::names::file_safe as sanitize;
use crate::results::{Failure, RunResult};
use crate::stack::{Stack, StackStart, service_ports};
use crate::target::{Fills, Launch, Process, Running, endpoints};
use headroom_load::web;
use headroom_matrix::{MatrixPhase, Point};
use std::path::Path;
use tokio::sync::watch;

/// A free loopback port: bound by us, then released for the target to take.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}

/// What a started target gives the run: the port load goes to, what headroom started, the
/// stack's ports, an external target's process group, and where its metrics are.
pub(super) struct Started {
    pub(super) port: u16,
    pub(super) stack: Stack,
    /// `{port.NAME}`: every service's port (empty without a stack).
    pub(super) ports: BTreeMap<String, u16>,
    pub(super) metrics: Option<web::Endpoint>,
}

impl Started {
    /// The process groups sampled during the load and at steady state.
    pub(super) fn groups(&self) -> Vec<(Option<String>, crate::sample::ServerProcesses)> {
        self.stack.groups()
    }

    /// What steps, series and URLs have filled in: `{port}` the front's.
    pub(super) fn fills<'a>(&'a self, headroom_bin: &'a Path) -> Fills<'a> {
        Fills {
            port: self.port,
            services: &self.ports,
            headroom_bin,
            vars: None,
        }
    }
}

/// Where a run's logs go: `logs/{results}/{phase}-p{point}-r{repeat}`, relative to the
/// results file's folder, `{results}` its name without `.json`: two results files in one
/// folder (a baseline and a lever's run) each keep their own logs.
pub(super) fn log_stem(
    phase: &MatrixPhase,
    point: &Point,
    repeat: u32,
    options: &RunOptions,
) -> String {
    format!(
        "{}/{}-p{}-r{}",
        logs_of(options),
        sanitize(&phase.name),
        point.index + 1,
        repeat
    )
}

/// Where the logs of a target kept for a phase go: `logs/{results}/{phase}`, relative to the
/// results file's folder.
pub(super) fn phase_log_stem(phase: &MatrixPhase, options: &RunOptions) -> String {
    format!("{}/{}", logs_of(options), sanitize(&phase.name))
}

/// The results file's own logs folder: `logs/{its name without .json}`.
fn logs_of(options: &RunOptions) -> String {
    let name = options
        .out
        .file_stem()
        .map_or_else(|| "results".into(), |stem| stem.to_string_lossy());
    format!("logs/{}", sanitize(&name))
}

/// The folder the results file is in: logs are relative to it.
pub(super) fn results_dir(options: &RunOptions) -> &Path {
    options.out.parent().unwrap_or(Path::new("."))
}

/// What bringing a point's target up takes: which run it is for, where its logs go, its
/// cgroup and the hosts it may be reached on.
pub(super) struct TargetStart<'a> {
    pub(super) point: &'a Point,
    /// Its logs' stem (`logs/{phase}/{point}-{repeat}`).
    pub(super) stem: &'a str,
    /// The run's number among all runs (a stack's cgroups are named by it).
    pub(super) run_number: usize,
    pub(super) emulation: &'a Emulation,
    /// Set by a signal: every wait (readiness, a step) ends at once.
    pub(super) cancel: &'a watch::Receiver<bool>,
    pub(super) options: &'a RunOptions,
    /// The cgroup of `[target] command` (a stack's services get their own).
    pub(super) cgroup: Option<&'a Cgroup>,
    pub(super) allowed: &'a web::Allowed,
}

/// Starts the target (or checks the external one) and waits until it is ready; `None` with
/// the failure in `result` when it could not.
pub(super) async fn start_target(at: &TargetStart<'_>, result: &mut RunResult) -> Option<Started> {
    let TargetStart {
        point,
        stem,
        options,
        allowed,
        cancel,
        ..
    } = *at;
    let target = &point.target;
    if let Some(url) = &target.url {
        return external(url, at, result).await;
    }
    let picked = if target.services.is_empty() {
        free_port().map(|port| (port, BTreeMap::new()))
    } else {
        service_ports(target).map(|ports| {
            let front = target.front.as_ref().and_then(|front| ports.get(front));
            (front.copied().unwrap_or_default(), ports)
        })
    };
    let (port, ports) = match picked {
        Ok(picked) => picked,
        Err(e) => {
            result.failure = Some(Failure::SpawnFailed {
                message: format!("no free loopback port: {e}"),
            });
            return None;
        }
    };
    // Where readiness and metrics are read: resolved and checked once, before the target
    // starts (a host load may not go to fails the run before anything runs).
    let fills = Fills {
        port,
        services: &ports,
        headroom_bin: &options.headroom_bin,
        vars: None,
    };
    let own = web::OwnAddress::loopback(port);
    let (ready, metrics) = match endpoints(target, &fills, &own, allowed, &options.spec_dir).await {
        Ok(endpoints) => endpoints,
        Err(message) => {
            result.failure = Some(Failure::Load { message });
            return None;
        }
    };
    result.port = port;
    let stack = if target.services.is_empty() {
        start_command(at, port, ready.as_ref(), result).await?
    } else {
        let at = StackStart {
            target,
            ports: &ports,
            headroom_bin: &options.headroom_bin,
            spec_dir: &options.spec_dir,
            log_dir: results_dir(options),
            log_stem: stem,
            emulation: at.emulation,
            run_number: at.run_number,
            allowed,
            cancel,
        };
        Stack::start(&at, result).await?
    };
    Some(Started {
        port,
        stack,
        ports,
        metrics,
    })
}

/// `[target] command` started in the run's cgroup and waited for.
async fn start_command(
    at: &TargetStart<'_>,
    port: u16,
    ready: Option<&web::Endpoint>,
    result: &mut RunResult,
) -> Option<Stack> {
    let (target, options, cgroup, stem) = (&at.point.target, at.options, at.cgroup, at.stem);
    let log_name = format!("{stem}.log");
    let launch = Launch {
        process: Process::of_target(target),
        fills: Fills::new(port, &options.headroom_bin),
        spec_dir: &options.spec_dir,
        log: results_dir(options).join(&log_name),
        cgroup,
    };
    result.log = Some(log_name);
    let mut running = match Running::start(&launch).await {
        Ok(running) => running,
        Err(failure) => {
            result.failure = Some(failure);
            return None;
        }
    };
    match running
        .wait_ready(
            ReadyCheck {
                ready: &target.ready,
                http: ready,
            },
            port,
            at.cancel,
        )
        .await
    {
        Ok(after) => result.ready_after_s = Some(after.as_secs_f64()),
        Err(failure) => {
            result.failure = Some(failure);
            result.stopped = Some(
                running
                    .stop(target.stop.signal, target.stop.grace.as_std())
                    .await,
            );
            return None;
        }
    }
    Some(Stack::of_target(running, target))
}

/// An external target (`url`): its host checked, its endpoints resolved, its process found
/// through `pid_file` when given.
async fn external(url: &str, at: &TargetStart<'_>, result: &mut RunResult) -> Option<Started> {
    let (target, options, allowed) = (&at.point.target, at.options, at.allowed);
    let url = crate::target::fill(url, 0, &options.headroom_bin).unwrap_or_else(|_| url.to_owned());
    let parsed = web::parse_web_url(&url);
    let port = parsed
        .as_ref()
        .and_then(|parsed| parsed.dial.rsplit(':').next()?.parse().ok())
        .unwrap_or(80);
    // Its readiness and metrics paths are read where it runs, not on loopback.
    let own = parsed
        .as_ref()
        .map_or_else(|| web::OwnAddress::loopback(port), web::OwnAddress::of_url);
    let checked = match external_url_allowed(&url, target, allowed).await {
        Ok(address) => {
            let fills = Fills::new(port, &options.headroom_bin);
            endpoints(target, &fills, &own, allowed, &options.spec_dir)
                .await
                .map(|endpoints| (address, endpoints))
        }
        Err(message) => Err(message),
    };
    let (address, (ready, metrics)) = match checked {
        Ok(found) => found,
        Err(message) => {
            result.failure = Some(Failure::Load { message });
            return None;
        }
    };
    // Nothing is sent to a server that is not there: its requests would be errors only.
    let check = ReadyCheck {
        ready: &target.ready,
        http: ready.as_ref(),
    };
    match crate::external::wait_external_ready(check, address, at.cancel).await {
        Ok(after) => result.ready_after_s = Some(after.as_secs_f64()),
        Err(failure) => {
            result.failure = Some(failure);
            return None;
        }
    }
    result.port = port;
    result
        .notes
        .push("an external target: the runner neither started nor stopped it".to_owned());
    let mut stack = Stack::default();
    match &target.pid_file {
        Some(file) => match external_pid(file, &options.spec_dir, &options.headroom_bin, port) {
            Ok((pid, unchecked)) => {
                let processes =
                    crate::sample::tree(crate::sample::ServerProcesses::Descendants(pid))
                        .map_or(0, |tree| tree.len());
                result.notes.push(format!(
                    "its process {pid} was sampled with its descendants: {processes} process{} at the start",
                    if processes == 1 { "" } else { "es" }
                ));
                result.notes.extend(unchecked);
                stack.external = crate::stack::ExternalProcess::of(pid);
            }
            // `pid_file` asks for the server's memory and CPU: without them the run would
            // read as if measured, so it fails by name.
            Err(why) => {
                result.failure = Some(Failure::Load {
                    message: format!("`pid_file`: {why}"),
                });
                return None;
            }
        },
        None => result.notes.push(
            "its process was not sampled: give `pid_file` in [target] to sample an external target"
                .to_owned(),
        ),
    }
    Some(Started {
        port,
        stack,
        ports: BTreeMap::new(),
        metrics,
    })
}
