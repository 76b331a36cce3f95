//! A crate's modules and the paths between them, read from the source: which module names
//! which (through `crate::`, `super::`, `self::` or a child declared with `mod`), so a cycle
//! between any two modules, nested ones too, is found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module by its path inside its crate: `["run", "once"]` for `src/run/once.rs`.
pub type Module = Vec<String>;

/// Which modules each module names, the crate root left out (it is the crate's face: its
/// re-exports are what the crate offers, and every module may name what it offers).
pub type Graph = BTreeMap<Module, BTreeSet<Module>>;

/// The module a file under `src` is (`None` for a test module: a `tests.rs` or a file under
/// a `tests` folder).
pub fn module_of(src: &Path, file: &Path) -> Option<Module> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    if parts.iter().any(|p| p == "tests") || last == "tests.rs" {
        return None;
    }
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_owned()),
    }
    Some(parts)
}

/// The code a module runs: its tests cut off, comments and its re-exports (`pub use …;`,
/// the module's face, followed by [`names`] to where each name lives) left out.
pub fn production_code(text: &str) -> String {
    split_reexports(text).0
}

/// A module's code without its tests and comments, split into what it runs and its
/// re-export statements.
fn split_reexports(text: &str) -> (String, Vec<String>) {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let code: String = code
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut kept = String::new();
    let mut statements = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = next_reexport(rest) {
        kept.push_str(&rest[..at]);
        let end = rest[at..].find(';').map_or(rest.len(), |end| at + end + 1);
        statements.push(rest[at..end].to_owned());
        rest = &rest[end..];
    }
    kept.push_str(rest);
    (kept, statements)
}

/// Where each name a module re-exports lives: `pub use expansion::expand;` in `matrix`
/// maps `expand` to `matrix::expansion`.
/// A name from outside the crate (`pub use headroom_results::histogram::new as histogram;`)
/// maps to `None`: it leads to no module here.
pub type Reexports = BTreeMap<Module, BTreeMap<String, Option<Module>>>;

/// The names a module re-exports, each with the module of this crate it comes from (`None`
/// for one from another crate).
pub fn reexports(
    module: &Module,
    text: &str,
    known: &BTreeSet<Module>,
) -> BTreeMap<String, Option<Module>> {
    let (code, statements) = split_reexports(text);
    let children = declared_children(&code);
    let mut names = BTreeMap::new();
    for statement in statements {
        let Some(at) = statement.find("use ") else {
            continue;
        };
        let path = statement[at + "use ".len()..].trim_end_matches(';').trim();
        for segments in expand(path) {
            let first = segments.first().map(String::as_str).unwrap_or_default();
            let local = matches!(first, "crate" | "super" | "self") || children.contains(first);
            let alias = path.split_once(" as ").filter(|_| !path.contains('{'));
            let name = alias.map_or_else(|| segments.last().cloned(), |(_, a)| Some(identifier(a)));
            if let Some(name) = name.filter(|_| !local) {
                names.insert(name, None);
            }
        }
        for (root, segments) in rooted_paths(path, &children) {
            let Some(name) = segments.last().cloned() else {
                continue;
            };
            let mut full = base(module, root);
            full.extend(segments);
            if !known.contains(&full) {
                full.pop();
            }
            while !full.is_empty() && !known.contains(&full) {
                full.pop();
            }
            names.insert(name, Some(full));
        }
    }
    names
}

/// The module a path's root names from `module`.
fn base(module: &Module, root: Root) -> Module {
    match root {
        Root::Crate => Vec::new(),
        Root::Up(up) => module[..module.len().saturating_sub(up)].to_vec(),
        Root::Here => module.clone(),
    }
}

