//! `headroom`: the command line. The only crate that prints; it reads files, calls one library
//! function per subcommand, renders what comes back and maps it to an exit code.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod compare;
mod demo;
mod exit;
mod files;
mod fit;
mod flags;
mod given_points;
mod k8s;
mod live;
mod matrix_table;
mod merge;
mod out;
mod outputs;
mod page;
mod placed;
mod plan;
mod plan_fleets;
mod plan_prices;
mod prices;
mod prices_import;
mod provenance;
mod render;
mod run;
mod scaled;
mod slo_line;

use files::data_columns;
pub(crate) use files::{
    MAX_PRICE_TABLE_BYTES, MAX_SPEC_BYTES, read_bounded, read_whole_results, refuse_share,
};

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use headroom_compiler::{Compilation, Compiler, Severity};
use headroom_pricing::PriceTable;

/// Exit codes, as documented in `docs/cli.md`; the same for every command.

#[derive(Parser)]
#[command(
    name = "headroom",
    version,
    about = "How much one box holds, what runs out first, and what a user costs per month"
)]
struct Cli {
    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto)]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Check specs and report every problem, with file, line and column.
    #[command(
        after_help = "Examples:\n  headroom validate examples/relay.toml\n  headroom validate --format json examples/*.toml\n\nExit codes: 0 every spec is valid (warnings allowed), 1 a spec has errors or a file could not\nbe read (the other files are still checked)."
    )]
    Validate {
        /// The spec files.
        #[arg(required = true)]
        specs: Vec<PathBuf>,
        /// `human` (rustc-style, on stderr) or `json` (an array on stdout).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Expand a spec into its run matrix: phases, points, repeats and the estimated time.
    #[command(
        after_help = "Examples:\n  headroom compile examples/relay.toml\n  headroom compile --json examples/relay.toml > plan.json\n\nExit codes: 0 compiled, 1 the spec has errors or could not be read."
    )]
    Compile {
        spec: PathBuf,
        /// Print the fully resolved plan as JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Run a spec: a fresh target per point (or one per phase), the load, the measurements, one
    /// results file.
    #[command(
        after_help = "Examples:\n  headroom run examples/notes-api.toml\n  headroom run --quick --check examples/notes-api.toml\n  headroom run --phase load --out results/notes.json examples/notes-api.toml\n\nExit codes: 0 every run ran (and with --check, every SLO passed), 1 spec or usage error,\n2 an SLO failed (--check), 3 a run failed, 4 the results could not be written, 130 interrupted.\nThe results file is rewritten after every run, so an interrupted run keeps what it measured."
    )]
    Run(run::RunArgs),
    /// Join the segments of a run (`run --segment i/n` on several machines) into one results
    /// file: histograms added exactly, counts summed, SLOs judged on the merged figures.
    #[command(
        after_help = "Examples:\n  headroom merge results/chat/segment-0-of-3.json results/chat/segment-1-of-3.json results/chat/segment-2-of-3.json\n  headroom merge parts/*.json --out results/chat/results.json --check\n\nThe parts must be every segment of one run of one spec, each once (or one whole run, as a\n`headroom k8s --segments 1` pod writes it: merged as it is). The target's memory, CPU\nand metrics are segment 0's; each segment's generator figures are kept.\n\nExit codes: 0 merged, 1 a part is missing, of another spec or unreadable, 2 an SLO failed\n(--check), 3 a run failed in some segment, 4 the results could not be written."
    )]
    Merge(merge::MergeArgs),
    /// Write the Kubernetes manifests that run a spec as segments on a cluster: an Indexed
    /// Job of `--segments` pods meeting at pod 0's barrier, and the Job that merges them.
    #[command(
        after_help = "Examples:\n  headroom k8s chat.toml --segments 3 --image registry.example/headroom:0.1.0\n  headroom k8s chat.toml --segments 8 --image IMG --namespace load --storage-class nfs --out deploy/\n\nIt writes segments.json (the spec's ConfigMap, a headless Service for the barrier, a\nReadWriteMany claim for the parts, the Indexed Job) and merge.json (the Job that merges the\nparts), each a List for `kubectl apply -f`; docs/scale-out.md walks through a run.\n\nExit codes: 0 written, 1 the spec is wrong, loads no running service, or its files are over a\nConfigMap's 1 MiB."
    )]
    K8s(k8s::K8sArgs),
    /// Fit a straight line through every series of every sweep (least squares, R², slope CI).
    #[command(
        after_help = "Examples:\n  headroom fit results/relay/results.json\n  headroom fit --points sweep.csv --x rooms\n  headroom fit --points vus-10.json --points vus-20.json --points vus-40.json --x vus\n  headroom fit --json results/relay/results.json\n\nA CSV has a header row; the units of its series are in the column names' suffixes:\n_bytes, _kib, _mib, _gib, _ms, _s, _pct (none: a plain number). Optional pass or failed columns.\nk6 summary exports and CSV outputs and Locust stats CSVs are one file per step, the step the\nlast number in the file's name.\n\nExit codes: 0 fitted, 1 the file could not be read or parsed (the message names the line and\ncolumn)."
    )]
    Fit(fit::FitArgs),
    /// Two results files side by side: every figure of every matched point better, worse,
    /// within noise, or not to be told from its repeats.
    #[command(
        after_help = compare::after_help()
    )]
    Compare(compare::CompareArgs),
    /// Ceilings per instance, the binding one, and the cost per unit-month.
    #[command(
        after_help = "Examples:\n  headroom plan examples/relay.toml --results results/relay/results.json --instance t4g.medium\n  headroom plan --points sweep.csv --x rooms --cap 128 --cpu-ceiling 57 --instance t4g.medium --instance t4g.large\n\nFlags override the spec; with no spec, flags alone are enough. A month is 730 hours.\n\nExit codes: 0 planned, 1 a spec, file or flag is wrong."
    )]
    Plan(plan::PlanArgs),
    /// Render the capacity page (Markdown with SVG plots, or one HTML file) from a spec and its results.
    #[command(
        after_help = "Examples:\n  headroom render examples/relay.toml\n  headroom render examples/relay.toml --results results/relay/results.json --out docs/capacity.md\n  headroom render examples/relay.toml --dump-context > context.json\n  headroom render examples/relay.toml --template my-templates/\n  headroom render examples/relay.toml --format html\n\nA template folder overrides the default templates by name (page.md, page.html); the context they get is\nwhat --dump-context prints (schemas/page-context.schema.json).\n\nExit codes: 0 rendered, 1 a spec, results file or template is wrong, 4 the page could not be written."
    )]
    Render(page::RenderArgs),
    /// Internal: kills a target's process group when the headroom that started it dies.
    #[command(hide = true)]
    GuardGroup {
        /// The target's process group.
        group: i32,
        /// The headroom run's pid.
        parent: u32,
        /// The run's cgroup folders, removed when headroom is gone.
        cgroups: Vec<std::path::PathBuf>,
    },
    /// List the price table: every entry with its price, $/month, as-of date and warnings.
    #[command(
        after_help = "Examples:\n  headroom prices\n  headroom prices --provider hetzner\n  headroom prices --prices our-prices.toml --json\n  headroom prices import aws index.json --region us-east-1 --out aws-prices.toml\n\nA month is 730 hours. A price older than --max-age, or past its stale_after date, draws a\nwarning. HEADROOM_TODAY=YYYY-MM-DD sets the day ages count from, for reproducible output."
    )]
    Prices(prices::PricesArgs),
    /// List the figures an SLO, a gate, `compare` and the page name: each one's unit, what
    /// produces it, how it is computed and which way is better.
    #[command(
        after_help = "Example:\n  headroom figures\n\nA Markdown table, the one docs/spec.md shows under \"SLOs\": every place that names a\nfigure (an SLO, a [compare] gate, compare --fail-on, the run table, the page, merge) reads it\nby this one definition.\n\nExit codes: 0."
    )]
    Figures,
    /// Print the JSON Schema of specs (for editors; committed at schemas/spec.schema.json).
    #[command(after_help = "Example:\n  headroom schema > spec.schema.json")]
    Schema,
    /// Run the built-in server under test: the target of the examples.
    #[command(
        after_help = "Examples:\n  headroom demo-target --port 8080\n  headroom demo-target --port 8080 --room-state 220KiB --rebuild-cpu 138ms --save-window 2200ms\n  headroom demo-target --port 8080 --stall-every 1s --stall-for 200ms\n\nIt listens on loopback and serves /healthz, /metrics, a notes API under\n/api/groups/{group}/notes and WebSocket rooms at /rooms/{room}, /channels/{room}, /pads/{room}\nand /api/ws?person={person}. It stops on SIGTERM or SIGINT."
    )]
    DemoTarget(demo::DemoTarget),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
}

