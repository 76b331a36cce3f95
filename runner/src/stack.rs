//! What headroom starts at a point: the `[target] command`, or a stack's services
//! (`[target.services]`) in start order, each ready before the next, each in a cgroup of its own
//! shape when it has `limits`; watched for death, sampled apart, stopped in reverse order.

use crate::target::ReadyCheck;
use std::collections::BTreeMap;
use std::path::Path;

use headroom_matrix::resolved::{Service, Target};
use headroom_results::{ProcessResult, RunResult, ServiceResult};

use crate::cgroup::Cgroup;
use crate::limits::{Emulation, RunShape};
use crate::results::Failure;
use crate::sample::Readings;
use crate::target::{Fills, Launch, Process, Running};
use headroom_load::web;

/// One process headroom started: the target (`name` `None`) or a named service.
pub(crate) struct Member {
    /// The service; `None` for `[target] command`.
    pub(crate) name: Option<String>,
    pub(crate) running: Running,
    /// Its own cgroup (a service with `limits`); the target's is the run's.
    limited: Option<(Cgroup, RunShape)>,
    stop: headroom_spec::target::Stop,
}

/// Everything headroom started for one run, in start order; or the external server it watches.
#[derive(Default)]
pub(crate) struct Stack {
    pub(crate) members: Vec<Member>,
    /// An external target's process (`url` with `pid_file`): sampled and watched, never
    /// started or stopped.
    pub(crate) external: Option<ExternalProcess>,
}

/// An external server's process, as its `pid_file` named it when the run began.
pub(crate) struct ExternalProcess {
    pub(crate) pid: i32,
    /// Its start time (clock ticks after boot): a pid taken by another process since is not it.
    started: u64,
}

impl ExternalProcess {
    /// The process `pid`, with its start time; `None` when it is not running.
    pub(crate) fn of(pid: i32) -> Option<ExternalProcess> {
        let stat = procfs::process::Process::new(pid).ok()?.stat().ok()?;
        Some(ExternalProcess {
            pid,
            started: stat.starttime,
        })
    }

    /// Whether it still runs: in /proc, not a zombie, and not another process on its pid.
    fn runs(&self) -> bool {
        procfs::process::Process::new(self.pid)
            .and_then(|process| process.stat())
            .is_ok_and(|stat| stat.starttime == self.started && stat.state != 'Z')
    }
}

/// Where a stack's services start from.
pub(crate) struct StackStart<'a> {
    pub(crate) target: &'a Target,
    /// Every service's port, picked before any starts.
    pub(crate) ports: &'a BTreeMap<String, u16>,
    pub(crate) headroom_bin: &'a Path,
    pub(crate) spec_dir: &'a Path,
    /// The log of a service is `{log_stem}-{service}.log`, relative to `log_dir`.
    pub(crate) log_dir: &'a Path,
    pub(crate) log_stem: &'a str,
    pub(crate) emulation: &'a Emulation,
    /// The run's number (its cgroups' names).
    pub(crate) run_number: usize,
    pub(crate) allowed: &'a web::Allowed,
    /// Set by a signal: a wait for readiness ends at once.
    pub(crate) cancel: &'a tokio::sync::watch::Receiver<bool>,
}

impl Stack {
    /// A stack of the one target process.
    pub(crate) fn of_target(running: Running, target: &Target) -> Stack {
        Stack {
            members: vec![Member {
                name: None,
                running,
                limited: None,
                stop: target.stop.clone(),
            }],
            external: None,
        }
    }

    /// Starts every service in order, each ready before the next starts. On a failure the
    /// services started are stopped again (in reverse) and `None` is returned, the failure
    /// (named after the service, with its last log lines) in `result`.
    pub(crate) async fn start(at: &StackStart<'_>, result: &mut RunResult) -> Option<Stack> {
        let mut stack = Stack::default();
        for service in &at.target.services {
            let port = at.ports.get(&service.name).copied().unwrap_or_default();
            result
                .services
                .entry(service.name.clone())
                .or_default()
                .port = port;
            let ignored = service.limits.is_some() && matches!(at.emulation, Emulation::Ignored);
            if ignored
                && !result
                    .notes
                    .iter()
                    .any(|n| n == crate::limits::LIMITS_IGNORED)
            {
                result.notes.push(crate::limits::LIMITS_IGNORED.to_owned());
            }
            let entry = result.services.entry(service.name.clone()).or_default();
            match start_service(service, port, at, entry).await {
                Ok(member) => stack.members.push(member),
                Err(failure) => {
                    result.failure = Some(Failure::Service {
                        service: service.name.clone(),
                        failure: Box::new(failure),
                    });
                    stack.stop(result, None).await;
                    return None;
                }
            }
        }
        Some(stack)
    }

