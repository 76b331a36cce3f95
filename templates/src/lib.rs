//! The capacity page: minijinja templates rendered from a [`PageContext`] (results, fits and
//! the planner's report as data).
//!
//! The default templates live in `templates/page/` and are embedded in the binary; a user's
//! folder overrides any of them by name. Numbers go through filters ([`format`]) so every page
//! writes them the same way. This crate reads and renders; it never runs or prices anything.

#![warn(missing_docs)]

mod context;
pub mod format;
mod html;
pub mod plots;

use std::path::{Path, PathBuf};

use minijinja::{Environment, ErrorKind};

pub use context::{
    Bench, Compared, Inputs, Lever, PAGE_CONTEXT_FORMAT, PageContext, levers, set_flags,
};

/// The default templates, by name.
const DEFAULTS: &[(&str, &str)] = &[
    ("page.md", include_str!("../page/page.md")),
    ("page.html", include_str!("../page/page.html")),
];

/// Why a page could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// A template folder or file could not be read.
    #[error("cannot read template {path}: {message}")]
    Read {
        /// The file or folder.
        path: String,
        /// Why it could not be read.
        message: String,
    },
    /// A plot could not be drawn.
    #[error("cannot draw plot {file}: {detail}")]
    Plot {
        /// The plot's file name.
        file: String,
        /// What went wrong.
        detail: String,
    },
    /// A template that does not parse or render: which one, where, and what.
    #[error("template `{template}`{}: {detail}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Template {
        /// The template's name.
        template: String,
        /// `None` when minijinja does not know the line.
        line: Option<usize>,
        /// What went wrong, and where.
        detail: String,
    },
}

/// The work one page may take, in minijinja fuel (about one instruction, or 64 bytes made):
/// the default page of a 10,000-point results file takes under a tenth of it, and a loop
/// without end stops within seconds instead of running until the machine runs out of memory.
pub const FUEL: u64 = 20_000_000;

/// The templates a page is rendered with: the embedded ones, overridden by a folder's.
pub struct Templates {
    environment: Environment<'static>,
}

impl Templates {
    /// The embedded templates, each replaced by a file of the same name in `folder` if any.
    pub fn new(folder: Option<&Path>) -> Result<Templates, PageError> {
        let mut environment = Environment::new();
        environment.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        environment.set_fuel(Some(FUEL));
        // A page ends with its last newline, as a file should.
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| template_error(None, "(syntax)", &e))?;
        environment.set_syntax(syntax);
        environment.add_filter("count", format::count);
        environment.add_filter("plural", |unit: String| format::plural(&unit));
        environment.add_filter("number", format::number);
        environment.add_filter("mib", format::mib);
        environment.add_filter("ms", format::duration_ms);
        environment.add_filter("percent", format::percent);
        environment.add_filter("dollars", format::dollars);
        environment.add_filter("money", format::money);
        environment.add_filter("size", format::size);
        for (name, text) in DEFAULTS {
            let text = match folder.map(|f| f.join(name)).filter(|p| p.exists()) {
                Some(path) => read(&path)?,
                None => (*text).to_owned(),
            };
            environment
                .add_template_owned(name.to_string(), text)
                .map_err(|e| template_error(None, name, &e))?;
        }
        Ok(Templates { environment })
    }

    /// The page as one self-contained HTML file: `markdown` (the rendered `page.md`) converted,
    /// its plots inline, inside the `page.html` template.
    pub fn html(
        &self,
        markdown: &str,
        plots: &[plots::Drawn],
        context: &PageContext,
    ) -> Result<String, PageError> {
        let name = "page.html";
        let template = self
            .environment
            .get_template(name)
            .map_err(|e| template_error(Some(&self.environment), name, &e))?;
        template
            .render(minijinja::context! {
                title => html::title(markdown),
                body => html::body(markdown, plots),
                headroom_version => &context.headroom_version,
                page => minijinja::value::Serde(context),
            })
            .map_err(|e| template_error(Some(&self.environment), name, &e))
    }

    /// Renders the page template `name` (`page.md`).
    pub fn render(&self, name: &str, context: &PageContext) -> Result<String, PageError> {
        let template = self
            .environment
            .get_template(name)
            .map_err(|e| template_error(Some(&self.environment), name, &e))?;
        template
            .render(minijinja::value::Serde(context))
            .map_err(|e| template_error(Some(&self.environment), name, &e))
    }
}

