//! What an import takes from a provider's file is data from outside: a name becomes a row's id
//! only when it is a name, text is shown escaped, and a price no provider charges refuses the
//! file.

/// The longest name an importer takes (AWS's longest instance type, `u7inh-32tb.480xlarge`,
/// and Azure's, `Standard_M416ms_v2`, are far shorter).
const LONGEST_NAME: usize = 64;

/// A provider's name for a thing (an instance type, a region, a volume type): 1 to 64 ASCII
/// letters, digits, `.`, `_`, `+` and `-`, starting with a letter or a digit. Anything else
/// (a newline, a quote, a bracket, a space) is refused, saying what the text was.
pub(crate) fn name(text: &str) -> Result<&str, String> {
    let fits = !text.is_empty()
        && text.len() <= LONGEST_NAME
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'));
    if fits {
        Ok(text)
    } else {
        Err(format!(
            "`{}` is not a name (1 to {LONGEST_NAME} letters, digits, `.`, `_`, `+` or `-`)",
            shown(text)
        ))
    }
}

/// Text on one line, whole: control characters, quotes and backslashes escaped (a file's
/// name as given, which a row's source keeps).
pub fn one_line(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).collect()
}

/// Text from a file as it can be shown on one line: control characters, quotes and
/// backslashes escaped, cut after 80 characters.
pub fn shown(text: &str) -> String {
    const SHOWN: usize = 80;
    let mut out: String = text
        .chars()
        .take(SHOWN)
        .flat_map(char::escape_debug)
        .collect();
    let length = text.chars().count();
    if length > SHOWN {
        out.push_str(&format!("…({length} characters)"));
    }
    out
}

/// What a price is for, with the range the provider's own prices lie in: a price outside it
/// is not the provider's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Priced {
    /// An instance or a database class, US dollars an hour. AWS's dearest on-demand instance
    /// (u7in-32tb.224xlarge) is about $407 an hour, Azure's (M-series) under $200.
    UsdHour,
    /// Block storage, US dollars a GB-month (AWS's dearest, io2, $0.125).
    UsdGbMonth,
    /// An address, US dollars an hour ($0.005).
    UsdAddressHour,
    /// A server, euros a month (Hetzner's dearest, CCX63, under €400).
    EurMonth,
    /// A server or an address, euros an hour.
    EurHour,
    /// A volume, euros a GB-month (€0.0572 in 2026).
    EurGbMonth,
    /// Backups, a share of the server's price in percent (20 %).
    Percent,
}

impl Priced {
    /// The most this kind of price can be: ten times and more above the provider's dearest.
    fn most(self) -> f64 {
        match self {
            Priced::UsdHour => 1_000.0,
            Priced::UsdGbMonth => 10.0,
            Priced::UsdAddressHour => 1.0,
            Priced::EurMonth => 10_000.0,
            Priced::EurHour => 20.0,
            Priced::EurGbMonth => 10.0,
            Priced::Percent => 100.0,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Priced::UsdHour => "$ an hour",
            Priced::UsdGbMonth => "$ a GB-month",
            Priced::UsdAddressHour => "$ an address-hour",
            Priced::EurMonth => "€ a month",
            Priced::EurHour => "€ an hour",
            Priced::EurGbMonth => "€ a GB-month",
            Priced::Percent => "% of the server's price",
        }
    }
}

/// Whether `value` is a price the provider charges for `what`: above zero (no provider lists
/// these at nothing) and at most [`Priced::most`]. The error says the value and the range.
pub(crate) fn plausible(value: f64, what: Priced) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 && value <= what.most() {
        Ok(value)
    } else {
        Err(format!(
            "{value} {} is not a price the provider charges (above 0, at most {})",
            what.unit(),
            what.most()
        ))
    }
}

/// Whether `value` is a machine's size: `what` (`vCPUs`, `GiB of memory`) above zero and at
/// most `most`.
pub(crate) fn plausible_size(value: f64, what: &str, most: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 && value <= most {
        Ok(())
    } else {
        Err(format!(
            "{value} {what} is not a machine's (above 0, at most {most})"
        ))
    }
}

/// The most vCPUs an instance has (AWS's largest, 1,920; Azure's 832).
pub(crate) const MOST_VCPUS: f64 = 4_096.0;
/// The most memory an instance has, in GiB (AWS's largest, 32 TiB).
pub(crate) const MOST_GIB: f64 = 65_536.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name the providers use is a name; text that could end a TOML line or string is
    /// not.
    #[test]
    fn names_are_the_providers_and_nothing_else() {
        for good in [
            "m7g.xlarge",
            "u-6tb1.metal",
            "db.t4g.micro",
            "Standard_D2s_v3",
            "CX23",
            "gp3",
            "us-east-1",
            "fsn1",
        ] {
            assert_eq!(name(good), Ok(good));
        }
        for bad in [
            "",
            "m7g.xlarge\n[[aws_ec2]]",
            "a]",
            "a\"b",
            " m5.large",
            ".hidden",
            &"x".repeat(65),
        ] {
            let error = name(bad).expect_err(bad);
            assert!(!error.contains('\n'), "{error}");
        }
        assert_eq!(
            name("CX33\n[[hetzner_cloud]]").expect_err("a newline"),
            "`CX33\\n[[hetzner_cloud]]` is not a name (1 to 64 letters, digits, `.`, `_`, `+` or `-`)"
        );
    }

    #[test]
    fn prices_outside_the_providers_range_are_refused() {
        assert_eq!(plausible(0.0416, Priced::UsdHour), Ok(0.0416));
        for bad in [0.0, -0.01, 1e11, f64::NAN, f64::INFINITY] {
            assert!(plausible(bad, Priced::UsdHour).is_err(), "{bad}");
        }
        assert_eq!(
            plausible(-8.0, Priced::EurMonth).expect_err("negative"),
            "-8 € a month is not a price the provider charges (above 0, at most 10000)"
        );
        assert!(plausible_size(0.0, "vCPUs", MOST_VCPUS).is_err());
        assert!(plausible_size(-8.0, "GiB of memory", MOST_GIB).is_err());
        assert!(plausible_size(2.0, "vCPUs", MOST_VCPUS).is_ok());
    }

    #[test]
    fn shown_text_is_one_line() {
        assert_eq!(shown("a\nb\"c"), "a\\nb\\\"c");
        let long = "y".repeat(100);
        assert!(shown(&long).ends_with("…(100 characters)"));
    }
}
