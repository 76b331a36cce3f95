//! The unit grammars: what the parsers accept is exactly what the schema's patterns accept (so
//! an editor and `headroom validate` never disagree), and every value reads back from its text.

use headroom_spec::param::param_pattern;
use headroom_spec::{Duration, Percent, QuantityKind, Rate, Size};
use proptest::prelude::*;
use regex::Regex;

const KINDS: [QuantityKind; 4] = [
    QuantityKind::Duration,
    QuantityKind::Size,
    QuantityKind::Rate,
    QuantityKind::Percentage,
];

fn parses(kind: QuantityKind, text: &str) -> bool {
    match kind {
        QuantityKind::Duration => text.parse::<Duration>().is_ok(),
        QuantityKind::Size => text.parse::<Size>().is_ok(),
        QuantityKind::Rate => text.parse::<Rate>().is_ok(),
        QuantityKind::Percentage => text.parse::<Percent>().is_ok(),
    }
}

/// Each kind's pattern, and its pattern with the placeholder alternative, compiled once.
fn patterns() -> &'static [(QuantityKind, Regex, Regex)] {
    static PATTERNS: std::sync::OnceLock<Vec<(QuantityKind, Regex, Regex)>> =
        std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        KINDS
            .iter()
            .map(|&kind| {
                let plain = Regex::new(kind.pattern()).expect("pattern");
                let param = Regex::new(param_pattern(kind)).expect("param pattern");
                (kind, plain, param)
            })
            .collect()
    })
}

/// Strings close to the grammars: digits, dots, spaces, slashes and unit letters.
fn near_quantity() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{0,4}(\\.[0-9]{0,3})?( )?(us|ms|s|m|min|h|d|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|%|/s|/m|/min|/h|/ s|x|)",
        "[0-9. /%a-zA-Z{}_-]{0,10}",
        "\\{[a-z][a-z0-9_]{0,6}\\}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_parsers_and_the_schema_patterns_agree(text in near_quantity()) {
        // Up to the magnitude: a pattern cannot bound a number, and the parser refuses values
        // past u64 (`99999999999999999999d`); short texts stay inside it.
        prop_assume!(text.len() < 12);
        let placeholder = headroom_spec::param::whole_placeholder(&text).is_some();
        for (kind, plain, param) in patterns() {
            let parsed = parses(*kind, &text);
            prop_assert_eq!(plain.is_match(&text), parsed, "{:?} as {:?}", text, kind);
            prop_assert_eq!(param.is_match(&text), parsed || placeholder, "{:?} as {:?}", text, kind);
        }
    }

    #[test]
    fn durations_read_back(micros in 0u64..(1u64 << 50)) {
        let duration = Duration::from_micros(micros);
        prop_assert_eq!(duration.to_string().parse::<Duration>(), Ok(duration));
    }

    #[test]
    fn sizes_read_back(bytes in 0u64..(1u64 << 50)) {
        let size = Size::from_bytes(bytes);
        prop_assert_eq!(size.to_string().parse::<Size>(), Ok(size));
    }

    #[test]
    fn rates_and_percentages_read_back(hundredths in 0u32..10_000_000, per in 0usize..3) {
        let text = format!("{}/{}", hundredths as f64 / 100.0, ["s", "m", "h"][per]);
        let rate: Rate = text.parse().expect("rate");
        prop_assert_eq!(rate.to_string(), text);
        let text = format!("{}%", hundredths as f64 / 100.0);
        let percent: Percent = text.parse().expect("percent");
        prop_assert_eq!(percent.to_string(), text);
    }

    #[test]
    fn any_text_is_refused_or_parsed_never_a_panic(text in "\\PC{0,24}") {
        for kind in KINDS {
            let _ = parses(kind, &text);
        }
    }
}
