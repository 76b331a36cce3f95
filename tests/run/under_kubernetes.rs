//! Issue 34: the image's binary run as the pods of `headroom k8s` would run it: a segment's Job
//! from only the files its ConfigMap carries, in a folder of its own, with the pod's
//! environment, then the merge Job over its part. The binary is built by `build_image`, in the
//! background of the other tests: whichever of its two tests runs first starts the build and
//! the other waits for the same one, in whatever order the harness runs them.

use std::collections::BTreeMap;

use super::*;

/// The objects of `headroom k8s`'s `segments.json` and `merge.json` in `dir`, by kind (the
/// Jobs by their component).
struct Manifests {
    config_map: Value,
    segments: Value,
    merge: Value,
}

impl Manifests {
    fn read(dir: &Path) -> Manifests {
        let list = |file: &str| -> Vec<Value> {
            let text = std::fs::read_to_string(dir.join(file)).expect("written");
            let value: Value = serde_json::from_str(&text).expect("json");
            value["items"].as_array().expect("items").clone()
        };
        let first = list("segments.json");
        let of_kind = |kind: &str| {
            first
                .iter()
                .find(|o| o["kind"] == kind)
                .cloned()
                .unwrap_or_else(|| panic!("a {kind}"))
        };
        Manifests {
            config_map: of_kind("ConfigMap"),
            segments: of_kind("Job"),
            merge: list("merge.json").remove(0),
        }
    }

    /// The files the spec volume shows the pod: the ConfigMap's entries at the paths its
    /// items give, written under `spec_dir`.
    fn write_spec_volume(&self, spec_dir: &Path) -> Vec<PathBuf> {
        let data = self.config_map["data"].as_object().expect("data");
        let volumes = self.segments["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .expect("volumes");
        let spec_volume = volumes
            .iter()
            .find(|v| v["configMap"].is_object())
            .expect("the spec volume");
        let mut written = Vec::new();
        for item in spec_volume["configMap"]["items"].as_array().expect("items") {
            let key = item["key"].as_str().expect("a key");
            let path = spec_dir.join(item["path"].as_str().expect("a path"));
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("a folder");
            let text = data[key].as_str().expect("the entry");
            std::fs::write(&path, text).expect("written");
            written.push(path);
        }
        written
    }
}

/// The container of `job`: its command and args, and its environment's names.
fn container(job: &Value) -> (Vec<String>, Vec<String>) {
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|s| s.as_str().expect("a string").to_owned())
            .collect()
    };
    let mut argv = strings(&container["command"]);
    argv.extend(strings(&container["args"]));
    let env = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["name"].as_str().expect("a name").to_owned())
        .collect();
    (argv, env)
}

/// `argv` as the pod would run it here: the volumes' mount points under `pod`, the pod's
/// `$(VAR)`s filled from `env`, and segment 0's DNS name (the cluster's) as `barrier`.
fn as_here(
    argv: &[String],
    pod: &Path,
    env: &BTreeMap<&str, String>,
    barrier: &str,
) -> Vec<String> {
    argv.iter()
        .map(|arg| {
            let mut arg = arg
                .replace("/spec/", &format!("{}/spec/", pod.display()))
                .replace("/results/", &format!("{}/results/", pod.display()));
            for (name, value) in env {
                arg = arg.replace(&format!("$({name})"), value);
            }
            if arg.ends_with(":7070") && arg.starts_with("headroom-local-0.") {
                arg = barrier.to_owned();
            }
            arg
        })
        .collect()
}

/// Who the pods of `job` run as: its pod's `runAsUser` and `fsGroup`.
fn pod_user(job: &Value) -> (u32, u32) {
    let security = &job["spec"]["template"]["spec"]["securityContext"];
    let id = |key: &str| {
        security[key]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .unwrap_or_else(|| panic!("the pod's {key}: {security}"))
    };
    (id("runAsUser"), id("fsGroup"))
}

/// The binary the pods run and the user and group they run as, where this test can become
/// them (as root): the claim's folder given to the group as Kubernetes does for `fsGroup`
/// (group-owned, set-group-ID, group-writable), the binary copied where that user can run it.
/// Elsewhere the pods' commands run as this test's user, which is said.
fn become_pod_user(
    test: &str,
    job: &Value,
    pod: &Path,
    binary: &Path,
) -> (PathBuf, Option<(u32, u32)>) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (user, group) = pod_user(job);
    let me = std::fs::metadata("/proc/self").expect("this process").uid();
    if me != 0 {
        common::say(&format!(
            "{test}: the pods' commands run as user {me}, not as the pods' {user}: only root can \
             switch users here"
        ));
        return (binary.to_owned(), None);
    }
    let results = pod.join("results");
    std::os::unix::fs::chown(&results, None, Some(group)).expect("the claim's group");
    std::fs::set_permissions(&results, std::fs::Permissions::from_mode(0o2775))
        .expect("the claim's mode");
    let in_pod = pod.join("headroom");
    std::fs::copy(binary, &in_pod).expect("the image's binary, in the pod");
    (in_pod, Some((user, group)))
}

