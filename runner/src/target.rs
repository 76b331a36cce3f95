//! The server under test, per point: started in its own process group with its output captured,
//! waited for until ready, and stopped with its signal, then SIGKILL after the grace period.
//!
//! **No orphans:** a [`Running`] target that is dropped without [`Running::stop`] (an error, a
//! panic unwinding) kills its whole process group; the target also gets SIGKILL from the kernel
//! if the runner itself dies (`PR_SET_PDEATHSIG`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use headroom_matrix::resolved::{Service, Target};
pub use headroom_results::process::{Exit, Stopped};
use headroom_spec::target::Ready;
use headroom_spec::target::Signal as SpecSignal;
use rustix::process::{Pid, Signal};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::cgroup::Cgroup;
pub use crate::guard::guard_group;
use crate::guard::{kill_pids, spawn_guard};
use crate::results::Failure;
pub use headroom_load::fill::{Fills, fill};
use headroom_load::web;

/// Lines of output kept for a failure report.
const TAIL_LINES: usize = 20;
/// The most of a target's output kept in its log file; the rest is read and dropped, so a
/// chatty target neither blocks on a full pipe nor fills the disk.
pub const LOG_LIMIT: u64 = 16 << 20;

/// What a started process is: the `[target] command` or a stack's service.
#[derive(Clone, Copy)]
pub struct Process<'a> {
    /// The service's name; `None` for `[target] command`.
    pub service: Option<&'a str>,
    /// Its argv, variables filled.
    pub command: &'a [String],
    /// Its working directory, relative to the spec.
    pub cwd: Option<&'a String>,
    /// Its environment.
    pub env: &'a BTreeMap<String, String>,
    /// When it is ready.
    pub ready: &'a Ready,
}

impl<'a> Process<'a> {
    /// `[target] command`.
    pub fn of_target(target: &'a Target) -> Process<'a> {
        Process {
            service: None,
            command: target.command.as_deref().unwrap_or_default(),
            cwd: target.cwd.as_ref(),
            env: &target.env,
            ready: &target.ready,
        }
    }

    /// A service of the stack.
    pub fn of_service(service: &'a Service) -> Process<'a> {
        Process {
            service: Some(&service.name),
            command: &service.command,
            cwd: service.cwd.as_ref(),
            env: &service.env,
            ready: &service.ready,
        }
    }

    /// `the target` or `service `db``, for messages.
    fn subject(&self) -> String {
        match self.service {
            Some(name) => format!("service `{name}`"),
            None => "the target".to_owned(),
        }
    }

    /// Where its `cwd` is written: `[target]` or `[target.services.db]`.
    fn table(&self) -> String {
        match self.service {
            Some(name) => format!("[target.services.{name}]"),
            None => "[target]".to_owned(),
        }
    }
}

/// How a target was started: what the runner fills into its command.
pub struct Launch<'a> {
    /// What it is.
    pub process: Process<'a>,
    /// The placeholders filled into it: its port, the stack's ports, `{headroom}`.
    pub fills: Fills<'a>,
    /// Relative `cwd`s are taken from here.
    pub spec_dir: &'a Path,
    /// Where its output goes.
    pub log: PathBuf,
    /// The cgroup it runs in (its `limits`), joined before it runs.
    pub cgroup: Option<&'a Cgroup>,
}

pub(crate) fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

/// A started target.
pub struct Running {
    child: Child,
    group: Pid,
    /// The guard process (`headroom guard-group`) that kills the group if headroom dies.
    guard: Option<std::process::Child>,
    /// Its process id, which is also its process group's.
    pub pid: u32,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    log_matches: tokio::sync::watch::Receiver<bool>,
    stopped: bool,
    copies: Vec<tokio::task::JoinHandle<()>>,
}

/// The target's command, filled and ready to spawn in its own process group (and its cgroup),
/// killed with headroom; with the program's name and the folder it runs in, for errors, and the
/// cgroup files it joins, to keep open until it is spawned.
fn command(launch: &Launch<'_>) -> Result<(Command, String, PathBuf, Vec<std::fs::File>), Failure> {
    let spawn_failed = |message: String| Failure::SpawnFailed { message };
    let process = &launch.process;
    let argv: Vec<String> = process
        .command
        .iter()
        .map(|arg| launch.fills.fill(arg))
        .collect::<Result<_, _>>()
        .map_err(spawn_failed)?;
    let Some((program, args)) = argv.split_first() else {
        return Err(spawn_failed(format!(
            "{} has no command",
            process.subject()
        )));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cwd = match process.cwd {
        Some(cwd) => launch
            .spec_dir
            .join(launch.fills.fill(cwd).map_err(spawn_failed)?),
        None => launch.spec_dir.to_path_buf(),
    };
    // A missing folder would read as the program failing to start: say which it is.
    if !cwd.is_dir() {
        return Err(spawn_failed(format!(
            "{}'s working directory {} does not exist (`cwd` in {}, relative to the spec)",
            process.subject(),
            cwd.display(),
            process.table()
        )));
    }
    command.current_dir(&cwd);
    for (key, value) in process.env {
        command.env(key, launch.fills.fill(value).map_err(spawn_failed)?);
    }
    command.process_group(0).kill_on_drop(true);
    let joins = match launch.cgroup {
        Some(cgroup) => cgroup.join_files().map_err(|e| {
            spawn_failed(format!(
                "cannot open the run's cgroup ({}) to join it: {e}",
                cgroup
                    .dirs()
                    .first()
                    .map_or(String::new(), |d| d.display().to_string())
            ))
        })?,
        None => Vec::new(),
    };
    let fds: Vec<std::os::fd::RawFd> = joins.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
    // SAFETY: between fork and exec only async-signal-safe calls are allowed: prctl, and the
    // `write`s of joining the cgroup (to files opened above, no allocation).
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
                .map_err(std::io::Error::from)?;
            crate::cgroup::join(&fds)
        });
    }
    Ok((command, program.clone(), cwd, joins))
}

