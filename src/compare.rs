//! `headroom compare BASE NEW`: two results files side by side, points matched by their
//! variables, every figure both measured judged from its repeats (`headroom_compare`), and the
//! CI gate.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_compare::gate::{self, Gate};
use headroom_compare::matching::{compare, compare_levers};
use headroom_compare::report::{FigureReport, Report, VerdictWord};
use headroom_compare::text::{cells, notes, warnings};

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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Md,
    Json,
}

pub fn run(args: CompareArgs) -> Result<u8> {
    let gates = args
        .fail_on
        .iter()
        .map(|rule| gate::parse(rule))
        .collect::<Result<Vec<_>, _>>()?;
    let base = crate::read_results(&args.base)?;
    // The gates a spec commits, and the file whose spec it is (for an error's context).
    let (comparison, quick, spec_gates, gated) = match (&args.by, &args.new) {
        (Some(variable), _) => {
            let levers = compare_levers(&base, variable)
                .with_context(|| format!("{}", args.base.display()))?;
            (levers, base.quick, base.matrix.gates.clone(), &args.base)
        }
        (None, Some(new_path)) => {
            let new = crate::read_results(new_path)?;
            let table = headroom_pricing::PriceTable::embedded()
                .context("the shipped price table is broken")?;
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
    let mut outcomes = gate::check(&gates, &comparison)?;
    let committed: Vec<Gate> = spec_gates
        .into_iter()
        .filter(|gate| !gates.iter().any(|g: &Gate| g.rule == gate.rule))
        .collect();
    outcomes.extend(gate::check(&committed, &comparison).with_context(|| {
        format!(
            "a gate of the spec behind {} (`[compare] fail_on`): fix or remove it there",
            gated.display()
        )
    })?);
    let report = Report::new(&comparison, args.allow_cross_hardware, outcomes);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Table => write!(out, "{}", table(&report, quick))?,
        Format::Md => write!(out, "{}", markdown(&report, quick))?,
    }
    Ok(if report.failed {
        exit::GATE_FAILED
    } else {
        exit::OK
    })
}

const HEADER: [&str; 6] = ["point", "figure", "base", "new", "change", "verdict"];

fn table(report: &Report, quick: bool) -> String {
    let mut text = String::new();
    for line in warnings(report) {
        text.push_str(&format!("{line}\n"));
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(HEADER);
    for figure in &report.figures {
        let [point, name, base, new, change, verdict] = cells(figure, &report.unit);
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
fn markdown(report: &Report, quick: bool) -> String {
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
    let called = |f: &&FigureReport| matches!(f.verdict, VerdictWord::Better | VerdictWord::Worse);
    let (first, rest): (Vec<&FigureReport>, Vec<&FigureReport>) =
        report.figures.iter().partition(called);
    for figure in first.into_iter().chain(rest) {
        let mut cells = cells(figure, &report.unit);
        if matches!(figure.verdict, VerdictWord::Better | VerdictWord::Worse) {
            cells[5] = format!("**{}**", cells[5]);
        }
        let escaped: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        text.push_str(&format!("| {} |\n", escaped.join(" | ")));
    }
    text.push('\n');
    for line in notes(report, quick) {
        text.push_str(&format!("- {line}\n"));
    }
    text
}
