//! `[target]`: the server under test and its lifecycle.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::param::Param;
use crate::units::{Duration, Size};

/// The server under test: a command the runner starts (and stops) at every point, or the URL
/// of a server that runs elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The argv to start the server, one list item per argument (no shell). Placeholders:
    /// `{port}`, `{headroom}`, `{env:NAME}` and any variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    /// The working directory of the command, relative to the spec file; one that is not there
    /// is refused before anything starts (E048).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables added to the command's environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// An external target instead of a command: the runner starts nothing and stops nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For an external target: a file holding the server's pid, so its memory and CPU can be
    /// sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_file: Option<String>,
    /// The most cores the server can use, whatever the machine has: `1` for one Python worker
    /// (one process, one interpreter lock). The CPU ceiling is then taken at the fewer of an
    /// instance's vCPUs and these, and an SLO ceiling is not scaled past them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.01))]
    pub cores: Option<f64>,
    /// When the server is ready for load; a TCP connect to `{port}` within 30 s by default.
    #[serde(default)]
    pub ready: Ready,
    /// Where the server's Prometheus metrics are: a path on the target (`"/metrics"`) or a URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<String>,
    /// How the server is stopped at the end of a point.
    #[serde(default)]
    pub stop: Stop,
    /// `per-point` (the default): a fresh server (or stack) for every point and repeat.
    /// `per-phase`: one server for a whole phase, started before its first run and stopped
    /// after its last; what a point leaves (caches, rows, memory) the next one inherits.
    #[serde(default)]
    pub process: ProcessMode,
    /// CPU and memory limits that emulate an instance size: the server runs in a cgroup made
    /// for each run (cgroup v2 or v1, whichever this machine can write) and removed after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Hosts the load may go to besides loopback (127.0.0.0/8, ::1, localhost), which is always
    /// allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
    /// A PEM file of the certificate authorities `https://` and `wss://` load trusts instead of
    /// the platform's roots (a private CA, a self-signed certificate); relative to the spec.
    /// One that is not there is refused before anything starts (E048).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
    /// Accept any certificate `https://` and `wss://` servers present: for a loopback server
    /// with a throwaway certificate only. Refused (E040) for any other host; warned about.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_verify: bool,
    /// A stack instead of one `command`: the processes started at every point, by name
    /// (`[target.services.db]`, `[target.services.api]`), each with its own `{port}`, readiness,
    /// limits and stop; started in the order `after` gives, stopped in reverse, sampled apart.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub services: BTreeMap<String, Service>,
    /// The service the load goes to: `{port}` in scenarios, `ready.http` and `metrics` is its
    /// port. Needed when a stack has more than one service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front: Option<String>,
    /// Commands run once the target is ready and before the load (seed a data tier, sign up
    /// the users the scenarios log in as): at every point, or once a phase (`per = "phase"`);
    /// one that fails fails the point (or the phase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<Step>,
    /// Commands run after the load, before the target stops (clean up): at every point, or
    /// once a phase, after its last run (`per = "phase"`). They run after a first Ctrl-C too
    /// (a second ends headroom).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teardown: Vec<Step>,
}

/// One process of a stack (`[target.services.NAME]`), started fresh at every point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// The argv to start it, one list item per argument (no shell). Placeholders: `{port}`
    /// (its own), `{port.NAME}` (another service's), `{headroom}`, `{env:NAME}`, variables.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Its working directory, relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables added to its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// When it is ready; a TCP connect to its `{port}` within 30 s by default.
    #[serde(default)]
    pub ready: Ready,
    /// How it is stopped.
    #[serde(default)]
    pub stop: Stop,
    /// Its CPU and memory, in a cgroup of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The services that must be ready before this one starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// A command run before or after the load (`[[target.setup]]`, `[[target.teardown]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What it does, in results and failures: `seed`, `sign-up`.
    pub name: String,
    /// The argv, one list item per argument (no shell). Placeholders: `{port}` (the front's),
    /// `{port.NAME}`, `{headroom}`, `{env:NAME}`, variables.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Its working directory, relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables added to its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// How long it may take before it is killed and the point fails.
    #[serde(default = "default_step_timeout")]
    pub timeout: Duration,
    /// `point` (the default): at every point and repeat. `phase`: once a phase, before its
    /// first run (setup) or after its last (teardown), on the target that lives for the phase
    /// (`process = "per-phase"`, or an external `url`).
    #[serde(default, skip_serializing_if = "StepScope::is_point")]
    pub per: StepScope,
}

/// How often a setup or teardown step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StepScope {
    /// At every point and repeat.
    #[default]
    Point,
    /// Once a phase.
    Phase,
}

impl StepScope {
    fn is_point(&self) -> bool {
        *self == StepScope::Point
    }
}

fn default_step_timeout() -> Duration {
    Duration::from_secs(60)
}

