//! The quantities' grammars: each form parses to its value and prints back.

use super::*;

#[test]
fn durations_parse_and_print_back() {
    let cases = [
        ("30s", 30_000_000, "30s"),
        ("2m", 120_000_000, "2m"),
        ("2min", 120_000_000, "2m"),
        ("500ms", 500_000, "500ms"),
        ("1.5s", 1_500_000, "1500ms"),
        ("90s", 90_000_000, "90s"),
        ("7d", 604_800_000_000, "7d"),
        ("0s", 0, "0s"),
        ("250 ms", 250_000, "250ms"),
    ];
    for (text, micros, back) in cases {
        let parsed: Duration = text.parse().expect(text);
        assert_eq!(parsed.as_micros(), micros, "{text}");
        assert_eq!(parsed.to_string(), back, "{text}");
    }
}

#[test]
fn durations_refuse_bare_numbers_and_unknown_units() {
    for text in [
        "30",
        "30 seconds",
        "s",
        ".5s",
        "1.s",
        "-1s",
        "1e3s",
        "1..2s",
        "",
    ] {
        let error = text.parse::<Duration>().expect_err(text);
        assert!(error.to_string().contains("\"30s\""), "{error}");
    }
}

#[test]
fn sizes_use_binary_and_decimal_units_exactly() {
    assert_eq!("512MiB".parse::<Size>().map(Size::bytes), Ok(536_870_912));
    assert_eq!("4GB".parse::<Size>().map(Size::bytes), Ok(4_000_000_000));
    assert_eq!("220KiB".parse::<Size>().map(Size::bytes), Ok(225_280));
    assert_eq!(
        "1.5GiB".parse::<Size>().map(|s| s.to_string()),
        Ok("1536MiB".into())
    );
    assert_eq!(
        "200B".parse::<Size>().map(|s| s.to_string()),
        Ok("200B".into())
    );
    assert!("512".parse::<Size>().is_err());
    assert!("512mb".parse::<Size>().is_err());
}

#[test]
fn rates_keep_their_unit() {
    let rate: Rate = "0.45/s".parse().expect("rate");
    assert_eq!(rate.to_string(), "0.45/s");
    assert!((rate.as_per_second() - 0.45).abs() < 1e-12);
    let rate: Rate = "2/min".parse().expect("rate");
    assert_eq!(rate.to_string(), "2/m");
    assert!((rate.expected_in(Duration::from_secs(60)) - 2.0).abs() < 1e-12);
    assert!("2".parse::<Rate>().is_err());
    assert!("2/day".parse::<Rate>().is_err());
}

#[test]
fn percentages() {
    assert_eq!("1%".parse::<Percent>().map(Percent::fraction), Ok(0.01));
    assert_eq!(
        "99.5%".parse::<Percent>().map(|p| p.to_string()),
        Ok("99.5%".into())
    );
    assert!("0.01".parse::<Percent>().is_err());
}

#[test]
fn kind_is_found_from_its_pattern() {
    for kind in [
        QuantityKind::Duration,
        QuantityKind::Size,
        QuantityKind::Rate,
        QuantityKind::Percentage,
    ] {
        assert_eq!(
            crate::param::quantity_of_pattern(kind.pattern()),
            Some(kind)
        );
    }
}
