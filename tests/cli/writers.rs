//! Issue 57: every command that writes a file, each output planted with what it must not
//! touch: the spec or the input it reads, a results file, a device, a FIFO and a link to a
//! device. Each is refused before anything is read or run, or (a page) streamed into the
//! device as named; nothing is replaced.

use std::os::unix::fs::FileTypeExt;

use super::*;

/// What is at a path, to compare before and after: its bytes, or its kind.
#[derive(Debug, PartialEq)]
enum Found {
    Bytes(Vec<u8>),
    Device,
    Fifo,
    Folder,
}

fn found(path: &Path) -> Found {
    let kind = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .file_type();
    if kind.is_char_device() || kind.is_block_device() {
        Found::Device
    } else if kind.is_fifo() {
        Found::Fifo
    } else if kind.is_dir() {
        Found::Folder
    } else {
        Found::Bytes(std::fs::read(path).expect("bytes"))
    }
}

/// A command that writes, its output flag, and the arguments that point that output at
/// `out` (every other file it names is its own, under `dir`).
struct Writer {
    name: &'static str,
    /// What it reads, which a plant of the input names.
    input: &'static str,
    args: fn(dir: &str, out: &str) -> Vec<String>,
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

const WRITERS: [Writer; 8] = [
    Writer {
        name: "run --out",
        input: "relay.toml",
        args: |dir, out| owned(&["run", &format!("{dir}/relay.toml"), "--out", out]),
    },
    Writer {
        name: "run --dashboard-export",
        input: "relay.toml",
        args: |dir, out| {
            let results = format!("{dir}/fresh/results.json");
            owned(&[
                "run",
                &format!("{dir}/relay.toml"),
                "--out",
                &results,
                "--dashboard-export",
                out,
            ])
        },
    },
    Writer {
        name: "run --stream json-lines",
        input: "relay.toml",
        args: |dir, out| {
            let results = format!("{dir}/fresh/results.json");
            let stream = format!("json-lines={out}");
            owned(&[
                "run",
                &format!("{dir}/relay.toml"),
                "--out",
                &results,
                "--stream",
                &stream,
            ])
        },
    },
    Writer {
        name: "render --out",
        input: "results.json",
        args: |dir, out| {
            let results = format!("{dir}/results.json");
            owned(&[
                "render",
                &format!("{dir}/relay.toml"),
                "--results",
                &results,
                "--out",
                out,
            ])
        },
    },
    Writer {
        name: "merge --out",
        input: "results.json",
        args: |dir, out| owned(&["merge", &format!("{dir}/results.json"), "--out", out]),
    },
    Writer {
        name: "k8s --out",
        input: "plain.toml",
        // The manifests go in a folder: `out` is planted as its segments.json.
        args: |dir, out| {
            let folder = Path::new(out)
                .parent()
                .expect("a folder")
                .display()
                .to_string();
            owned(&[
                "k8s",
                &format!("{dir}/plain.toml"),
                "--segments",
                "2",
                "--image",
                "registry.example/headroom:1",
                "--out",
                &folder,
            ])
        },
    },
    Writer {
        name: "prices import aws --out",
        input: "offer.json",
        args: |dir, out| {
            owned(&[
                "prices",
                "import",
                "aws",
                &format!("{dir}/offer.json"),
                "--out",
                out,
            ])
        },
    },
    Writer {
        name: "prices import hetzner --out",
        input: "pricing.json",
        args: |dir, out| {
            owned(&[
                "prices",
                "import",
                "hetzner",
                &format!("{dir}/pricing.json"),
                "--location",
                "fsn1",
                "--out",
                out,
            ])
        },
    },
];

/// What a plant is: a name, and how to make it at a path (`None`: this machine cannot).
type Plant = (&'static str, fn(&Path, &Path) -> bool);

fn mknod(at: &Path) -> bool {
    std::process::Command::new("mknod")
        .arg(at)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success())
}

const PLANTS: [Plant; 5] = [
    ("a results file", |dir, at| {
        std::fs::copy(dir.join("results.json"), at).is_ok()
    }),
    ("a device", |_, at| mknod(at)),
    ("a FIFO", |_, at| {
        std::process::Command::new("mkfifo")
            .arg(at)
            .status()
            .is_ok_and(|s| s.success())
    }),
    ("a link to a device", |dir, at| {
        let device = dir.join("device");
        (device.exists() || mknod(&device)) && std::os::unix::fs::symlink(&device, at).is_ok()
    }),
    ("a spec", |dir, at| {
        std::fs::copy(dir.join("relay.toml"), at).is_ok()
    }),
];

/// The scratch folder with the inputs every writer reads.
fn scratch(root: &Path, dir: &str) {
    let _ = std::fs::remove_dir_all(root.join(dir));
    std::fs::create_dir_all(root.join(dir).join("out")).expect("scratch");
    std::fs::copy(
        root.join("examples/relay.toml"),
        root.join(dir).join("relay.toml"),
    )
    .expect("spec");
    std::fs::copy(
        root.join(common::fixtures::RELAY_RESULTS_PATH),
        root.join(dir).join("results.json"),
    )
    .expect("results");
    std::fs::copy(
        root.join("tests/fixtures/k8s/plain.toml"),
        root.join(dir).join("plain.toml"),
    )
    .expect("a spec of a service on the cluster");
    std::fs::copy(
        root.join("test-support/fixtures/prices/aws-ec2-us-east-2.json"),
        root.join(dir).join("offer.json"),
    )
    .expect("offer");
    std::fs::copy(
        root.join("test-support/fixtures/prices/hetzner-pricing.json"),
        root.join(dir).join("pricing.json"),
    )
    .expect("pricing");
}

/// The writer's output named as the input it reads: refused, the input as it was.
fn the_input_is_refused(root: &Path, dir: &str, writer: &Writer) {
    let input = format!("{dir}/{}", writer.input);
    let before = found(&root.join(&input));
    let args = (writer.args)(dir, &input);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, stderr) = headroom(&args);
    assert_eq!(code, 1, "{}: the input: {stderr}", writer.name);
    assert!(
        stderr.contains("itself: name another file"),
        "{}: {stderr}",
        writer.name
    );
    assert_eq!(
        found(&root.join(&input)),
        before,
        "{}: the input changed",
        writer.name
    );
}

