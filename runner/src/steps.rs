//! Setup and teardown steps (`[[target.setup]]`, `[[target.teardown]]`): commands run once the
//! target is ready and before the load, and after the load, at every point or once a phase;
//! each with a time limit, its output in a log file, its time and exit recorded. The first that
//! fails fails the point (or the phase) with its last lines of output.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use headroom_results::{Exit, RunResult, StepResult};
use headroom_spec::target::{Step, StepScope};
use rustix::process::{Pid, Signal};

use crate::results::Failure;
use crate::target::Fills;

/// Lines of a failed step's output kept in its failure.
const TAIL_LINES: usize = 20;

/// The process groups of the steps running now: what a hard exit (a second signal) kills
/// before headroom goes, since the kernel ends only a step's own process with headroom
/// (`PR_SET_PDEATHSIG`), not what it started.
static RUNNING: std::sync::Mutex<std::collections::BTreeSet<i32>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// SIGKILL to the process group of every step running now: for an exit that cannot wait for
/// them (a second signal), so that no step's child is left behind under pid 1.
pub fn kill_running_steps() {
    let groups = RUNNING.lock().map(|g| g.clone()).unwrap_or_default();
    for group in groups {
        if let Some(group) = Pid::from_raw(group) {
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
    }
}

/// A step's process group, listed in [`RUNNING`] while this lives.
struct Listed(Option<Pid>);

impl Listed {
    fn new(group: Option<Pid>) -> Listed {
        if let (Some(group), Ok(mut running)) = (group, RUNNING.lock()) {
            running.insert(group.as_raw_nonzero().get());
        }
        Listed(group)
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        if let (Some(group), Ok(mut running)) = (self.0, RUNNING.lock()) {
            running.remove(&group.as_raw_nonzero().get());
        }
    }
}

/// When a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// After the target is ready, before the load.
    Setup,
    /// After the load, before the target stops.
    Teardown,
}

impl When {
    fn name(self) -> &'static str {
        match self {
            When::Setup => "setup",
            When::Teardown => "teardown",
        }
    }
}

/// Where a point's steps run from.
pub(crate) struct StepPlace<'a> {
    pub(crate) fills: Fills<'a>,
    pub(crate) spec_dir: &'a Path,
    /// Logs go to `{log_stem}-{when}-{step}.log`, relative to `log_dir`.
    pub(crate) log_dir: &'a Path,
    pub(crate) log_stem: &'a str,
    /// Set by a signal: a setup step in flight is stopped with its process group at once, and
    /// no other starts. Teardown steps run on (cleaning up is what a stop is for), each bounded
    /// by its timeout; a second signal ends headroom.
    pub(crate) cancel: &'a tokio::sync::watch::Receiver<bool>,
}

/// How one step ended.
enum Ran {
    Exited(Exit),
    /// Killed at its timeout.
    TimedOut,
    /// Stopped by a signal to headroom.
    Interrupted,
}

/// Runs those of `steps` run `per` point or phase, in order, each recorded in `result.steps`;
/// the first that fails stops the rest and is returned.
pub(crate) async fn run_steps(
    steps: &[Step],
    per: StepScope,
    when: When,
    place: &StepPlace<'_>,
    result: &mut RunResult,
) -> Result<(), Failure> {
    for step in steps.iter().filter(|step| step.per == per) {
        if when == When::Setup && *place.cancel.borrow() {
            return Err(Failure::Interrupted);
        }
        let log_name = format!(
            "{}-{}-{}.log",
            place.log_stem,
            when.name(),
            crate::names::file_safe(&step.name)
        );
        let log = place.log_dir.join(&log_name);
        let started = Instant::now();
        let exit = run_one(step, when, place, &log).await;
        let seconds = started.elapsed().as_secs_f64();
        let (exit, failure) = match exit {
            Ok(Ran::Exited(exit)) => (
                Some(exit.clone()),
                (exit != Exit::Code(0)).then_some(Some(exit)),
            ),
            Ok(Ran::TimedOut) => (None, Some(None)),
            Ok(Ran::Interrupted) => {
                result.steps.push(StepResult {
                    name: step.name.clone(),
                    when: when.name().to_owned(),
                    seconds,
                    exit: None,
                    log: Some(log_name),
                });
                return Err(Failure::Interrupted);
            }
            Err(message) => {
                result.steps.push(StepResult {
                    name: step.name.clone(),
                    when: when.name().to_owned(),
                    seconds,
                    exit: None,
                    log: None,
                });
                return Err(Failure::SpawnFailed {
                    message: format!("{} step `{}`: {message}", when.name(), step.name),
                });
            }
        };
        result.steps.push(StepResult {
            name: step.name.clone(),
            when: when.name().to_owned(),
            seconds,
            exit,
            log: Some(log_name),
        });
        if let Some(exit) = failure {
            return Err(Failure::Step {
                step: step.name.clone(),
                when: when.name().to_owned(),
                exit,
                seconds,
                output_tail: tail(&log),
            });
        }
    }
    Ok(())
}

/// Runs one step, its output to `log`: how it ended (its exit, killed at its timeout, stopped
/// by a signal), or why it could not start.
async fn run_one(
    step: &Step,
    when: When,
    place: &StepPlace<'_>,
    log: &Path,
) -> Result<Ran, String> {
    let argv: Vec<String> = step
        .command
        .iter()
        .map(|arg| place.fills.fill(arg))
        .collect::<Result<_, _>>()?;
    let Some((program, args)) = argv.split_first() else {
        return Err("it has no command".to_owned());
    };
    let cwd = match &step.cwd {
        Some(cwd) => place.spec_dir.join(place.fills.fill(cwd)?),
        None => place.spec_dir.to_path_buf(),
    };
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create the log folder {}: {e}", parent.display()))?;
    }
    let out = std::fs::File::create(log)
        .map_err(|e| format!("cannot create the log file {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot share the log file {}: {e}", log.display()))?;
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .kill_on_drop(true);
    for (key, value) in &step.env {
        command.env(key, place.fills.fill(value)?);
    }
    // SAFETY: prctl only, between fork and exec: async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{program}` in {}: {e}", cwd.display()))?;
    let group = child.id().and_then(|pid| Pid::from_raw(pid as i32));
    let _listed = Listed::new(group);
    let mut cancelled = place.cancel.clone();
    let interruptible = when == When::Setup;
    let waited = tokio::select! {
        waited = tokio::time::timeout(step.timeout.as_std(), child.wait()) => Some(waited),
        Ok(_) = cancelled.wait_for(|stop| *stop), if interruptible => None,
    };
    // What the step left behind in its group goes, whether it finished or not.
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, Signal::KILL);
    }
    match waited {
        Some(Ok(Ok(status))) => Ok(Ran::Exited(crate::target::exit_of(status))),
        Some(Ok(Err(e))) => Err(format!("cannot wait for `{program}`: {e}")),
        Some(Err(_)) => {
            let _ = child.kill().await;
            Ok(Ran::TimedOut)
        }
        None => {
            let _ = child.kill().await;
            Ok(Ran::Interrupted)
        }
    }
}

/// The last lines of a log file (its last 64 KiB read).
fn tail(log: &Path) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(log) else {
        return Vec::new();
    };
    let length = file.metadata().map_or(0, |m| m.len());
    let _ = file.seek(SeekFrom::Start(length.saturating_sub(64 * 1024)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|line| (*line).to_owned())
        .collect()
}
