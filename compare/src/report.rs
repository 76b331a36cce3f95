//! A comparison as data: what `headroom compare --format json` prints
//! (`schemas/compare.schema.json`).

use headroom_prices::PriceTable;
use headroom_results::Results;
use serde::Serialize;

use crate::gate::GateOutcome;
use crate::matching::Comparison;
use crate::verdict::{ALPHA, Basis, CannotTell, Direction, EXACT_UP_TO, NOISY_CV, Spread, Verdict};

/// The version of `headroom compare --json`'s shape (schemas/compare.schema.json);
/// docs/contracts.md says what each version added.
pub const COMPARE_FORMAT: u32 = 1;

/// Two results files compared: every figure of every matched point judged from its repeats,
/// and the gates.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// The version of this shape ([`COMPARE_FORMAT`]); a reader refuses another.
    pub format: u32,
    /// The test behind every verdict.
    pub method: Method,
    /// How the new file's machine differs from the base's, one phrase a difference; empty
    /// when alike.
    pub machine_differences: Vec<String>,
    /// The `[vars]` values that differ between the two runs (`workers: 1 → 2 (--set)`).
    pub levers: Vec<String>,
    /// Matched points whose target ran under different limits: `phase: variables: base shape
    /// against new shape`.
    pub unlike_shapes: Vec<String>,
    /// What one unit is (the base spec's `[bench] unit`, `room`; `unit` when it names none):
    /// what `plan.INSTANCE.units` counts and `plan.INSTANCE.usd_per_unit_month` prices.
    pub unit: String,
    /// Whether figures were called better or worse across unlike machines or limits
    /// (`--allow-cross-hardware`).
    pub across_machines: bool,
    /// Every figure of every matched point, in the base file's order.
    pub figures: Vec<FigureReport>,
    /// Points only the base file has (`phase: variables`).
    pub only_in_base: Vec<String>,
    /// Points only the new file has.
    pub only_in_new: Vec<String>,
    /// What a reader must know to read the verdicts: runs where the generator was the
    /// bottleneck, a lever's repeats not interleaved, a lever's value with no point to compare.
    pub notes: Vec<String>,
    /// Every `--fail-on` rule at every point whose figure it names.
    pub gates: Vec<GateOutcome>,
    /// Whether a gate failed: the command's exit code is then 2.
    pub failed: bool,
}

/// The statistical test.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Method {
    /// `mann-whitney-u, two-sided`.
    pub test: String,
    /// The significance level: the most often a figure that did not change is called better
    /// or worse.
    pub alpha: f64,
    /// Repeats in all (both sides) up to which the p-value is exact.
    pub exact_up_to: usize,
    /// The coefficient of variation over which a side's repeats make a figure noisy.
    pub noisy_cv: f64,
    /// The smallest change of the medians called better or worse (a fraction: 0.03 is 3 %);
    /// a significant change under it is `no_meaningful_change`.
    pub min_effect: f64,
}

/// One figure of one matched point.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FigureReport {
    /// The phase's name.
    pub phase: String,
    /// The point's variables, `rooms = 4, fanout = 8` (empty when the phase sweeps nothing).
    pub point: String,
    /// The figure's name, as an SLO names it (`api.latency.p95`, `rss`); its values are in the
    /// figure catalogue's units (seconds, shares, bytes, cores); docs/compare.md lists them.
    pub figure: String,
    /// Which way is better.
    pub better: Better,
    /// What `base` and `new` summarize: a figure's repeats (`repeats`), or a fitted slope
    /// (`fit`: `median` the slope, `min`–`max` its 95 % interval, `repeats` the points).
    pub basis: Basis,
    /// The base file's repeats; absent when it did not measure the figure there.
    pub base: Option<Spread>,
    /// The new file's repeats; absent when it did not measure the figure there.
    pub new: Option<Spread>,
    /// The new median over the base's, less one (+0.1: 10 % higher); absent when the base's
    /// median is 0 and the new one is not.
    pub change: Option<f64>,
    /// The test's two-sided p-value; absent when it could not be run (too few repeats, a side
    /// missing).
    pub p_value: Option<f64>,
    /// What the repeats say.
    pub verdict: VerdictWord,
    /// Why the repeats cannot tell, in words.
    pub why: Option<String>,
    /// Across unlike machines or limits: what the test said, not called.
    pub unlike_verdict: Option<VerdictWord>,
    /// A side's repeats spread more than `noisy_cv` (coefficient of variation): add repeats.
    pub noisy: bool,
}

