//! The capacity page: minijinja templates rendered from a [`PageContext`] (results, fits and
//! the planner's report as data).
//!
//! The default templates live in `templates/page/` and are embedded in the binary; a user's
//! folder overrides any of them by name. Numbers go through filters ([`format`]) so every page
//! writes them the same way. This crate reads and renders; it never runs or prices anything.

pub mod context;
pub mod format;
pub mod html;
pub mod plots;

use std::path::{Path, PathBuf};

use minijinja::{Environment, ErrorKind};

pub use context::{Bench, Inputs, PageContext};

/// The default templates, by name.
const DEFAULTS: &[(&str, &str)] = &[
    ("page.md", include_str!("../page/page.md")),
    ("page.html", include_str!("../page/page.html")),
];

/// Why a page could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("the results cannot make a page: {0}")]
    Results(String),
    #[error("cannot read template {path}: {message}")]
    Read { path: String, message: String },
    #[error("cannot draw plot {file}: {detail}")]
    Plot { file: String, detail: String },
    /// A template that does not parse or render: which one, where, and what.
    #[error("template `{template}`{}: {detail}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Template {
        template: String,
        /// `None` when minijinja does not know the line.
        line: Option<usize>,
        detail: String,
    },
}

/// The templates a page is rendered with: the embedded ones, overridden by a folder's.
pub struct Templates {
    environment: Environment<'static>,
}

impl Templates {
    /// The embedded templates, each replaced by a file of the same name in `folder` if any.
    pub fn new(folder: Option<&Path>) -> Result<Templates, PageError> {
        let mut environment = Environment::new();
        environment.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        // A page ends with its last newline, as a file should.
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| template_error("(syntax)", &e))?;
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
                .map_err(|e| template_error(name, &e))?;
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
            .map_err(|e| template_error(name, &e))?;
        template
            .render(minijinja::context! {
                title => html::title(markdown),
                body => html::body(markdown, plots),
                headroom_version => &context.headroom_version,
                page => minijinja::value::Serde(context),
            })
            .map_err(|e| template_error(name, &e))
    }

    /// Renders the page template `name` (`page.md`).
    pub fn render(&self, name: &str, context: &PageContext) -> Result<String, PageError> {
        let template = self
            .environment
            .get_template(name)
            .map_err(|e| template_error(name, &e))?;
        template
            .render(minijinja::value::Serde(context))
            .map_err(|e| template_error(name, &e))
    }
}

fn read(path: &PathBuf) -> Result<String, PageError> {
    std::fs::read_to_string(path).map_err(|e| PageError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// A minijinja error as the template, the line and what went wrong (the variable, for an
/// undefined one).
fn template_error(name: &str, error: &minijinja::Error) -> PageError {
    let detail = match error.kind() {
        ErrorKind::UndefinedError => format!(
            "{} (the context has no such variable or field; `headroom render --dump-context` shows what it has)",
            error.detail().unwrap_or("an undefined variable")
        ),
        _ => error
            .detail()
            .map_or_else(|| error.kind().to_string(), str::to_owned),
    };
    PageError::Template {
        template: error.name().unwrap_or(name).to_owned(),
        line: error.line(),
        detail,
    }
}
