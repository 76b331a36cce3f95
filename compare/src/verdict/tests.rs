use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// A figure of `repeats` runs: `median` times log-normal noise of `sigma` (a run's figures
/// spread by a multiple, not by a fixed amount).
fn repeats(rng: &mut StdRng, repeats: usize, median: f64, sigma: f64) -> Vec<f64> {
    (0..repeats)
        .map(|_| {
            // Box–Muller: a standard normal from two uniforms.
            let (u, v): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            median * (sigma * z).exp()
        })
        .collect()
}

fn called(judgement: &Judgement) -> bool {
    matches!(judgement.verdict, Verdict::Better | Verdict::Worse)
}

#[test]
fn the_p_value_is_exact() {
    // Complete separation of 5 against 5: 2 / C(10, 5).
    let p = p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
    assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    // scipy's documented example: mannwhitneyu(male, female, method="exact") gives U = 17,
    // p = 0.1111.
    let p = p_value(&[19.0, 22.0, 16.0, 29.0, 24.0], &[20.0, 11.0, 17.0, 12.0]);
    assert!((p - 0.111_111_111_111).abs() < 1e-9, "{p}");
    // Past the exact size, the normal approximation is close to the exact value.
    let base: Vec<f64> = (0..11).map(|i| f64::from(i) * 1.3).collect();
    let new: Vec<f64> = (0..11).map(|i| f64::from(i) * 1.3 + 4.1).collect();
    let pooled: Vec<f64> = base.iter().chain(&new).copied().collect();
    let (approximate, exact) = (p_value(&base, &new), every_split_p(&pooled, base.len()));
    assert!((approximate - exact).abs() < 0.01, "{approximate} {exact}");
    // With ties: base [1, 2, 2] against new [2, 3, 3, 4], mid-ranks 1, 3, 3 | 3, 5.5, 5.5, 7.
    // The base's rank sum is 7, 5 from its expectation of 12. Of the C(7, 3) = 35 splits, as
    // far or farther: 1 with two of the three tied 3s (3 splits, sum 7), and 5.5, 5.5, 7 (18).
    let tied = every_split_p(&[1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 4.0], 3);
    assert!((tied - 4.0 / 35.0).abs() < 1e-12, "{tied}");
}

#[test]
fn ranks_share_ties() {
    assert_eq!(ranks(&[10.0, 20.0, 10.0, 5.0]), vec![2.5, 4.0, 2.5, 1.0]);
}

/// Issue 16: an A/A comparison (both sides from one distribution) calls no figure better or
/// worse in at least 19 of 20 trials, at three repeats (where it cannot tell) and at five; and
/// over 4,000 trials the false-alarm rate is the test's 5 % at most.
#[test]
fn an_a_a_comparison_calls_nothing_in_nineteen_of_twenty() {
    let mut rng = StdRng::seed_from_u64(16);
    for n in [3, 5] {
        let calls = (0..20)
            .filter(|_| {
                let base = repeats(&mut rng, n, 100.0, 0.05);
                let new = repeats(&mut rng, n, 100.0, 0.05);
                called(&judge(&base, &new, Direction::LowerIsBetter))
            })
            .count();
        assert!(
            calls <= 1,
            "{n} repeats: {calls} of 20 A/A trials called a change"
        );
    }
    let trials = 4_000;
    let calls = (0..trials)
        .filter(|_| {
            let base = repeats(&mut rng, 5, 100.0, 0.05);
            let new = repeats(&mut rng, 5, 100.0, 0.05);
            called(&judge(&base, &new, Direction::LowerIsBetter))
        })
        .count();
    // At 5 against 5 the exact test's attainable levels just under 5 % are 0.032 and 0.056:
    // its real rate is 3.2 %. Binomial noise over 4,000 trials is under 0.3 % (one sigma).
    let rate = calls as f64 / f64::from(trials);
    assert!(rate <= ALPHA, "false alarms {rate}");
    assert!(rate > 0.02, "the rate should be near 3.2 %: {rate}");
}

/// Issue 16: a known regression (20 % slower, 5 % run-to-run noise, five repeats a side) is
/// called worse, and the same change in a higher-is-better figure is called better.
#[test]
fn a_twenty_percent_regression_is_called_worse() {
    let mut rng = StdRng::seed_from_u64(20);
    let mut worse = 0;
    for _ in 0..20 {
        let base = repeats(&mut rng, 5, 100.0, 0.05);
        let new = repeats(&mut rng, 5, 120.0, 0.05);
        let judgement = judge(&base, &new, Direction::LowerIsBetter);
        if judgement.verdict == Verdict::Worse {
            worse += 1;
        }
        let change = judgement.change.expect("a base median");
        assert!((0.05..0.40).contains(&change), "{change}");
        assert_eq!(
            judge(&base, &new, Direction::HigherIsBetter).verdict == Verdict::Better,
            judgement.verdict == Verdict::Worse
        );
    }
    assert!(worse >= 19, "called worse in {worse} of 20");
}