impl Running {
    /// Spawns the target in its own process group, output to its log file.
    pub async fn start(launch: &Launch<'_>) -> Result<Running, Failure> {
        let spawn_failed = |message: String| Failure::SpawnFailed { message };
        let (mut command, program, cwd, joins) = command(launch)?;
        if let Some(parent) = launch.log.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                spawn_failed(format!(
                    "cannot create the log folder {}: {e}",
                    parent.display()
                ))
            })?;
        }
        let log = tokio::fs::File::create(&launch.log).await.map_err(|e| {
            spawn_failed(format!(
                "cannot create the log file {}: {e}",
                launch.log.display()
            ))
        })?;
        let mut child = command.spawn().map_err(|e| {
            spawn_failed(format!(
                "cannot start `{program}` in {}: {e}",
                cwd.display()
            ))
        })?;
        drop(joins);
        // No id: the child has already exited and been reaped.
        let exited = || {
            spawn_failed(format!(
                "{} exited before it could be watched",
                launch.process.subject()
            ))
        };
        let pid = child.id().ok_or_else(exited)?;
        let group = Pid::from_raw(pid as i32).ok_or_else(exited)?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let pattern = match &launch.process.ready.log {
            Some(pattern) => Some(regex::Regex::new(pattern).map_err(|e| {
                spawn_failed(format!(
                    "`ready.log` is not a valid regular expression: {e}"
                ))
            })?),
            None => None,
        };
        let (matched, log_matches) = tokio::sync::watch::channel(false);
        let log = Arc::new(tokio::sync::Mutex::new((log, 0u64)));
        let mut copies = Vec::new();
        // Both streams feed the tail: a server that says why it stopped on stdout (or a
        // service whose log is its stdout) is heard too.
        if let Some(stdout) = child.stdout.take() {
            copies.push(tokio::spawn(copy(
                stdout,
                Arc::clone(&log),
                Some(Arc::clone(&stderr_tail)),
                pattern.clone(),
                matched.clone(),
            )));
        }
        if let Some(stderr) = child.stderr.take() {
            copies.push(tokio::spawn(copy(
                stderr,
                log,
                Some(Arc::clone(&stderr_tail)),
                pattern,
                matched,
            )));
        }
        let cgroup_dirs = launch.cgroup.map(|c| c.dirs()).unwrap_or_default();
        let guard = spawn_guard(launch.fills.headroom_bin, group, cgroup_dirs);
        Ok(Running {
            child,
            group,
            guard,
            pid,
            stderr_tail,
            log_matches,
            stopped: false,
            copies,
        })
    }

    /// The last lines the target wrote (stdout and stderr, as they came).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|tail| tail.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the target has exited, and how.
    pub fn exited(&mut self) -> Option<Exit> {
        self.child.try_wait().ok().flatten().map(exit_of)
    }

    /// Waits until the readiness check passes, the target exits, the timeout runs out, or a
    /// signal cancels the run (`Interrupted`, at once). `ready_http` is the `http` check's
    /// endpoint, resolved and checked by the caller.
    pub async fn wait_ready(
        &mut self,
        check: ReadyCheck<'_>,
        port: u16,
        cancel: &tokio::sync::watch::Receiver<bool>,
    ) -> Result<Duration, Failure> {
        let (ready, ready_http) = (check.ready, check.http);
        let started = Instant::now();
        let deadline = started + ready.timeout.as_std();
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        loop {
            if let Some(exit) = self.exited() {
                // Let the output copies catch the last lines before reporting them.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(Failure::ExitedEarly {
                    exit,
                    stderr_tail: self.stderr_tail(),
                });
            }
            let passed = if ready.log.is_some() {
                *self.log_matches.borrow()
            } else {
                ready_once(address, ready_http).await
            };
            if passed {
                return Ok(started.elapsed());
            }
            if Instant::now() >= deadline {
                return Err(never_ready(check, None, started, self.stderr_tail()).await);
            }
            if pause_unless_cancelled(ready.interval.as_std(), cancel).await {
                return Err(Failure::Interrupted);
            }
        }
    }

    /// The spec's signal to the group, SIGKILL after the grace period, then reap.
    pub async fn stop(&mut self, signal: SpecSignal, grace: Duration) -> Stopped {
        self.stopped = true;
        let name = signal.as_str().to_owned();
        // Its processes that left the group (a worker in a session of its own) are killed by
        // pid at the end, if they outlive the leader.
        let tree = crate::sample::tree_pids(self.group.as_raw_nonzero().get());
        let _ = rustix::process::kill_process_group(self.group, to_signal(signal));
        let mut killed = false;
        let exit = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status.ok().map(exit_of),
            Err(_) => {
                killed = true;
                let _ = rustix::process::kill_process_group(self.group, Signal::KILL);
                self.child.wait().await.ok().map(exit_of)
            }
        };
        // Children that outlived their parent in the group go too.
        let _ = rustix::process::kill_process_group(self.group, Signal::KILL);
        kill_pids(&tree);
        self.end_guard();
        for copy in self.copies.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), copy).await;
        }
        Stopped {
            signal: name,
            killed,
            exit,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.stopped {
            let tree = crate::sample::tree_pids(self.group.as_raw_nonzero().get());
            let _ = rustix::process::kill_process_group(self.group, Signal::KILL);
            kill_pids(&tree);
        }
        self.end_guard();
    }
}

