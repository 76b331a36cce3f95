//! `headroom k8s`: manifests that read back into their types.

use super::*;

/// Issue 18, item 4: `headroom k8s` writes the manifests of a segmented run; both files read
/// back into k8s-openapi's typed structs, and the transcript and the objects are snapshots.
/// A spec whose target is a command is refused: the pods load a service on the cluster.
#[test]
fn k8s_writes_manifests_that_read_back_into_their_types() {
    let dir = std::env::temp_dir().join(format!("headroom-k8s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.display().to_string();
    let args = [
        "k8s",
        "tests/fixtures/k8s/notes.toml",
        "--segments",
        "3",
        "--image",
        "registry.example/headroom:0.1.0",
        "--namespace",
        "load",
        "--out",
        out.as_str(),
    ];
    let said = transcript(&args).replace(&out, "OUT");
    let read = |file: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(file)).expect("written");
        serde_json::from_str(&text).expect("json")
    };
    let (segments, merge) = (read("segments.json"), read("merge.json"));
    let typed = headroom_k8s::Manifests::from_json(&segments, &merge).expect("typed");
    let job = typed.segments.spec.as_ref().expect("a job spec");
    assert_eq!(job.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(
        (job.completions, job.parallelism, job.backoff_limit),
        (Some(3), Some(3), Some(0))
    );
    let data = typed.config_map.data.as_ref().expect("data");
    assert_eq!(
        data.get("data__users.csv").map(String::as_str),
        Some("email\nada@example.com\ngrace@example.com\nkatherine@example.com\n")
    );
    insta::assert_snapshot!("k8s", said);
    insta::assert_json_snapshot!("k8s-segments", segments);
    insta::assert_json_snapshot!("k8s-merge", merge);

    let (code, _, stderr) = headroom(&[
        "k8s",
        "tests/fixtures/run/rooms.toml",
        "--segments",
        "2",
        "--image",
        "i",
        "--out",
        out.as_str(),
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("set `url` in [target]"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Kubernetes versions whose official schemas the manifests are validated against: the
/// oldest and newest docs/scale-out.md names (the validator's bundled range).
const KUBERNETES_VERSIONS: [&str; 2] = ["1.25.0", "1.37.0"];

/// Issue 34, item 2: the manifests for 1, 3 and 64 segments, of a spec with a data file and
/// of one without, pass strict validation (unknown fields refused) against the official
/// Kubernetes schemas of the oldest and newest version the docs name, offline, by
/// kubernetes-validate (installed by `scripts/kubernetes-validate.sh`; skipped, and said,
/// where it cannot be). A manifest with one field too many is refused by the same check.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn the_manifests_pass_strict_validation_against_the_kubernetes_schemas() {
    let validator = match common::run::installed_by("kubernetes-validate.sh") {
        Ok(path) => path,
        Err(why) => {
            common::say(&format!(
                "skipped the_manifests_pass_strict_validation_against_the_kubernetes_schemas: {why}"
            ));
            return;
        }
    };
    let dir = std::env::temp_dir().join(format!("headroom-k8s-valid-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut files = Vec::new();
    for spec in ["notes", "plain"] {
        for segments in [1, 3, 64] {
            let out = dir.join(format!("{spec}-{segments}"));
            let out_arg = out.display().to_string();
            let spec_arg = format!("tests/fixtures/k8s/{spec}.toml");
            let count = segments.to_string();
            let (code, _, stderr) = headroom(&[
                "k8s",
                &spec_arg,
                "--segments",
                &count,
                "--image",
                "registry.example/headroom:0.1.0",
                "--out",
                &out_arg,
            ]);
            assert_eq!(code, 0, "{spec} with {segments} segments: {stderr}");
            files.extend(objects_of(&out, &["segments.json", "merge.json"]));
        }
    }
    // Every kind written, in every manifest: a ConfigMap with and without a data file.
    let kinds: std::collections::BTreeSet<String> = files.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["ConfigMap", "Job", "PersistentVolumeClaim", "Service"]
    );
    let paths: Vec<&Path> = files.iter().map(|(_, path)| path.as_path()).collect();
    for version in KUBERNETES_VERSIONS {
        let (ok, said) = validate(&validator, version, &paths);
        assert!(ok, "Kubernetes {version}:\n{said}");
        // One line per object, each passed.
        let passed = said
            .lines()
            .filter(|l| l.contains(" passed for resource "))
            .count();
        assert_eq!(passed, paths.len(), "Kubernetes {version}:\n{said}");
    }
    // The check refuses what a strict API server refuses: a field a container does not have.
    let job = files
        .iter()
        .find(|(kind, _)| kind == "Job")
        .map(|(_, path)| path.clone())
        .expect("a Job");
    let mut wrong: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&job).expect("the job")).expect("json");
    wrong["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always".into();
    let wrong_path = dir.join("wrong-job.json");
    std::fs::write(&wrong_path, wrong.to_string()).expect("written");
    let (ok, said) = validate(&validator, KUBERNETES_VERSIONS[0], &[wrong_path.as_path()]);
    assert!(!ok, "{said}");
    assert!(said.contains("'imagePullPolcy' was unexpected"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each object of the `List`s in `files` under `out`, written to a file of its own (the
/// validator knows no `List`): (kind, path).
fn objects_of(out: &Path, files: &[&str]) -> Vec<(String, std::path::PathBuf)> {
    let mut objects = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(out.join(file)).expect("written");
        let list: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(list["kind"], "List", "{file}");
        for (n, item) in list["items"].as_array().expect("items").iter().enumerate() {
            let kind = item["kind"].as_str().expect("a kind").to_owned();
            let path = out.join(format!("{file}.{n}.{kind}.json"));
            std::fs::write(&path, item.to_string()).expect("written");
            objects.push((kind, path));
        }
    }
    objects
}

/// `kubernetes-validate --strict` (at `validator`) of `paths` against `version`: whether all
/// passed, and what it said.
fn validate(validator: &str, version: &str, paths: &[&Path]) -> (bool, String) {
    let output = std::process::Command::new(validator)
        .args(["--strict", "--kubernetes-version", version])
        .args(paths)
        .output()
        .expect("kubernetes-validate runs (installed by scripts/kubernetes-validate.sh)");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

/// Issue 42: what every segment would refuse (a searched phase) and what a cluster would
/// (an image, a namespace or a quantity it does not take, port 0, a bench name that is no DNS
/// label) is refused before a manifest is written, each named with its fix; the printed
/// `kubectl wait` commands name the namespace.
#[test]
fn k8s_refuses_what_a_segment_or_a_cluster_would() {
    let dir = std::env::temp_dir().join(format!("headroom-k8s-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.display().to_string();
    let plain = "tests/fixtures/k8s/plain.toml";
    let image = "registry.example/headroom:0.1.0";
    let cases: [(&[&str], &str); 7] = [
        (
            &["tests/fixtures/k8s/searched.toml", "--image", image],
            "phase `ceiling` searches its ceiling, and a segment judges no SLO",
        ),
        (
            &[plain, "--image", ""],
            "--image ``: not an image reference",
        ),
        (
            &[plain, "--image", "Registry/Headroom"],
            "not an image reference",
        ),
        (
            &[plain, "--image", image, "--namespace", "Load_Test"],
            "--namespace `Load_Test`: a namespace is lower-case letters",
        ),
        (
            &[plain, "--image", image, "--storage", "abc"],
            "--storage `abc`: not a Kubernetes quantity",
        ),
        (
            &[plain, "--image", image, "--cpu", "0"],
            "--cpu `0`: not a Kubernetes quantity",
        ),
        (
            &[plain, "--image", image, "--barrier-port", "0"],
            "--barrier-port",
        ),
    ];
    for (args, said) in cases {
        let mut all = vec!["k8s", "--segments", "2", "--out", out.as_str()];
        all.extend_from_slice(args);
        let (code, _, stderr) = headroom(&all);
        assert_eq!(code, 1, "{all:?}: {stderr}");
        assert!(stderr.contains(said), "{all:?}: {stderr}");
        assert!(
            !dir.join("segments.json").exists(),
            "{all:?} wrote a manifest"
        );
    }
    let (code, stdout, stderr) = headroom(&[
        "k8s",
        plain,
        "--segments",
        "2",
        "--image",
        image,
        "--namespace",
        "load",
        "--out",
        out.as_str(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "kubectl wait -n load --for=condition=complete --timeout=24h job/headroom-plain"
        ),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
