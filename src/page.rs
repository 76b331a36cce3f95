//! `headroom render`: the capacity page from a spec and its results.

use std::io::Write;
use std::path::{Path, PathBuf};

use annotate_snippets::Renderer;
use anyhow::Result;
use headroom_compare::report::Report as CompareReport;
use headroom_pricing::planner;
use headroom_templates::{Bench, Compared, Inputs, PageContext, Templates, plots};

use crate::exit;
use crate::outputs::{Output, Outputs, WRITTEN_MARK};

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
    /// Where the page goes [default: capacity.md, or capacity.html, beside the results].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Markdown with its plots as SVG files beside it, or one self-contained HTML file with
    /// the plots inline.
    #[arg(long, value_enum, default_value_t = PageFormat::Md)]
    format: PageFormat,
    /// Print the template context as JSON (schemas/page-context.schema.json) instead of the page.
    #[arg(long)]
    dump_context: bool,
    /// A results file to compare these with (the base branch, the old version): the page
    /// gets a "compared with" section, as `headroom compare BASELINE RESULTS` judges it.
    #[arg(long, value_name = "BASE")]
    baseline: Option<PathBuf>,
    /// Replace a file at the page's or a plot's path that headroom did not write.
    #[arg(long)]
    force: bool,
}

pub fn run(args: RenderArgs, renderer: &Renderer) -> Result<u8> {
    let Some(compiled) = crate::compile_for_use(&args.spec, Some(renderer))? else {
        return Ok(exit::USAGE);
    };
    let Some(matrix) = &compiled.compilation.matrix else {
        return Ok(exit::USAGE);
    };
    let results_path = args
        .results
        .clone()
        .unwrap_or_else(|| crate::default_results(&matrix.bench.name));
    if !results_path.exists() {
        anyhow::bail!(
            "cannot read results `{}`: there is no such file; `headroom run {}` writes them",
            results_path.display(),
            args.spec.display()
        );
    }
    let text = crate::read_bounded(
        &results_path,
        crate::files::MAX_RESULTS_BYTES,
        "the results file",
        "",
    )?;
    let results = headroom_results::Results::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", results_path.display()))?;
    crate::refuse_share(&results, &results_path)?;
    let _provenance = crate::provenance::check_results_of(
        &args.spec,
        &matrix.bench.name,
        &compiled.source,
        &results,
        &results_path,
    )?;
    let baseline = match &args.baseline {
        Some(path) => Some((path.as_path(), crate::read_whole_results(path)?)),
        None => None,
    };
    let source = Source {
        spec: &args.spec,
        compiled: &compiled,
        results: &results,
        results_path: &results_path,
        baseline: baseline.as_ref().map(|(path, results)| (*path, results)),
    };
    if args.dump_context {
        let mut stdout = std::io::stdout().lock();
        // As the page shows them: URLs' userinfo and query values masked.
        let mut context = serde_json::to_value(context(&source)?)?;
        headroom_results::mask_every_url(&mut context);
        serde_json::to_writer_pretty(&mut stdout, &context)?;
        writeln!(stdout)?;
        return Ok(exit::OK);
    }
    let mut outputs = crate::outputs::Outputs::new(args.force);
    outputs.input(&args.spec, "the spec");
    outputs.input(&results_path, "the results file");
    if let Some(path) = &args.baseline {
        outputs.input(path, "the baseline");
    }
    match render(
        &source,
        args.template.as_deref(),
        args.out.as_deref(),
        args.format,
        &mut outputs,
    )? {
        Ok(rendered) => {
            rendered.report(&mut std::io::stdout().lock())?;
            Ok(exit::OK)
        }
        Err(code) => Ok(code),
    }
}

/// What a page is rendered from: a compiled spec and its results, each read once.
pub(crate) struct Source<'a> {
    pub spec: &'a Path,
    pub compiled: &'a crate::Compiled,
    pub results: &'a headroom_results::Results,
    /// Where the results are (the page goes beside them by default).
    pub results_path: &'a Path,
    /// A results file to compare with, and its path (`--baseline`).
    pub baseline: Option<(&'a Path, &'a headroom_results::Results)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PageFormat {
    /// Markdown (`capacity.md`), the plots as SVG files beside it.
    Md,
    /// One HTML file (`capacity.html`), the plots inline.
    Html,
}

/// What a render wrote.
pub(crate) struct Rendered {
    pub page: PathBuf,
    pub plots: Vec<PathBuf>,
    /// The page went to a device or a pipe (`--out /dev/stdout`), not a file.
    pub streamed: bool,
}

impl Rendered {
    /// `page: …` and, when there are plot files, `plots: …`; nothing when the page itself was
    /// streamed (it may be on the same stdout).
    pub(crate) fn report(&self, out: &mut impl Write) -> std::io::Result<()> {
        if self.streamed {
            return Ok(());
        }
        writeln!(out, "page: {}", self.page.display())?;
        if !self.plots.is_empty() {
            let names: Vec<String> = self.plots.iter().map(|p| p.display().to_string()).collect();
            writeln!(out, "plots: {}", names.join(", "))?;
        }
        Ok(())
    }
}

