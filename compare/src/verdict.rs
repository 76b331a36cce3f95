//! Whether a figure moved between a base and a new side, from each side's repeats: a two-sided
//! Mann–Whitney U test (H. B. Mann and D. R. Whitney, 1947, "On a test of whether one of two
//! random variables is stochastically larger than the other"; the test Google Benchmark's
//! `compare.py` applies to repetitions).
//!
//! Why a rank test: a run's figures are not normal (a shared machine's hiccup makes one repeat
//! slow, not every repeat a little slower), and three to five repeats a side tell nothing of
//! their distribution; the rank test assumes none. Its false-alarm rate is exact: when both
//! sides come from one distribution (an A/A comparison), a figure is called better or worse
//! with probability at most [`ALPHA`], 5 %. That is one figure in twenty of an A/A comparison
//! of twenty figures, which is why a gate names the figures it fails on.
//!
//! The price of assuming nothing: with few repeats no ranking is unlikely enough. The most
//! extreme ranking of n against m repeats has probability 2 / C(n+m, n): 0.1 for three a side,
//! 0.029 for four. With fewer than that allows, the verdict is [`Verdict::CannotTell`], never
//! "within noise", which would claim the test could have seen a change.
//!
//! The p-value is exact up to [`EXACT_UP_TO`] repeats in all: every split of the pooled repeats
//! into a base and a new side is enumerated, which handles ties (counts, figures rounded to the
//! microsecond) as they are. Past that, statrs's normal approximation with its tie and
//! continuity corrections (scipy's). statrs's own exact method is not used: in 0.19.1 its
//! two-sided p-value for equal sides is the complement of the right one (1.0 for five repeats
//! against five that rank wholly apart, where it is 2/252), and it refuses ties.

use statrs::stats_tests::Alternative;
use statrs::stats_tests::mannwhitneyu::{MannWhitneyUMethod, mannwhitneyu};

/// The false-alarm rate: the most often an A/A comparison calls a figure better or worse.
pub const ALPHA: f64 = 0.05;

/// The smallest change of the medians called better or worse by default (3 %): below it a
/// significant change is "no meaningful change". A rank test on quiet repeats calls a 0.4 %
/// drop in rate significant, which no one would act on.
pub const MIN_EFFECT: f64 = 0.03;

/// Pooled repeats up to which the p-value is exact, every split enumerated (C(20, 10) =
/// 184,756 of them at most).
pub const EXACT_UP_TO: usize = 20;

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Latency, errors, memory, CPU, dollars per unit.
    LowerIsBetter,
    /// Throughput, delivered messages, a ceiling.
    HigherIsBetter,
}

/// What the repeats say.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The sides rank apart, the better way, by at least the minimum effect.
    Better,
    /// The sides rank apart, the worse way, by at least the minimum effect.
    Worse,
    /// The test could have seen a change of this size and did not: the sides rank together.
    WithinNoise,
    /// The sides rank apart (the change is real), and their medians differ by less than the
    /// minimum effect: too small to act on.
    NoMeaningfulChange,
    /// The repeats cannot say, and why.
    CannotTell(CannotTell),
}

impl Verdict {
    /// The verdict in a word or two, as tables print it.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::NoMeaningfulChange => "no meaningful change",
            Verdict::CannotTell(_) => "cannot tell",
        }
    }
}

/// Why the repeats cannot say.
#[derive(Debug, Clone, PartialEq)]
pub enum CannotTell {
    /// A side has no repeat of the figure.
    Missing {
        /// The base side's repeats of it.
        base: usize,
        /// The new side's.
        new: usize,
    },
    /// Too few repeats for any ranking to be significant at [`ALPHA`].
    TooFewRepeats {
        /// The base side's repeats of it.
        base: usize,
        /// The new side's.
        new: usize,
    },
    /// A repeat's figure is not a number.
    NotANumber,
    /// The sides ran on different machines or under different limits, and the comparison was
    /// not told to judge across them: the difference includes the machine. The test's verdict
    /// had it been judged.
    Unlike(Box<Verdict>),
    /// Other work took a share of the machine over the hold of a run the figure rests on
    /// (run again, it competed all the same): a difference, or none, may be the other
    /// work's. The test's verdict had it been judged.
    Competed {
        /// Which run, and what the other work took, in words.
        why: String,
        /// The test's verdict.
        was: Box<Verdict>,
    },
}