impl Running {
    /// The guard has nothing left to watch once the target is stopped.
    fn end_guard(&mut self) {
        if let Some(mut guard) = self.guard.take() {
            let _ = guard.kill();
            let _ = guard.wait();
        }
    }
}

fn to_signal(signal: SpecSignal) -> Signal {
    match signal {
        SpecSignal::Term => Signal::TERM,
        SpecSignal::Int => Signal::INT,
        SpecSignal::Hup => Signal::HUP,
        SpecSignal::Quit => Signal::QUIT,
        SpecSignal::Kill => Signal::KILL,
    }
}

/// One try of a readiness check: `GET` on `ready_http` answering 200 when given, else a TCP
/// connect to `address`.
pub(crate) async fn ready_once(
    address: std::net::SocketAddr,
    ready_http: Option<&web::Endpoint>,
) -> bool {
    if let Some(endpoint) = ready_http {
        matches!(
            web::get(
                endpoint.address,
                &endpoint.host,
                endpoint.authorization.as_deref(),
                &endpoint.path,
                endpoint.tls.as_deref(),
                Duration::from_secs(2)
            )
            .await,
            Ok((200, _))
        )
    } else {
        tokio::time::timeout(
            Duration::from_secs(1),
            tokio::net::TcpStream::connect(address),
        )
        .await
        .is_ok_and(|c| c.is_ok())
    }
}

/// A readiness check as the spec writes it, with its `http` endpoint resolved and checked.
#[derive(Clone, Copy)]
pub struct ReadyCheck<'a> {
    /// `ready = {…}` as written.
    pub ready: &'a Ready,
    /// The `http` check's endpoint (none for a log line or a TCP connect).
    pub http: Option<&'a web::Endpoint>,
}