#[test]
fn too_few_repeats_cannot_tell_and_says_why() {
    let judgement = judge(&[1.0, 1.1, 0.9], &[2.0, 2.1, 1.9], Direction::LowerIsBetter);
    let reason = CannotTell::TooFewRepeats { base: 3, new: 3 };
    assert_eq!(judgement.verdict, Verdict::CannotTell(reason.clone()));
    assert_eq!(judgement.p_value, None);
    assert!(
        reason
            .to_string()
            .ends_with("1 more a side would be enough"),
        "{reason}"
    );
    assert!(
        reason
            .to_string()
            .starts_with("3 repeats a side measured it"),
        "{reason}"
    );
    let one = CannotTell::TooFewRepeats { base: 1, new: 1 }.to_string();
    assert!(one.starts_with("1 repeat a side measured it"), "{one}");
    let uneven = CannotTell::TooFewRepeats { base: 1, new: 3 }.to_string();
    assert!(
        uneven.starts_with("1 repeat against 3 measured it"),
        "{uneven}"
    );
    // Four a side can: complete separation is p = 2/70.
    let four = judge(
        &[1.0, 1.1, 0.9, 1.05],
        &[2.0, 2.1, 1.9, 2.05],
        Direction::LowerIsBetter,
    );
    assert_eq!(four.verdict, Verdict::Worse);
    let p = four.p_value.expect("tested");
    assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
    // Three against five can too; one repeat never.
    assert_eq!(smallest_p(3, 5), 2.0 / 56.0);
    assert!(matches!(
        judge(&[1.0], &[2.0], Direction::LowerIsBetter).verdict,
        Verdict::CannotTell(CannotTell::TooFewRepeats { base: 1, new: 1 })
    ));
    assert_eq!(
        judge(&[], &[2.0], Direction::LowerIsBetter).verdict,
        Verdict::CannotTell(CannotTell::Missing { base: 0, new: 1 })
    );
    assert_eq!(
        judge(&[1.0; 4], &[f64::NAN; 4], Direction::LowerIsBetter).verdict,
        Verdict::CannotTell(CannotTell::NotANumber)
    );
}

#[test]
fn identical_figures_are_within_noise() {
    // A count that did not move: every value tied, p = 1.
    let judgement = judge(&[300.0; 5], &[300.0; 5], Direction::HigherIsBetter);
    assert_eq!(judgement.verdict, Verdict::WithinNoise);
    let p = judgement.p_value.expect("tested");
    assert!((p - 1.0).abs() < 1e-12, "{p}");
    assert_eq!(judgement.change, Some(0.0));
    let spread = judgement.base.expect("a base");
    assert_eq!(
        (spread.repeats, spread.min, spread.median, spread.max),
        (5, 300.0, 300.0, 300.0)
    );
    assert_eq!(spread.cv, Some(0.0));
    assert!(!spread.noisy());
    // 10, 12, 14: standard deviation 2, mean 12: 16.7 % spread, noisy.
    let spread = judge(&[10.0, 12.0, 14.0], &[12.0], Direction::LowerIsBetter)
        .base
        .expect("a base");
    let cv = spread.cv.expect("three repeats");
    assert!((cv - 2.0 / 12.0).abs() < 1e-12, "{cv}");
    assert!(spread.noisy());
    // Errors from none to some: no base median to divide by.
    let errors = judge(
        &[0.0; 5],
        &[3.0, 4.0, 2.0, 5.0, 3.0],
        Direction::LowerIsBetter,
    );
    assert_eq!(errors.change, None);
    assert_eq!(errors.verdict, Verdict::Worse);
}

/// Issue 30: 0.4 % less rate, the repeats wholly apart (p 0.029 at four a side): a real change,
/// too small to act on under the 3 % default; called worse when the minimum effect is lower.
#[test]
fn a_significant_change_under_the_minimum_effect_is_no_meaningful_change() {
    let base = [1000.0, 1000.5, 999.8, 1000.2];
    let new = [996.0, 996.3, 995.9, 996.1];
    let mut judgement = judge(&base, &new, Direction::HigherIsBetter);
    assert_eq!(judgement.verdict, Verdict::Worse);
    assert!(judgement.p_value.is_some_and(|p| p < 0.05), "{judgement:?}");
    let change = judgement.change.expect("a change");
    assert!((change + 0.004).abs() < 0.0005, "{change}");
    let mut strict = judgement.clone();
    apply_min_effect(&mut strict, 0.001);
    assert_eq!(strict.verdict, Verdict::Worse);
    apply_min_effect(&mut judgement, MIN_EFFECT);
    assert_eq!(judgement.verdict, Verdict::NoMeaningfulChange);
    assert_eq!(judgement.verdict.word(), "no meaningful change");
}

/// The advice for too few repeats counts what each side has: four against three wants one
/// more on the new side, three a side one more each, one against one enough to reach it.
#[test]
fn too_few_repeats_say_how_many_more_each_side_needs() {
    assert_eq!(repeats_wanting(4, 3), (0, 1));
    assert_eq!(repeats_wanting(3, 3), (1, 1));
    assert!(smallest_p(4, 4) <= ALPHA && smallest_p(3, 3) > ALPHA);
    let said = CannotTell::TooFewRepeats { base: 4, new: 3 }.to_string();
    assert!(
        said.starts_with("4 repeats against 3 measured it"),
        "{said}"
    );
    assert!(
        said.ends_with("1 more on the new side would be enough"),
        "{said}"
    );
}
