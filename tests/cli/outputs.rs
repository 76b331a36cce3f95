//! Issue 42: every file a run writes passes one guard before anything runs: the dashboard's
//! export, a JSON-lines stream and the page as `--out` does. Each case is refused, named, and
//! leaves every file as it was.

use super::*;

/// A file's bytes, to check it was left as it was.
fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn live_outputs_refuse_what_they_must_not_touch() {
    let dir = "target/headroom-cli-outputs";
    let root = common::root();
    let _ = std::fs::remove_dir_all(root.join(dir));
    std::fs::create_dir_all(root.join(dir)).expect("scratch");
    let at = |name: &str| format!("{dir}/{name}");
    std::fs::write(root.join(at("notes.txt")), "my notes\n").expect("notes");
    std::fs::write(root.join(at("capacity.md")), "# my page\n").expect("a page");
    std::fs::copy(
        root.join("examples/relay.toml"),
        root.join(at("relay.toml")),
    )
    .expect("spec");
    let spec = at("relay.toml");
    let out = at("results.json");
    let other = at("other.json");
    let transcripts = [
        // The spec itself, by either output.
        transcript(&["run", &spec, "--out", &other, "--dashboard-export", &spec]),
        transcript(&[
            "run",
            &spec,
            "--out",
            &other,
            "--stream",
            &format!("json-lines={spec}"),
        ]),
        // The results file, by either output.
        transcript(&["run", &spec, "--out", &other, "--dashboard-export", &other]),
        transcript(&[
            "run",
            &spec,
            "--out",
            &other,
            "--stream",
            &format!("json-lines={other}"),
        ]),
        // Two streams into one file.
        transcript(&[
            "run",
            &spec,
            "--out",
            &other,
            "--stream",
            &format!("json-lines={}", at("lines.jsonl")),
            "--stream",
            &format!("json-lines={}", at("lines.jsonl")),
        ]),
        // A file headroom did not write, by either output, and the page beside the results.
        transcript(&[
            "run",
            &spec,
            "--out",
            &other,
            "--dashboard-export",
            &at("notes.txt"),
        ]),
        transcript(&[
            "run",
            &spec,
            "--out",
            &other,
            "--stream",
            &format!("json-lines={}", at("notes.txt")),
        ]),
        transcript(&["run", &spec, "--out", &out]),
    ];
    for case in &transcripts {
        assert!(case.contains("exit code: 1\n"), "{case}");
    }
    insta::assert_snapshot!("live-output-refusals", transcripts.join("\n"));
    // Nothing was touched, nothing was written.
    assert_eq!(
        bytes(&root.join(&spec)),
        bytes(&root.join("examples/relay.toml"))
    );
    assert_eq!(bytes(&root.join(at("notes.txt"))), b"my notes\n");
    assert_eq!(bytes(&root.join(at("capacity.md"))), b"# my page\n");
    for never in ["other.json", "results.json", "lines.jsonl"] {
        assert!(!root.join(at(never)).exists(), "{never} was written");
    }
    let _ = std::fs::remove_dir_all(root.join(dir));
}

/// A pipe, a device node and a folder no file can be made in: refused at once, before the run
/// (a pipe with no reader would block it; a device would be replaced by a file).
#[test]
fn live_outputs_refuse_pipes_devices_and_unwritable_folders() {
    let dir = "target/headroom-cli-outputs-special";
    let root = common::root();
    let _ = std::fs::remove_dir_all(root.join(dir));
    std::fs::create_dir_all(root.join(dir)).expect("scratch");
    let at = |name: &str| format!("{dir}/{name}");
    let mut specials = Vec::new();
    if std::process::Command::new("mkfifo")
        .arg(root.join(at("pipe")))
        .status()
        .is_ok_and(|s| s.success())
    {
        specials.push(at("pipe"));
    } else {
        common::say("skipped the pipe case: `mkfifo` is not available here");
    }
    // A device node of its own (the null device's numbers), where this test may make one: a
    // guard that failed would replace this node, not the machine's /dev/null.
    if std::process::Command::new("mknod")
        .arg(root.join(at("null")))
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success())
    {
        specials.push(at("null"));
    } else {
        common::say("skipped the device case: this user cannot make a device node");
    }
    for special in &specials {
        for flag in [
            vec!["--dashboard-export".to_owned(), special.clone()],
            vec!["--stream".to_owned(), format!("json-lines={special}")],
        ] {
            let mut args = vec!["run", "examples/relay.toml", "--out"];
            let out = at("results.json");
            args.push(&out);
            args.extend(flag.iter().map(String::as_str));
            let (code, _, stderr) = headroom(&args);
            assert_eq!(code, 1, "{stderr}");
            assert!(
                stderr.contains(&format!(
                    "{} {special} is not a regular file (a device, a pipe or a socket)",
                    flag[0]
                )) || stderr.contains(&format!(
                    "--stream json-lines {special} is not a regular file (a device, a pipe or a socket)"
                )),
                "{stderr}"
            );
            let kind = std::fs::metadata(root.join(special)).expect("still there");
            assert!(!kind.is_file(), "{special} was replaced by a file");
        }
    }
    let (code, _, stderr) = headroom(&[
        "run",
        "examples/relay.toml",
        "--out",
        &at("results.json"),
        "--dashboard-export",
        "/proc/export.html",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("--dashboard-export /proc/export.html: cannot write in its folder /proc"),
        "{stderr}"
    );
    assert!(!root.join(at("results.json")).exists());
    let _ = std::fs::remove_dir_all(root.join(dir));
}