/// Each plant at the writer's output: refused (or a page streamed into a device), the plant
/// as it was. Returns the cases checked; those this user cannot make go in `skipped`.
fn plants_are_left_alone(
    root: &Path,
    dir: &str,
    writer: &Writer,
    skipped: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    for (plant, make) in &PLANTS {
        let out_dir = root.join(dir).join("out");
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir).expect("out");
        let at = out_dir.join(match writer.name {
            "k8s --out" => "segments.json",
            _ => "planted",
        });
        if !make(&root.join(dir), &at) {
            skipped.push(format!(
                "{}: {plant} (this user cannot make one)",
                writer.name
            ));
            continue;
        }
        // A page streams into a device as `> page.md` would; a FIFO with no reader would
        // hold it, so a page is not tried against one. A run would run: its own kinds
        // (results files) are kept as `.prev`, tested in `out.rs`.
        let page = writer.name == "render --out";
        let results_are_its_own =
            matches!(writer.name, "run --out" | "merge --out") && *plant == "a results file";
        if (page && *plant == "a FIFO") || results_are_its_own {
            continue;
        }
        let before = found(&at);
        let out = format!(
            "{dir}/out/{}",
            at.file_name().expect("a name").to_string_lossy()
        );
        let args = (writer.args)(dir, &out);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, stderr) = headroom(&args);
        if page && matches!(*plant, "a device" | "a link to a device") {
            assert_eq!(code, 0, "{}: {plant}: {stderr}", writer.name);
        } else {
            assert_eq!(code, 1, "{}: {plant}: {stderr}", writer.name);
            assert!(
                stderr.starts_with("error: ") && stderr.contains(&out)
                    || stderr.contains("planted"),
                "{}: {plant}: the refusal names the file: {stderr}",
                writer.name
            );
        }
        assert_eq!(found(&at), before, "{}: {plant} was changed", writer.name);
        assert!(
            std::fs::symlink_metadata(&at).is_ok(),
            "{}: {plant} is gone",
            writer.name
        );
        checked += 1;
    }
    checked
}

/// The spec `k8s` reads, named as the manifest it would write: refused.
fn k8s_refuses_its_spec(root: &Path, dir: &str) {
    let folder = format!("{dir}/out");
    let _ = std::fs::remove_dir_all(root.join(&folder));
    std::fs::create_dir_all(root.join(&folder)).expect("out");
    let spec = format!("{folder}/segments.json");
    std::fs::copy(root.join("tests/fixtures/k8s/plain.toml"), root.join(&spec)).expect("spec");
    let before = found(&root.join(&spec));
    let (code, _, stderr) = headroom(&[
        "k8s",
        &spec,
        "--segments",
        "2",
        "--image",
        "registry.example/headroom:1",
        "--out",
        &folder,
    ]);
    assert_eq!(code, 1, "k8s: the spec: {stderr}");
    assert!(stderr.contains("is the spec itself"), "{stderr}");
    assert_eq!(found(&root.join(&spec)), before);
}

#[test]
fn every_writer_refuses_what_it_must_not_touch() {
    let root = common::root();
    let dir = "target/headroom-cli-writers";
    scratch(root, dir);
    let mut skipped = Vec::new();
    let mut checked = 0;
    for writer in &WRITERS {
        // The manifests' folder is named, not their files: their spec is tried apart.
        if writer.name == "k8s --out" {
            k8s_refuses_its_spec(root, dir);
        } else {
            the_input_is_refused(root, dir, writer);
        }
        checked += 1 + plants_are_left_alone(root, dir, writer, &mut skipped);
    }
    for skip in &skipped {
        common::say(&format!("skipped {skip}"));
    }
    assert!(checked >= 30, "only {checked} cases were checked");
    assert!(
        !root.join(dir).join("fresh/results.json").exists(),
        "a run ran"
    );
    let _ = std::fs::remove_dir_all(root.join(dir));
}