fn main() -> ExitCode {
    // The top-level help ends with the exit codes, written from their one definition.
    let root = Cli::command().after_help(format!(
        "Examples:\n  headroom validate examples/*.toml\n  headroom compile examples/relay.toml\n  headroom run --quick examples/notes-api.toml\n  headroom schema > spec.schema.json\n\n{}",
        exit::in_brief()
    ));
    let cli = match root
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` are not errors; a wrong flag is a usage error (1).
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let renderer = renderer(cli.color);
    let outcome = match cli.command {
        Command::Validate { specs, format } => validate(&specs, format, &renderer),
        Command::Compile { spec, json } => compile(&spec, json, &renderer),
        Command::Schema => print_json(&headroom_spec::json_schema()).map(|()| exit::OK),
        Command::Figures => {
            print!("{}", headroom_figures::catalogue::markdown());
            Ok(exit::OK)
        }
        Command::DemoTarget(args) => demo::run(args),
        Command::Run(args) => run::run(args, &renderer),
        Command::Merge(args) => merge::run(args),
        Command::K8s(args) => k8s::run(args, &renderer),
        Command::Fit(args) => fit::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Prices(args) => prices::run(args),
        Command::Plan(args) => plan::run(args, &renderer),
        Command::Render(args) => page::run(args, &renderer),
        Command::GuardGroup {
            group,
            parent,
            cgroups,
        } => {
            headroom_runner::target::guard_group(group, parent, &cgroups);
            Ok(exit::OK)
        }
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            // A closed pipe (`headroom schema | head`) is not a failure.
            let broken_pipe = error.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .map(std::io::Error::kind)
                    .or_else(|| {
                        e.downcast_ref::<serde_json::Error>()
                            .and_then(serde_json::Error::io_error_kind)
                    })
                    == Some(std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::from(exit::OK);
            }
            // A URL's userinfo and query values may be secrets: no message shows them.
            let said = headroom_results::masked_urls(&format!("{error:#}"));
            eprintln!("error: {said}");
            ExitCode::from(exit::USAGE)
        }
    }
}

fn renderer(color: Color) -> Renderer {
    let styled = match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
}

/// A spec read from disk and compiled.
pub(crate) struct Compiled {
    pub path: String,
    pub source: String,
    pub compilation: Compilation,
    /// The shipped price table, with the spec's own `[plan] prices` over it.
    pub prices: PriceTable,
}

/// A price table of the user's, read from `path`; `named` says where it was named (`named at
/// relay.toml:40:10`), for an error.
pub(crate) fn read_price_table(path: &Path, named: &str) -> Result<PriceTable> {
    let text = read_bounded(
        path,
        MAX_PRICE_TABLE_BYTES,
        "the price table",
        &format!(" {named}"),
    )?;
    let table = PriceTable::from_toml(&text).map_err(|error| {
        let place = match &error {
            headroom_pricing::PriceTableError::Parse {
                span: Some(span), ..
            } => {
                let (l, c) = headroom_compiler::line_column(&text, span.start);
                format!("{}:{l}:{c}", path.display())
            }
            headroom_pricing::PriceTableError::Parse { .. } => path.display().to_string(),
        };
        anyhow::anyhow!("{place}: {error} ({named})")
    })?;
    Ok(table.named(&path.display().to_string()))
}

pub(crate) fn compile_file(compiler: &Compiler, path: &Path) -> Result<Compiled> {
    let source = read_bounded(path, MAX_SPEC_BYTES, "spec", "")?;
    let mut prices = PriceTable::embedded().context("the shipped price table is broken")?;
    if let Some((file, span)) = headroom_compiler::price_table_reference(&source) {
        let (line, column) = headroom_compiler::line_column(&source, span.start);
        let relative = path.parent().unwrap_or(Path::new(".")).join(&file);
        let named = format!("named at {}:{line}:{column}", path.display());
        prices.extend(read_price_table(&relative, &named)?);
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    let data: headroom_compiler::DataColumns = headroom_compiler::data_file_references(&source)
        .into_iter()
        .map(|file| {
            let columns = data_columns(&folder.join(&file));
            (file, columns)
        })
        .collect();
    let compilation = compiler.compile_with_data(&source, &prices, &data);
    Ok(Compiled {
        path: path.display().to_string(),
        source,
        compilation,
        prices,
    })
}

/// `compile_file`, and the folders and files the spec names (`cwd`, `ca`) looked up on this
/// machine: for `validate`, `compile` and `run`, which start (or check what would start) the
/// target here. `render`, `plan` and `k8s` read the spec elsewhere and skip the look.
pub(crate) fn compile_file_here(compiler: &Compiler, path: &Path) -> Result<Compiled> {
    let mut compiled = compile_file(compiler, path)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    compiled
        .compilation
        .check_paths(|written| path_kind(&folder.join(written)));
    Ok(compiled)
}

/// Compiles a spec for a command that uses it (its folders unlooked: `render`, `plan`,
/// `k8s`); its diagnostics are shown unless `renderer` is `None` (a second look at a spec
/// whose diagnostics were already shown).
pub(crate) fn compile_for_use(
    spec: &Path,
    renderer: Option<&Renderer>,
) -> Result<Option<Compiled>> {
    shown_if_valid(compile_file(&Compiler::new(), spec)?, renderer)
}

/// `compile_for_use` for `run`: with a compiler of its own (`--set`'s values in it), and the
/// spec's folders and files looked up here before anything starts.
pub(crate) fn compile_to_run(
    compiler: &Compiler,
    spec: &Path,
    renderer: Option<&Renderer>,
) -> Result<Option<Compiled>> {
    shown_if_valid(compile_file_here(compiler, spec)?, renderer)
}

/// A compiled spec's diagnostics shown (unless `renderer` is `None`), and the spec when it has
/// no error.
fn shown_if_valid(compiled: Compiled, renderer: Option<&Renderer>) -> Result<Option<Compiled>> {
    if let Some(renderer) = renderer {
        report_human(&compiled, renderer);
    }
    if compiled.compilation.matrix.is_none() {
        // The errors were shown above, `--set`'s among them; `validate` sees no `--set`.
        let why = if renderer.is_some() {
            "the errors above say why"
        } else {
            "`headroom validate` shows why"
        };
        eprintln!("error: `{}` is not valid: {why}", compiled.path);
        return Ok(None);
    }
    Ok(Some(compiled))
}

/// Whether a file's first MiB holds a PEM certificate: what a CA bundle must.
fn holds_a_certificate(path: &Path) -> bool {
    use std::io::Read;
    let mut start = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(1024 * 1024).read_to_end(&mut start))
        .is_ok()
        && start
            .windows(27)
            .any(|window| window == b"-----BEGIN CERTIFICATE-----")
}

/// What a path the spec names is on this machine (a link is followed), or why nothing is.
fn path_kind(path: &Path) -> std::result::Result<headroom_compiler::PathKind, String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(headroom_compiler::PathKind::Folder),
        Ok(meta) if meta.is_file() && holds_a_certificate(path) => {
            Ok(headroom_compiler::PathKind::Certificates)
        }
        Ok(meta) if meta.is_file() => Ok(headroom_compiler::PathKind::File),
        Ok(_) => Err("is neither a folder nor a regular file".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("does not exist (looked for {})", path.display()))
        }
        Err(e) => Err(format!("cannot be read ({}): {e}", path.display())),
    }
}

