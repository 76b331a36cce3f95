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