/// Which way is better for a figure.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Lower is better: latency, errors, memory, CPU.
    Lower,
    /// Higher is better: throughput, delivered messages.
    Higher,
}

/// A verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VerdictWord {
    /// Better beyond the noise of the repeats.
    Better,
    /// Worse beyond the noise of the repeats.
    Worse,
    /// The repeats of both sides rank together.
    WithinNoise,
    /// The sides rank apart, and their medians differ by less than the minimum effect.
    NoMeaningfulChange,
    /// Too few repeats, a side missing, or unlike machines: see `why`.
    CannotTell,
}

impl VerdictWord {
    fn of(verdict: &Verdict) -> VerdictWord {
        match verdict {
            Verdict::Better => VerdictWord::Better,
            Verdict::Worse => VerdictWord::Worse,
            Verdict::WithinNoise => VerdictWord::WithinNoise,
            Verdict::NoMeaningfulChange => VerdictWord::NoMeaningfulChange,
            Verdict::CannotTell(_) => VerdictWord::CannotTell,
        }
    }
}

impl Report {
    /// Two results files compared as a page shows them beside each other: like machines
    /// only, the default smallest effect ([`crate::verdict::MIN_EFFECT`]), no gates; each
    /// plan priced with `table`.
    pub fn of_files(base: &Results, new: &Results, table: &PriceTable) -> Report {
        let mut comparison = crate::matching::compare(base, new, false, table);
        comparison.apply_min_effect(crate::verdict::MIN_EFFECT);
        Report::new(&comparison, false, Vec::new())
    }

    /// The report of `comparison`, judged across machines when told to, with its gates'
    /// outcomes.
    pub fn new(comparison: &Comparison, across_machines: bool, gates: Vec<GateOutcome>) -> Report {
        let figures = comparison
            .rows
            .iter()
            .map(|row| {
                let verdict = &row.judgement.verdict;
                let (why, unlike_verdict) = match verdict {
                    Verdict::CannotTell(CannotTell::Unlike(was)) => (
                        Some(CannotTell::Unlike(was.clone()).to_string()),
                        Some(VerdictWord::of(was)),
                    ),
                    Verdict::CannotTell(why) => (Some(why.to_string()), None),
                    _ => (None, None),
                };
                FigureReport {
                    phase: row.phase.clone(),
                    point: row.point.clone(),
                    figure: row.figure.clone(),
                    better: match row.direction {
                        Direction::LowerIsBetter => Better::Lower,
                        Direction::HigherIsBetter => Better::Higher,
                    },
                    basis: row.judgement.basis,
                    base: row.judgement.base,
                    new: row.judgement.new,
                    change: row.judgement.change,
                    p_value: row.judgement.p_value,
                    verdict: VerdictWord::of(verdict),
                    why,
                    unlike_verdict,
                    noisy: [row.judgement.base, row.judgement.new]
                        .iter()
                        .flatten()
                        .any(Spread::noisy),
                }
            })
            .collect();
        let failed = gates.iter().any(|g| g.failed);
        Report {
            format: COMPARE_FORMAT,
            method: Method {
                test: "mann-whitney-u, two-sided".to_owned(),
                alpha: ALPHA,
                exact_up_to: EXACT_UP_TO,
                noisy_cv: NOISY_CV,
                min_effect: comparison.min_effect,
            },
            machine_differences: comparison.machine_differences.clone(),
            levers: comparison.levers.clone(),
            unlike_shapes: comparison.unlike_shapes.clone(),
            unit: comparison.unit.clone(),
            across_machines,
            figures,
            only_in_base: comparison.only_in_base.clone(),
            only_in_new: comparison.only_in_new.clone(),
            notes: comparison.notes.clone(),
            gates,
            failed,
        }
    }
}
