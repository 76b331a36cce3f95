use super::*;

/// Gunther's measurements as the `usl` crate and usl4j test them ("Guerrilla Capacity
/// Planning"), 32 sizes, and the book's fit: σ = 0.02671591, κ = 7.690945e-4, λ = 995.6486.
const BOOK: [(f64, f64); 32] = [
    (1.0, 955.16),
    (2.0, 1878.91),
    (3.0, 2688.01),
    (4.0, 3548.68),
    (5.0, 4315.54),
    (6.0, 5130.43),
    (7.0, 5931.37),
    (8.0, 6531.08),
    (9.0, 7219.8),
    (10.0, 7867.61),
    (11.0, 8278.71),
    (12.0, 8646.7),
    (13.0, 9047.84),
    (14.0, 9426.55),
    (15.0, 9645.37),
    (16.0, 9897.24),
    (17.0, 10097.6),
    (18.0, 10240.5),
    (19.0, 10532.39),
    (20.0, 10798.52),
    (21.0, 11151.43),
    (22.0, 11518.63),
    (23.0, 11806.0),
    (24.0, 12089.37),
    (25.0, 12075.41),
    (26.0, 12177.29),
    (27.0, 12211.41),
    (28.0, 12158.93),
    (29.0, 12155.27),
    (30.0, 12118.04),
    (31.0, 12140.4),
    (32.0, 12074.39),
];

fn within(value: f64, expected: f64, share: f64) -> bool {
    ((value - expected) / expected).abs() <= share
}

/// The fit agrees with the book's to 0.1 % on every parameter, and its peak is the book's
/// `floor(sqrt((1 − σ)/κ))`.
#[test]
fn the_law_fits_the_books_measurements() {
    let law = usl::fit_with(&BOOK, usl::Scatter::Absolute).expect("a fit");
    assert!(within(law.sigma, 0.02671591, 1e-3), "{law:?}");
    assert!(within(law.kappa, 7.690945e-4, 1e-3), "{law:?}");
    assert!(within(law.lambda, 995.6486, 1e-3), "{law:?}");
    for (interval, value) in [
        (law.lambda_ci95, law.lambda),
        (law.sigma_ci95, law.sigma),
        (law.kappa_ci95, law.kappa),
    ] {
        assert!(interval[0] < value && value < interval[1], "{law:?}");
    }
    let expected_peak = ((1.0 - 0.02671591_f64) / 7.690945e-4).sqrt().floor();
    assert_eq!(law.peak(), Some(expected_peak));
    assert!(law.caveats().is_empty(), "{:?}", law.caveats());
}

/// xorshift64*: a fixed, reproducible stream of uniform numbers in (0, 1).
struct Stream(u64);

