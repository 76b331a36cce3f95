//! `headroom fit`: a straight line through every series of every sweep, with the figures that
//! say how far to trust it; and the lines `plan` prints of the fits it stands on.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::fit_report::fit_every_series;
use headroom_pricing::points::{self, MeasuredSweep, Unit};

use crate::exit;

#[derive(clap::Args)]
pub struct FitArgs {
    /// A results file from `headroom run`.
    #[arg(required_unless_present = "points", conflicts_with = "points")]
    results: Option<PathBuf>,
    /// Points measured elsewhere: a CSV with a header, units in the column names' suffixes
    /// (_bytes, _kib, _mib, _gib, _ms, _s, _pct), or k6 summary exports, k6 CSV outputs or
    /// Locust stats CSVs, one file per step (repeat the flag).
    #[arg(long, requires = "x", value_name = "FILE")]
    points: Vec<PathBuf>,
    /// The x axis: the CSV's column, or what the tools' steps count (`users`).
    #[arg(long)]
    x: Option<String>,
    /// The step of one k6 or Locust file whose name does not say it.
    #[arg(long, requires = "points")]
    step: Option<f64>,
    /// Print the fits as JSON (in the series' own units: bytes, seconds, fractions).
    #[arg(long)]
    json: bool,
}

pub fn run(args: FitArgs) -> Result<u8> {
    let sweeps: Vec<MeasuredSweep> = match (&args.results, args.points.first(), &args.x) {
        (Some(path), _, _) => points::from_results(&crate::read_whole_results(path)?),
        (None, Some(_), Some(x)) => vec![crate::given_points::read(&args.points, x, args.step)?],
        _ => anyhow::bail!("give a results file, or `--points FILE.csv --x COLUMN`"),
    };
    let report = fit_every_series(&sweeps);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
        return Ok(exit::OK);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "sweep",
        "series",
        "n",
        "intercept",
        "slope",
        "R²",
        "slope 95 % CI",
    ]);
    for f in &report.fits {
        table.add_row(vec![
            Cell::new(format!("{}, per {}", f.sweep, f.x)),
            Cell::new(&f.series),
            Cell::new(f.n).set_alignment(CellAlignment::Right),
            Cell::new(amount(f.intercept, f.unit)).set_alignment(CellAlignment::Right),
            Cell::new(amount(f.slope, f.unit)).set_alignment(CellAlignment::Right),
            Cell::new(
                f.r2.map_or_else(|| "none: no variation".to_owned(), |r2| format!("{r2:.4}")),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(format!(
                "{} … {}",
                amount(f.slope_ci95[0], f.unit),
                amount(f.slope_ci95[1], f.unit)
            ))
            .set_alignment(CellAlignment::Right),
        ]);
    }
    writeln!(stdout, "{table}")?;
    for f in &report.fits {
        for warning in &f.warnings {
            writeln!(stdout, "warning: {} {}: {warning}", f.sweep, f.series)?;
        }
    }
    for s in &report.skipped {
        writeln!(stdout, "not fitted: {} {}: {}", s.sweep, s.series, s.reason)?;
    }
    Ok(exit::OK)
}

/// An amount as people write it: MiB with two decimals, ms or s, percentages, numbers.
fn amount(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes if value.abs() >= 1_048_576.0 / 100.0 => {
            format!("{:.2} MiB", value / 1_048_576.0)
        }
        Unit::Bytes => format!("{value:.0} B"),
        Unit::Seconds if value.abs() >= 1.0 => format!("{value:.3} s"),
        Unit::Seconds => format!("{:.2} ms", value * 1000.0),
        Unit::Fraction => format!("{:.2} %", value * 100.0),
        Unit::Plain => format!("{value:.4}"),
    }
}

/// Where the memory and CPU fits come from, a line each.
pub(crate) fn write_fits(
    out: &mut impl Write,
    report: &headroom_pricing::plan::PlanReport,
    unit: &str,
) -> Result<()> {
    for fit in report.fits.iter().filter(|f| f.series != "cpu") {
        writeln!(
            out,
            "memory fit, from `{}` ({}): {} points{}",
            fit.phase,
            fit.chosen_because,
            fit.n,
            if fit.weak { ", weak" } else { "" }
        )?;
    }
    for fit in report.fits.iter().filter(|f| f.series == "cpu") {
        writeln!(
            out,
            "CPU fit over the hold, from `{}`: {} points, {:.3} cores + {:.5} cores per {} (R² {}){}",
            fit.phase,
            fit.n,
            fit.intercept,
            fit.slope,
            unit,
            fit.r2
                .map_or_else(|| "-".to_owned(), |r2| format!("{r2:.3}")),
            if fit.weak {
                ", weak: not planned with"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}
