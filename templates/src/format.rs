//! Numbers as people write them, as minijinja filters: thousands separators, MiB with one
//! decimal, milliseconds or seconds by size, percentages, dollars to the cent.

pub use headroom_spec::numbers::{count, duration_ms, grouped, mib, number, percent, plural};

/// Bytes in the unit that reads best, for slopes: `10530089` → `10.04 MiB`, `3072` → `3.0 KiB`.
pub fn size(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "–".to_owned();
    }
    let magnitude = bytes.abs();
    if magnitude >= 1_073_741_824.0 {
        format!("{:.2} GiB", bytes / 1_073_741_824.0)
    } else if magnitude >= 1_048_576.0 {
        format!("{:.2} MiB", bytes / 1_048_576.0)
    } else if magnitude >= 1024.0 {
        format!("{:.1} KiB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} B")
    }
}

/// An amount in its currency: USD as dollars, EUR as euros (to the cent; small ones to two
/// significant digits).
pub fn money(value: f64, currency: Option<String>) -> String {
    let text = dollars(value);
    match currency.as_deref() {
        Some("EUR") => text.replacen('$', "€", 1),
        _ => text,
    }
}

/// Dollars to the cent; under a dollar, two significant digits (`$0.43`, `$0.038`).
pub fn dollars(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_owned();
    }
    let decimals = if value > 0.0 && value < 1.0 {
        (1 - value.log10().floor() as i64).max(2) as usize
    } else {
        2
    };
    format!("${}", grouped(&format!("{value:.decimals$}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_write_them() {
        assert_eq!(number(4.0), "4");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(1234.567), "1,234.57");
        assert_eq!(count(4393.0), "4,393");
        assert_eq!(count(1_000_000.0), "1,000,000");
        assert_eq!(count(12.0), "12");
        assert_eq!(mib(1_579_334_860.0, None), "1,506.2 MiB");
        assert_eq!(mib(10_530_089.0, Some(2)), "10.04 MiB");
        assert_eq!(duration_ms(0.843), "0.84 ms");
        assert_eq!(duration_ms(42.53), "42.5 ms");
        assert_eq!(duration_ms(2380.0), "2.38 s");
        assert_eq!(duration_ms(f64::INFINITY), "never");
        assert_eq!(percent(0.9912), "99.1 %");
        assert_eq!(dollars(1234.5), "$1,234.50");
        assert_eq!(dollars(0.43), "$0.43");
        assert_eq!(dollars(0.0381), "$0.038");
        assert_eq!(grouped("-1234567.25"), "-1,234,567.25");
        assert_eq!(size(10_530_089.0), "10.04 MiB");
        assert_eq!(size(3072.0), "3.0 KiB");
        assert_eq!(size(-512.0), "-512 B");
        assert_eq!(money(3.79, Some("EUR".into())), "€3.79");
        assert_eq!(money(0.047, Some("USD".into())), "$0.047");
    }
}
