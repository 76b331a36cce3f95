//! `headroom compare BASE NEW`: two results files side by side, points matched by their
//! variables, every figure both measured judged from its repeats (`headroom_compare`), and the
//! CI gate.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_compare::gate::{self, GateRule};
use headroom_compare::levers::compare_levers;
use headroom_compare::matching::compare;
use headroom_compare::report::{FigureReport, Report};
use headroom_compare::text::{cells, changed, notes, rows, warnings};
use headroom_compare::verdict;

use crate::exit;

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The results file compared against (the base branch, the old version); with `--by`,
    /// the one file whose lever is compared.
    base: PathBuf,
    /// The results file of the change.
    #[arg(required_unless_present = "by", conflicts_with = "by")]
    new: Option<PathBuf>,
    /// Compare the values of one swept variable inside BASE (a lever: `cache = ["off",
    /// "on"]`): each later value against the phase's first, the other variables alike.
    #[arg(long, value_name = "VARIABLE")]
    by: Option<String>,
    /// Exit 2 when a figure got worse by more than this and not within noise: a figure (or
    /// its end, `seen_by_all.p95`) and a signed percentage, `'latency.p95 +10%'`. Repeatable;
    /// the rules of the new file's spec (`[compare] fail_on`) are held too.
    #[arg(long = "fail-on", value_name = "RULE")]
    fail_on: Vec<String>,
    /// `table` (the terminal), `md` (a pull-request comment) or `json`
    /// (schemas/compare.schema.json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Call figures better or worse even when the files ran on different machines or limits.
    #[arg(long, conflicts_with = "by")]
    allow_cross_hardware: bool,
    /// Compare files of two benches (`[bench] name` differs: a bench renamed since, said in a
    /// note); by default refused, as their points measure different things.
    #[arg(long, conflicts_with = "by")]
    allow_other_bench: bool,
    #[arg(long, value_name = "PERCENT", help = min_effect_help(), value_parser = crate::flags::percent)]
    min_effect: Option<f64>,
    /// Every figure at every point (table and Markdown); by default a figure's points that
    /// did not change are counted in one row a phase (with --by, every row is shown).
    #[arg(long)]
    all: bool,
    /// The price table of your own the plan's figures are priced with (over the shipped one).
    /// By default, the one the new file's spec names (`[plan] prices`, beside the spec as its
    /// results record it), as `plan` and the page price with it.
    #[arg(long, value_name = "FILE", conflicts_with = "by")]
    prices: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Md,
    Json,
}

/// `--min-effect`'s help, its default the comparison's own.
fn min_effect_help() -> String {
    format!(
        "The smallest change of the medians called better or worse, in percent: a significant change under it reads \"no meaningful change\" [default: {}%]",
        verdict::MIN_EFFECT * 100.0
    )
}

/// The command's closing help: the repeats a verdict needs come from the test itself.
pub fn after_help() -> String {
    let a_side = verdict::fewest_repeats_a_side();
    let against = a_side - 1;
    let fewest_against = verdict::fewest_against(against)
        .map(|m| format!(" (or {against} against {m})"))
        .unwrap_or_default();
    format!(
        "Examples:\n  headroom compare results/main.json results/change.json\n  headroom compare main.json change.json --fail-on 'latency.p95 +10%' --fail-on 'rate -5%'\n  headroom compare main.json change.json --format md > comment.md\n  headroom compare base.json new.json --allow-cross-hardware\n  headroom compare results/cache.json --by cache\n\nPoints are matched by phase and variables; with --by, each value of the lever is compared\nwith the phase's first, the other variables alike.\nA verdict needs {a_side} repeats a side{fewest_against}: `repeats` in the spec's phases.\nFiles from different machines or limits get no better or worse verdict unless\n--allow-cross-hardware. A gate fails when its figure moved past the threshold the worse way\nand the repeats do not put the move within noise (too few repeats to tell fails it too).\n\nExit codes: 0 compared (every gate passed), 1 a file or rule could not be read, 2 a gate\nfailed."
    )
}

/// The table a comparison prices with: the shipped one, under `--prices` or the table the new
/// file's spec names, as `plan` and `render --baseline` price that spec.
fn price_table(
    new: &headroom_runner::results::Results,
    new_path: &std::path::Path,
    given: Option<&std::path::Path>,
) -> Result<headroom_pricing::PriceTable> {
    let mut table =
        headroom_pricing::PriceTable::embedded().context("the shipped price table is broken")?;
    let own = match (
        given,
        new.matrix.plan.as_ref().and_then(|p| p.prices.as_ref()),
    ) {
        (Some(path), _) => Some((path.to_path_buf(), "given with --prices".to_owned())),
        (None, Some(file)) => {
            let spec = std::path::Path::new(&new.spec.path);
            let beside = spec
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join(file);
            Some((
                beside,
                format!(
                    "named by `[plan] prices` of {} (the spec of {}); give it with --prices when the spec is elsewhere",
                    spec.display(),
                    new_path.display()
                ),
            ))
        }
        (None, None) => None,
    };
    if let Some((path, named)) = own {
        table.extend(crate::read_price_table(&path, &named)?);
    }
    Ok(table)
}

