//! An external target (`url`): its URL checked like any load's, its readiness waited for
//! before every run, and its process found through `pid_file`, never headroom's own.

use std::path::Path;
use std::time::{Duration, Instant};

use headroom_compiler::matrix::resolved::Target;
use headroom_results::Failure;
use headroom_spec::target::Ready;

use crate::target::{never_ready, ready_once};
use headroom_load::web;

/// Waits for an external target (`url`) to pass its readiness check (`http`, else a TCP
/// connect to `address`, the URL's), as for a target headroom starts: a server that is not
/// running fails the run by name before any load is sent.
pub(crate) async fn wait_external_ready(
    ready: &Ready,
    address: std::net::SocketAddr,
    ready_http: Option<&web::Endpoint>,
) -> Result<Duration, Failure> {
    let started = Instant::now();
    let deadline = started + ready.timeout.as_std();
    loop {
        if ready_once(address, ready_http).await {
            return Ok(started.elapsed());
        }
        if Instant::now() >= deadline {
            return Err(never_ready((ready, ready_http), Some(address), started, Vec::new()).await);
        }
        tokio::time::sleep(ready.interval.as_std()).await;
    }
}

/// An external target's URL, filled in, may take load only where any load may go.
pub(crate) async fn external_url_allowed(
    url: &str,
    target: &Target,
    allowed: &web::Allowed,
) -> Result<std::net::SocketAddr, String> {
    let written = target.url.as_deref().unwrap_or(url);
    let Some(parsed) = web::parse_web_url(url) else {
        return Err(format!(
            "the external target `{url}` is not an http:// or https:// URL the runner can load"
        ));
    };
    web::resolve(&parsed.dial, url, written, allowed).await
}

/// The process group of an external target, from its pid file.
pub(crate) fn external_pid(
    file: &str,
    spec_dir: &Path,
    headroom_bin: &Path,
) -> Result<i32, String> {
    let file = headroom_load::fill::fill(file, 0, headroom_bin)?;
    let path = spec_dir.join(&file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let pid: i32 = text
        .trim()
        .parse()
        .map_err(|_| format!("{} holds no pid", path.display()))?;
    if pid <= 0 {
        return Err(format!("{} holds no pid", path.display()));
    }
    // Its group from /proc, not getpgid: a container's pid 1 has group 0, which rustix's
    // getpgid takes for a bug (and a group 0 signalled would be headroom's own).
    let group = procfs::process::Process::new(pid)
        .and_then(|process| process.stat())
        .map(|stat| stat.pgrp)
        .map_err(|e| format!("process {pid} is not running: {e}"))?;
    if group <= 0 {
        return Err(format!(
            "{} names pid {pid}, which has no process group of its own (a container's first process): it is not the server; write the server's own pid in it",
            path.display()
        ));
    }
    refuse_own_tree(group, pid, &path)?;
    Ok(group)
}

/// A pid whose sampled tree (its group and the descendants of its leader) holds headroom
/// itself is not the server: pid 1, a shell that started headroom, headroom's own pid. It
/// would sample the machine (or headroom's own load) as "the server".
fn refuse_own_tree(group: i32, pid: i32, file: &Path) -> Result<(), String> {
    let own = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    let tree = crate::sample::tree(group)?;
    if tree.iter().any(|stat| stat.pid == own) {
        return Err(format!(
            "{} names pid {pid}, whose process tree ({} processes) holds headroom itself: it is not the server (pid 1, or a shell or process that started headroom); write the server's own pid in it",
            file.display(),
            tree.len()
        ));
    }
    Ok(())
}