pub(crate) fn report_human(compiled: &Compiled, renderer: &Renderer) {
    let mut stderr = std::io::stderr().lock();
    let lines = headroom_compiler::LineIndex::new(&compiled.source);
    for diagnostic in &compiled.compilation.diagnostics {
        let _ = writeln!(
            stderr,
            "{}\n",
            render::human(diagnostic, &compiled.path, &lines, renderer)
        );
    }
}

/// A compilation's errors and warnings (notes are neither: said, not counted).
fn counts(compilation: &Compilation) -> (usize, usize) {
    let of = |severity| {
        compilation
            .diagnostics
            .iter()
            .filter(|d| d.severity() == severity)
            .count()
    };
    (of(Severity::Error), of(Severity::Warning))
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn validate(specs: &[PathBuf], format: Format, renderer: &Renderer) -> Result<u8> {
    let compiler = Compiler::new();
    let mut all = Vec::new();
    let mut trouble = false;
    for path in specs {
        // One unreadable file does not stop the others from being checked.
        match compile_file_here(&compiler, path) {
            Ok(compiled) => all.push(compiled),
            Err(error) => {
                eprintln!("error: {error:#}");
                trouble = true;
            }
        }
    }
    let invalid = all.iter().any(|c| c.compilation.has_errors());
    match format {
        Format::Json => {
            let diagnostics: Vec<headroom_compiler::DiagnosticJson> = all
                .iter()
                .flat_map(|c| {
                    let lines = headroom_compiler::LineIndex::new(&c.source);
                    c.compilation
                        .diagnostics
                        .iter()
                        .map(move |d| headroom_compiler::DiagnosticJson::of(d, &c.path, &lines))
                        .collect::<Vec<_>>()
                })
                .collect();
            print_json(&diagnostics)?;
        }
        Format::Human => {
            for compiled in &all {
                report_human(compiled, renderer);
                let (errors, warnings) = counts(&compiled.compilation);
                if errors > 0 {
                    eprintln!(
                        "error: `{}` is not valid: {}, {}",
                        compiled.path,
                        plural(errors, "error"),
                        plural(warnings, "warning")
                    );
                } else {
                    // Said before the verdict and counted in it: "valid (0 warnings)" and
                    // then a warning read as two answers.
                    let warnings = warnings + usize::from(warn_if_refused_here(compiled));
                    println!("{}: valid ({})", compiled.path, plural(warnings, "warning"));
                }
            }
        }
    }
    Ok(if trouble || invalid {
        exit::USAGE
    } else {
        exit::OK
    })
}

fn compile(path: &Path, json: bool, renderer: &Renderer) -> Result<u8> {
    let compiler = Compiler::new();
    let compiled = compile_file_here(&compiler, path)?;
    report_human(&compiled, renderer);
    let Some(plan) = &compiled.compilation.matrix else {
        let (errors, warnings) = counts(&compiled.compilation);
        eprintln!(
            "error: `{}` is not valid: {}, {}",
            compiled.path,
            plural(errors, "error"),
            plural(warnings, "warning")
        );
        return Ok(exit::USAGE);
    };
    warn_if_refused_here(&compiled);
    note_levers_too_few_repeats(plan);
    if json {
        print_json(plan)?;
    } else {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", matrix_table::matrix_table(plan))?;
    }
    Ok(exit::OK)
}

/// A phase that sweeps a lever at too few repeats a point for `compare --by` to call a
/// change (`headroom_compare::repeats`), said at `compile` so the trade is made on purpose.
fn note_levers_too_few_repeats(matrix: &headroom_matrix::RunMatrix) {
    for few in headroom_compare::repeats::levers_with_too_few_repeats(matrix) {
        eprintln!(
            "note: phase `{}` sweeps `{}` at {} a point, too few for `headroom compare --by {}` to call a change (it takes {} a side); set `repeats = {}` if you mean to compare it (docs/compare.md)",
            few.phase,
            few.variable,
            plural(few.repeats as usize, "repeat"),
            few.variable,
            few.needed,
            few.needed
        );
    }
}

/// Warns when `headroom run` would refuse the spec on this machine (too few ports, files,
/// cores, memory), said when a valid spec is validated or compiled here: a warning, since the
/// spec may be meant for another machine. Whether it warned.
fn warn_if_refused_here(compiled: &Compiled) -> bool {
    let Some(plan) = &compiled.compilation.matrix else {
        return false;
    };
    headroom_runner::raise_open_files();
    let machine = headroom_runner::machine::Machine::read();
    let phases: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    let Some(why) = headroom_runner::machine::refusal(plan, &phases, &machine) else {
        return false;
    };
    eprintln!(
        "warning: `headroom run {}` would be refused on this machine: {why}",
        compiled.path
    );
    true
}

fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}

/// `1h 23m 5s`, `42s`, `1.5s`.
pub(crate) fn human_duration(duration: headroom_spec::Duration) -> String {
    let micros = duration.as_micros();
    if micros < 60_000_000 {
        let seconds = micros as f64 / 1e6;
        return if seconds.fract() == 0.0 {
            format!("{seconds}s")
        } else {
            format!("{seconds:.1}s")
        };
    }
    let total = micros / 1_000_000;
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    match (h, m, s) {
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, 0) => format!("{h}h {m}m"),
        (h, m, s) => format!("{h}h {m}m {s}s"),
    }
}

pub(crate) fn default_results(bench: &str) -> PathBuf {
    PathBuf::from("results").join(bench).join("results.json")
}
