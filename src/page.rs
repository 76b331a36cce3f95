//! `headroom render`: the capacity page from a spec and its results.

use std::io::Write;
use std::path::{Path, PathBuf};

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use headroom_templates::{Bench, Inputs, PageContext, Templates};

use crate::exit;

#[derive(clap::Args)]
pub struct RenderArgs {
    /// The spec the results came from.
    spec: PathBuf,
    /// The results file [default: results/<bench>/results.json].
    #[arg(long)]
    results: Option<PathBuf>,
    /// A folder of templates; each file overrides the default template of its name (page.md).
    #[arg(long, value_name = "DIR")]
    template: Option<PathBuf>,
    /// Where the page goes [default: capacity.md beside the results].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the template context as JSON (schemas/page-context.schema.json) instead of the page.
    #[arg(long)]
    dump_context: bool,
}

pub fn run(args: RenderArgs, renderer: &Renderer) -> Result<u8> {
    let Some(compiled) = crate::compile_for_use(&args.spec, Some(renderer))? else {
        return Ok(exit::USAGE);
    };
    let Some(plan) = &compiled.compilation.plan else {
        return Ok(exit::USAGE);
    };
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| crate::default_results(&plan.bench.name));
    if args.dump_context {
        let context = match context(&args.spec, plan, &results)? {
            Ok(context) => context,
            Err(code) => return Ok(code),
        };
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, &context)?;
        writeln!(stdout)?;
        return Ok(exit::OK);
    }
    match render(
        &args.spec,
        &results,
        args.template.as_deref(),
        args.out.as_deref(),
    )? {
        Ok(page) => {
            writeln!(std::io::stdout().lock(), "page: {}", page.display())?;
            Ok(exit::OK)
        }
        Err(code) => Ok(code),
    }
}

/// Renders the page of `spec` from `results` (the spec's diagnostics already shown); the page's
/// path, or the exit code of what went wrong (said on stderr).
pub(crate) fn render(
    spec: &Path,
    results: &Path,
    template: Option<&Path>,
    out: Option<&Path>,
) -> Result<std::result::Result<PathBuf, u8>> {
    let Some(compiled) = crate::compile_for_use(spec, None)? else {
        return Ok(Err(exit::USAGE));
    };
    let Some(plan) = &compiled.compilation.plan else {
        return Ok(Err(exit::USAGE));
    };
    let context = match context(spec, plan, results)? {
        Ok(context) => context,
        Err(code) => return Ok(Err(code)),
    };
    let templates = Templates::new(template)?;
    let page = templates.render("page.md", &context)?;
    let out = out.map_or_else(
        || {
            results
                .parent()
                .unwrap_or(Path::new("."))
                .join("capacity.md")
        },
        Path::to_path_buf,
    );
    if let Err(e) = write_atomically(&out, &page) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return Ok(Err(exit::WRITE_FAILED));
    }
    Ok(Ok(out))
}

/// The template context of a compiled spec's page.
fn context(
    spec: &Path,
    plan: &headroom_compiler::ResolvedPlan,
    results: &Path,
) -> Result<std::result::Result<PageContext, u8>> {
    let text = std::fs::read_to_string(results).with_context(|| {
        format!(
            "cannot read results `{}`; `headroom run {}` writes them",
            results.display(),
            spec.display()
        )
    })?;
    let capacity = &plan.capacity;
    let priced = plan.plan.as_ref().is_some_and(|p| !p.instances.is_empty());
    let report = if priced {
        let plan_args = crate::plan::PlanArgs::for_page(spec, results);
        match crate::plan::plan(&plan_args, None)? {
            Ok(planned) => Some(planned.report),
            Err(code) => return Ok(Err(code)),
        }
    } else {
        None
    };
    let inputs = Inputs {
        bench: Bench {
            name: plan.bench.name.clone(),
            description: plan.bench.description.clone(),
            unit: plan.bench.unit.clone(),
            people_per_unit: plan
                .bench
                .people_per_unit
                .value()
                .map_or(1.0, |p| *p as f64),
            memory_series: capacity.memory.clone(),
            memory_phase: capacity.memory_phase.clone(),
            units_variable: capacity.units.clone(),
            ceiling_phase: capacity.ceiling_phase.clone(),
        },
        plan: report,
        reproduce: vec![
            format!(
                "headroom run {} --out {}",
                spec.display(),
                results.display()
            ),
            format!(
                "headroom render {} --results {}",
                spec.display(),
                results.display()
            ),
        ],
    };
    Ok(Ok(PageContext::build(&text, inputs).map_err(|e| {
        anyhow::anyhow!("{}: {e}", results.display())
    })?))
}

/// A temporary file beside the page, then a rename: a reader never sees half a page.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let temporary = path.with_extension("md.tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}