/// Two results of one bench, or a refusal naming both (unless `allowed`, then a note): the
/// points of two benches are matched by their variables' names alone, and their figures
/// measure different servers or loads.
fn same_bench(
    base: &headroom_runner::results::Results,
    base_path: &std::path::Path,
    new: &headroom_runner::results::Results,
    new_path: &std::path::Path,
    allowed: bool,
) -> Result<()> {
    let (a, b) = (&base.matrix.bench.name, &new.matrix.bench.name);
    if a == b {
        return Ok(());
    }
    if !allowed {
        anyhow::bail!(
            "{} holds bench `{a}` and {} bench `{b}`: compare two results of one bench (a base and its change), or add --allow-other-bench if `{a}` was renamed `{b}`",
            base_path.display(),
            new_path.display()
        );
    }
    eprintln!(
        "note: comparing bench `{a}` ({}) with bench `{b}` ({}), as --allow-other-bench asks",
        base_path.display(),
        new_path.display()
    );
    Ok(())
}

pub fn run(args: CompareArgs) -> Result<u8> {
    let gates = args
        .fail_on
        .iter()
        .map(|rule| gate::parse(rule))
        .collect::<Result<Vec<_>, _>>()?;
    let base = crate::read_whole_results(&args.base)?;
    // The gates a spec commits, and the file whose spec it is (for an error's context).
    let (comparison, quick, spec_gates, gated) = match (&args.by, &args.new) {
        (Some(variable), _) => {
            let levers = compare_levers(&base, variable)
                .with_context(|| format!("{}", args.base.display()))?;
            (levers, base.quick, base.matrix.gates.clone(), &args.base)
        }
        (None, Some(new_path)) => {
            let new = crate::read_whole_results(new_path)?;
            same_bench(&base, &args.base, &new, new_path, args.allow_other_bench)?;
            let table = price_table(&new, new_path, args.prices.as_deref())?;
            let comparison = compare(&base, &new, args.allow_cross_hardware, &table);
            // The change is held to the gates its own spec commits.
            (
                comparison,
                base.quick || new.quick,
                new.matrix.gates,
                new_path,
            )
        }
        (None, None) => anyhow::bail!("give two results files, or one and `--by VARIABLE`"),
    };
    let mut comparison = comparison;
    comparison.apply_min_effect(args.min_effect.unwrap_or(verdict::MIN_EFFECT));
    let mut outcomes = gate::check(&gates, &comparison)?;
    let committed: Vec<GateRule> = spec_gates
        .into_iter()
        .filter(|gate| !gates.iter().any(|g: &GateRule| g.rule == gate.rule))
        .collect();
    outcomes.extend(gate::check(&committed, &comparison).with_context(|| {
        format!(
            "a gate of the spec behind {} (`[compare] fail_on`): fix or remove it there",
            gated.display()
        )
    })?);
    let report = Report::new(&comparison, args.allow_cross_hardware, outcomes);
    // With --by the points are the lever's values, the subject itself: each gets its row.
    let all = args.all || args.by.is_some();
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Table => write!(out, "{}", table(&report, quick, all))?,
        Format::Md => write!(out, "{}", markdown(&report, quick, all))?,
    }
    Ok(if report.failed {
        exit::GATE_FAILED
    } else {
        exit::OK
    })
}

const HEADER: [&str; 6] = ["point", "figure", "base", "new", "change", "verdict"];

fn table(report: &Report, quick: bool, all: bool) -> String {
    let mut text = String::new();
    for line in warnings(report) {
        text.push_str(&format!("{line}\n"));
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(HEADER);
    for [point, name, base, new, change, verdict] in rows(report, all) {
        table.add_row(vec![
            Cell::new(point),
            Cell::new(name),
            Cell::new(base).set_alignment(CellAlignment::Right),
            Cell::new(new).set_alignment(CellAlignment::Right),
            Cell::new(change).set_alignment(CellAlignment::Right),
            Cell::new(verdict),
        ]);
    }
    text.push_str(&format!("{table}\n"));
    for line in notes(report, quick) {
        text.push_str(&format!("{line}\n"));
    }
    text
}

/// For a pull-request comment: the figures that moved beyond noise first, then the rest.
fn markdown(report: &Report, quick: bool, all: bool) -> String {
    let mut text = String::from("## headroom compare\n\n");
    if !report.gates.is_empty() {
        let failed = report.gates.iter().filter(|g| g.failed).count();
        text.push_str(&format!(
            "**{failed} of {} gate checks failed** (the gates are listed under the table).\n\n",
            report.gates.len()
        ));
    }
    for line in warnings(report) {
        text.push_str(&format!("> {line}\n\n"));
    }
    text.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    text.push_str("| --- | --- | ---: | ---: | ---: | --- |\n");
    let called = |f: &&FigureReport| changed(f);
    let (first, rest): (Vec<&FigureReport>, Vec<&FigureReport>) =
        report.figures.iter().partition(called);
    let mut lines: Vec<[String; 6]> = first
        .iter()
        .map(|figure| {
            let mut cells = cells(figure, &report.unit);
            cells[5] = format!("**{}**", cells[5]);
            cells
        })
        .collect();
    if all {
        lines.extend(rest.iter().map(|f| cells(f, &report.unit)));
    } else {
        // The figures that did not change, counted as the table counts them.
        let quiet = Report {
            figures: rest.into_iter().cloned().collect(),
            ..report.clone()
        };
        lines.extend(rows(&quiet, false));
    }
    for cells in lines {
        let escaped: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        text.push_str(&format!("| {} |\n", escaped.join(" | ")));
    }
    text.push('\n');
    for line in notes(report, quick) {
        text.push_str(&format!("- {line}\n"));
    }
    text
}
