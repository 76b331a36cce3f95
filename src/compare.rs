//! `headroom compare BASE NEW`: two results files side by side, points matched by their
//! variables, every figure both measured judged from its repeats (`headroom_compare`), and the
//! CI gate.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_compare::gate::{self, Gate};
use headroom_compare::matching::{compare, compare_levers};
use headroom_compare::report::{FigureReport, Report, VerdictWord};
use headroom_compare::verdict::{ALPHA, Spread};

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
    let mut gates = args
        .fail_on
        .iter()
        .map(|rule| gate::parse(rule))
        .collect::<Result<Vec<_>, _>>()?;
    let base = crate::read_results(&args.base)?;
    let (comparison, quick, spec_gates) = match (&args.by, &args.new) {
        (Some(variable), _) => {
            let levers = compare_levers(&base, variable)
                .with_context(|| format!("{}", args.base.display()))?;
            (levers, base.quick, base.matrix.gates.clone())
        }
        (None, Some(new)) => {
            let new = crate::read_results(new)?;
            let table = headroom_pricing::PriceTable::embedded()
                .context("the shipped price table is broken")?;
            let comparison = compare(&base, &new, args.allow_cross_hardware, &table);
            // The change is held to the gates its own spec commits.
            (comparison, base.quick || new.quick, new.matrix.gates)
        }
        (None, None) => anyhow::bail!("give two results files, or one and `--by VARIABLE`"),
    };
    for gate in spec_gates {
        if !gates.iter().any(|g: &Gate| g.rule == gate.rule) {
            gates.push(gate);
        }
    }
    let outcomes = gate::check(&gates, &comparison)?;
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

/// What is said above the figures: unlike machines and limits.
fn warnings(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    if !report.machine_differences.is_empty() {
        let consequence = if report.across_machines {
            "judged anyway (--allow-cross-hardware)"
        } else {
            "no figure is called better or worse (--allow-cross-hardware to judge anyway)"
        };
        lines.push(format!(
            "cross-hardware: differences include the machine ({}): {consequence}",
            report.machine_differences.join("; ")
        ));
    }
    for unlike in &report.unlike_shapes {
        lines.push(format!("unlike limits: {unlike}"));
    }
    lines
}

/// What is said below the figures: why some cannot be told, unmatched points, the gates.
fn notes(report: &Report, quick: bool) -> Vec<String> {
    let reasons: BTreeSet<&String> = report
        .figures
        .iter()
        .filter_map(|f| f.why.as_ref())
        .collect();
    let mut lines: Vec<String> = reasons
        .into_iter()
        .map(|why| format!("cannot tell: {why}"))
        .collect();
    for place in &report.only_in_base {
        lines.push(format!("only in the base: {place}"));
    }
    for place in &report.only_in_new {
        lines.push(format!("only in the new file: {place}"));
    }
    for note in &report.notes {
        lines.push(format!("note: {note}"));
    }
    let noisy = report.figures.iter().filter(|f| f.noisy).count();
    if noisy > 0 {
        lines.push(format!(
            "noisy: {noisy} of the figures have repeats that spread more than {:.0} % (standard \
             deviation over mean) on a side: add repeats",
            report.method.noisy_cv * 100.0
        ));
    }
    for gate in &report.gates {
        let change = gate
            .change
            .map_or("from 0".to_owned(), |c| format!("{:+.1} %", c * 100.0));
        let result = if gate.failed { "FAILED" } else { "passed" };
        lines.push(format!(
            "gate `{}` at {} ({}): {change}, {}: {result}",
            gate.rule, gate.point, gate.figure, gate.verdict
        ));
    }
    lines.push(format!(
        "Each side: the median of its repeats (min–max, ×repeats). Verdicts: a two-sided \
         Mann–Whitney U test on the repeats at {:.0} %: a figure that did not change is called \
         better or worse at most once in {:.0} (docs/compare.md).",
        ALPHA * 100.0,
        1.0 / ALPHA
    ));
    if quick {
        lines.push(
            "note: a --quick run is compared: its holds and repeats were cut, its figures are \
             not ones to plan with"
                .to_owned(),
        );
    }
    lines
}