    /// The first process that has exited, as the run's failure.
    pub(crate) fn died(&mut self) -> Option<Failure> {
        self.members.iter_mut().find_map(|member| {
            let exit = member.running.exited()?;
            let died = Failure::Died {
                exit,
                stderr_tail: member.running.stderr_tail(),
            };
            Some(match &member.name {
                Some(service) => Failure::Service {
                    service: service.clone(),
                    failure: Box::new(died),
                },
                None => died,
            })
        })
    }

    /// The external server found gone while the load ran, as the run's failure: the seconds
    /// from `load_started`.
    pub(crate) fn external_gone(&self, load_started: tokio::time::Instant) -> Option<Failure> {
        let external = self.external.as_ref()?;
        (!external.runs()).then(|| Failure::ExternalExited {
            pid: external.pid,
            after_s: load_started.elapsed().as_secs_f64(),
        })
    }

    /// The process groups to sample, by service (`None`: the target).
    pub(crate) fn groups(&self) -> Vec<(Option<String>, crate::sample::ServerProcesses)> {
        self.members
            .iter()
            .map(|member| {
                let group = crate::sample::ServerProcesses::Group(member.running.pid as i32);
                (member.name.clone(), group)
            })
            .chain(self.external.as_ref().map(|external| {
                let tree = crate::sample::ServerProcesses::Descendants(external.pid);
                (None, tree)
            }))
            .collect()
    }

    /// Each service's own cgroup (those with `limits`), by name, with its shape.
    pub(crate) fn cgroups(&self) -> impl Iterator<Item = (&str, &Cgroup, &RunShape)> {
        self.members.iter().filter_map(|member| {
            let (cgroup, run) = member.limited.as_ref()?;
            Some((member.name.as_deref()?, cgroup, run))
        })
    }

    /// The cores the services' CPU limits leave to the generator, when any has one.
    pub(crate) fn cores_left(&self) -> Option<f64> {
        let cpus: Vec<f64> = self
            .members
            .iter()
            .filter_map(|member| member.limited.as_ref()?.1.shape.cpus)
            .collect();
        let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        (!cpus.is_empty()).then(|| (host - cpus.iter().sum::<f64>()).max(0.0))
    }

    /// Stops every process in reverse start order with its signal, then SIGKILL after its
    /// grace; each one's exit, and its cgroup's counters, into `result`. `at` names the point
    /// for an out-of-memory failure.
    pub(crate) async fn stop(&mut self, result: &mut RunResult, at: Option<String>) {
        while let Some(mut member) = self.members.pop() {
            let stopped = member
                .running
                .stop(member.stop.signal, member.stop.grace.as_std())
                .await;
            let Some(name) = member.name.clone() else {
                result.stopped = Some(stopped);
                continue;
            };
            let entry = result.services.entry(name.clone()).or_default();
            entry.stopped = Some(stopped);
            if let Some((mut cgroup, run)) = member.limited.take() {
                let counters = cgroup.counters();
                entry.limits = Some(crate::limits::applied(&cgroup, &run.shape, &counters));
                if counters.oom_kills > 0
                    && let Some(limit_bytes) = run.shape.memory_bytes
                    && !matches!(result.failure, Some(Failure::Interrupted))
                {
                    result.failure = Some(Failure::Service {
                        service: name,
                        failure: Box::new(Failure::OutOfMemory {
                            limit_bytes,
                            at: at.clone().unwrap_or_default(),
                            stderr_tail: member.running.stderr_tail(),
                        }),
                    });
                }
                if let Err(e) = cgroup.remove() {
                    result.notes.push(format!(
                        "the cgroup of `{}` could not be removed: {e}",
                        entry_name(&member)
                    ));
                }
            }
        }
    }
}