/// Where the next `pub use` or `pub(…) use` statement starts.
fn next_reexport(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find("pub") {
        let at = from + found;
        let after = text[at + 3..].trim_start();
        let after = match after.strip_prefix('(') {
            Some(scoped) => scoped
                .split_once(')')
                .map_or("", |(_, rest)| rest.trim_start()),
            None => after,
        };
        let starts_word = at == 0 || !is_identifier_char(text[..at].chars().last());
        if starts_word && after.starts_with("use ") {
            return Some(at);
        }
        from = at + 3;
    }
    None
}

fn is_identifier_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where a path starts: the crate root, `n` levels up (`super::` `n` times) or the module
/// itself (`self::`, or a child it declares).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Root {
    Crate,
    Up(usize),
    Here,
}

/// Every path the code names from a module root, as its segments, brace groups expanded:
/// `use super::{a, b::{c, d}}` gives `[Up(1), a]`, `[Up(1), b, c]` and `[Up(1), b, d]`.
fn rooted_paths(code: &str, children: &BTreeSet<String>) -> Vec<(Root, Vec<String>)> {
    let mut paths = Vec::new();
    let mut at = 0;
    while let Some(c) = code[at..].chars().next() {
        if !(c.is_ascii_alphabetic() || c == '_') {
            at += c.len_utf8();
            continue;
        }
        let rest = &code[at..];
        let word = identifier(rest);
        let fresh = !is_identifier_char(code[..at].chars().last()) && !code[..at].ends_with("::");
        if let Some((root, tail)) = root_of(rest, &word, children).filter(|_| fresh) {
            paths.extend(expand(tail).into_iter().map(|segments| (root, segments)));
        }
        at += word.len();
    }
    paths
}

/// The root a path starting at `rest` (whose first word is `word`) is named from, and the
/// rest of the path after it.
fn root_of<'a>(rest: &'a str, word: &str, children: &BTreeSet<String>) -> Option<(Root, &'a str)> {
    match word {
        "crate" => rest.strip_prefix("crate::").map(|tail| (Root::Crate, tail)),
        "self" => rest.strip_prefix("self::").map(|tail| (Root::Here, tail)),
        "super" => {
            let mut up = 0;
            let mut tail = rest;
            while let Some(more) = tail.strip_prefix("super::") {
                up += 1;
                tail = more;
            }
            (up > 0).then_some((Root::Up(up), tail))
        }
        child if children.contains(child) && rest[word.len()..].starts_with("::") => {
            Some((Root::Here, rest))
        }
        _ => None,
    }
}

/// The paths a path's tail names, brace groups expanded: `a::{b, c::d}` gives `[a, b]`
/// and `[a, c, d]`.
fn expand(tail: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = tail;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut out = Vec::new();
            for item in brace_items(group)
                .into_iter()
                .filter(|i| !i.trim().is_empty())
            {
                for mut inner in expand(item.trim_start()) {
                    let mut whole = segments.clone();
                    whole.append(&mut inner);
                    out.push(whole);
                }
            }
            return out;
        }
        let word = identifier(rest);
        if word.is_empty() {
            break;
        }
        rest = &rest[word.len()..];
        if word != "self" {
            segments.push(word);
        }
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    vec![segments]
}

/// The items of a brace group whose `{` is already read, each as written.
fn brace_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
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

/// The child modules a module's code declares (`mod name;`, `pub mod name;`), inline test
/// modules left out.
fn declared_children(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix("pub ")
                .or_else(|| line.strip_prefix("pub(crate) "))
                .unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_owned())
        })
        .collect()
}

/// The modules a module's production code names, each resolved to the longest path that is
/// one of `known` and followed through re-exports to where the name lives (the module itself
/// left out, and the crate root when a name is its own).
pub fn names(
    module: &Module,
    text: &str,
    known: &BTreeSet<Module>,
    reexported: &Reexports,
) -> BTreeSet<Module> {
    let code = production_code(text);
    let children = declared_children(&code);
    let mut named = BTreeSet::new();
    for (root, segments) in rooted_paths(&code, &children) {
        let mut path = base(module, root);
        path.extend(segments);
        let target = resolve(path, known, reexported);
        if !target.is_empty() && target != *module {
            named.insert(target);
        }
    }
    // A name the module re-exports and also uses itself (a field of its own type) is a
    // dependency like any other.
    let own = reexported.get(module).into_iter().flatten();
    for (name, source) in own {
        let Some(source) = source else {
            continue;
        };
        let target = resolve(source.clone(), known, reexported);
        if uses_word(&code, name) && !target.is_empty() && target != *module {
            named.insert(target);
        }
    }
    named
}