fn read(path: &PathBuf) -> Result<String, PageError> {
    std::fs::read_to_string(path).map_err(|e| PageError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// A minijinja error as the template, the line and what went wrong, in the user's terms: the
/// expression that is undefined, a recursion named as one, a loop that ran out of fuel.
///
/// An error inside an included template arrives wrapped ("error in page.md"): the innermost
/// one says where and what.
fn template_error(
    environment: Option<&Environment<'static>>,
    name: &str,
    error: &minijinja::Error,
) -> PageError {
    let mut innermost = error;
    while let Some(inner) =
        std::error::Error::source(innermost).and_then(|e| e.downcast_ref::<minijinja::Error>())
    {
        innermost = inner;
    }
    let template = innermost.name().or(error.name()).unwrap_or(name);
    let detail = match innermost.kind() {
        ErrorKind::UndefinedError => {
            let expression = innermost.range().and_then(|range| {
                let source = environment?.get_template(template).ok()?.source().to_owned();
                source.get(range).map(str::to_owned)
            });
            format!(
                "{} is undefined: the context has no such variable or field (`headroom render --dump-context` shows what it has)",
                expression.map_or_else(|| "a variable".to_owned(), |e| format!("`{e}`"))
            )
        }
        ErrorKind::OutOfFuel => format!(
            "the template did more work than a page takes ({} million steps): a loop without end, or one over far more items than the results hold",
            FUEL / 1_000_000
        ),
        _ if innermost
            .detail()
            .is_some_and(|d| d.contains("recursion limit")) =>
        {
            "recursion without end: a template includes itself (directly or through another), or a macro calls itself with no way out".to_owned()
        }
        _ => innermost
            .detail()
            .map_or_else(|| innermost.kind().to_string(), str::to_owned),
    };
    PageError::Template {
        template: template.to_owned(),
        line: innermost.line().or(error.line()),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page template of `text` rendered over an empty context.
    fn render(text: &str) -> PageError {
        let folder = std::env::temp_dir().join(format!(
            "headroom-templates-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&folder).expect("scratch folder");
        std::fs::write(folder.join("page.md"), text).expect("template");
        let templates = Templates::new(Some(&folder)).expect("templates");
        std::fs::remove_dir_all(&folder).expect("remove scratch");
        let template = templates
            .environment
            .get_template("page.md")
            .expect("page.md");
        template
            .render(minijinja::context! { bench => minijinja::context! { name => "relay" } })
            .map_err(|e| template_error(Some(&templates.environment), "page.md", &e))
            .expect_err("the template must fail")
    }

    #[test]
    fn an_undefined_variable_is_named() {
        let error = render("# {{ bench.name }}\n\nHello {{ bench.nme }} and more\n");
        assert_eq!(
            error.to_string(),
            "template `page.md`, line 3: `bench.nme` is undefined: the context has no such variable or field (`headroom render --dump-context` shows what it has)"
        );
    }

    #[test]
    fn a_self_include_is_called_recursion() {
        let error = render("x {% include \"page.md\" %}");
        let PageError::Template {
            template, detail, ..
        } = &error
        else {
            panic!("{error}");
        };
        assert_eq!(template, "page.md");
        assert!(detail.starts_with("recursion without end"), "{detail}");
    }

    #[test]
    fn a_loop_without_end_runs_out_of_fuel() {
        let error = render(
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        );
        let PageError::Template { detail, line, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!(*line, Some(1));
        assert!(detail.contains("more work than a page takes"), "{detail}");
    }
}
