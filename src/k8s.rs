//! `headroom k8s`: the Kubernetes manifests that run a spec as segments on a cluster (an
//! Indexed Job, its barrier's Service, the spec's ConfigMap, a claim for the parts) and the
//! Job that merges them.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use headroom_runner::split::{Split, unsplittable};

use crate::exit;

/// The flags of `headroom k8s`.
#[derive(clap::Args)]
pub struct K8sArgs {
    /// The spec to run on the cluster; its target runs there already (`url` in [target]).
    spec: PathBuf,
    /// Segments, one pod each (1: the whole load from one pod on the cluster, beside the
    /// service it loads).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    segments: u32,
    /// The container image with `headroom` on its PATH.
    #[arg(long)]
    image: String,
    /// The namespace of every object [default: kubectl's current one].
    #[arg(long)]
    namespace: Option<String>,
    /// The size of the claim the parts go to.
    #[arg(long, default_value = "1Gi")]
    storage: String,
    /// The claim's storage class [default: the cluster's]; it must offer ReadWriteMany.
    #[arg(long)]
    storage_class: Option<String>,
    /// The barrier's port on segment 0's pod.
    #[arg(long, default_value_t = 7070, value_parser = clap::value_parser!(u16).range(1..))]
    barrier_port: u16,
    /// The CPU each pod requests and is limited to (a Kubernetes quantity: `1`, `500m`). A
    /// whole core per segment by default: a generator given less is marked bound.
    #[arg(long, default_value = "1")]
    cpu: String,
    /// The memory each pod requests and is limited to (`1Gi`, `512Mi`).
    #[arg(long, default_value = "1Gi")]
    memory: String,
    /// `run --quick` in every segment.
    #[arg(long)]
    quick: bool,
    /// Where the manifests go [default: k8s/<bench>/]: segments.json, then merge.json.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: K8sArgs, renderer: &annotate_snippets::Renderer) -> Result<u8> {
    let Some(compiled) = crate::compile_for_use(&args.spec, Some(renderer))? else {
        return Ok(exit::USAGE);
    };
    let Some(plan) = &compiled.compilation.matrix else {
        return Ok(exit::USAGE);
    };
    refuse_unrunnable(&args, plan)?;
    let spec_dir = args
        .spec
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let data_files = data_files(spec_dir, &compiled.source)?;
    let input = headroom_k8s::Input {
        bench: plan.bench.name.clone(),
        spec: compiled.source.clone(),
        data_files,
        segments: args.segments,
        image: args.image.clone(),
        namespace: args.namespace.clone(),
        storage: args.storage.clone(),
        storage_class: args.storage_class.clone(),
        barrier_port: args.barrier_port,
        quick: args.quick,
        cpu: args.cpu.clone(),
        memory: args.memory.clone(),
    };
    let manifests = headroom_k8s::manifests(&input)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.spec.display()))?;
    let (segments, merge) = manifests
        .to_json()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.spec.display()))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("k8s").join(&plan.bench.name));
    let paths = claim_outputs(&args.spec, spec_dir, &compiled.source, &out)?;
    let name = format!("headroom-{}", plan.bench.name);
    let in_namespace = args
        .namespace
        .as_ref()
        .map_or(String::new(), |namespace| format!(" -n {namespace}"));
    for (claimed, list) in paths.iter().zip([&segments, &merge]) {
        let text = serde_json::to_string_pretty(list)? + "\n";
        crate::outputs::write(claimed, &text)
            .with_context(|| format!("cannot write {}", claimed.path.display()))?;
    }
    println!(
        "wrote {dir}/segments.json and {dir}/merge.json ({n} segments)\n\n\
         kubectl apply -f {dir}/segments.json\n\
         kubectl wait{in_namespace} --for=condition=complete --timeout=24h job/{name}\n\
         kubectl apply -f {dir}/merge.json\n\
         kubectl wait{in_namespace} --for=condition=complete --timeout=1h job/{name}-merge\n\n\
         The parts and results.json are on the claim {name}-results (docs/scale-out.md says how to copy them out).",
        dir = out.display(),
        n = args.segments,
    );
    Ok(exit::OK)
}

/// What every segment would refuse, said before an image is built and pushed for pods that
/// can only exit 1: a target headroom would start (a pod runs headroom, not the server: the
/// segments load a service on the cluster), or a run that cannot be split (the pods always
/// meet at a barrier; none runs `--check`).
fn refuse_unrunnable(args: &K8sArgs, plan: &headroom_matrix::RunMatrix) -> Result<()> {
    if plan.target.command.is_some() || !plan.target.services.is_empty() {
        bail!(
            "{}: the segments load a service that runs on the cluster already: set `url` in [target] to its address (and `allow_hosts` to its host), not a `command`",
            args.spec.display()
        );
    }
    let split = Split {
        segments: u64::from(args.segments),
        barrier: true,
        check: false,
    };
    if let Some(why) = unsplittable(plan, &plan.phases, split) {
        bail!("{}: {why}", args.spec.display());
    }
    Ok(())
}

/// The data files the spec reads, by the name it gives them, with their text.
fn data_files(spec_dir: &std::path::Path, source: &str) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for file in headroom_compiler::data_file_references(source) {
        let text = std::fs::read_to_string(spec_dir.join(&file))
            .with_context(|| format!("cannot read the data file `{file}` the spec reads"))?;
        files.push((file, text));
    }
    Ok(files)
}

/// The two manifest lists' paths in `out`, claimed: a list replaces one headroom wrote, never
/// the spec, a data file or a file of anyone else's (name another --out for those).
fn claim_outputs(
    spec: &std::path::Path,
    spec_dir: &std::path::Path,
    source: &str,
    out: &std::path::Path,
) -> Result<Vec<crate::outputs::Claimed>> {
    let mut outputs = crate::outputs::Outputs::new(false);
    outputs.input(spec, "the spec");
    for file in headroom_compiler::data_file_references(source) {
        outputs.input(&spec_dir.join(&file), "a data file the spec reads");
    }
    let mut paths = Vec::new();
    for file in ["segments.json", "merge.json"] {
        paths.push(outputs.claim(&out.join(file), "--out", crate::outputs::Output::Manifests)?);
    }
    Ok(paths)
}
