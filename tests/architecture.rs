//! The code map's invariants, checked on the source (ARCHITECTURE.md): no module cycles inside
//! a crate, no Rust file a reader cannot hold (over 600 lines: sources, tests and benches
//! alike), no crate's code or tests reaching into another's folder, and only the load
//! generator and the orchestration reach a network crate (`cargo metadata`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate's `src`, the binary's included.
const SOURCES: [&str; 14] = [
    "spec/src",
    "prices/src",
    "compiler/src",
    "results-file/src",
    "figures/src",
    "load/src",
    "runner/src",
    "pricing/src",
    "compare/src",
    "templates/src",
    "demo/src",
    "k8s/src",
    "test-support/src",
    "src",
];

/// A crate added to the workspace is checked too.
#[test]
fn every_workspace_member_is_checked() {
    let manifest = std::fs::read_to_string(common::root().join("Cargo.toml")).expect("Cargo.toml");
    let manifest: toml::Table = toml::from_str(&manifest).expect("a TOML manifest");
    let members = manifest["workspace"]["members"]
        .as_array()
        .expect("workspace members");
    for member in members {
        let member = member.as_str().expect("a path");
        assert!(
            SOURCES.contains(&format!("{member}/src").as_str()),
            "{member} is a workspace member: add `{member}/src` to SOURCES"
        );
    }
}

/// The longest a Rust file may be, a test's as a source's: a reader holds it whole.
const MOST_LINES: usize = 600;

/// Every Rust file of the repository (sources, tests, benches, fuzz targets), outside what
/// Cargo builds (`target/`) and Git keeps.
fn every_rust_file() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !matches!(name, "target" | ".git") {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(common::root(), &mut files);
    files
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`run` for `src/run/once.rs`); `None` for the
/// crate root.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

/// The top-level modules a source names as `crate::name`, or inside a brace import
/// (`use crate::{a, b::c}`), its tests left out.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut used = BTreeSet::new();
    for (at, mark) in code.match_indices("crate::") {
        let rest = &code[at + mark.len()..];
        match rest.strip_prefix('{') {
            Some(group) => used.extend(brace_items(group)),
            None => {
                used.insert(identifier(rest));
            }
        }
    }
    used.remove("");
    used
}

/// The first name of each item of a brace import whose `{` is already read: `a, b::{c, d}}`
/// gives `a` and `b`.
fn brace_items(group: &str) -> Vec<String> {
    let mut items = vec![identifier(group.trim_start())];
    let mut depth = 0;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => items.push(identifier(group[at + 1..].trim_start())),
            _ => {}
        }
    }
    items
}