impl std::fmt::Display for CannotTell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CannotTell::Missing { base, new } => {
                write!(f, "a side has no value ({base} base, {new} new)")
            }
            CannotTell::TooFewRepeats { base, new } => {
                let repeats = |n: &usize| format!("{n} repeat{}", if *n == 1 { "" } else { "s" });
                let sides = if base == new {
                    format!("{} a side", repeats(base))
                } else {
                    format!("{} against {new}", repeats(base))
                };
                let (more_base, more_new) = repeats_wanting(*base, *new);
                let more = match (more_base, more_new) {
                    (0, n) => format!("{n} more on the new side"),
                    (b, 0) => format!("{b} more on the base side"),
                    (b, n) if b == n => format!("{b} more a side"),
                    (b, n) => format!("{b} more on the base side and {n} on the new"),
                };
                write!(
                    f,
                    "{sides} measured it (a run that failed or did not measure the figure is \
                     not counted): no ranking of so few is unlikely enough to call a change at \
                     5 %; {more} would be enough"
                )
            }
            CannotTell::NotANumber => write!(f, "a figure is not a number"),
            CannotTell::Unlike(verdict) => write!(
                f,
                "{} on unlike machines or limits: the difference includes the machine",
                verdict.word()
            ),
            CannotTell::Competed { why, was } => write!(
                f,
                "not judged: {why}, so what it shows may be the other work's (the test read {})",
                was.word()
            ),
        }
    }
}

/// One side's repeats of a figure, in brief, in the figure's unit.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Spread {
    /// How many repeats measured the figure.
    pub repeats: usize,
    /// The lowest.
    pub min: f64,
    /// The median (of an even count, the mean of the middle two).
    pub median: f64,
    /// The highest.
    pub max: f64,
    /// The coefficient of variation: the repeats' sample standard deviation over their mean;
    /// absent with one repeat or a mean of 0.
    pub cv: Option<f64>,
}

pub use headroom_results::spread::NOISY_CV;

impl Spread {
    /// Whether the repeats spread more than [`NOISY_CV`].
    pub fn noisy(&self) -> bool {
        self.cv.is_some_and(|cv| cv > NOISY_CV)
    }
}

/// A figure's base and new repeats, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The base side's repeats in brief; `None` when it has none.
    pub base: Option<Spread>,
    /// The new side's.
    pub new: Option<Spread>,
    /// The new median over the base's, less one (+0.10: 10 % higher); `None` when the base's
    /// median is 0 and the new one is not.
    pub change: Option<f64>,
    /// The test's two-sided p-value, when it could be run.
    pub p_value: Option<f64>,
    /// What the repeats say.
    pub verdict: Verdict,
    /// What the sides summarize: repeats, or a fitted slope.
    pub basis: Basis,
}

/// What a side's [`Spread`] summarizes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The repeats of a figure: their count, lowest, median and highest; judged by the
    /// Mann–Whitney U test.
    #[default]
    Repeats,
    /// A least-squares slope over a sweep: `median` is the slope, `min` and `max` its 95 %
    /// confidence interval, `repeats` the points fitted; judged by Welch's t on the
    /// difference of the slopes.
    Fit,
    /// A searched SLO ceiling: `min` and `median` its last pass, `max` its first fail,
    /// `repeats` the runs that confirmed them; brackets apart are a change, overlapping ones
    /// are not.
    Search,
}

