//! Quantities written as people write them: `"30s"`, `"512MiB"`, `"0.45/s"`, `"1%"`.
//!
//! Each type parses from a string only. A bare number is refused on purpose: `hold = 30` could
//! be seconds or milliseconds, so the spec says which. The JSON Schema of each type is a string
//! with the same grammar as its parser (the `*_PATTERN` constants), so editors flag what the
//! compiler would.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The grammar of a [`Duration`].
pub const DURATION_PATTERN: &str = r"^[0-9]+(\.[0-9]+)? ?(us|ms|s|m|min|h|d)$";
/// The grammar of a [`Size`].
pub const SIZE_PATTERN: &str = r"^[0-9]+(\.[0-9]+)? ?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$";
/// The grammar of a [`Rate`].
pub const RATE_PATTERN: &str = r"^[0-9]+(\.[0-9]+)? ?/ ?(s|m|min|h)$";
/// The grammar of a [`Percent`].
pub const PERCENT_PATTERN: &str = r"^[0-9]+(\.[0-9]+)? ?%$";

/// What the error message shows as the accepted forms of each quantity.
pub const DURATION_FORMS: &str =
    r#""250ms", "30s", "2m", "1.5h", "7d" (units: us, ms, s, m or min, h, d)"#;
/// What the error message shows as the accepted forms of a size.
pub const SIZE_FORMS: &str = r#""200B", "220KiB", "512MiB", "1.5GiB", "4GB" (KiB/MiB/GiB are powers of 1024, KB/MB/GB powers of 1000)"#;
/// What the error message shows as the accepted forms of a rate.
pub const RATE_FORMS: &str = r#""0.45/s", "20/s", "2/m" or "2/min", "30/h""#;
/// What the error message shows as the accepted forms of a percentage.
pub const PERCENT_FORMS: &str = r#""1%", "0.5%", "99.5%""#;

/// Why a quantity did not parse; the message lists the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The kind of quantity expected.
    pub kind: QuantityKind,
    /// What was written.
    pub input: String,
}

/// The kinds of quantity a spec writes with units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuantityKind {
    /// `"30s"`
    Duration,
    /// `"512MiB"`
    Size,
    /// `"20/s"`
    Rate,
    /// `"1%"`
    Percentage,
}

impl QuantityKind {
    /// The accepted forms, for an error message.
    pub fn forms(self) -> &'static str {
        match self {
            QuantityKind::Duration => DURATION_FORMS,
            QuantityKind::Size => SIZE_FORMS,
            QuantityKind::Rate => RATE_FORMS,
            QuantityKind::Percentage => PERCENT_FORMS,
        }
    }

    /// The grammar, as an anchored regular expression.
    pub fn pattern(self) -> &'static str {
        match self {
            QuantityKind::Duration => DURATION_PATTERN,
            QuantityKind::Size => SIZE_PATTERN,
            QuantityKind::Rate => RATE_PATTERN,
            QuantityKind::Percentage => PERCENT_PATTERN,
        }
    }

    /// Its name in an error message: `duration`.
    pub fn name(self) -> &'static str {
        match self {
            QuantityKind::Duration => "duration",
            QuantityKind::Size => "size",
            QuantityKind::Rate => "rate",
            QuantityKind::Percentage => "percentage",
        }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a {}; write it as {}",
            self.input,
            self.kind.name(),
            self.kind.forms()
        )
    }
}

impl std::error::Error for UnitError {}

/// Splits `"12.5 MiB"` into `(12.5, "MiB")`. Only plain decimals: no sign, no exponent.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(text.len(), |(i, _)| i);
    let (number, rest) = text.split_at(end);
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
        return None;
    }
    if number.matches('.').count() > 1 {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    Some((value, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// Formats a number the shortest way that reads back to the same value.
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value}");
        if text.contains('e') {
            format!("{value:.9}")
        } else {
            text
        }
    }
}