/// The cells of a figure's row: point, figure, base, new, change, verdict; `unit` is what
/// one unit is (`user`).
fn cells(figure: &FigureReport, unit: &str) -> [String; 6] {
    let verdict = match figure.verdict {
        VerdictWord::CannotTell => "cannot tell".to_owned(),
        VerdictWord::WithinNoise => {
            format!("within noise (p {:.2})", figure.p_value.unwrap_or(1.0))
        }
        VerdictWord::Better | VerdictWord::Worse => format!(
            "{} (p {:.3})",
            if matches!(figure.verdict, VerdictWord::Better) {
                "better"
            } else {
                "worse"
            },
            figure.p_value.unwrap_or(1.0)
        ),
    };
    let verdict = if figure.noisy {
        format!("{verdict}, noisy")
    } else {
        verdict
    };
    let point = if figure.point.is_empty() {
        figure.phase.clone()
    } else {
        format!("{}: {}", figure.phase, figure.point)
    };
    [
        point,
        figure.figure.clone(),
        spread(figure.base, &figure.figure, unit),
        spread(figure.new, &figure.figure, unit),
        figure
            .change
            .map_or("-".to_owned(), |c| format!("{:+.1} %", c * 100.0)),
        verdict,
    ]
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

/// A side's median, range and count, in the figure's unit: `12.40 ms (11.90–12.80, ×5)`,
/// `$0.1456 per user-month (0.1432–0.1464, ×5)`; `unit` is what one unit is (`user`).
fn spread(side: Option<Spread>, figure: &str, unit: &str) -> String {
    let Some(side) = side else {
        return "-".to_owned();
    };
    let unit = Unit::of(figure, side.max.abs().max(side.min.abs()), unit);
    let median = format!("{}{}", unit.currency, unit.number(side.median));
    if side.repeats == 1 {
        return format!("{median} {}", unit.name);
    }
    format!(
        "{median} {} ({}–{}, ×{})",
        unit.name,
        unit.number(side.min),
        unit.number(side.max),
        side.repeats
    )
}

/// How a figure's values are written: scaled, to some decimals, with a unit (and a currency
/// sign before the median).
struct Unit {
    currency: &'static str,
    name: String,
    scale: f64,
    decimals: usize,
}

impl Unit {
    /// The unit of `figure` (read from its name), for values up to `largest`; `counted` is
    /// what one of the plan's units is (`user`).
    fn of(figure: &str, largest: f64, counted: &str) -> Unit {
        let last = figure.rsplit('.').next().unwrap_or(figure);
        let unit = |name: &str, scale, decimals| Unit {
            currency: "",
            name: name.to_owned(),
            scale,
            decimals,
        };
        if figure.starts_with("plan.") {
            return match last.split_once("_per_unit_month") {
                Some((currency, "")) => Unit {
                    currency: match currency {
                        "usd" => "$",
                        "eur" => "€",
                        _ => "",
                    },
                    ..unit(&format!("per {counted}-month"), 1.0, 4)
                },
                _ => unit(&headroom_pricing::numbers::plural(counted), 1.0, 0),
            };
        }
        if last.len() > 1 && last.starts_with('p') && last[1..].chars().all(|c| c.is_ascii_digit())
        {
            if largest >= 1000.0 {
                unit("s", 1e-3, 3)
            } else {
                unit("ms", 1.0, 2)
            }
        } else if figure.ends_with(".errors") || figure.ends_with(".delivered") {
            unit("%", 100.0, 2)
        } else if figure == "rss_mib" {
            unit("MiB", 1.0, 1)
        } else if figure == "cpu_cores" {
            unit("cores", 1.0, 3)
        } else if figure.ends_with(".rate") {
            unit("/s", 1.0, 1)
        } else {
            unit("", 1.0, 3)
        }
    }

    fn number(&self, value: f64) -> String {
        format!("{:.*}", self.decimals, value * self.scale)
    }
}
