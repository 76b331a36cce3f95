//! The page's "compared with" section (`headroom render --baseline BASE`): what moved against
//! a baseline results file, in the words and cells of `headroom compare`.

use headroom_compare::report::{Report, VerdictWord};
use headroom_compare::text::{cells, notes, warnings};
use schemars::JsonSchema;
use serde::Serialize;

/// The results compared against a baseline, as the page shows them.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Compared {
    /// The baseline results file, as given.
    pub baseline: String,
    /// Said above the tables: a different machine or limits (then nothing is called better
    /// or worse).
    pub warnings: Vec<String>,
    /// The cost of a unit and the units planned, per priced instance, before and after.
    pub costs: Vec<ComparedRow>,
    /// The measured figures called better or worse, point by point.
    pub moved: Vec<ComparedRow>,
    /// How many measured figures were within noise (not listed).
    pub within_noise: usize,
    /// How many measured figures changed by less than the minimum effect (not listed).
    pub no_meaningful_change: usize,
    /// How many measured figures cannot be told (not listed; `notes` says why).
    pub cannot_tell: usize,
    /// Said under the tables: why some cannot be told, points only one side has, runs bound
    /// by the generator, noisy repeats, the method.
    pub notes: Vec<String>,
}

/// One figure at one point, both sides.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ComparedRow {
    /// `phase: variables`, or `plan`.
    pub point: String,
    /// The figure's name (`api.latency.p95`, `plan.t4g.medium.usd_per_unit_month`).
    pub figure: String,
    /// The baseline's median (min–max, ×repeats), in the figure's unit.
    pub base: String,
    /// This file's.
    pub new: String,
    /// The change of the medians, signed: `+12.0 %`.
    pub change: String,
    /// `better (p 0.008)`, `worse …`, `within noise (p 0.42)`, `cannot tell`, with `noisy`.
    pub verdict: String,
}

impl Compared {
    /// The section from a comparison of `baseline` (the base) with this page's results (new).
    pub fn of(baseline: String, report: &Report, quick: bool) -> Compared {
        let row = |figure| {
            let [point, figure, base, new, change, verdict] = cells(figure, &report.unit);
            ComparedRow {
                point,
                figure,
                base,
                new,
                change,
                verdict,
            }
        };
        let (plan, measured): (Vec<_>, Vec<_>) =
            report.figures.iter().partition(|f| f.phase == "plan");
        let count =
            |word: fn(&VerdictWord) -> bool| measured.iter().filter(|f| word(&f.verdict)).count();
        let within_noise = count(|v| matches!(v, VerdictWord::WithinNoise));
        let cannot_tell = count(|v| matches!(v, VerdictWord::CannotTell));
        let no_meaningful_change = count(|v| matches!(v, VerdictWord::NoMeaningfulChange));
        let moved = measured
            .iter()
            .filter(|f| matches!(f.verdict, VerdictWord::Better | VerdictWord::Worse));
        Compared {
            baseline,
            warnings: warnings(report),
            costs: plan.into_iter().map(row).collect(),
            moved: moved.copied().map(row).collect(),
            within_noise,
            no_meaningful_change,
            cannot_tell,
            notes: notes(report, quick),
        }
    }
}
