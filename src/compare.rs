//! `headroom compare BASE NEW`: two results files side by side, points matched by their
//! variables, every figure both measured judged from its repeats (`headroom_compare`).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_compare::matching::{Comparison, Row, compare};
use headroom_compare::verdict::{ALPHA, Spread, Verdict};

use crate::exit;

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The results file compared against (the base branch, the old version).
    base: PathBuf,
    /// The results file of the change.
    new: PathBuf,
    /// Call figures better or worse even when the files ran on different machines or limits.
    #[arg(long)]
    allow_cross_hardware: bool,
}

pub fn run(args: CompareArgs) -> Result<u8> {
    let base = crate::read_results(&args.base)?;
    let new = crate::read_results(&args.new)?;
    let comparison = compare(&base, &new, args.allow_cross_hardware);
    let mut out = std::io::stdout().lock();
    write!(
        out,
        "{}",
        transcript(&comparison, args.allow_cross_hardware)
    )?;
    if base.quick || new.quick {
        writeln!(
            out,
            "note: a --quick run is compared: its holds and repeats were cut, its figures are not \
             ones to plan with"
        )?;
    }
    Ok(exit::OK)
}

/// The comparison as the terminal shows it.
fn transcript(comparison: &Comparison, allow_cross_hardware: bool) -> String {
    let mut text = String::new();
    if !comparison.machine_differences.is_empty() {
        let consequence = if allow_cross_hardware {
            "judged anyway (--allow-cross-hardware)"
        } else {
            "no figure is called better or worse (--allow-cross-hardware to judge anyway)"
        };
        text.push_str(&format!(
            "cross-hardware: differences include the machine ({}): {consequence}\n",
            comparison.machine_differences.join("; ")
        ));
    }
    for unlike in &comparison.unlike_shapes {
        text.push_str(&format!("unlike limits: {unlike}\n"));
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["point", "figure", "base", "new", "change", "verdict"]);
    let mut reasons = BTreeSet::new();
    for row in &comparison.rows {
        let verdict = match &row.judgement.verdict {
            Verdict::CannotTell(why) => {
                reasons.insert(why.to_string());
                "cannot tell".to_owned()
            }
            Verdict::WithinNoise => format!(
                "within noise (p {:.2})",
                row.judgement.p_value.unwrap_or(1.0)
            ),
            called => format!(
                "{} (p {:.3})",
                called.word(),
                row.judgement.p_value.unwrap_or(1.0)
            ),
        };
        table.add_row(vec![
            Cell::new(point(row)),
            Cell::new(&row.figure),
            Cell::new(spread(row.judgement.base, &row.figure)).set_alignment(CellAlignment::Right),
            Cell::new(spread(row.judgement.new, &row.figure)).set_alignment(CellAlignment::Right),
            Cell::new(
                row.judgement
                    .change
                    .map_or("-".to_owned(), |c| format!("{:+.1} %", c * 100.0)),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(verdict),
        ]);
    }
    text.push_str(&format!("{table}\n"));
    for reason in reasons {
        text.push_str(&format!("cannot tell: {reason}\n"));
    }
    for place in &comparison.only_in_base {
        text.push_str(&format!("only in the base: {place}\n"));
    }
    for place in &comparison.only_in_new {
        text.push_str(&format!("only in the new file: {place}\n"));
    }
    text.push_str(&format!(
        "Each side: the median of its repeats (min–max, ×repeats). Verdicts: a two-sided \
         Mann–Whitney U test on the repeats at {:.0} %: a figure that did not change is called \
         better or worse at most once in {:.0} (docs/compare.md).\n",
        ALPHA * 100.0,
        1.0 / ALPHA
    ));
    text
}

fn point(row: &Row) -> String {
    if row.point.is_empty() {
        row.phase.clone()
    } else {
        format!("{}: {}", row.phase, row.point)
    }
}

/// A side's median, range and count, in the figure's unit: `12.40 ms (11.90–12.80, ×5)`.
fn spread(side: Option<Spread>, figure: &str) -> String {
    let Some(side) = side else {
        return "-".to_owned();
    };
    let unit = Unit::of(figure, side.max.abs().max(side.min.abs()));
    if side.repeats == 1 {
        return format!("{} {}", unit.number(side.median), unit.name);
    }
    format!(
        "{} {} ({}–{}, ×{})",
        unit.number(side.median),
        unit.name,
        unit.number(side.min),
        unit.number(side.max),
        side.repeats
    )
}

/// How a figure's values are written: scaled, to some decimals, with a unit.
struct Unit {
    name: &'static str,
    scale: f64,
    decimals: usize,
}

impl Unit {
    /// The unit of `figure` (read from its name), for values up to `largest`.
    fn of(figure: &str, largest: f64) -> Unit {
        let last = figure.rsplit('.').next().unwrap_or(figure);
        let unit = |name, scale, decimals| Unit {
            name,
            scale,
            decimals,
        };
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
