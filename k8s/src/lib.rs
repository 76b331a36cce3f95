//! `headroom k8s`: the Kubernetes objects that run one spec as `n` segments on a cluster, built
//! from k8s-openapi's typed API structs so that each is a valid object of its kind.
//!
//! - a ConfigMap with the spec (and the data files it reads), mounted at `/spec`;
//! - a headless Service, so that segment 0's pod has a name the others reach its barrier at;
//! - a PersistentVolumeClaim (ReadWriteMany) where every segment writes its part;
//! - an Indexed Job, `parallelism = completions = n`, `backoffLimit: 0` (a retried segment
//!   would start again mid-run, alone), whose pod `i` runs `headroom run --segment i/n`;
//! - a second Job, applied once the first completed, that merges the parts onto the same
//!   claim.
//!
//! Every pod meets the "restricted" Pod Security Standard, which many clusters enforce: it runs
//! as the image's non-root user, with the claim's files given to that user's group (`fsGroup`),
//! no privilege escalation, no capabilities and the runtime's default seccomp profile.

#![warn(missing_docs)]

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar,
    EnvVarSource, KeyToPath, ObjectFieldSelector, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource, PodAffinityTerm, PodAntiAffinity, PodSecurityContext,
    PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile, SecurityContext, Service,
    ServicePort, ServiceSpec, Volume, VolumeMount, VolumeResourceRequirements,
    WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

mod checks;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// What the manifests are made from.
#[derive(Debug, Clone)]
pub struct Input {
    /// The bench's name (`[bench] name`): every object is `headroom-<bench>…`.
    pub bench: String,
    /// The spec's text.
    pub spec: String,
    /// The data files the spec reads, by their path relative to it, with their text.
    pub data_files: Vec<(String, String)>,
    /// Segments, one pod each.
    pub segments: u32,
    /// The container image with `headroom` on its PATH.
    pub image: String,
    /// The namespace, when not the current one.
    pub namespace: Option<String>,
    /// The claim's size (`1Gi`).
    pub storage: String,
    /// The claim's storage class, when not the cluster's default (it must offer
    /// ReadWriteMany).
    pub storage_class: Option<String>,
    /// The barrier's port on segment 0's pod.
    pub barrier_port: u16,
    /// `run --quick` in every segment.
    pub quick: bool,
    /// The CPU each pod requests and is limited to (`1`: a whole core per segment).
    pub cpu: String,
    /// The memory each pod requests and is limited to (`1Gi`).
    pub memory: String,
}

/// Why manifests cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum K8sError {
    /// A name Kubernetes would refuse.
    #[error(
        "`{0}` cannot name Kubernetes objects: a bench name for them is lower-case letters, digits and `-`, at most 40 characters, starting with a letter and ending with a letter or digit"
    )]
    Name(String),
    /// No segment, or more than a Job runs.
    #[error("--segments {0}: give 1 to 1,000 segments (one pod each)")]
    Segments(u32),
    /// An image reference a container runtime would refuse.
    #[error(
        "--image `{0}`: not an image reference (`[HOST[:PORT]/]PATH[:TAG][@sha256:HEX]`, the path in lower case: `registry.example/headroom:0.1.0`)"
    )]
    Image(String),
    /// A namespace Kubernetes would refuse.
    #[error(
        "--namespace `{0}`: a namespace is lower-case letters, digits and `-`, at most 63 characters, starting and ending with a letter or digit"
    )]
    Namespace(String),
    /// A quantity Kubernetes would refuse.
    #[error(
        "{flag} `{value}`: not a Kubernetes quantity above 0 (a number and a suffix: `1Gi`, `512Mi`, `500m`, `2`)"
    )]
    Quantity {
        /// The flag that gave it.
        flag: &'static str,
        /// What it said.
        value: String,
    },
    /// The spec and its files are over a ConfigMap's 1 MiB.
    #[error(
        "the spec and its data files are {0} bytes, over the 1 MiB a ConfigMap holds: make the data files smaller"
    )]
    TooLarge(usize),
    /// A manifest that does not read back as its type.
    #[error("{0}")]
    Shape(String),
}

