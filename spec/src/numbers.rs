//! Numbers as people write them, in diagnostics, the planner's sentences and on the page:
//! thousands grouped by three.

/// `1506.2` → `1,506.2` (the digits before the point grouped by three).
pub fn grouped(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (whole, fraction) = match rest.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (rest, None),
    };
    let mut out = String::from(sign);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(fraction) = fraction {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

/// A count: `4393` → `4,393`; fractions rounded to whole.
pub fn count(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_owned();
    }
    grouped(&format!("{value:.0}"))
}

/// A unit's plural: `room` → `rooms`; a rate (`req/s`) or a unit that already ends in `s` is
/// the same in the plural.
pub fn plural(unit: &str) -> String {
    if unit.contains('/') || unit.ends_with('s') {
        unit.to_owned()
    } else {
        format!("{unit}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(plural("room"), "rooms");
        assert_eq!(plural("req/s"), "req/s");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(count(1_294_793.0), "1,294,793");
        assert_eq!(count(-1234.6), "-1,235");
        assert_eq!(grouped("1506.25"), "1,506.25");
        assert_eq!(count(f64::NAN), "–");
    }
}
