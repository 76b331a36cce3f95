//! The SLO ceiling per core count (`[plan] scale_cores`) and the law through it, as `plan`
//! prints them.

use std::io::Write;

use anyhow::Result;
use headroom_pricing::numbers::{count, plural};
use headroom_pricing::plan::ScaledCeilingsJson;
use headroom_pricing::scaling::MIN_SIZES;

/// Two to four lines: the ceilings measured per core count, then the law through them (its
/// parameters with their 95 % intervals and the peak size) or why there is none, and what a
/// prediction past the data needs.
pub fn write_scaled(out: &mut impl Write, scaled: &ScaledCeilingsJson, unit: &str) -> Result<()> {
    let sizes: Vec<String> = scaled
        .sizes
        .iter()
        .map(|size| {
            let cores = if size.cores == 1.0 {
                "1 core".to_owned()
            } else {
                format!("{} cores", count(size.cores))
            };
            let units = size.units.map_or_else(|| "not measured".to_owned(), count);
            format!("{units} at {cores} (`{}`)", size.phase)
        })
        .collect();
    writeln!(
        out,
        "SLO ceiling per core count, {}: {}.",
        plural(unit),
        sizes.join(", ")
    )?;
    match &scaled.law {
        Some(law) => {
            let peak = law.peak_cores.map_or_else(
                || "no peak in the data".to_owned(),
                |peak| format!("more cores hold less past {}", count(peak)),
            );
            writeln!(
                out,
                "Universal Scalability Law through them: λ {:.1} (95 %: {:.1}–{:.1}), σ {:.4} ({:.4}–{:.4}), κ {:.5} ({:.5}–{:.5}); {peak}.",
                law.lambda,
                law.lambda_ci95[0],
                law.lambda_ci95[1],
                law.sigma,
                law.sigma_ci95[0],
                law.sigma_ci95[1],
                law.kappa,
                law.kappa_ci95[0],
                law.kappa_ci95[1],
            )?;
            for caveat in &law.caveats {
                writeln!(out, "  {caveat}")?;
            }
        }
        None => writeln!(
            out,
            "Under {MIN_SIZES} core counts no law is fitted: each instance's SLO ceiling is a range, at least the largest smaller size's, at most linear scaling from it."
        )?,
    }
    let past = if scaled.extrapolate {
        "predicted, because --extrapolate asked, and marked"
    } else {
        "not predicted (--extrapolate)"
    };
    writeln!(
        out,
        "Past {} cores (twice the largest measured): {past}.",
        count(2.0 * scaled.largest_cores)
    )?;
    Ok(())
}