/// Whether `code` names `word` as a whole word: not inside a longer identifier, not after
/// a path (`Statistic::parse`), a method's dot, the `fn` that defines another of its name
/// or the `mod` of the same name.
fn uses_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        let before = &code[..at];
        let after = code[at + word.len()..].chars().next();
        let elsewhere = ["::", ".", "fn ", "mod "]
            .iter()
            .any(|mark| before.ends_with(mark));
        !is_identifier_char(before.chars().last()) && !is_identifier_char(after) && !elsewhere
    })
}

/// The module a path's item lives in: the longest known prefix, followed through that
/// module's re-export of the next name (a chain of at most eight).
fn resolve(mut path: Module, known: &BTreeSet<Module>, reexported: &Reexports) -> Module {
    for _ in 0..8 {
        let mut prefix = path.len();
        while prefix > 0 && !known.contains(&path[..prefix].to_vec()) {
            prefix -= 1;
        }
        let holder = path[..prefix].to_vec();
        let followed = path
            .get(prefix)
            .and_then(|name| reexported.get(&holder)?.get(name));
        match followed {
            Some(None) => return Vec::new(),
            Some(Some(source)) if *source != holder => {
                let mut next = source.clone();
                next.extend(path[prefix + 1..].iter().cloned());
                path = next;
            }
            _ => return holder,
        }
    }
    path
}

/// Every cycle in `graph`, each once, as the modules on it (`run::once → run → run::once`).
pub fn cycles(graph: &Graph) -> Vec<Vec<Module>> {
    let mut found = Vec::new();
    let mut reported: BTreeSet<BTreeSet<Module>> = BTreeSet::new();
    for start in graph.keys() {
        if let Some(cycle) = cycle_through(graph, start) {
            let members: BTreeSet<Module> = cycle.iter().cloned().collect();
            if reported.insert(members) {
                found.push(cycle);
            }
        }
    }
    found
}

/// The shortest cycle through `start`, if there is one (breadth first).
fn cycle_through(graph: &Graph, start: &Module) -> Option<Vec<Module>> {
    let mut queue = std::collections::VecDeque::from([vec![start.clone()]]);
    let mut seen = BTreeSet::new();
    while let Some(path) = queue.pop_front() {
        let last = path.last().expect("a path has a module");
        for next in graph.get(last).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.clone());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                queue.push_back(longer);
            }
        }
    }
    None
}

/// A module's path as a reader writes it (`run::once`).
pub fn shown(module: &Module) -> String {
    module.join("::")
}

/// A glob import of the parent (`use super::*;`) in a module's code, its tests left out: a
/// reader cannot tell what the module uses, and the check above cannot see past it.
pub fn parent_globs(text: &str) -> Vec<usize> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.trim_start();
            !line.starts_with("//") && line.contains("use super::") && line.contains('*')
        })
        .map(|(number, _)| number + 1)
        .collect()
}

#[cfg(test)]
mod checks {
    use super::*;

    /// The modules on any cycle of `graph`.
    fn on_cycles(graph: &Graph) -> BTreeSet<Module> {
        cycles(graph).into_iter().flatten().collect()
    }

    fn module(path: &str) -> Module {
        path.split("::").map(str::to_owned).collect()
    }