impl Stream {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Issue 46: ceilings generated from σ = 0.05, κ = 0.001 (λ = 1,000) at 1 to 12 cores, each
/// scattered by a normal 1.5 % (a search brackets to 5 %), 40 times over. σ and κ fall inside
/// their 95 % intervals about 95 % of the time (at least 36 of 40 here), and every fit
/// predicts 16 cores within 10 % of the law's own ceiling there. Over 400 rounds of this
/// stream: σ inside 381, κ 385, the farthest prediction at 16 cores 8.7 % off, and the
/// prediction interval held the law's ceiling in 392 (unweighted, 361, and 12.3 % off).
#[test]
fn generated_sizes_recover_sigma_and_kappa_within_their_intervals() {
    let truth = [1000.0, 0.05, 0.001];
    let mut stream = Stream(0x9e37_79b9_7f4a_7c15);
    let (mut sigma_inside, mut kappa_inside) = (0, 0);
    let at_16 = usl::law(truth, 16.0);
    for round in 0..40 {
        let points: Vec<(f64, f64)> = (1..=12)
            .map(|n| {
                let n = f64::from(n);
                (n, usl::law(truth, n) * (1.0 + 0.015 * stream.normal()))
            })
            .collect();
        let law = usl::fit(&points).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let inside = |interval: [f64; 2], value: f64| interval[0] <= value && value <= interval[1];
        sigma_inside += usize::from(inside(law.sigma_ci95, truth[1]));
        kappa_inside += usize::from(inside(law.kappa_ci95, truth[2]));
        let predicted = law.predict(16.0);
        assert!(
            within(predicted, at_16, 0.10),
            "round {round}: {predicted} at 16 cores, the law's {at_16}: {law:?}"
        );
        let [low, high] = law.prediction_interval(16.0);
        assert!(low < predicted && predicted < high, "{low} … {high}");
    }
    assert!(
        sigma_inside >= 36,
        "σ inside its interval {sigma_inside} of 40"
    );
    assert!(
        kappa_inside >= 36,
        "κ inside its interval {kappa_inside} of 40"
    );
}

/// Under six sizes the law is not fitted: five sizes are named as too few.
#[test]
fn five_sizes_are_too_few_for_the_law() {
    let points: Vec<(f64, f64)> = BOOK[..5].to_vec();
    assert_eq!(usl::fit(&points), Err(ScalingError::TooFewSizes(5)));
    let scaling = CoreScaling::of(&points).expect("sizes");
    assert!(scaling.law.is_none());
}

/// Two sizes give the range: 4 cores hold at least what 2 held and at most twice it; half a
/// core at least half of one core's and at most one core's; 1.5 cores between the two sizes'
/// bounds; and past twice the largest (5 cores) nothing, unless asked for, then marked.
#[test]
fn two_sizes_give_the_measured_and_linear_range() {
    let scaling = CoreScaling::of(&[(1.0, 1000.0), (2.0, 1800.0), (2.0, 1700.0), (2.0, 1900.0)])
        .expect("sizes");
    assert_eq!(scaling.sizes, vec![(1.0, 1000.0), (2.0, 1800.0)]);
    let four = scaling.estimate(4.0, false).expect("4 is twice 2");
    assert_eq!(four.basis, Basis::Range);
    assert_eq!(
        (four.low, four.high, four.ceiling),
        (1800.0, 3600.0, 1800.0)
    );
    assert!(!four.extrapolated);
    let half = scaling.estimate(0.5, false).expect("half a core");
    assert_eq!((half.low, half.high), (500.0, 1000.0));
    let between = scaling.estimate(1.5, false).expect("1.5 cores");
    assert_eq!((between.low, between.high), (1350.0, 1500.0));
    let measured = scaling.estimate(2.0, false).expect("measured");
    assert_eq!(measured.basis, Basis::Measured);
    assert_eq!(measured.ceiling, 1800.0);
    assert_eq!(
        scaling.estimate(5.0, false),
        Err(ScalingError::PastTwice {
            cores: 5.0,
            largest: 2.0
        })
    );
    let asked = scaling.estimate(5.0, true).expect("asked for");
    assert!(asked.extrapolated);
    assert_eq!((asked.low, asked.high), (1800.0, 4500.0));
}

/// The law's predictions past twice the largest size are refused too, and marked when asked.
#[test]
fn the_law_refuses_past_twice_the_largest_size() {
    let scaling = CoreScaling::of(&BOOK[..8]).expect("sizes");
    let law = scaling.law.as_ref().expect("eight sizes fit the law");
    let sixteen = scaling.estimate(16.0, false).expect("16 is twice 8");
    assert_eq!(sixteen.basis, Basis::Law);
    assert_eq!(sixteen.ceiling, law.predict(16.0));
    assert!(sixteen.low < sixteen.ceiling && sixteen.ceiling < sixteen.high);
    assert!(matches!(
        scaling.estimate(17.0, false),
        Err(ScalingError::PastTwice { .. })
    ));
    assert!(scaling.estimate(17.0, true).expect("asked").extrapolated);
}

/// Amdahl's law (κ = 0), measured with a 1 % scatter, has no peak: κ's interval reaches zero,
/// no peak size is named, and the caveat says why.
#[test]
fn no_coherency_cost_has_no_peak() {
    let mut stream = Stream(7);
    let points: Vec<(f64, f64)> = (1..=8)
        .map(|n| {
            let n = f64::from(n);
            (
                n,
                usl::law([500.0, 0.1, 0.0], n) * (1.0 + 0.01 * stream.normal()),
            )
        })
        .collect();
    let law = usl::fit(&points).expect("a fit");
    assert!(law.kappa_ci95[0] <= 0.0, "{law:?}");
    assert!(within(law.sigma, 0.1, 0.5), "{law:?}");
    assert_eq!(law.peak(), None);
    assert!(
        law.caveats().iter().any(|c| c.contains("no peak")),
        "{:?}",
        law.caveats()
    );
}

/// Bad points are refused by name, not fitted.
#[test]
fn bad_points_are_refused() {
    assert_eq!(CoreScaling::of(&[]), Err(ScalingError::NoSizes));
    assert_eq!(
        CoreScaling::of(&[(1.0, 100.0), (2.0, f64::NAN)]),
        Err(ScalingError::NotPositive)
    );
    assert_eq!(
        CoreScaling::of(&[(0.0, 100.0)]),
        Err(ScalingError::NotPositive)
    );
}