fn entry_name(member: &Member) -> &str {
    member.name.as_deref().unwrap_or("the target")
}

/// One service started in its cgroup and waited for until ready.
async fn start_service(
    service: &Service,
    port: u16,
    at: &StackStart<'_>,
    entry: &mut ServiceResult,
) -> Result<Member, Failure> {
    let spawn_failed = |message: String| Failure::SpawnFailed { message };
    let fills = Fills {
        port,
        services: at.ports,
        headroom_bin: at.headroom_bin,
        vars: None,
    };
    // Under --ignore-limits the service runs with the whole machine, and its entry says so.
    if service.limits.is_some() && matches!(at.emulation, Emulation::Ignored) {
        entry.limits = Some(headroom_results::RunLimits::Ignored);
    }
    let limited = match &service.limits {
        Some(limits) => match at.emulation.shape(limits) {
            Some(run) => {
                let name = format!(
                    "{}-{}",
                    crate::cgroup::run_name(at.run_number),
                    service.name
                );
                let cgroup = at
                    .emulation
                    .create(&name, &run.shape)
                    .map_err(spawn_failed)?;
                Some((cgroup, run))
            }
            None => None,
        },
        None => None,
    };
    let ready_http = match &service.ready.http {
        Some(written) => {
            let filled = fills.fill(written).map_err(spawn_failed)?;
            let own = web::OwnAddress::loopback(port);
            let trust = headroom_load::tls::Trust::of(at.target, at.spec_dir);
            Some(
                web::endpoint(&filled, written, &own, at.allowed, &trust)
                    .await
                    .map_err(|message| Failure::Load { message })?,
            )
        }
        None => None,
    };
    let log_name = format!("{}-{}.log", at.log_stem, service.name);
    entry.log = Some(log_name.clone());
    let launch = Launch {
        process: Process::of_service(service),
        fills,
        spec_dir: at.spec_dir,
        log: at.log_dir.join(log_name),
        cgroup: limited.as_ref().map(|(cgroup, _)| cgroup),
    };
    let mut running = Running::start(&launch).await?;
    match running
        .wait_ready(
            ReadyCheck {
                ready: &service.ready,
                http: ready_http.as_ref(),
            },
            port,
            at.cancel,
        )
        .await
    {
        Ok(after) => entry.ready_after_s = Some(after.as_secs_f64()),
        Err(failure) => {
            entry.stopped = Some(
                running
                    .stop(service.stop.signal, service.stop.grace.as_std())
                    .await,
            );
            return Err(failure);
        }
    }
    Ok(Member {
        name: Some(service.name.clone()),
        running,
        limited,
        stop: service.stop.clone(),
    })
}

/// Free loopback ports for every service of the stack, picked before any starts so each can
/// name the others' (`{port.db}`).
pub(crate) fn service_ports(target: &Target) -> std::io::Result<BTreeMap<String, u16>> {
    // Held open together so no two services get the same port, then released.
    let listeners: Vec<(String, std::net::TcpListener)> = target
        .services
        .iter()
        .map(|service| {
            Ok((
                service.name.clone(),
                std::net::TcpListener::bind(("127.0.0.1", 0))?,
            ))
        })
        .collect::<std::io::Result<_>>()?;
    listeners
        .iter()
        .map(|(name, listener)| Ok((name.clone(), listener.local_addr()?.port())))
        .collect()
}

/// The readings of the load (or of the steady state), per process, into `result`: a service's
/// into its entry, the target's into `process`; of a stack, `process` is their sum.
pub(crate) fn take_readings(
    result: &mut RunResult,
    readings: Vec<(Option<String>, Readings)>,
    total: Option<Readings>,
    mut put: impl FnMut(&mut ProcessResult, Readings),
) {
    for (name, readings) in readings {
        match name {
            Some(service) => put(
                &mut result.services.entry(service).or_default().process,
                readings,
            ),
            None => put(&mut result.process, readings),
        }
    }
    if let Some(total) = total {
        put(&mut result.process, total);
    }
}
