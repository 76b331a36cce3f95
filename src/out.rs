//! `run --out`: what the results file may be, the earlier file kept, and a lock so that one
//! run at a time writes it. Checked before the first point runs, so a bad `--out` costs nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// What is at the `--out` path now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Existing {
    Nothing,
    /// A headroom results file, of this bench and spec hash.
    Results {
        bench: String,
        hash: String,
    },
    /// A file that is not a headroom results file (notes, a spec, anything).
    OtherFile,
    Folder,
    /// A device, a pipe or a socket: not a file to replace.
    Special,
}

/// Reads what is at `path`, without writing anything.
pub(crate) fn existing(path: &Path) -> Existing {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Existing::Nothing;
    };
    if metadata.is_dir() {
        return Existing::Folder;
    }
    if !metadata.is_file() {
        return Existing::Special;
    }
    let results = crate::read_bounded(path, crate::files::MAX_RESULTS_BYTES, "a results file", "")
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .filter(|json| json["format"].is_u64() && json["phases"].is_array());
    match results {
        Some(json) => Existing::Results {
            bench: json["plan"]["bench"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            hash: json["spec"]["hash"].as_str().unwrap_or_default().to_owned(),
        },
        None => Existing::OtherFile,
    }
}

/// The spec a run is for, as `--out` is checked against it.
pub(crate) struct Run<'a> {
    pub bench: &'a str,
    pub spec_hash: &'a str,
    /// `--phase`: the file's other phases are kept, so it must be this spec's.
    pub merging: bool,
}

/// The results file, held for one run: the lock file, locked (`flock`) while this lives and
/// removed when it is dropped; the kernel lets the lock go when the process ends however it
/// ends, so a lock outlives no run.
pub(crate) struct Held {
    lock: PathBuf,
    /// The open lock file: its `flock` is the run's hold.
    _file: std::fs::File,
    /// Where the earlier results were kept, if there were any.
    pub previous: Option<PathBuf>,
}

impl Held {
    /// The lock file, for a hard exit that cannot run `Drop`.
    pub(crate) fn lock(&self) -> &Path {
        &self.lock
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Checks `out` for `run` (claimed by the guard already: `crate::outputs`), keeps an earlier
/// file as `OUT.prev` and takes the lock `OUT.lock`.
pub(crate) fn hold(out: &Path, run: &Run<'_>) -> Result<Held> {
    let shown = out.display();
    let found = existing(out);
    match &found {
        Existing::OtherFile if run.merging => bail!(
            "--out {shown} is not a headroom results file, so --phase has no other phases to keep in it: run every phase, or name a results file"
        ),
        Existing::Results { bench, hash } if run.merging && hash != run.spec_hash => bail!(
            "--out {shown} holds results of {}: a --phase re-run merges only into results of the same spec. Run every phase to replace them, or name another file",
            if bench == run.bench {
                format!("another version of `{bench}` (the spec changed since)")
            } else {
                format!("bench `{bench}`, not `{}`", run.bench)
            }
        ),
        _ => {}
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            anyhow::anyhow!(
                "--out {shown}: cannot create its folder {}: {e}",
                parent.display()
            )
        })?;
    }
    let lock = with_suffix(out, ".lock");
    let file = take_lock(&lock, out)?;
    let mut held = Held {
        lock,
        _file: file,
        previous: None,
    };
    // The earlier file stays whole beside the new one until the user removes it: an
    // interrupted re-run never leaves less than there was.
    if let Existing::Results { .. } | Existing::OtherFile = found {
        held.previous = Some(keep_earlier(out)?);
    }
    Ok(held)
}