/// The failure of a readiness check that never passed, with why a certificate was refused.
pub(crate) async fn never_ready(
    check: ReadyCheck<'_>,
    tcp_to: Option<std::net::SocketAddr>,
    started: Instant,
    stderr_tail: Vec<String>,
) -> Failure {
    let (ready, ready_http) = (check.ready, check.http);
    let mut check = describe_ready(ready);
    if let (Some(address), None, None) = (tcp_to, &ready.http, &ready.log) {
        check = format!("a TCP connect to {address} within {}", ready.timeout);
    }
    if let Some(endpoint) = ready_http
        && let Some(tls) = &endpoint.tls
        && let Some(why) = tls.why_not(endpoint.address, &endpoint.host).await
    {
        check = format!("{check}; {why}");
    }
    Failure::NeverReady {
        waited_s: started.elapsed().as_secs_f64(),
        check,
        stderr_tail,
    }
}

fn describe_ready(ready: &Ready) -> String {
    match (&ready.http, &ready.log) {
        (Some(path), _) => format!("GET {path} answering 200 within {}", ready.timeout),
        (None, Some(pattern)) => {
            format!("a log line matching `{pattern}` within {}", ready.timeout)
        }
        (None, None) => format!("a TCP connect to the port within {}", ready.timeout),
    }
}

/// Copies one output stream into the log (up to its limit), keeps the stderr tail and watches
/// for the readiness pattern. Always drains the pipe, so the target never blocks on it.
async fn copy(
    stream: impl AsyncRead + Unpin,
    log: Arc<tokio::sync::Mutex<(tokio::fs::File, u64)>>,
    tail: Option<Arc<Mutex<VecDeque<String>>>>,
    pattern: Option<regex::Regex>,
    matched: tokio::sync::watch::Sender<bool>,
) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line longer than this is cut: a log line is not a place for a megabyte.
        match (&mut reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        {
            let mut log = log.lock().await;
            let (file, written) = &mut *log;
            if *written < LOG_LIMIT {
                let _ = file.write_all(&line).await;
                *written += line.len() as u64;
                if *written >= LOG_LIMIT {
                    let note = format!(
                        "\n[headroom: log cut at {} MiB; the rest was read and dropped]\n",
                        LOG_LIMIT >> 20
                    );
                    let _ = file.write_all(note.as_bytes()).await;
                    let _ = file.flush().await;
                }
            }
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if let Some(pattern) = &pattern
            && pattern.is_match(text)
        {
            let _ = matched.send(true);
        }
        if let Some(tail) = &tail
            && let Ok(mut tail) = tail.lock()
        {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.to_owned());
        }
    }
    let mut log = log.lock().await;
    let _ = log.0.flush().await;
}

use tokio::io::AsyncReadExt;
/// The readiness and metrics endpoints of a target at `own`, filled in, resolved and checked:
/// `Err` names a host load may not go to.
pub(crate) async fn endpoints(
    target: &Target,
    fills: &Fills<'_>,
    own: &web::OwnAddress,
    allowed: &web::Allowed,
    spec_dir: &Path,
) -> Result<(Option<web::Endpoint>, Option<web::Endpoint>), String> {
    let trust = headroom_load::tls::Trust::of(target, spec_dir);
    let mut found = [None, None];
    for (slot, written) in found.iter_mut().zip([&target.ready.http, &target.metrics]) {
        if let Some(written) = written {
            let filled = fills.fill(written)?;
            *slot = Some(web::endpoint(&filled, written, own, allowed, &trust).await?);
        }
    }
    let [ready, metrics] = found;
    Ok((ready, metrics))
}

/// Sleeps `pause`, or less when a signal cancels the run meanwhile: whether it did. A wait
/// (readiness, a pid file, a step) ends at the first signal, not at its timeout.
pub(crate) async fn pause_unless_cancelled(
    pause: Duration,
    cancel: &tokio::sync::watch::Receiver<bool>,
) -> bool {
    let mut cancel = cancel.clone();
    if *cancel.borrow_and_update() {
        return true;
    }
    tokio::select! {
        () = tokio::time::sleep(pause) => {}
        Ok(()) = cancel.changed() => {}
    }
    *cancel.borrow()
}