/// Renders the page of a spec from its results: what was written, or the exit code of what
/// went wrong (said on stderr).
pub(crate) fn render(
    source: &Source<'_>,
    template: Option<&Path>,
    out: Option<&Path>,
    format: PageFormat,
    outputs: &mut Outputs,
) -> Result<std::result::Result<Rendered, u8>> {
    let results = source.results_path;
    let mut context = context(source)?;
    // A results file of another name than `results.json` gets a page (and plots) of its own
    // name, so two results in one folder never write over each other's page.
    let prefix = page_prefix(results);
    if out.is_none()
        && let Some(prefix) = &prefix
    {
        for plot in &mut context.plots {
            plot.file = format!("{prefix}.{}", plot.file);
        }
    }
    let templates = Templates::new(template)?;
    let markdown = templates.render("page.md", &context)?;
    let drawn = plots::draw(&context)?;
    let page = out.map_or_else(|| default_page(results, format), Path::to_path_buf);
    let flag = if out.is_some() { "--out" } else { "the page" };
    // `--out /dev/stdout` or a pipe: the page is streamed, and there is no folder for plots.
    let claimed = outputs.claim(&page, flag, Output::Page)?;
    let streamed = claimed.streamed;
    if streamed && format == PageFormat::Md && !drawn.is_empty() {
        eprintln!(
            "note: the plots are not written: {} is not a file to put them beside; `--format html` puts them inline",
            claimed.path.display()
        );
    }
    // Markdown: the plots first, so the page never links a plot that is not there yet. HTML:
    // one file, the plots inline. Each ends with the mark that makes it headroom's to replace.
    let mut plot_files = Vec::new();
    let text = match format {
        PageFormat::Md if streamed => markdown.clone(),
        PageFormat::Md => {
            let folder = claimed.path.parent().unwrap_or(Path::new(""));
            for plot in &drawn {
                let plot_claimed =
                    outputs.claim(&folder.join(&plot.file), "a plot", Output::Plot)?;
                plot_files.push((plot_claimed, marked(&plot.svg)));
            }
            markdown.clone()
        }
        PageFormat::Html => templates.html(&markdown, &drawn, &context)?,
    };
    // A URL's userinfo and query values may be secrets: the page never shows them.
    let text = marked(&headroom_results::masked_urls(&text));
    for (output, text) in plot_files
        .iter()
        .map(|(c, t)| (c, t.as_str()))
        .chain([(&claimed, text.as_str())])
    {
        if let Err(e) = crate::outputs::write(output, text) {
            eprintln!("error: cannot write {}: {e}", output.path.display());
            return Ok(Err(exit::WRITE_FAILED));
        }
    }
    let plots = plot_files.into_iter().map(|(c, _)| c.path).collect();
    let page = claimed.path;
    Ok(Ok(Rendered {
        page,
        plots,
        streamed,
    }))
}

/// Where the page of the results at `results` goes unless `--out` says: beside them,
/// `capacity.md` (or `.html`), or `NAME.capacity.md` beside `NAME.json`.
pub(crate) fn default_page(results: &Path, format: PageFormat) -> PathBuf {
    let default_name = match format {
        PageFormat::Md => "capacity.md",
        PageFormat::Html => "capacity.html",
    };
    let name = match page_prefix(results) {
        Some(prefix) => format!("{prefix}.{default_name}"),
        None => default_name.to_owned(),
    };
    results.parent().unwrap_or(Path::new(".")).join(name)
}

/// `text` ending with the mark by which headroom knows the file as its own to replace
/// (an HTML comment: Markdown, HTML and SVG show nothing of it).
fn marked(text: &str) -> String {
    let mut marked = text.to_owned();
    if !marked.ends_with('\n') {
        marked.push('\n');
    }
    marked.push_str(WRITTEN_MARK);
    marked.push('\n');
    marked
}

/// The name a page of these results takes before its own: none beside `results.json` (the
/// page is `capacity.md`), `NAME` beside any other `NAME.json` (`NAME.capacity.md`).
fn page_prefix(results: &Path) -> Option<String> {
    let stem = results.file_stem()?.to_str()?;
    (stem != "results").then(|| stem.to_owned())
}

/// The template context of a compiled spec's page, its cost table from the same planner
/// `headroom plan` calls.
fn context(source: &Source<'_>) -> Result<PageContext> {
    let Some(matrix) = &source.compiled.compilation.matrix else {
        anyhow::bail!("`{}` did not compile", source.spec.display());
    };
    let (spec, results) = (source.spec.display(), source.results_path.display());
    let prices = &source.compiled.prices;
    let today = crate::prices::today()?;
    let report = planner::plan_of_spec(matrix, source.results, prices, today)?;
    // The run command as it was: `--quick` results come from a `--quick` run.
    let quick = if source.results.quick { "--quick " } else { "" };
    // And with the values it was given: a lever's run reruns as itself, not as the baseline.
    let set = headroom_templates::set_flags(&headroom_templates::levers(source.results));
    let inputs = Inputs {
        bench: Bench::of_matrix(matrix),
        plan: report,
        reproduce: vec![
            format!("headroom run {quick}{spec}{set} --out {results}"),
            match source.baseline {
                Some((base, _)) => format!(
                    "headroom render {spec} --results {results} --baseline {}",
                    base.display()
                ),
                None => format!("headroom render {spec} --results {results}"),
            },
        ],
        compared: source.baseline.map(|(path, base)| {
            let report = CompareReport::of_files(base, source.results, prices);
            let quick = base.quick || source.results.quick;
            Compared::of(path.display().to_string(), &report, quick)
        }),
    };
    Ok(PageContext::build(source.results, inputs))
}
