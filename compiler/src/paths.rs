//! The folders and files a spec names relative to itself (`cwd`, `ca`). The compiler reads no
//! disk: it lists them with their places, and the CLI says what each is on this machine
//! ([`Compilation::check_paths`]), so a missing one is refused before anything starts rather
//! than when the point that needs it is reached, hours into a run.

use std::ops::Range;

use headroom_spec::Spec;

use crate::document::Document;
use crate::{Code, Compilation, Diagnostic, Severity};

/// What a named path must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A working directory.
    Folder,
    /// A file.
    File,
    /// A file of PEM certificates (a CA bundle): a file that holds no
    /// `-----BEGIN CERTIFICATE-----` is not one.
    Certificates,
}

impl PathKind {
    fn noun(self) -> &'static str {
        match self {
            PathKind::Folder => "a folder",
            PathKind::File => "a file",
            PathKind::Certificates => "a file of PEM certificates",
        }
    }
}

/// One folder or file the spec names, as written (placeholders left out: they are filled at
/// run time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPath {
    /// Where, as a JSON pointer (`/target/cwd`).
    pub pointer: String,
    /// The path as written, relative to the spec's folder unless absolute.
    pub written: String,
    /// What it must be.
    pub kind: PathKind,
    span: Option<Range<usize>>,
    /// A step's folder: an earlier step may make it, so a missing one is a warning.
    made_by_a_step: bool,
}

/// The paths of `spec` that hold no placeholder, in source order.
pub(crate) fn named(spec: &Spec, document: &Document) -> Vec<NamedPath> {
    let target = &spec.target;
    let mut listed: Vec<(String, &Option<String>, PathKind, bool)> = vec![
        (
            "/target/cwd".to_owned(),
            &target.cwd,
            PathKind::Folder,
            false,
        ),
        (
            "/target/ca".to_owned(),
            &target.ca,
            PathKind::Certificates,
            false,
        ),
    ];
    for (name, service) in &target.services {
        let pointer = format!("/target/services/{}/cwd", crate::document::escape(name));
        listed.push((pointer, &service.cwd, PathKind::Folder, false));
    }
    for (when, steps) in [("setup", &target.setup), ("teardown", &target.teardown)] {
        for (index, step) in steps.iter().enumerate() {
            let pointer = format!("/target/{when}/{index}/cwd");
            listed.push((pointer, &step.cwd, PathKind::Folder, true));
        }
    }
    let mut paths: Vec<NamedPath> = listed
        .into_iter()
        .filter_map(|(pointer, written, kind, made_by_a_step)| {
            let written = written.as_ref()?;
            (!written.contains('{')).then(|| NamedPath {
                span: document.value_span(&pointer),
                pointer,
                written: written.clone(),
                kind,
                made_by_a_step,
            })
        })
        .collect();
    paths.sort_by_key(|p| p.span.as_ref().map_or(usize::MAX, |s| s.start));
    paths
}