/// Judges a figure from its repeats on each side.
pub fn judge(base: &[f64], new: &[f64], direction: Direction) -> Judgement {
    let (base_spread, new_spread) = (spread(base), spread(new));
    let change = match (base_spread, new_spread) {
        (Some(b), Some(n)) if b.median == 0.0 => (n.median == 0.0).then_some(0.0),
        (Some(b), Some(n)) => Some(n.median / b.median - 1.0),
        _ => None,
    };
    let mut judgement = Judgement {
        base: base_spread,
        new: new_spread,
        change,
        p_value: None,
        verdict: Verdict::WithinNoise,
        basis: Basis::Repeats,
    };
    let cannot_tell = if base.is_empty() || new.is_empty() {
        Some(CannotTell::Missing {
            base: base.len(),
            new: new.len(),
        })
    } else if base.iter().chain(new).any(|v| !v.is_finite()) {
        Some(CannotTell::NotANumber)
    } else if smallest_p(base.len(), new.len()) > ALPHA {
        Some(CannotTell::TooFewRepeats {
            base: base.len(),
            new: new.len(),
        })
    } else {
        None
    };
    if let Some(reason) = cannot_tell {
        judgement.verdict = Verdict::CannotTell(reason);
        return judgement;
    }
    let p = p_value(base, new);
    judgement.p_value = Some(p);
    if p < ALPHA {
        let new_is_lower = rank_sum(base, new) > expected_rank_sum(base.len(), new.len());
        judgement.verdict = match (direction, new_is_lower) {
            (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => {
                Verdict::Better
            }
            _ => Verdict::Worse,
        };
    }
    judgement
}

/// Better or worse by less than `min_effect` (a fraction of the base's median) is no
/// meaningful change; a change from a median of 0 (no fraction) stays as judged.
pub fn apply_min_effect(judgement: &mut Judgement, min_effect: f64) {
    if matches!(judgement.verdict, Verdict::Better | Verdict::Worse)
        && judgement.change.is_some_and(|c| c.abs() < min_effect)
    {
        judgement.verdict = Verdict::NoMeaningfulChange;
    }
}

/// The fewest repeats to add to each side (base, new) for the most extreme ranking to be
/// significant at [`ALPHA`]: (1, 1) for three a side, (0, 1) for four against three.
fn repeats_wanting(base: usize, new: usize) -> (usize, usize) {
    // The fewest added in all; of those, the most even split.
    let mut best = ((usize::MAX, usize::MAX), (0, 0));
    for add_base in 0..=8 {
        for add_new in 0..=8 {
            let (b, n) = (base + add_base, new + add_new);
            let key = (add_base + add_new, add_base.max(add_new));
            if b > 0 && n > 0 && smallest_p(b, n) <= ALPHA && key < best.0 {
                best = (key, (add_base, add_new));
            }
        }
    }
    best.1
}

/// Whether `n` against `m` repeats can ever be called better or worse: their most extreme
/// ranking reaches `ALPHA`.
pub fn can_tell(n: usize, m: usize) -> bool {
    n > 0 && m > 0 && smallest_p(n, m) <= ALPHA
}

/// The fewest repeats a side that can be called better or worse (4: three against three
/// rank apart at p = 0.1 at best).
pub fn fewest_repeats_a_side() -> usize {
    (1..=EXACT_UP_TO)
        .find(|&n| can_tell(n, n))
        .unwrap_or(EXACT_UP_TO)
}

/// The fewest repeats against `n` that can be called better or worse, when any can (5
/// against 3).
pub fn fewest_against(n: usize) -> Option<usize> {
    (1..=EXACT_UP_TO).find(|&m| can_tell(n, m))
}

/// The probability of the most extreme ranking of `n` against `m` values, both ways.
fn smallest_p(n: usize, m: usize) -> f64 {
    2.0 / choose(n + m, n)
}

fn choose(n: usize, k: usize) -> f64 {
    (0..k.min(n - k)).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// One side's repeats in brief: the summary the page's cells show too.
fn spread(values: &[f64]) -> Option<Spread> {
    let summary = headroom_results::spread::RepeatSummary::of(values)?;
    Some(Spread {
        repeats: summary.sorted.len(),
        min: summary.min,
        median: summary.median,
        max: summary.max,
        cv: summary.cv,
    })
}

/// The two-sided p-value of the base repeats ranking apart from the new ones.
fn p_value(base: &[f64], new: &[f64]) -> f64 {
    let pooled: Vec<f64> = base.iter().chain(new).copied().collect();
    if pooled.len() <= EXACT_UP_TO {
        return every_split_p(&pooled, base.len());
    }
    // Only an empty side or an incomparable value (both excluded before) is an error.
    mannwhitneyu(
        base,
        new,
        MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
        Alternative::TwoSided,
    )
    .map_or(1.0, |(_, p)| p)
}

/// Ranks of `values` from 1, tied values sharing the mean of their ranks.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        // Positions i..=j hold one value: each gets the mean of ranks i+1..=j+1.
        let shared = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = shared;
        }
        i = j + 1;
    }
    ranks
}

/// The sum of the base repeats' ranks among all repeats.
fn rank_sum(base: &[f64], new: &[f64]) -> f64 {
    let pooled: Vec<f64> = base.iter().chain(new).copied().collect();
    ranks(&pooled)[..base.len()].iter().sum()
}

fn expected_rank_sum(n: usize, m: usize) -> f64 {
    n as f64 * (n + m + 1) as f64 / 2.0
}

/// The exact p-value with ties: the share of all ways to choose `n` of the pooled repeats as
/// the base whose rank sum is at least as far from its expectation as the one observed.
fn every_split_p(pooled: &[f64], n: usize) -> f64 {
    let ranks = ranks(pooled);
    let expected = expected_rank_sum(n, pooled.len() - n);
    let observed = (ranks[..n].iter().sum::<f64>() - expected).abs();
    // Rank sums are multiples of a half: a margin well under that absorbs rounding.
    let margin = 1e-9;
    let (mut extreme, mut total) = (0u64, 0u64);
    let mut chosen: Vec<usize> = (0..n).collect();
    loop {
        total += 1;
        let sum: f64 = chosen.iter().map(|&i| ranks[i]).sum();
        if (sum - expected).abs() >= observed - margin {
            extreme += 1;
        }
        // The next choice in lexicographic order.
        let Some(i) = (0..n).rev().find(|&i| chosen[i] < pooled.len() - n + i) else {
            break;
        };
        chosen[i] += 1;
        for j in i + 1..n {
            chosen[j] = chosen[j - 1] + 1;
        }
    }
    extreme as f64 / total as f64
}

#[cfg(test)]
mod tests;