/// The objects of a segmented run: applied first, and once the segments' Job completed.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    /// The spec and its data files.
    pub config_map: ConfigMap,
    /// Names segment 0's pod for the barrier.
    pub service: Service,
    /// Where the parts and the merge go.
    pub claim: PersistentVolumeClaim,
    /// The segments.
    pub segments: Job,
    /// The merge and the page, applied after `segments` completed.
    pub merge: Job,
}

/// The folder every pod reads the spec from.
const SPEC_DIR: &str = "/spec";
/// The folder on the claim the parts and the merge go to.
const RESULTS_DIR: &str = "/results";
/// The variable a segment's pod has its completion index in, from the annotation the Job
/// controller sets, declared in the container so that `$(…)` in its arguments expands.
const SEGMENT: &str = "HEADROOM_SEGMENT";

/// The ConfigMap's limit.
const CONFIG_MAP_LIMIT: usize = 1 << 20;

impl Input {
    fn name(&self) -> String {
        format!("headroom-{}", self.bench)
    }

    fn meta(&self, name: String) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: self.namespace.clone(),
            labels: Some(labels(&self.name())),
            ..ObjectMeta::default()
        }
    }

    /// `segment-0-of-3.json` … as `run --segment` writes them.
    fn parts(&self) -> Vec<String> {
        (0..self.segments)
            .map(|i| format!("{RESULTS_DIR}/segment-{i}-of-{}.json", self.segments))
            .collect()
    }
}

fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("app.kubernetes.io/name".to_owned(), name.to_owned())])
}

/// A pod's labels: the run's, and what it does (`segment`, `merge`); the Service selects the
/// segments only.
fn pod_labels(name: &str, component: &str) -> BTreeMap<String, String> {
    let mut labels = labels(name);
    labels.insert(
        "app.kubernetes.io/component".to_owned(),
        component.to_owned(),
    );
    labels
}

/// A ConfigMap key for a file's path (keys take no `/`).
fn key_of(path: &str) -> String {
    path.replace('/', "__")
}

/// The manifests of `input`'s run.
pub fn manifests(input: &Input) -> Result<Manifests, K8sError> {
    checks::bench_name(&input.bench)?;
    if !(1..=1000).contains(&input.segments) {
        return Err(K8sError::Segments(input.segments));
    }
    checks::image(&input.image)?;
    if let Some(namespace) = &input.namespace {
        checks::namespace(namespace)?;
    }
    checks::quantity("--storage", &input.storage)?;
    checks::quantity("--cpu", &input.cpu)?;
    checks::quantity("--memory", &input.memory)?;
    let size = input.spec.len()
        + input
            .data_files
            .iter()
            .map(|(path, text)| path.len() + text.len())
            .sum::<usize>();
    if size > CONFIG_MAP_LIMIT {
        return Err(K8sError::TooLarge(size));
    }
    let name = input.name();
    let mut data = BTreeMap::from([("spec.toml".to_owned(), input.spec.clone())]);
    for (path, text) in &input.data_files {
        data.insert(key_of(path), text.clone());
    }
    let config_map = ConfigMap {
        metadata: input.meta(format!("{name}-spec")),
        data: Some(data),
        ..ConfigMap::default()
    };
    let service = Service {
        metadata: input.meta(name.clone()),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            selector: Some(pod_labels(&name, "segment")),
            // Segment 0's name resolves before its pod is ready: the others wait for it.
            publish_not_ready_addresses: Some(true),
            ports: Some(vec![ServicePort {
                name: Some("barrier".to_owned()),
                port: i32::from(input.barrier_port),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    };
    let claim = PersistentVolumeClaim {
        metadata: input.meta(format!("{name}-results")),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteMany".to_owned()]),
            storage_class_name: input.storage_class.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_owned(),
                    Quantity(input.storage.clone()),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    };
    Ok(Manifests {
        config_map,
        service,
        claim,
        segments: segments_job(input),
        merge: merge_job(input),
    })
}

/// The volumes every pod mounts: the spec (its data files at their paths) and the claim.
fn volumes(input: &Input) -> (Vec<Volume>, Vec<VolumeMount>) {
    let name = input.name();
    let mut items = vec![KeyToPath {
        key: "spec.toml".to_owned(),
        path: "spec.toml".to_owned(),
        ..KeyToPath::default()
    }];
    for (path, _) in &input.data_files {
        items.push(KeyToPath {
            key: key_of(path),
            path: path.clone(),
            ..KeyToPath::default()
        });
    }
    let volumes = vec![
        Volume {
            name: "spec".to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: format!("{name}-spec"),
                items: Some(items),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: "results".to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{name}-results"),
                ..PersistentVolumeClaimVolumeSource::default()
            }),
            ..Volume::default()
        },
    ];
    let mounts = vec![
        VolumeMount {
            name: "spec".to_owned(),
            mount_path: SPEC_DIR.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        },
        VolumeMount {
            name: "results".to_owned(),
            mount_path: RESULTS_DIR.to_owned(),
            ..VolumeMount::default()
        },
    ];
    (volumes, mounts)
}

/// The user and group the pods run as: the image's (distroless `:nonroot`, `nonroot`).
pub const POD_USER: i64 = 65532;

/// A pod of the "restricted" Pod Security Standard, as the image's non-root user; the claim's
/// files are given to its group, so that it can write its part.
fn pod_security() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(POD_USER),
        run_as_group: Some(POD_USER),
        fs_group: Some(POD_USER),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The container's part of the same standard: no privilege escalation, no capabilities.
fn container_security() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    }
}