/// Exactly one of `http`, `tcp` or `log` says the server is ready.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    /// Ready when `GET` on this path (or URL) answers 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// Ready when a TCP connect to the port succeeds: `true` (`false` is no check, and refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<bool>,
    /// Ready when a line of the server's output matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// How long to wait before the point fails.
    #[serde(default = "default_ready_timeout")]
    pub timeout: Duration,
    /// How often to try the `http` or `tcp` check.
    #[serde(default = "default_ready_interval")]
    pub interval: Duration,
}

fn default_ready_timeout() -> Duration {
    Duration::from_secs(30)
}

fn default_ready_interval() -> Duration {
    Duration::from_millis(100)
}

impl Default for Ready {
    fn default() -> Self {
        Ready {
            http: None,
            tcp: None,
            log: None,
            timeout: default_ready_timeout(),
            interval: default_ready_interval(),
        }
    }
}

/// The signal sent to the server's process group, then SIGKILL after the grace period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// The signal sent to the process group first.
    #[serde(default)]
    pub signal: Signal,
    /// How long to wait for the server to exit before SIGKILL.
    #[serde(default = "default_grace")]
    pub grace: Duration,
}

fn default_grace() -> Duration {
    Duration::from_secs(5)
}

impl Default for Stop {
    fn default() -> Self {
        Stop {
            signal: Signal::default(),
            grace: default_grace(),
        }
    }
}

/// The signal that asks the target to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    /// `SIGTERM`
    #[default]
    Term,
    /// `SIGINT`
    Int,
    /// `SIGHUP`
    Hup,
    /// `SIGQUIT`
    Quit,
    /// `SIGKILL`, which a process cannot catch.
    Kill,
}

impl Signal {
    /// Its name in a spec and in results (`TERM`).
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Term => "TERM",
            Signal::Int => "INT",
            Signal::Hup => "HUP",
            Signal::Quit => "QUIT",
            Signal::Kill => "KILL",
        }
    }
}

/// How many server processes a phase starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessMode {
    /// A fresh server for every point and repeat: no point inherits a warm cache.
    #[default]
    PerPoint,
    /// One server for a whole phase, every point's load on it in turn.
    PerPhase,
}

/// Limits that emulate an instance size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// CPUs the server may use (`0.5`, `2`, or `"{cpus}"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Param<f64>>,
    /// Memory the server may use (`"1GiB"`), swap shut off; above it the kernel kills it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Param<Size>>,
    /// Pin the server to whole cores (`cpuset.cpus`, as many as `cpus` rounded up) and the
    /// load generator to the others, as a VM's vCPUs are its own: a quota alone lets a
    /// multithreaded server burst on every core of the host and then stall for the rest of
    /// the period.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pin: bool,
}

/// The order a stack's services start in: each after every service its `after` names, ties by
/// name. `Err` names a service of a cycle. Names `after` lists that are no service are skipped
/// (the compiler reports them).
pub fn start_order(services: &BTreeMap<String, Service>) -> Result<Vec<&String>, &String> {
    let mut order: Vec<&String> = Vec::with_capacity(services.len());
    while order.len() < services.len() {
        let next = services.iter().find(|(name, service)| {
            !order.contains(name)
                && service
                    .after
                    .iter()
                    .all(|before| !services.contains_key(before) || order.contains(&before))
        });
        match next {
            Some((name, _)) => order.push(name),
            None => {
                // Every service left waits on another left: a cycle runs through them.
                if let Some(stuck) = services.keys().find(|name| !order.contains(name)) {
                    return Err(stuck);
                }
            }
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(edges: &[(&str, &[&str])]) -> BTreeMap<String, Service> {
        edges
            .iter()
            .map(|(name, after)| {
                let service = Service {
                    command: vec!["x".into()],
                    cwd: None,
                    env: BTreeMap::new(),
                    ready: Ready::default(),
                    stop: Stop::default(),
                    limits: None,
                    after: after.iter().map(|a| (*a).to_owned()).collect(),
                };
                ((*name).to_owned(), service)
            })
            .collect()
    }

    /// Each service starts after those it names; ties go by name; a cycle is named.
    #[test]
    fn services_start_after_what_they_name() {
        let services = stack(&[
            ("api", &["db", "cache"]),
            ("cache", &[]),
            ("db", &[]),
            ("worker", &["db"]),
        ]);
        let order = start_order(&services).expect("no cycle");
        assert_eq!(order, ["cache", "db", "api", "worker"]);
        let services = stack(&[("a", &["b"]), ("b", &["a"]), ("c", &[])]);
        assert_eq!(start_order(&services), Err(&"a".to_owned()));
        // A name that is no service does not hold anything up.
        let services = stack(&[("api", &["ghost"])]);
        assert_eq!(start_order(&services).expect("no cycle"), ["api"]);
    }
}
