//! The crates' dependency graph, from `cargo metadata`: which crates may reach the network,
//! and which must not compile the validator.

use std::collections::{BTreeMap, BTreeSet};

use crate::common;

/// The crates that may open sockets to a target: the load generator and the orchestration,
/// and the binary that runs them. The demo target is the server under test, not a stage; the
/// test support's hostile servers listen on loopback for the tests, and no crate depends on
/// it but as a dev-dependency (checked below).
const MAY_OPEN_SOCKETS: [&str; 5] = [
    "headroom-load",
    "headroom-runner",
    "headroom",
    "headroom-demo",
    "headroom-test-support",
];

/// Crates that open sockets or run an async network runtime.
const NETWORK: [&str; 11] = [
    "tokio",
    "mio",
    "socket2",
    "hyper",
    "hyper-util",
    "rustls",
    "tokio-rustls",
    "tokio-tungstenite",
    "tungstenite",
    "axum",
    "tokio-postgres",
];

/// Each package's normal (not dev, not build) dependencies, by name.
type Edges = BTreeMap<String, BTreeSet<String>>;

/// The paths by which a workspace crate outside [`MAY_OPEN_SOCKETS`] reaches a network crate
/// or a crate that may open sockets: `headroom-figures → headroom-runner`.
fn forbidden_edges(edges: &Edges, members: &[String]) -> Vec<String> {
    members
        .iter()
        .filter(|m| !MAY_OPEN_SOCKETS.contains(&m.as_str()))
        .flat_map(|member| {
            paths_to(edges, member, |next| {
                NETWORK.contains(&next) || MAY_OPEN_SOCKETS.contains(&next)
            })
        })
        .collect()
}

/// The paths by which `from` reaches, through its normal dependencies however far down, a
/// package `wanted` picks out; each ends at the first such package.
fn paths_to(edges: &Edges, from: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![from.to_owned()]];
    while let Some(path) = stack.pop() {
        let last = path.last().map(String::as_str).unwrap_or_default();
        for next in edges.get(last).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            if wanted(next) {
                found.push(longer.join(" → "));
            } else if seen.insert(next.clone()) {
                stack.push(longer);
            }
        }
    }
    found
}

/// The crates that read the run matrix but must not compile the validator: they get its
/// types from `headroom-matrix`.
const MATRIX_READERS: [&str; 2] = ["headroom-results", "headroom-load"];

/// Issue 44: the results file and the load generator read the run matrix's types from
/// `headroom-matrix`; neither compiles `headroom-compiler`, however far down.
#[test]
fn readers_of_the_matrix_do_not_compile_the_validator() {
    let (edges, _) = dependency_edges();
    for reader in MATRIX_READERS {
        assert!(
            edges[reader].contains("headroom-matrix"),
            "{reader} reads the matrix's types: {:?}",
            edges[reader]
        );
        let paths = paths_to(&edges, reader, |next| next == "headroom-compiler");
        assert!(
            paths.is_empty(),
            "{reader} compiles the validator:\n{}",
            paths.join("\n")
        );
    }
}

/// The check itself: a reader that reaches the compiler through another crate is found.
#[test]
fn a_reader_reaching_the_validator_is_found() {
    let mut edges = Edges::new();
    for (from, to) in [
        ("headroom-load", "headroom-results"),
        ("headroom-results", "headroom-matrix"),
        ("headroom-results", "headroom-figures"),
        ("headroom-figures", "headroom-compiler"),
    ] {
        edges
            .entry(from.to_owned())
            .or_default()
            .insert(to.to_owned());
    }
    assert_eq!(
        paths_to(&edges, "headroom-load", |next| next == "headroom-compiler"),
        ["headroom-load → headroom-results → headroom-figures → headroom-compiler"]
    );
    assert!(
        paths_to(&edges, "headroom-matrix", |next| next
            == "headroom-compiler")
        .is_empty()
    );
}

/// The workspace's members and every package's normal dependencies, from `cargo metadata`
/// (this machine's platform, offline: the build fetched what it needs).
fn dependency_edges() -> (Edges, Vec<String>) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let host = version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc names its host");
    // Without --offline: metadata reads every package's manifest, and a fresh machine's build
    // fetches only those of its own platform.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", host])
        .current_dir(common::root())
        .output()
        .expect("cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let mut edges = Edges::new();
    for node in metadata["resolve"]["nodes"].as_array().expect("nodes") {
        let name = names[node["id"].as_str().expect("an id")];
        let normal = node["deps"].as_array().into_iter().flatten().filter(|dep| {
            dep["dep_kinds"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k["kind"].is_null()))
        });
        edges
            .entry(name.to_owned())
            .or_default()
            .extend(normal.filter_map(|dep| dep["pkg"].as_str().map(|id| names[id].to_owned())));
    }
    let members = metadata["workspace_members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|id| id.as_str().map(|id| names[id].to_owned()))
        .collect();
    (edges, members)
}

/// Issue 31: only the load generator and the orchestration open sockets to a target; the
/// verdicts and merge (`headroom-figures`), the planner, the page and the rest reach no
/// network crate, however far down.
#[test]
fn only_the_load_crate_and_the_orchestration_open_sockets() {
    let (edges, members) = dependency_edges();
    assert!(
        members.iter().any(|m| m == "headroom-figures"),
        "{members:?}"
    );
    assert!(
        edges["headroom-load"].contains("tokio"),
        "the load crate's own edges were read"
    );
    let forbidden = forbidden_edges(&edges, &members);
    assert!(
        forbidden.is_empty(),
        "crates that may not open sockets reach ones that do:\n{}",
        forbidden.join("\n")
    );
    let shipping_tests: Vec<&String> = edges
        .iter()
        .filter(|(_, deps)| deps.contains("headroom-test-support"))
        .map(|(crate_, _)| crate_)
        .collect();
    assert!(
        shipping_tests.is_empty(),
        "the test support is a dev-dependency only: {shipping_tests:?}"
    );
}

/// The check itself: an edge from a pure crate to a network crate, direct or through
/// another, is found; the load crate's own is allowed.
#[test]
fn a_forbidden_edge_is_found() {
    let edges = |list: &[(&str, &str)]| {
        let mut edges = Edges::new();
        for (from, to) in list {
            edges
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
        }
        edges
    };
    let members = ["headroom-figures", "headroom-load", "headroom-compare"].map(str::to_owned);
    let clean = edges(&[
        ("headroom-figures", "headroom-results"),
        ("headroom-load", "tokio"),
        ("headroom-compare", "headroom-figures"),
    ]);
    assert!(forbidden_edges(&clean, &members).is_empty());
    let added = edges(&[
        ("headroom-figures", "headroom-results"),
        ("headroom-results", "hyper"),
        ("headroom-load", "tokio"),
        ("headroom-compare", "headroom-load"),
    ]);
    assert_eq!(
        forbidden_edges(&added, &members),
        [
            "headroom-figures → headroom-results → hyper",
            "headroom-compare → headroom-load"
        ]
    );
}
