use super::*;

fn input() -> Input {
    Input {
        bench: "chat".to_owned(),
        spec: "[bench]\nname = \"chat\"\n".to_owned(),
        data_files: vec![(
            "data/users.csv".to_owned(),
            "email\nada@example.com\n".to_owned(),
        )],
        segments: 3,
        image: "registry.example/headroom:0.1.0".to_owned(),
        namespace: Some("load".to_owned()),
        storage: "1Gi".to_owned(),
        storage_class: None,
        barrier_port: 7070,
        quick: false,
        cpu: "1".to_owned(),
        memory: "1Gi".to_owned(),
    }
}

/// Issue 18, item 4: the objects written read back into their types, equal to what was made.
#[test]
fn the_manifests_read_back_into_their_types() {
    let made = manifests(&input()).expect("manifests");
    let (first, then) = made.to_json().expect("json");
    let read = Manifests::from_json(&first, &then).expect("typed again");
    assert_eq!(read, made);
}

/// An Indexed Job of three pods never retried, each its segment, meeting at pod 0's barrier,
/// which the headless Service names; the merge reads the three parts.
#[test]
fn each_pod_runs_its_segment_and_meets_at_pod_zero() {
    let made = manifests(&input()).expect("manifests");
    let spec = made.segments.spec.as_ref().expect("a job spec");
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(3), Some(3)));
    assert_eq!(spec.backoff_limit, Some(0));
    let pod = spec.template.spec.as_ref().expect("a pod spec");
    assert_eq!(pod.subdomain.as_deref(), Some("headroom-chat"));
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let env = pod.containers[0].env.as_ref().expect("env");
    let index = env[0]
        .value_from
        .as_ref()
        .and_then(|v| v.field_ref.as_ref())
        .expect("a field");
    assert_eq!(env[0].name, "HEADROOM_SEGMENT");
    assert_eq!(
        index.field_path,
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    let args = pod.containers[0].args.as_ref().expect("args");
    let joined = args.join(" ");
    assert!(joined.starts_with("run /spec/spec.toml --segment $(HEADROOM_SEGMENT)/3 --barrier headroom-chat-0.headroom-chat:7070 --out /results/segment-$(HEADROOM_SEGMENT)-of-3.json"), "{joined}");
    let service = made.service.spec.as_ref().expect("a service spec");
    assert_eq!(service.cluster_ip.as_deref(), Some("None"));
    assert_eq!(service.publish_not_ready_addresses, Some(true));
    let merge = made.merge.spec.as_ref().expect("a job spec");
    let merge_args = merge.template.spec.as_ref().expect("pod").containers[0]
        .args
        .as_ref()
        .expect("args")
        .join(" ");
    assert_eq!(
        merge_args,
        "merge /results/segment-0-of-3.json /results/segment-1-of-3.json /results/segment-2-of-3.json --out /results/results.json"
    );
    let data = made.config_map.data.as_ref().expect("data");
    assert!(data.contains_key("spec.toml") && data.contains_key("data__users.csv"));
    assert_eq!(made.config_map.metadata.namespace.as_deref(), Some("load"));
}

#[test]
fn names_counts_and_sizes_kubernetes_would_refuse_are_refused() {
    let bad = Input {
        bench: "Chat_1".to_owned(),
        ..input()
    };
    assert_eq!(manifests(&bad), Err(K8sError::Name("Chat_1".to_owned())));
    for segments in [0, 1001] {
        let wrong = Input {
            segments,
            ..input()
        };
        assert_eq!(manifests(&wrong), Err(K8sError::Segments(segments)));
    }
    // One segment is the whole load from one pod on the cluster.
    let one = Input {
        segments: 1,
        ..input()
    };
    assert!(manifests(&one).is_ok());
    let big = Input {
        data_files: vec![("big.csv".to_owned(), "x".repeat(1 << 20))],
        ..input()
    };
    assert!(matches!(manifests(&big), Err(K8sError::TooLarge(_))));
}

/// Both Jobs' pods meet the "restricted" Pod Security Standard (Kubernetes' own list: a
/// non-root user, no privilege escalation, every capability dropped, the runtime's seccomp
/// profile), as the image's user, the claim's files given to its group.
#[test]
fn every_pod_is_restricted_and_runs_as_the_images_user() {
    let made = manifests(&input()).expect("manifests");
    for job in [&made.segments, &made.merge] {
        let pod = job
            .spec
            .as_ref()
            .and_then(|spec| spec.template.spec.as_ref())
            .expect("a pod spec");
        let security = pod
            .security_context
            .as_ref()
            .expect("a pod security context");
        assert_eq!(security.run_as_non_root, Some(true));
        assert_eq!(
            (
                security.run_as_user,
                security.run_as_group,
                security.fs_group
            ),
            (Some(POD_USER), Some(POD_USER), Some(POD_USER))
        );
        let seccomp = security
            .seccomp_profile
            .as_ref()
            .expect("a seccomp profile");
        assert_eq!(seccomp.type_, "RuntimeDefault");
        for container in &pod.containers {
            let security = container
                .security_context
                .as_ref()
                .expect("a container security context");
            assert_eq!(security.allow_privilege_escalation, Some(false));
            assert_eq!(security.privileged, None);
            let dropped = security
                .capabilities
                .as_ref()
                .and_then(|c| c.drop.as_deref())
                .expect("capabilities dropped");
            assert_eq!(dropped, ["ALL"]);
        }
    }
}

/// Issue 42: what a cluster would refuse is refused here, and every pod asks for what it is
/// limited to (Guaranteed), the segments spread across nodes where they can be.
#[test]
fn pods_ask_for_their_resources_and_spread_across_nodes() {
    for (wrong, error) in [
        (
            Input {
                image: String::new(),
                ..input()
            },
            K8sError::Image(String::new()),
        ),
        (
            Input {
                namespace: Some("Load".to_owned()),
                ..input()
            },
            K8sError::Namespace("Load".to_owned()),
        ),
        (
            Input {
                storage: "abc".to_owned(),
                ..input()
            },
            K8sError::Quantity {
                flag: "--storage",
                value: "abc".to_owned(),
            },
        ),
        (
            Input {
                bench: "chat-".to_owned(),
                ..input()
            },
            K8sError::Name("chat-".to_owned()),
        ),
    ] {
        assert_eq!(manifests(&wrong), Err(error));
    }
    let made = manifests(&input()).expect("manifests");
    for job in [&made.segments, &made.merge] {
        let pod = job
            .spec
            .as_ref()
            .and_then(|spec| spec.template.spec.as_ref())
            .expect("a pod spec");
        let resources = pod.containers[0].resources.as_ref().expect("resources");
        let requests = resources.requests.as_ref().expect("requests");
        assert_eq!(requests.get("cpu").map(|q| q.0.as_str()), Some("1"));
        assert_eq!(requests.get("memory").map(|q| q.0.as_str()), Some("1Gi"));
        assert_eq!(resources.limits.as_ref(), Some(requests));
    }
    let pod = made
        .segments
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref())
        .expect("a pod spec");
    let terms = pod
        .affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .expect("anti-affinity");
    assert_eq!(
        terms[0].pod_affinity_term.topology_key,
        "kubernetes.io/hostname"
    );
    let selector = terms[0]
        .pod_affinity_term
        .label_selector
        .as_ref()
        .and_then(|s| s.match_labels.as_ref())
        .expect("labels");
    assert_eq!(
        selector
            .get("app.kubernetes.io/component")
            .map(String::as_str),
        Some("segment")
    );
}
