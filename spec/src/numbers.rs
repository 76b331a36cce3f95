//! Numbers as people write them, in diagnostics, the planner's sentences, the run table and on
//! the page: thousands grouped by three, MiB with one decimal, milliseconds or seconds by size,
//! percentages.

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

/// A quantity that may be fractional: `4.0` → `4`, `2.5` → `2.5`, `1234.567` → `1,234.57`.
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_owned();
    }
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    grouped(text)
}

/// Bytes as MiB, one decimal unless asked: `1579334860` → `1,506.2 MiB`; `mib(2)` for slopes.
pub fn mib(bytes: f64, decimals: Option<usize>) -> String {
    if !bytes.is_finite() {
        return "–".to_owned();
    }
    let decimals = decimals.unwrap_or(1);
    format!(
        "{} MiB",
        grouped(&format!("{:.decimals$}", bytes / 1_048_576.0))
    )
}

/// Milliseconds by size: `0.84` → `0.84 ms`, `42.5` → `42.5 ms`, `2380` → `2.38 s`.
pub fn duration_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "never".to_owned();
    }
    if ms >= 1000.0 {
        format!("{} s", grouped(&format!("{:.2}", ms / 1000.0)))
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// A fraction as a percentage: `0.9912` → `99.1 %`.
pub fn percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "–".to_owned();
    }
    format!("{:.1} %", fraction * 100.0)
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