/// Keeps the file at `out` as `OUT.prev` before it is replaced, the earlier backups moved one
/// generation down (`OUT.prev` to `OUT.prev.2`, `OUT.prev.2` to `OUT.prev.3`, …), so no
/// re-run ever takes away results that were there: a user removes backups, headroom does not.
/// A file the same as `OUT.prev` already is not kept twice. Returns `OUT.prev`.
pub(crate) fn keep_earlier(out: &Path) -> Result<PathBuf> {
    let shown = out.display();
    let previous = with_suffix(out, ".prev");
    let same = |a: &Path, b: &Path| match (std::fs::read(a), std::fs::read(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if previous.exists() && !same(out, &previous) {
        let generation = |n: usize| with_suffix(out, &format!(".prev.{n}"));
        let mut last = 2;
        while generation(last).exists() {
            last += 1;
        }
        for n in (2..last).rev() {
            std::fs::rename(generation(n), generation(n + 1)).map_err(|e| {
                anyhow::anyhow!(
                    "--out {shown}: cannot move the backup {} down: {e}",
                    generation(n).display()
                )
            })?;
        }
        std::fs::rename(&previous, generation(2)).map_err(|e| {
            anyhow::anyhow!(
                "--out {shown}: cannot move the backup {} down: {e}",
                previous.display()
            )
        })?;
    }
    std::fs::copy(out, &previous).map_err(|e| {
        anyhow::anyhow!(
            "--out {shown}: cannot keep the earlier file as {}: {e}",
            previous.display()
        )
    })?;
    Ok(previous)
}

/// `OUT.lock`, held by identity: the run that holds an advisory lock (`flock`) on it, which
/// the kernel releases when that process ends, however it ends. A lock file nobody holds (its
/// run was killed, its pid reused since) is taken over, whatever it names; one a live run
/// holds is refused, whatever that run's binary is called. The pid written in it is for
/// people, never read to decide.
fn take_lock(lock: &Path, out: &Path) -> Result<std::fs::File> {
    // A run that ends between our open and our lock removes the file it held: the lock we
    // took is then on a file no longer at the path, so it is taken again, a few times at most.
    for _ in 0..8 {
        if std::fs::symlink_metadata(lock).is_ok_and(|m| !m.is_file()) {
            bail!(
                "--out {}: its lock {} is not a regular file (a link, a folder or a device): remove it, or give this run another --out",
                out.display(),
                lock.display()
            );
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock)
            .map_err(|e| {
                anyhow::anyhow!(
                    "--out {}: cannot write beside it ({}): {e}",
                    out.display(),
                    lock.display()
                )
            })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = lock_holder(lock).map_or_else(
                    || "a process".to_owned(),
                    |pid| match process_name(pid) {
                        Some(name) => format!("pid {pid} (`{name}`)"),
                        None => format!("pid {pid}"),
                    },
                );
                bail!(
                    "another run is writing {}: {holder} holds its lock {}. Wait for it to end, or give this run another --out",
                    out.display(),
                    lock.display()
                )
            }
            Err(std::fs::TryLockError::Error(e)) => bail!(
                "--out {}: cannot lock {} ({e}): is its folder on a file system without locks? Give this run an --out on a local disk",
                out.display(),
                lock.display()
            ),
        }
        if !same_file(&file, lock) {
            continue;
        }
        file.set_len(0)?;
        let _ = writeln!(file, "{}", std::process::id());
        return Ok(file);
    }
    bail!(
        "--out {}: cannot take its lock {}: other runs keep taking it",
        out.display(),
        lock.display()
    )
}

/// Whether `file` is the file at `path` now (the same device and inode).
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(there)) => open.dev() == there.dev() && open.ino() == there.ino(),
        _ => false,
    }
}

/// The pid a lock file names: its first 32 bytes, a regular file's only.
fn lock_holder(lock: &Path) -> Option<u32> {
    use std::io::Read;
    if !std::fs::symlink_metadata(lock).ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(lock)
        .ok()?
        .take(32)
        .read_to_string(&mut text)
        .ok()?;
    text.trim().parse().ok()
}

