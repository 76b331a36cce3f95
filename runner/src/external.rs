//! An external target (`url`): its URL checked like any load's, its readiness waited for
//! before every run, and its process found through `pid_file`, never headroom's own.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::target::ReadyCheck;
use headroom_matrix::resolved::Target;
use headroom_results::Failure;

use crate::target::{never_ready, ready_once};
use headroom_load::web;

/// Waits for an external target (`url`) to pass its readiness check (`http`, else a TCP
/// connect to `address`, the URL's), as for a target headroom starts: a server that is not
/// running fails the run by name before any load is sent.
pub(crate) async fn wait_external_ready(
    check: ReadyCheck<'_>,
    address: std::net::SocketAddr,
    cancel: &tokio::sync::watch::Receiver<bool>,
) -> Result<Duration, Failure> {
    let (ready, ready_http) = (check.ready, check.http);
    let started = Instant::now();
    let deadline = started + ready.timeout.as_std();
    loop {
        if ready_once(address, ready_http).await {
            return Ok(started.elapsed());
        }
        if Instant::now() >= deadline {
            return Err(never_ready(check, Some(address), started, Vec::new()).await);
        }
        if crate::target::pause_unless_cancelled(ready.interval.as_std(), cancel).await {
            return Err(Failure::Interrupted);
        }
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

/// The most a pid file is read: a pid and a newline are a few bytes.
const PID_FILE_MOST: u64 = 64;

/// An external target's process, from its pid file: the pid it names, running, not headroom's
/// own ancestor, and (where the socket can be seen) holding, itself or a descendant, the socket
/// listening on the target's `port`. With what to say beside the run when that could not be
/// checked.
pub(crate) fn external_pid(
    file: &str,
    spec_dir: &Path,
    headroom_bin: &Path,
    port: u16,
) -> Result<(i32, Option<String>), String> {
    let file = headroom_load::fill::fill(file, 0, headroom_bin)?;
    let path = spec_dir.join(&file);
    let pid = read_pid(&path)?;
    if procfs::process::Process::new(pid)
        .and_then(|process| process.stat())
        .is_err()
    {
        return Err(format!(
            "{} names pid {pid}, which is not running: a pid file left from an earlier server? start the server and write its pid in it",
            path.display()
        ));
    }
    refuse_own_tree(pid, &path)?;
    let note = listens_on(pid, port, &path)?;
    Ok((pid, note))
}

/// The pid in a pid file: a regular file (a FIFO nobody writes would block the run, a device
/// be read without end), opened without blocking, read to [`PID_FILE_MOST`] bytes.
fn read_pid(path: &Path) -> Result<i32, String> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(cannot)?;
    let kind = file.metadata().map_err(cannot)?.file_type();
    let what = if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_dir() {
        Some("a folder")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(format!(
            "{} is {what}, not a pid file: give `pid_file` the file the server writes its pid in",
            path.display()
        ));
    }
    let mut text = String::new();
    file.take(PID_FILE_MOST)
        .read_to_string(&mut text)
        .map_err(|_| format!("{} holds no pid (it is not text)", path.display()))?;
    let pid = text.trim().parse::<i32>().ok().filter(|&pid| pid > 0);
    pid.ok_or_else(|| {
        let first: String = text.trim().chars().take(20).collect();
        format!(
            "{} holds no pid (it says `{first}`): the server writes its pid in it, digits alone",
            path.display()
        )
    })
}

/// A pid whose tree (it and its descendants) holds headroom itself is not the server: pid 1,
/// a shell that started headroom, headroom's own pid. It would sample the machine (or
/// headroom's own load) as "the server".
fn refuse_own_tree(pid: i32, file: &Path) -> Result<(), String> {
    let own = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    let tree = crate::sample::tree(crate::sample::ServerProcesses::Descendants(pid))?;
    if tree.iter().any(|stat| stat.pid == own) {
        return Err(format!(
            "{} names {}, whose process tree ({} processes) holds headroom itself: it is not the server (pid 1, or a shell or process that started headroom); write the server's own pid in it",
            file.display(),
            described(pid),
            tree.len()
        ));
    }
    Ok(())
}

/// Programs that listen on a port for a server in a container (docker's userland proxy,
/// rootless podman's): the container's process is the server, though they hold the socket.
const PORT_FORWARDERS: [&str; 4] = ["docker-proxy", "rootlessport", "slirp4netns", "pasta"];

/// Whether `pid` or a descendant holds the socket listening on `port`: refused, naming what
/// does, when another process this user can see holds it. Unchecked, and said, when no socket
/// listens on it here (another network namespace), a port forwarder holds it, or the tree's
/// sockets cannot be read (another user's process).
fn listens_on(pid: i32, port: u16, file: &Path) -> Result<Option<String>, String> {
    let listening = listening_sockets(port);
    if listening.is_empty() {
        return Ok(Some(format!(
            "pid {pid} was not checked to listen on port {port}: no socket listens on it in headroom's network namespace (a container's published port?)"
        )));
    }
    let tree = crate::sample::tree(crate::sample::ServerProcesses::Descendants(pid))?;
    let mut unreadable = false;
    for stat in &tree {
        match holds_any(stat.pid, &listening) {
            Some(true) => return Ok(None),
            Some(false) => {}
            None => unreadable = true,
        }
    }
    if unreadable {
        return Ok(Some(format!(
            "pid {pid} was not checked to listen on port {port}: its sockets are not readable by this user"
        )));
    }
    let holder = procfs::process::all_processes()
        .into_iter()
        .flatten()
        .flatten()
        .map(|process| process.pid)
        .find(|&other| holds_any(other, &listening) == Some(true));
    match holder {
        Some(holder) if PORT_FORWARDERS.contains(&command_name(holder).as_str()) => {
            Ok(Some(format!(
                "pid {pid} was taken as the server on port {port}, which {} forwards",
                described(holder)
            )))
        }
        Some(holder) => Err(format!(
            "{} names {}, which does not listen on port {port}: {} does; a pid file left from an earlier server? write the server's pid in it",
            file.display(),
            described(pid),
            described(holder)
        )),
        None => Err(format!(
            "{} names {}, which does not listen on port {port} (a process this user cannot see does); write the pid of the server that serves the target in it",
            file.display(),
            described(pid)
        )),
    }
}

/// The inodes of the TCP sockets (IPv4 and IPv6) listening on `port` in this network namespace.
fn listening_sockets(port: u16) -> Vec<u64> {
    let tables = [procfs::net::tcp(), procfs::net::tcp6()];
    tables
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry.state == procfs::net::TcpState::Listen && entry.local_address.port() == port
        })
        .map(|entry| entry.inode)
        .collect()
}

/// Whether process `pid` holds one of the sockets `inodes`; `None` when its descriptors cannot
/// be read.
fn holds_any(pid: i32, inodes: &[u64]) -> Option<bool> {
    let descriptors = procfs::process::Process::new(pid).ok()?.fd().ok()?;
    Some(descriptors.flatten().any(|descriptor| {
        matches!(descriptor.target, procfs::process::FDTarget::Socket(inode) if inodes.contains(&inode))
    }))
}

/// A process's command name (`comm`), empty when it is gone.
fn command_name(pid: i32) -> String {
    procfs::process::Process::new(pid)
        .and_then(|process| process.stat())
        .map(|stat| stat.comm)
        .unwrap_or_default()
}

/// `pid N (`its program`)`: the program's name alone, never its arguments. A pid file may
/// name anyone's process (a stale one, a pid reused since), and a command line can hold a
/// password (`mysql -pSECRET`): it goes into messages and the results file, so it is not read.
fn described(pid: i32) -> String {
    let name = command_name(pid);
    if name.is_empty() {
        format!("pid {pid}")
    } else {
        format!("pid {pid} (`{name}`)")
    }
}