macro_rules! string_schema {
    ($ty:ty, $name:literal, $kind:expr, $description:literal) => {
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "pattern": $kind.pattern(),
                    "description": $description,
                })
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = Cow::<str>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// A length of time, kept in microseconds. Written `"250ms"`, `"30s"`, `"2m"`, `"1h"`, `"7d"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    micros: u64,
}

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration { micros: 0 };

    /// A duration of `micros` microseconds.
    pub const fn from_micros(micros: u64) -> Duration {
        Duration { micros }
    }

    /// A duration of `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> Duration {
        Duration {
            micros: millis * 1_000,
        }
    }

    /// A duration of `secs` seconds.
    pub const fn from_secs(secs: u64) -> Duration {
        Duration {
            micros: secs * 1_000_000,
        }
    }

    /// In microseconds.
    pub fn as_micros(self) -> u64 {
        self.micros
    }

    /// In seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.micros as f64 / 1e6
    }

    /// As the standard library's duration.
    pub fn as_std(self) -> std::time::Duration {
        std::time::Duration::from_micros(self.micros)
    }

    /// The sum, at most the largest duration.
    pub fn saturating_add(self, other: Duration) -> Duration {
        Duration {
            micros: self.micros.saturating_add(other.micros),
        }
    }

    /// `times` of it, at most the largest duration.
    pub fn saturating_mul(self, times: u64) -> Duration {
        Duration {
            micros: self.micros.saturating_mul(times),
        }
    }
}

const DURATION_UNITS: &[(&str, u64)] = &[
    ("d", 86_400_000_000),
    ("h", 3_600_000_000),
    ("m", 60_000_000),
    ("s", 1_000_000),
    ("ms", 1_000),
    ("us", 1),
];

impl FromStr for Duration {
    type Err = UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || UnitError {
            kind: QuantityKind::Duration,
            input: text.to_owned(),
        };
        let (value, unit) = split_number(text).ok_or_else(error)?;
        let unit = if unit == "min" { "m" } else { unit };
        let scale = DURATION_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(error)?;
        let micros = value * scale as f64;
        if !micros.is_finite() || micros > u64::MAX as f64 {
            return Err(error());
        }
        Ok(Duration {
            micros: micros.round() as u64,
        })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.micros == 0 {
            return f.write_str("0s");
        }
        // The largest unit that divides exactly, so the text reads back to the same value.
        for (name, scale) in DURATION_UNITS {
            if self.micros.is_multiple_of(*scale) {
                return write!(f, "{}{name}", self.micros / scale);
            }
        }
        write!(f, "{}us", self.micros)
    }
}

string_schema!(
    Duration,
    "Duration",
    QuantityKind::Duration,
    "A length of time with its unit: \"250ms\", \"30s\", \"2m\", \"1h\", \"7d\"."
);

/// An amount of memory or data, kept in bytes. `KiB`/`MiB`/`GiB` are powers of 1024,
/// `KB`/`MB`/`GB` powers of 1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Size {
    bytes: u64,
}

const SIZE_UNITS: &[(&str, u64)] = &[
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("TB", 1_000_000_000_000),
    ("GB", 1_000_000_000),
    ("MB", 1_000_000),
    ("KB", 1_000),
    ("B", 1),
];

impl Size {
    /// A size of `bytes` bytes.
    pub const fn from_bytes(bytes: u64) -> Size {
        Size { bytes }
    }

    /// A size of `mib` MiB.
    pub const fn from_mib(mib: u64) -> Size {
        Size { bytes: mib << 20 }
    }

    /// In bytes.
    pub fn bytes(self) -> u64 {
        self.bytes
    }

    /// In MiB.
    pub fn mib(self) -> f64 {
        self.bytes as f64 / (1u64 << 20) as f64
    }
}