/// `binary k8s` of the local fixture, one segment, into `dir`: the manifests it wrote.
fn k8s_manifests(binary: &Path, dir: &Path) -> Manifests {
    let k8s = Command::new(binary)
        .args(["k8s", "tests/fixtures/k8s/local.toml", "--segments", "1"])
        .args(["--image", "registry.example/headroom:0.1.0", "--out"])
        .arg(dir)
        .current_dir(root())
        .output()
        .expect("headroom k8s");
    assert!(
        k8s.status.success(),
        "{}",
        String::from_utf8_lossy(&k8s.stderr)
    );
    Manifests::read(dir)
}

/// Runs `argv` (its first word `headroom`, the image's binary) in `pod`, with nothing of this
/// environment but `env`, as the pod's user where given.
fn run_in_pod(
    binary: &Path,
    argv: &[String],
    pod: &Path,
    user: Option<(u32, u32)>,
    env: &BTreeMap<&str, String>,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    assert_eq!(argv[0], "headroom", "{argv:?}");
    let mut command = Command::new(binary);
    if let Some((user, group)) = user {
        command.uid(user).gid(group);
    }
    command
        .args(&argv[1..])
        .current_dir(pod)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("the image's binary runs")
}

/// The Dockerfile's binary, built here by its line (scripts/image-binary.sh), is static and
/// runs a segment end to end from only the ConfigMap's files: `headroom k8s` writes the
/// manifests of a spec with a data file, the spec volume is laid out as the pod sees it in a
/// folder with nothing else in it, the segments' Job's command runs there (its completion index
/// 0, the barrier on loopback for the cluster's pod name) against a demo target, and the merge
/// Job's command merges its part: exactly the 100 requests the spec sends. Both as the pods'
/// user (`runAsUser`, not root), writing to a claim given to their `fsGroup`.
#[test]
#[ignore = "end-to-end layer: scripts/test end-to-end"]
fn the_image_binary_runs_a_segment_from_only_the_config_maps_files() {
    let test = "the_image_binary_runs_a_segment_from_only_the_config_maps_files";
    let binary = match super::build_image::binary() {
        Ok(binary) => binary,
        // The script's own refusal: a tool this machine cannot have (the musl target, musl-gcc).
        Err(why) => {
            common::say(&format!("skipped {test}: {why}"));
            return;
        }
    };
    let _machine = shared();
    assert!(
        super::build_image::statically_linked(&binary),
        "{} is static",
        binary.display()
    );

    let pod = std::env::temp_dir().join(format!("headroom-image-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&pod);
    let manifests_dir = pod.with_extension("manifests");
    let manifests = k8s_manifests(&binary, &manifests_dir);
    let written = manifests.write_spec_volume(&pod.join("spec"));
    assert_eq!(written.len(), 2, "the spec and its data file: {written:?}");
    std::fs::create_dir_all(pod.join("results")).expect("the claim's folder");
    let (binary, user) = become_pod_user(test, &manifests.segments, &pod, &binary);

    let (mut server, port) = start_demo_target("1055B");
    let barrier = format!("127.0.0.1:{}", free_port());
    // The pod's environment: its completion index (the Job's own variable), and the port the
    // spec names its target by.
    let (argv, env_names) = container(&manifests.segments);
    assert_eq!(env_names, ["HEADROOM_SEGMENT"]);
    let env = BTreeMap::from([
        ("HEADROOM_SEGMENT", "0".to_owned()),
        ("HEADROOM_TEST_EXTERNAL_PORT", port.to_string()),
    ]);
    let segment = run_in_pod(
        &binary,
        &as_here(&argv, &pod, &env, &barrier),
        &pod,
        user,
        &env,
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        segment.status.success(),
        "{}",
        String::from_utf8_lossy(&segment.stderr)
    );
    let (argv, _) = container(&manifests.merge);
    assert_eq!(pod_user(&manifests.merge), pod_user(&manifests.segments));
    let merge = run_in_pod(
        &binary,
        &as_here(&argv, &pod, &env, &barrier),
        &pod,
        user,
        &env,
    );
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    let results = typed(&read_results(&pod.join("results/results.json")));
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let api = scenario(run, "api");
    assert_eq!(api.requests, 100);
    assert_eq!(api.errors.total(), 0, "{:?}", api.errors);
    if let Some((user, _)) = user {
        use std::os::unix::fs::MetadataExt;
        let part = std::fs::metadata(pod.join("results/results.json")).expect("the merge");
        assert_eq!(part.uid(), user, "written by the pod's user");
    }
    assert!(leftovers("1055B").is_empty());
    let _ = std::fs::remove_dir_all(&pod);
    let _ = std::fs::remove_dir_all(&manifests_dir);
}