/// The identifier `text` starts with (empty when it starts with none).
fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// A cycle through `start` in `graph`, as the modules on it, if there is one.
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((module, path)) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut cycles = Vec::new();
    for src in SOURCES {
        let src = common::root().join(src);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        // A `tests.rs` is a test module (`#[cfg(test)] mod tests;`): tests may reach anywhere.
        for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
            let Some(module) = top_module(&src, file) else {
                continue;
            };
            let text = std::fs::read_to_string(file).expect("a source file");
            let edges = graph.entry(module.clone()).or_default();
            edges.extend(uses(&text).into_iter().filter(|used| *used != module));
        }
        for module in graph.keys() {
            if let Some(cycle) = cycle_through(&graph, module) {
                cycles.push(format!("{}: {}", src.display(), cycle.join(" → ")));
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn no_rust_file_is_over_600_lines() {
    let files = every_rust_file();
    let mut long = Vec::new();
    for file in &files {
        let lines = std::fs::read_to_string(file)
            .expect("a Rust file")
            .lines()
            .count();
        if lines > MOST_LINES {
            long.push(format!("{}: {lines} lines", file.display()));
        }
    }
    // The walk found the sources and the tests: a wrong root would pass with nothing counted.
    let tests = files
        .iter()
        .filter(|f| f.starts_with(common::root().join("tests")));
    assert!(files.len() > 200, "only {} Rust files found", files.len());
    assert!(tests.count() > 20, "the tests were not walked");
    assert!(
        long.is_empty(),
        "over {MOST_LINES} lines; split by concept:\n{}",
        long.join("\n")
    );
}

/// A library crate's code and tests reach shared fixtures through `headroom-test-support`,
/// never by a path up and into the binary's `tests/` (`../../tests/fixtures/…`): a crate's
/// tests run on what the crate and its dependencies hold.
#[test]
fn no_crate_reads_another_crates_folder() {
    let root = common::root();
    let the_binarys_own =
        |file: &Path| file.starts_with(root.join("src")) || file.starts_with(root.join("tests"));
    let mut reaching = Vec::new();
    for file in every_rust_file()
        .into_iter()
        .filter(|f| !the_binarys_own(f))
    {
        let text = std::fs::read_to_string(&file).expect("a Rust file");
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if reaches_up_into_tests(line) {
                reaching.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        reaching.is_empty(),
        "reads through `../tests`; use headroom_test_support::fixtures:\n{}",
        reaching.join("\n")
    );
}

/// Whether `line` names a path that climbs out of its crate into a `tests` folder.
fn reaches_up_into_tests(line: &str) -> bool {
    line.contains("../tests/") || line.contains("..\\tests\\")
}

#[test]
fn a_path_up_into_tests_is_found() {
    assert!(reaches_up_into_tests(
        r#"include_str!("../../tests/fixtures/render/relay-results.json")"#
    ));
    assert!(reaches_up_into_tests(
        r#"format!("{}/../tests/fixtures/points/{path}", env!("CARGO_MANIFEST_DIR"))"#
    ));
    assert!(!reaches_up_into_tests(
        r#"headroom_test_support::fixtures::text("k6/vus-20.json")"#
    ));
}

/// The check itself: a cycle is found, and a chain is not one.
#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            graph
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
        }
        graph
    };
    let cyclic = graph(&[("run", "rooms"), ("rooms", "gates"), ("gates", "run")]);
    assert_eq!(
        cycle_through(&cyclic, "run"),
        Some(vec![
            "run".to_owned(),
            "rooms".to_owned(),
            "gates".to_owned(),
            "run".to_owned()
        ])
    );
    let chain = graph(&[("run", "rooms"), ("rooms", "gates")]);
    assert_eq!(cycle_through(&chain, "run"), None);
    assert_eq!(
        uses(
            "use crate::gates::Gates;\nfn f() { crate::load::histogram(); }\n#[cfg(test)]\nuse crate::run;"
        ),
        BTreeSet::from(["gates".to_owned(), "load".to_owned()])
    );
    // Issue 31: a brace import names every module in it, nested ones too.
    let braced = uses(
        "use crate::{run, rooms::{peer, timeline}, gates::Gates};\nuse crate::{\n    load,\n};",
    );
    assert_eq!(
        braced,
        BTreeSet::from([
            "gates".to_owned(),
            "load".to_owned(),
            "rooms".to_owned(),
            "run".to_owned()
        ])
    );
    // So a cycle made of brace imports is found.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("run".to_owned(), uses("use crate::{rooms, http};"));
    graph.insert("rooms".to_owned(), uses("use crate::{run::Outcome};"));
    assert_eq!(
        cycle_through(&graph, "run"),
        Some(vec!["run".to_owned(), "rooms".to_owned(), "run".to_owned()])
    );
}

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
    let mut found = Vec::new();
    for member in members
        .iter()
        .filter(|m| !MAY_OPEN_SOCKETS.contains(&m.as_str()))
    {
        let mut seen = BTreeSet::new();
        let mut stack = vec![vec![member.clone()]];
        while let Some(path) = stack.pop() {
            let last = path.last().map(String::as_str).unwrap_or_default();
            for next in edges.get(last).into_iter().flatten() {
                let mut longer = path.clone();
                longer.push(next.clone());
                if NETWORK.contains(&next.as_str()) || MAY_OPEN_SOCKETS.contains(&next.as_str()) {
                    found.push(longer.join(" → "));
                } else if seen.insert(next.clone()) {
                    stack.push(longer);
                }
            }
        }
    }
    found
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
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
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