impl FromStr for Size {
    type Err = UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || UnitError {
            kind: QuantityKind::Size,
            input: text.to_owned(),
        };
        let (value, unit) = split_number(text).ok_or_else(error)?;
        let scale = SIZE_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(error)?;
        let bytes = value * scale as f64;
        if !bytes.is_finite() || bytes > u64::MAX as f64 {
            return Err(error());
        }
        Ok(Size {
            bytes: bytes.round() as u64,
        })
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bytes == 0 {
            return f.write_str("0B");
        }
        // Binary units first: specs write memory in MiB and GiB.
        for (name, scale) in SIZE_UNITS {
            if self.bytes.is_multiple_of(*scale) {
                return write!(f, "{}{name}", self.bytes / scale);
            }
        }
        write!(f, "{}B", self.bytes)
    }
}

string_schema!(
    Size,
    "Size",
    QuantityKind::Size,
    "An amount of memory or data with its unit: \"200B\", \"220KiB\", \"512MiB\", \"1.5GiB\", \"4GB\"."
);

/// A time unit a rate is counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RatePer {
    /// Per second (`/s`).
    Second,
    /// Per minute (`/m`, `/min`).
    Minute,
    /// Per hour (`/h`).
    Hour,
}

impl RatePer {
    fn seconds(self) -> f64 {
        match self {
            RatePer::Second => 1.0,
            RatePer::Minute => 60.0,
            RatePer::Hour => 3600.0,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            RatePer::Second => "s",
            RatePer::Minute => "m",
            RatePer::Hour => "h",
        }
    }
}

/// Events per unit of time: `"0.45/s"`, `"2/m"`, `"30/h"`. Keeps the unit it was written in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    count: f64,
    per: RatePer,
}

impl Rate {
    /// `count` per second.
    pub fn per_second(count: f64) -> Rate {
        Rate {
            count,
            per: RatePer::Second,
        }
    }

    /// Events per second.
    pub fn as_per_second(self) -> f64 {
        self.count / self.per.seconds()
    }

    /// How many events fall, on average, into `window`.
    pub fn expected_in(self, window: Duration) -> f64 {
        self.as_per_second() * window.as_secs_f64()
    }
}

impl FromStr for Rate {
    type Err = UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || UnitError {
            kind: QuantityKind::Rate,
            input: text.to_owned(),
        };
        let (count, rest) = split_number(text).ok_or_else(error)?;
        let rest = rest.strip_prefix('/').ok_or_else(error)?;
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        let per = match rest {
            "s" => RatePer::Second,
            "m" | "min" => RatePer::Minute,
            "h" => RatePer::Hour,
            _ => return Err(error()),
        };
        if !count.is_finite() {
            return Err(error());
        }
        Ok(Rate { count, per })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", format_number(self.count), self.per.suffix())
    }
}

string_schema!(
    Rate,
    "Rate",
    QuantityKind::Rate,
    "Events per unit of time: \"0.45/s\", \"20/s\", \"2/m\", \"30/h\"."
);

/// A percentage as written: `"1%"` is `Percent(1.0)`, a fraction of 0.01.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Percent(f64);

impl Percent {
    /// A share of `percent` percent.
    pub fn new(percent: f64) -> Percent {
        Percent(percent)
    }

    /// In percent (`25.0`).
    pub fn percent(self) -> f64 {
        self.0
    }

    /// As a fraction (`0.25`).
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }
}

impl FromStr for Percent {
    type Err = UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || UnitError {
            kind: QuantityKind::Percentage,
            input: text.to_owned(),
        };
        let (value, rest) = split_number(text).ok_or_else(error)?;
        if rest != "%" || !value.is_finite() {
            return Err(error());
        }
        Ok(Percent(value))
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", format_number(self.0))
    }
}

string_schema!(
    Percent,
    "Percent",
    QuantityKind::Percentage,
    "A percentage: \"1%\", \"0.5%\", \"99.5%\"."
);

/// Checks that `text` is a plain decimal as the grammars use it (for ranges over quantities).
pub fn split_quantity(text: &str) -> Option<(f64, &str)> {
    split_number(text)
}

/// A number with its unit suffix, as a spec writes it: `0.5` and `s` give `"0.5s"`.
pub fn format_quantity(value: f64, suffix: &str) -> String {
    format!("{}{suffix}", format_number(value))
}

#[cfg(test)]
mod tests;