/// What a Job's pods are: how many, what they run, and what they are called.
struct Pods {
    completions: u32,
    args: Vec<String>,
    component: &'static str,
}

/// A Job of pods running `headroom` in the image, never retried; the segments serve the
/// barrier's port.
fn job(input: &Input, name: String, pods: Pods, spec: JobSpec) -> Job {
    let (volumes, mounts) = volumes(input);
    let count = i32::try_from(pods.completions).unwrap_or(i32::MAX);
    let container = Container {
        name: "headroom".to_owned(),
        image: Some(input.image.clone()),
        command: Some(vec!["headroom".to_owned()]),
        args: Some(pods.args),
        volume_mounts: Some(mounts),
        env: (pods.component == "segment").then(|| {
            vec![EnvVar {
                name: SEGMENT.to_owned(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path:
                            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                                .to_owned(),
                        ..ObjectFieldSelector::default()
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            }]
        }),
        ports: (pods.component == "segment").then(|| {
            vec![ContainerPort {
                name: Some("barrier".to_owned()),
                container_port: i32::from(input.barrier_port),
                ..ContainerPort::default()
            }]
        }),
        security_context: Some(container_security()),
        // Requests equal to limits (the Guaranteed class): quota-enforcing namespaces take the
        // pod, and a segment's generator has the core it was measured with, not what is spare.
        resources: Some(resources(input)),
        ..Container::default()
    };
    Job {
        metadata: input.meta(name),
        spec: Some(JobSpec {
            completions: Some(count),
            parallelism: Some(count),
            // A retried pod would start its share again mid-run, alone: a run fails whole.
            backoff_limit: Some(0),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels(&input.name(), pods.component)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    restart_policy: Some("Never".to_owned()),
                    volumes: Some(volumes),
                    security_context: Some(pod_security()),
                    ..spec.template.spec.unwrap_or_default()
                }),
            },
            ..spec
        }),
        ..Job::default()
    }
}

/// A pod's CPU and memory, requested and limited alike.
fn resources(input: &Input) -> ResourceRequirements {
    let both = BTreeMap::from([
        ("cpu".to_owned(), Quantity(input.cpu.clone())),
        ("memory".to_owned(), Quantity(input.memory.clone())),
    ]);
    ResourceRequirements {
        requests: Some(both.clone()),
        limits: Some(both),
        ..ResourceRequirements::default()
    }
}

/// The segments on different nodes where the cluster has them: two on one node share its
/// CPU and network, and the load they send is one node's. Preferred, not required, so that a
/// cluster of fewer nodes than segments still runs them (docs/scale-out.md).
fn spread_across_nodes(name: &str) -> Affinity {
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: PodAffinityTerm {
                        label_selector: Some(LabelSelector {
                            match_labels: Some(pod_labels(name, "segment")),
                            ..LabelSelector::default()
                        }),
                        topology_key: "kubernetes.io/hostname".to_owned(),
                        ..PodAffinityTerm::default()
                    },
                },
            ]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    }
}