impl Compilation {
    /// Says, for each folder or file the spec names, what it is on this machine: `look`
    /// gets the path as written and answers what is there (or why nothing is). A missing
    /// working directory or CA file is an error (and the matrix is dropped); a step's missing
    /// folder a warning (an earlier step may make it).
    pub fn check_paths(&mut self, look: impl Fn(&str) -> Result<PathKind, String>) {
        let mut found = Vec::new();
        for path in &self.paths {
            let why = match look(&path.written) {
                Ok(kind) if kind == path.kind => continue,
                Ok(PathKind::File) if path.kind == PathKind::Certificates => {
                    "holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)".to_owned()
                }
                Ok(_) => format!("is not {}", path.kind.noun()),
                Err(why) => why,
            };
            let (code, hint) = if path.made_by_a_step {
                (
                    Code::MissingStepFolder,
                    "the path is relative to the spec; make the folder, or make it in an earlier step",
                )
            } else if path.kind == PathKind::Certificates {
                (
                    Code::MissingPath,
                    "give the CA's certificate in PEM, relative to the spec's folder (`openssl x509 -inform der -in ca.der -out ca.pem` converts a DER one)",
                )
            } else {
                (
                    Code::MissingPath,
                    "the path is relative to the spec's folder; make it there, or correct the path",
                )
            };
            found.push(
                Diagnostic::new(code, format!("`{}` {why}", path.written))
                    .at(&path.pointer, path.span.clone())
                    .label(format!("{} relative to the spec", path.kind.noun()))
                    .hint(hint),
            );
        }
        if found.iter().any(|d| d.severity() == Severity::Error) {
            self.matrix = None;
        }
        self.diagnostics.extend(found);
        crate::sort(&mut self.diagnostics);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_prices::PriceTable;

    const SPEC: &str = r#"
[bench]
name = "paths"

[target]
command = ["server", "--port", "{port}"]
cwd = "server"
ca = "certs/ca.pem"

[[target.setup]]
name = "seed"
command = ["./seed"]
cwd = "seeds"

[[target.teardown]]
name = "drop"
command = ["./drop"]
cwd = "{env:HOME}"

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "10/s"
requests = [{ url = "https://127.0.0.1:{port}/" }]

[[phase]]
name = "one"
hold = "2s"
"#;

    fn compiled() -> Compilation {
        let prices = PriceTable::embedded().expect("the shipped table");
        let compilation = crate::Compiler::new().compile(SPEC, &prices);
        assert!(
            compilation.matrix.is_some(),
            "{:?}",
            compilation.diagnostics
        );
        compilation
    }

    /// S35: a missing `cwd` was found only when the point that needed it started.
    #[test]
    fn a_missing_folder_or_file_is_said_at_its_key_before_anything_runs() {
        let mut compilation = compiled();
        let written: Vec<&str> = compilation
            .paths
            .iter()
            .map(|p| p.written.as_str())
            .collect();
        // The teardown's folder has a placeholder: filled at run time, not checked here.
        assert_eq!(written, ["server", "certs/ca.pem", "seeds"]);
        compilation.check_paths(|path| match path {
            "server" => Err("does not exist".to_owned()),
            "certs/ca.pem" => Ok(PathKind::Folder),
            _ => Err("does not exist".to_owned()),
        });
        assert!(compilation.matrix.is_none());
        let said: Vec<(&str, &str, &str)> = compilation
            .diagnostics
            .iter()
            .filter(|d| matches!(d.code, Code::MissingPath | Code::MissingStepFolder))
            .map(|d| (d.code.as_str(), d.pointer.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                ("E048", "/target/cwd", "`server` does not exist"),
                (
                    "E048",
                    "/target/ca",
                    "`certs/ca.pem` is not a file of PEM certificates"
                ),
                ("W010", "/target/setup/0/cwd", "`seeds` does not exist"),
            ]
        );
        let cwd = compilation
            .diagnostics
            .iter()
            .find(|d| d.pointer == "/target/cwd")
            .expect("said at the target's cwd");
        let span = cwd.span.clone().expect("a place");
        assert_eq!(&SPEC[span], "\"server\"");
    }

    #[test]
    fn a_step_folder_alone_missing_keeps_the_matrix() {
        let mut compilation = compiled();
        compilation.check_paths(|path| match path {
            "server" => Ok(PathKind::Folder),
            "certs/ca.pem" => Ok(PathKind::Certificates),
            _ => Err("does not exist".to_owned()),
        });
        assert!(compilation.matrix.is_some());
        let said: Vec<&Diagnostic> = compilation
            .diagnostics
            .iter()
            .filter(|d| matches!(d.code, Code::MissingPath | Code::MissingStepFolder))
            .collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(said[0].severity(), Severity::Warning);
    }

    /// Issue 57 (N-T04): a CA file that is there but holds no PEM certificate is refused at
    /// `validate`, at the key, with how to make one, not at every point of the run.
    #[test]
    fn a_ca_file_without_a_certificate_is_refused_where_it_is_named() {
        let mut compilation = compiled();
        compilation.check_paths(|path| match path {
            "certs/ca.pem" => Ok(PathKind::File),
            _ => Ok(PathKind::Folder),
        });
        assert!(compilation.matrix.is_none());
        let ca = compilation
            .diagnostics
            .iter()
            .find(|d| d.pointer == "/target/ca")
            .expect("said at the target's ca");
        assert_eq!(ca.code, Code::MissingPath);
        assert_eq!(
            ca.message,
            "`certs/ca.pem` holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"
        );
    }
}