/// A running process's name (`/proc/PID/comm`), `None` when it is not running.
fn process_name(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim().to_owned())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("headroom-out-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    /// What is at a path is read, never written: a device is not a file to replace.
    #[test]
    fn what_is_there_is_read_without_writing() {
        assert_eq!(existing(Path::new("/dev/null")), Existing::Special);
        let dir = scratch("existing");
        assert_eq!(existing(&dir), Existing::Folder);
        assert_eq!(existing(&dir.join("none.json")), Existing::Nothing);
        std::fs::write(dir.join("notes.txt"), "my notes").expect("write");
        assert_eq!(existing(&dir.join("notes.txt")), Existing::OtherFile);
        let fixture = headroom_test_support::fixtures::path("relay-results.json");
        assert!(matches!(existing(&fixture), Existing::Results { bench, .. } if bench == "relay"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Every earlier file is kept: three runs over one results file leave the first two as
    /// `.prev.2` and `.prev` (the newest), and a file the same as `.prev` is not kept twice.
    #[test]
    fn earlier_results_are_kept_generation_by_generation() {
        let dir = scratch("generations");
        let out = dir.join("results.json");
        for text in ["first", "second", "third"] {
            if out.exists() {
                keep_earlier(&out).expect("kept");
            }
            std::fs::write(&out, text).expect("written");
        }
        let read = |suffix: &str| std::fs::read_to_string(with_suffix(&out, suffix)).expect(suffix);
        assert_eq!(read(""), "third");
        assert_eq!(read(".prev"), "second");
        assert_eq!(read(".prev.2"), "first");
        keep_earlier(&out).expect("kept");
        keep_earlier(&out).expect("kept again");
        assert_eq!(read(".prev"), "third");
        assert_eq!(read(".prev.2"), "second");
        assert_eq!(read(".prev.3"), "first");
        assert!(
            !with_suffix(&out, ".prev.4").exists(),
            "the same file is not kept twice"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The lock is held by identity: a second hold of one file is refused while the first
    /// lives (here in one process: `flock` locks of two opens conflict); once it is dropped,
    /// or when its lock file names a pid that is gone, or a pid alive but reused by another
    /// program, the lock is free and taken.
    #[test]
    fn one_run_holds_a_results_file() {
        let dir = scratch("lock");
        let out = dir.join("results.json");
        let run = Run {
            bench: "b",
            spec_hash: "h",
            merging: false,
        };
        let held = hold(&out, &run).expect("first");
        let error = hold(&out, &run).err().expect("second refused").to_string();
        assert!(
            error.starts_with(&format!(
                "another run is writing {}: pid {} (`",
                out.display(),
                std::process::id()
            )),
            "{error}"
        );
        drop(held);
        assert!(!with_suffix(&out, ".lock").exists());
        // A pid that is not alive, and nobody holding the lock: taken over.
        std::fs::write(with_suffix(&out, ".lock"), "4294967295\n").expect("stale lock");
        drop(hold(&out, &run).expect("a stale lock is taken over"));
        // A live pid of another program (a pid reused since its run ended): nobody holds the
        // lock, so it is taken over too.
        let mut sleep = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        std::fs::write(with_suffix(&out, ".lock"), format!("{}\n", sleep.id())).expect("lock");
        let taken = hold(&out, &run);
        let _ = sleep.kill();
        let _ = sleep.wait();
        assert!(taken.is_ok(), "{:?}", taken.err());
        drop(taken);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A live run of a binary called anything (`flock`, `hr`) holds the lock: refused, the
    /// holder named by the pid it wrote; when it ends, the lock is free.
    #[test]
    fn a_lock_held_by_another_program_is_refused_whatever_its_name() {
        let dir = scratch("held-elsewhere");
        let out = dir.join("results.json");
        let lock = with_suffix(&out, ".lock");
        let run = Run {
            bench: "b",
            spec_hash: "h",
            merging: false,
        };
        // `flock` (util-linux) takes the lock and becomes a `sleep` (`--no-fork`), as a
        // renamed headroom would hold it.
        let Ok(mut holder) = std::process::Command::new("flock")
            .arg("--no-fork")
            .arg(&lock)
            .args(["sleep", "30"])
            .spawn()
        else {
            headroom_test_support::harness::say(
                "skipped: `flock` (util-linux) is not on this machine",
            );
            return;
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let refused = loop {
            match hold(&out, &run) {
                Err(error) => break error.to_string(),
                Ok(held) => {
                    // `flock` has not taken it yet.
                    drop(held);
                    assert!(
                        std::time::Instant::now() < deadline,
                        "flock never took the lock"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        };
        assert!(
            refused.starts_with(&format!("another run is writing {}: ", out.display())),
            "{refused}"
        );
        let _ = holder.kill();
        let _ = holder.wait();
        drop(hold(&out, &run).expect("free once its holder ended"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