/// Pod `i` of `n` runs segment `i`; segment 0's pod is `NAME-0.NAME`, where the barrier is.
fn segments_job(input: &Input) -> Job {
    let name = input.name();
    let n = input.segments;
    let mut args = vec![
        "run".to_owned(),
        format!("{SPEC_DIR}/spec.toml"),
        "--segment".to_owned(),
        // Kubernetes fills `$(VAR)` from the container's own environment: SEGMENT, the
        // pod's completion index (see `job`).
        format!("$({SEGMENT})/{n}"),
        "--barrier".to_owned(),
        format!("{name}-0.{name}:{}", input.barrier_port),
        "--out".to_owned(),
        format!("{RESULTS_DIR}/segment-$({SEGMENT})-of-{n}.json"),
    ];
    if input.quick {
        args.push("--quick".to_owned());
    }
    let spec = JobSpec {
        completion_mode: Some("Indexed".to_owned()),
        template: PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                // With the headless Service of the same name, pod `i` is `NAME-i.NAME`.
                subdomain: Some(name.clone()),
                affinity: Some(spread_across_nodes(&name)),
                ..PodSpec::default()
            }),
        },
        ..JobSpec::default()
    };
    let pods = Pods {
        completions: n,
        args,
        component: "segment",
    };
    job(input, name, pods, spec)
}

/// One pod: the parts merged onto the claim (the page is rendered where they are fetched to).
fn merge_job(input: &Input) -> Job {
    let mut args = vec!["merge".to_owned()];
    args.extend(input.parts());
    args.extend(["--out".to_owned(), format!("{RESULTS_DIR}/results.json")]);
    let pods = Pods {
        completions: 1,
        args,
        component: "merge",
    };
    job(
        input,
        format!("{}-merge", input.name()),
        pods,
        JobSpec::default(),
    )
}

impl Manifests {
    /// The objects applied first (ConfigMap, Service, claim, segments), then the merge, each
    /// as a `List` `kubectl apply -f` takes.
    pub fn to_json(&self) -> Result<(Value, Value), K8sError> {
        let value = |object: Result<Value, serde_json::Error>| {
            object.map_err(|e| K8sError::Shape(e.to_string()))
        };
        let first = vec![
            value(serde_json::to_value(&self.config_map))?,
            value(serde_json::to_value(&self.service))?,
            value(serde_json::to_value(&self.claim))?,
            value(serde_json::to_value(&self.segments))?,
        ];
        let then = vec![value(serde_json::to_value(&self.merge))?];
        Ok((list(first), list(then)))
    }

    /// The manifests read back from `to_json`'s two lists, each object into its type.
    pub fn from_json(first: &Value, then: &Value) -> Result<Manifests, K8sError> {
        let items = |list: &Value| -> Result<Vec<Value>, K8sError> {
            list.get("items")
                .and_then(Value::as_array)
                .cloned()
                .ok_or_else(|| K8sError::Shape("not a List of items".to_owned()))
        };
        let typed = |item: Option<&Value>, kind: &str| -> Result<Value, K8sError> {
            let item = item.ok_or_else(|| K8sError::Shape(format!("no {kind}")))?;
            if item.get("kind").and_then(Value::as_str) != Some(kind) {
                return Err(K8sError::Shape(format!("expected a {kind}: {item}")));
            }
            Ok(item.clone())
        };
        let first = items(first)?;
        let then = items(then)?;
        Ok(Manifests {
            config_map: read(typed(first.first(), "ConfigMap")?)?,
            service: read(typed(first.get(1), "Service")?)?,
            claim: read(typed(first.get(2), "PersistentVolumeClaim")?)?,
            segments: read(typed(first.get(3), "Job")?)?,
            merge: read(typed(then.first(), "Job")?)?,
        })
    }
}

/// `value` as a `T`, or why not.
fn read<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, K8sError> {
    serde_json::from_value(value).map_err(|e| K8sError::Shape(e.to_string()))
}

fn list(items: Vec<Value>) -> Value {
    serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items })
}

#[cfg(test)]
mod tests;