    /// A graph of the given modules, each file's text as given.
    fn graph_of(files: &[(&str, &str)]) -> Graph {
        let known: BTreeSet<Module> = files.iter().map(|(path, _)| module(path)).collect();
        let reexported: Reexports = files
            .iter()
            .map(|(path, text)| (module(path), reexports(&module(path), text, &known)))
            .collect();
        files
            .iter()
            .map(|(path, text)| {
                let at = module(path);
                let named = names(&at, text, &known, &reexported);
                (at, named)
            })
            .collect()
    }

    /// A parent that calls its child, and a child that reaches back through `super::`: a
    /// cycle, found.
    #[test]
    fn a_cycle_through_super_is_found() {
        let graph = graph_of(&[
            (
                "run",
                "mod once;\npub fn walk() { once::run_once(); }\npub struct Outcome;",
            ),
            (
                "run::once",
                "use super::Outcome;\npub fn run_once() -> Outcome { Outcome }",
            ),
        ]);
        assert_eq!(
            cycles(&graph),
            vec![vec![module("run"), module("run::once"), module("run")]]
        );
        // Nested further: `super::super::` and a brace import.
        let graph = graph_of(&[
            (
                "plan",
                "mod report;\nfn f() { report::write(); }\npub struct Plan;",
            ),
            ("plan::report", "mod rows;\npub fn write() { rows::row(); }"),
            ("plan::report::rows", "use super::super::{Plan, report};"),
        ]);
        assert!(on_cycles(&graph).contains(&module("plan::report::rows")));
    }

    /// The parent as a face: it re-exports the child's type and calls nothing; the child's
    /// `super::` import is followed to where the name lives; no cycle. But a re-export does
    /// not hide one: a name re-exported from a module that calls back is followed to it.
    #[test]
    fn a_reexport_is_followed_to_where_the_name_lives() {
        let clean = graph_of(&[
            ("run", "mod once;\nmod outcome;\npub use outcome::Outcome;"),
            ("run::outcome", "pub struct Outcome;"),
            (
                "run::once",
                "use super::Outcome;\npub fn run_once() -> Outcome { Outcome }",
            ),
        ]);
        assert!(cycles(&clean).is_empty(), "{:?}", cycles(&clean));
        // A parent that re-exports a child's type and holds it in its own is a dependency.
        let held = graph_of(&[
            (
                "matrix",
                "mod search;\npub use search::PhaseSearch;\npub struct Phase { search: PhaseSearch }",
            ),
            (
                "matrix::search",
                "use super::Phase;\npub struct PhaseSearch;",
            ),
        ]);
        assert_eq!(
            on_cycles(&held),
            BTreeSet::from([module("matrix"), module("matrix::search")])
        );
        // A name from another crate, re-exported under its own name, leads nowhere here.
        let outside = graph_of(&[
            (
                "http",
                "mod recorder;\npub use headroom_results::histogram::new as histogram;\nfn f() { recorder::x(); }",
            ),
            ("http::recorder", "use super::histogram;\npub fn x() {}"),
        ]);
        assert!(cycles(&outside).is_empty(), "{:?}", cycles(&outside));
        let hidden = graph_of(&[
            ("run", "mod once;\nmod walk;\npub use walk::Outcome;"),
            (
                "run::walk",
                "pub struct Outcome;\nfn f() { crate::run::once::run_once(); }",
            ),
            (
                "run::once",
                "use super::Outcome;\npub fn run_once() -> Outcome { Outcome }",
            ),
        ]);
        assert_eq!(
            on_cycles(&hidden),
            BTreeSet::from([module("run::once"), module("run::walk")])
        );
    }

    #[test]
    fn a_glob_of_the_parent_outside_tests_is_found() {
        assert_eq!(parent_globs("use std::fmt;\nuse super::*;\n"), [2]);
        assert_eq!(parent_globs("use super::{a, b};\n"), Vec::<usize>::new());
        assert_eq!(
            parent_globs("fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n"),
            Vec::<usize>::new()
        );
    }
}
