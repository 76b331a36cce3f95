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

/// The results file, held for one run: the lock is removed when this is dropped.
pub(crate) struct Held {
    lock: PathBuf,
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
    take_lock(&lock, out)?;
    let mut held = Held {
        lock,
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

/// `OUT.lock`, made only if no other run holds it. A lock whose run is gone (its pid is not
/// alive, after a SIGKILL) is taken over.
fn take_lock(lock: &Path, out: &Path) -> Result<()> {
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut file) => {
                let _ = writeln!(file, "{}", std::process::id());
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = lock_holder(lock);
                match holder {
                    Some(pid)
                        if process_name(pid).is_some_and(|name| name.starts_with("headroom")) =>
                    {
                        bail!(
                            "another headroom run (pid {pid}) is writing {}: wait for it to end, or give this run another --out (if no headroom run is writing it, remove {})",
                            out.display(),
                            lock.display()
                        )
                    }
                    // Its run is gone: a pid not running, or taken since by another program.
                    Some(pid) => {
                        if let Some(name) = process_name(pid) {
                            eprintln!(
                                "note: {} named pid {pid}, which is `{name}`, not headroom: the run that held it is gone, and its lock is taken over",
                                lock.display()
                            );
                        }
                        let _ = std::fs::remove_file(lock);
                    }
                    None => {
                        let _ = std::fs::remove_file(lock);
                    }
                }
            }
            Err(e) => bail!(
                "--out {}: cannot write beside it ({}): {e}",
                out.display(),
                lock.display()
            ),
        }
    }
    bail!(
        "--out {}: cannot take its lock {}",
        out.display(),
        lock.display()
    )
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

    /// The lock: a second hold of one file is refused while the first is held; a lock left by
    /// a run that is gone is taken over.
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
        assert!(error.starts_with("another headroom run (pid "), "{error}");
        drop(held);
        assert!(!with_suffix(&out, ".lock").exists());
        // A pid that is not alive: the lock is stale.
        std::fs::write(with_suffix(&out, ".lock"), "4294967295\n").expect("stale lock");
        let held = hold(&out, &run).expect("a stale lock is taken over");
        drop(held);
        // A live pid of another program (a pid taken since the run that held it ended): its
        // lock is taken over too. A `sleep` is no headroom.
        let mut sleep = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        std::fs::write(with_suffix(&out, ".lock"), format!("{}\n", sleep.id())).expect("lock");
        let taken = hold(&out, &run);
        let _ = sleep.kill();
        let _ = sleep.wait();
        assert!(taken.is_ok(), "{:?}", taken.err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
