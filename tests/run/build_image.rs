//! Issue 34: the image. No container engine runs on these machines, so the tests build the
//! binary the `Dockerfile` builds, with the same `cargo build` line (checked here, read from
//! both files), and `under_kubernetes` runs it as the pods of `headroom k8s` would.
//!
//! The release build takes minutes of both cores from a clean checkout. It runs in the
//! background of the other tests (`harness::in_background`): at the lowest priority (`nice -n
//! 19`), so that it takes the CPU the tests sharing the machine leave idle and not theirs,
//! stopped while a test has the machine whole; and in a target folder of its own
//! (`target/image`), which `cargo test`'s lock on `target/` does not hold. Its two users
//! (the test here and `under_kubernetes`) each start it if it has not started and wait for the
//! one build: neither assumes the other ran, or an order.

use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use super::*;

/// The build, started once, and what it ended with: the binary's path, or why the machine
/// cannot build it.
static BUILD: Mutex<Option<JoinHandle<Result<PathBuf, String>>>> = Mutex::new(None);
static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// Starts the build in the background, once.
pub(crate) fn start() {
    let mut build = BUILD.lock().unwrap_or_else(PoisonError::into_inner);
    if build.is_some() || BUILT.get().is_some() {
        return;
    }
    *build = Some(std::thread::spawn(|| {
        let mut command = Command::new("nice");
        command
            .args(["-n", "19"])
            .arg(root().join("scripts/image-binary.sh"))
            .env("CARGO_TARGET_DIR", root().join("target/image"))
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let built = headroom_test_support::harness::in_background(command)
            .expect("scripts/image-binary.sh runs");
        let said = String::from_utf8_lossy(&built.stderr);
        match built.status.code() {
            Some(0) => Ok(PathBuf::from(String::from_utf8_lossy(&built.stdout).trim())),
            // The script's own refusal: a tool this machine cannot have (the musl target,
            // musl-gcc).
            Some(1) => Err(said.trim().to_owned()),
            _ => panic!("the image's build failed:\n{said}"),
        }
    }));
}

/// The image's binary, once built (the build started here if no test started it), or why
/// this machine cannot build it.
pub(crate) fn binary() -> Result<PathBuf, String> {
    start();
    BUILT
        .get_or_init(|| {
            let handle = BUILD
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .expect("the build started");
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .clone()
}

/// The `cargo build` command of the Dockerfile's build stage, as written (without the copy
/// that follows it on the same `RUN`).
fn dockerfile_build_line(dockerfile: &str) -> String {
    let at = dockerfile
        .find("RUN cargo build ")
        .expect("the Dockerfile builds with `RUN cargo build …`");
    let line = dockerfile[at + "RUN ".len()..]
        .lines()
        .next()
        .expect("a line");
    line.split(" && ")
        .next()
        .expect("a command")
        .trim_end_matches('\\')
        .trim()
        .to_owned()
}

/// The `cargo build` line of scripts/image-binary.sh, without its redirection.
fn script_build_line(script: &str) -> String {
    script
        .lines()
        .find(|line| line.starts_with("cargo build "))
        .expect("scripts/image-binary.sh builds with `cargo build …`")
        .trim_end_matches(">&2")
        .trim()
        .to_owned()
}

/// Whether the ELF file at `path` asks for no program interpreter: statically linked.
pub(crate) fn statically_linked(path: &Path) -> bool {
    let elf = std::fs::read(path).expect("the binary");
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF file");
    assert_eq!(elf[4], 2, "64-bit");
    let word = |at: usize, size: usize| -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..size].copy_from_slice(&elf[at..at + size]);
        u64::from_le_bytes(bytes)
    };
    let (table, entry, count) = (word(0x20, 8), word(0x36, 2), word(0x38, 2));
    const PT_INTERP: u64 = 3;
    (0..count).all(|i| word((table + i * entry) as usize, 4) != PT_INTERP)
}

/// Starts the build that `under_kubernetes` runs (if that test has not): early in the layer's
/// run, so it goes on in the background of the tests that follow.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn the_dockerfile_builds_with_the_scripts_line() {
    start();
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("the Dockerfile");
    let script =
        std::fs::read_to_string(root().join("scripts/image-binary.sh")).expect("the script");
    let line = dockerfile_build_line(&dockerfile);
    assert_eq!(line, script_build_line(&script));
    assert!(
        line.contains("--release") && line.contains("--locked") && line.contains("linux-musl"),
        "{line}"
    );
    // What runs it: a static base, the binary on the PATH, as the Jobs' `command` says.
    assert!(
        dockerfile.contains("FROM gcr.io/distroless/static"),
        "{dockerfile}"
    );
    assert!(
        dockerfile.contains("COPY --from=build /headroom /usr/local/bin/headroom"),
        "{dockerfile}"
    );
}
