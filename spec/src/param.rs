//! Values a phase can sweep: a literal, or a `"{variable}"` that names an entry of `[vars]`.
//!
//! `rooms = 16` and `rooms = "{rooms}"` are both a `Param<u64>`. The compiler substitutes the
//! variable at every point of the run matrix, so what the runner sees is always a literal.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::LazyLock;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::{Duration, Percent, QuantityKind, Rate, Size};
use crate::vars::VarValue;

/// The grammar of a placeholder that stands for a whole value.
pub const PLACEHOLDER_PATTERN: &str = r"^\{[a-z][a-z0-9_]*\}$";

/// A literal value or a reference to a spec variable.
#[derive(Debug, Clone, PartialEq)]
pub enum Param<T> {
    /// A value written in the spec.
    Value(T),
    /// A `"{variable}"`: the name of an entry of `[vars]`.
    Var(String),
}

impl<T> Param<T> {
    /// The literal, or `None` for a variable.
    pub fn value(&self) -> Option<&T> {
        match self {
            Param::Value(value) => Some(value),
            Param::Var(_) => None,
        }
    }

    /// The variable's name, or `None` for a literal.
    pub fn var(&self) -> Option<&str> {
        match self {
            Param::Value(_) => None,
            Param::Var(name) => Some(name),
        }
    }
}

/// What kind of value a [`Param`] holds, for checking a variable against each of its uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueKind {
    /// A whole number, at least 1 (rooms, peers, virtual users).
    Count,
    /// A number above zero (CPUs).
    Number,
    /// A quantity written with a unit.
    Quantity(QuantityKind),
    /// What counts capacity units (`[capacity] units`): a whole number of 0 or more (0 is the
    /// baseline point that fixes a fit's intercept), or a rate (requests per second).
    Units,
}

impl ValueKind {
    /// What the kind is, in an error message: `a whole number of at least 1`.
    pub fn describe(self) -> &'static str {
        match self {
            ValueKind::Count => "a whole number of at least 1",
            ValueKind::Number => "a number above 0",
            ValueKind::Units => "a whole number of 0 or more, or a rate",
            ValueKind::Quantity(QuantityKind::Duration) => "a duration",
            ValueKind::Quantity(QuantityKind::Size) => "a size",
            ValueKind::Quantity(QuantityKind::Rate) => "a rate",
            ValueKind::Quantity(QuantityKind::Percentage) => "a percentage",
        }
    }

    /// One value of this kind as TOML writes it, for hints: `16`, `"30s"`.
    pub fn sample(self) -> &'static str {
        match self {
            ValueKind::Count | ValueKind::Units => "16",
            ValueKind::Number => "0.5",
            ValueKind::Quantity(QuantityKind::Duration) => "\"30s\"",
            ValueKind::Quantity(QuantityKind::Size) => "\"512MiB\"",
            ValueKind::Quantity(QuantityKind::Rate) => "\"1/s\"",
            ValueKind::Quantity(QuantityKind::Percentage) => "\"1%\"",
        }
    }

    /// A value of this kind, as a hint writes it.
    pub fn example(self) -> &'static str {
        match self {
            ValueKind::Count => "16",
            ValueKind::Units => "16 or \"100/s\"",
            ValueKind::Number => "0.5",
            ValueKind::Quantity(kind) => kind.forms(),
        }
    }

    /// Checks that a variable's value can stand where this kind is expected.
    pub fn check(self, value: &VarValue) -> Result<(), String> {
        let wrong = || format!("expected {}, found {}", self.describe(), value.describe());
        match (self, value) {
            (ValueKind::Count, VarValue::Integer(n)) if *n >= 1 => Ok(()),
            (ValueKind::Units, VarValue::Integer(n)) if *n >= 0 => Ok(()),
            (ValueKind::Units, VarValue::Text(text)) => {
                text.parse::<Rate>().map(drop).map_err(|_| wrong())
            }
            (ValueKind::Number, VarValue::Integer(n)) if *n > 0 => Ok(()),
            (ValueKind::Number, VarValue::Float(x)) if *x > 0.0 && x.is_finite() => Ok(()),
            (ValueKind::Quantity(kind), VarValue::Text(text)) => {
                parse_quantity(kind, text).map_err(|error| error.to_string())
            }
            (ValueKind::Quantity(kind), VarValue::Integer(_) | VarValue::Float(_)) => Err(format!(
                "a bare number is ambiguous here: {} needs a unit, as in {}",
                self.describe(),
                kind.forms()
            )),
            _ => Err(wrong()),
        }
    }
}

fn parse_quantity(kind: QuantityKind, text: &str) -> Result<(), crate::units::UnitError> {
    match kind {
        QuantityKind::Duration => text.parse::<Duration>().map(drop),
        QuantityKind::Size => text.parse::<Size>().map(drop),
        QuantityKind::Rate => text.parse::<Rate>().map(drop),
        QuantityKind::Percentage => text.parse::<Percent>().map(drop),
    }
}

/// The value types a [`Param`] can hold.
pub trait ParamValue: Sized + Clone + Serialize {
    /// What kind of value it is.
    const KIND: ValueKind;

    /// Reads the value from a variable's value (after substitution).
    fn from_var(value: &VarValue) -> Result<Self, String>;

    /// The schema of the value or a placeholder, as one anchored pattern or type.
    fn param_schema() -> Schema;
}

/// The kind whose grammar (with or without the placeholder alternative) is `pattern`: what a
/// schema error's `pattern` asked for.
pub fn quantity_of_pattern(pattern: &str) -> Option<QuantityKind> {
    [
        QuantityKind::Duration,
        QuantityKind::Size,
        QuantityKind::Rate,
        QuantityKind::Percentage,
    ]
    .into_iter()
    .find(|kind| pattern == kind.pattern() || pattern == param_pattern(*kind))
}

/// The pattern for "a quantity or a placeholder", as one anchored regular expression, built
/// from the quantity's own grammar so the two cannot drift apart.
pub fn param_pattern(kind: QuantityKind) -> &'static str {
    static PATTERNS: LazyLock<[String; 4]> = LazyLock::new(|| {
        let alternative = |kind: QuantityKind| {
            let quantity = kind.pattern().trim_start_matches('^').trim_end_matches('$');
            let placeholder = PLACEHOLDER_PATTERN
                .trim_start_matches('^')
                .trim_end_matches('$');
            format!("^({placeholder}|{quantity})$")
        };
        [
            alternative(QuantityKind::Duration),
            alternative(QuantityKind::Size),
            alternative(QuantityKind::Rate),
            alternative(QuantityKind::Percentage),
        ]
    });
    let index = match kind {
        QuantityKind::Duration => 0,
        QuantityKind::Size => 1,
        QuantityKind::Rate => 2,
        QuantityKind::Percentage => 3,
    };
    &PATTERNS[index]
}

macro_rules! quantity_param {
    ($ty:ty, $kind:expr) => {
        impl ParamValue for $ty {
            const KIND: ValueKind = ValueKind::Quantity($kind);

            fn from_var(value: &VarValue) -> Result<Self, String> {
                Self::KIND.check(value)?;
                match value {
                    VarValue::Text(text) => text.parse().map_err(|e: crate::units::UnitError| e.to_string()),
                    _ => Err(format!("expected {}", Self::KIND.describe())),
                }
            }

            fn param_schema() -> Schema {
                json_schema!({
                    "type": "string",
                    "pattern": param_pattern($kind),
                    "description": format!(
                        "{}, or a \"{{variable}}\" from [vars]: {}",
                        Self::KIND.describe(),
                        $kind.forms()
                    ),
                })
            }
        }
    };
}

quantity_param!(Duration, QuantityKind::Duration);
quantity_param!(Size, QuantityKind::Size);
quantity_param!(Rate, QuantityKind::Rate);
quantity_param!(Percent, QuantityKind::Percentage);

impl ParamValue for u64 {
    const KIND: ValueKind = ValueKind::Count;

    /// 0 is read too: the checker refuses it where a count must be at least 1, except for
    /// the units variable's baseline point (a count of 0 users is a server with no load).
    fn from_var(value: &VarValue) -> Result<Self, String> {
        match value {
            VarValue::Integer(n) => u64::try_from(*n).map_err(|e| e.to_string()),
            _ => Err(format!("expected {}", Self::KIND.describe())),
        }
    }

    fn param_schema() -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "integer", "minimum": 1 },
                { "type": "string", "pattern": PLACEHOLDER_PATTERN },
            ],
            "description": "A whole number of at least 1, or a \"{variable}\" from [vars].",
        })
    }
}

impl ParamValue for f64 {
    const KIND: ValueKind = ValueKind::Number;

    fn from_var(value: &VarValue) -> Result<Self, String> {
        Self::KIND.check(value)?;
        match value {
            VarValue::Integer(n) => Ok(*n as f64),
            VarValue::Float(x) => Ok(*x),
            VarValue::Text(_) => Err(format!("expected {}", Self::KIND.describe())),
        }
    }

    fn param_schema() -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "number", "exclusiveMinimum": 0 },
                { "type": "string", "pattern": PLACEHOLDER_PATTERN },
            ],
            "description": "A number above 0, or a \"{variable}\" from [vars].",
        })
    }
}

/// `Some("rooms")` when `text` is exactly one placeholder such as `"{rooms}"`.
pub fn whole_placeholder(text: &str) -> Option<&str> {
    let name = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_lowercase()
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
    .then_some(name)
}

impl<T: ParamValue + fmt::Display> Serialize for Param<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Param::Value(value) => value.serialize(serializer),
            Param::Var(name) => serializer.collect_str(&format_args!("{{{name}}}")),
        }
    }
}

impl<'de, T: ParamValue> Deserialize<'de> for Param<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamVisitor<T>(PhantomData<T>);

        impl<'de, T: ParamValue> Visitor<'de> for ParamVisitor<T> {
            type Value = Param<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} or a \"{{variable}}\"", T::KIND.describe())
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                if let Some(name) = whole_placeholder(text) {
                    return Ok(Param::Var(name.to_owned()));
                }
                T::from_var(&VarValue::Text(text.to_owned()))
                    .map(Param::Value)
                    .map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
                // A literal count is at least 1; only a variable's baseline may be 0.
                let value = VarValue::Integer(n);
                T::KIND.check(&value).map_err(E::custom)?;
                T::from_var(&value).map(Param::Value).map_err(E::custom)
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                let n = i64::try_from(n).map_err(E::custom)?;
                self.visit_i64(n)
            }

            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
                T::from_var(&VarValue::Float(x))
                    .map(Param::Value)
                    .map_err(E::custom)
            }
        }

        deserializer.deserialize_any(ParamVisitor(PhantomData))
    }
}

impl<T: ParamValue> JsonSchema for Param<T> {
    fn schema_name() -> Cow<'static, str> {
        match T::KIND {
            ValueKind::Count => Cow::Borrowed("CountParam"),
            ValueKind::Number => Cow::Borrowed("NumberParam"),
            ValueKind::Quantity(QuantityKind::Duration) => Cow::Borrowed("DurationParam"),
            ValueKind::Quantity(QuantityKind::Size) => Cow::Borrowed("SizeParam"),
            ValueKind::Quantity(QuantityKind::Rate) => Cow::Borrowed("RateParam"),
            ValueKind::Quantity(QuantityKind::Percentage) => Cow::Borrowed("PercentParam"),
            // No `Param` holds units: the kind is only for the `[capacity] units` check.
            ValueKind::Units => Cow::Borrowed("UnitsParam"),
        }
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        T::param_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11, item 13: the units variable may be 0 (a baseline) or a rate.
    #[test]
    fn units_are_counts_from_zero_or_rates() {
        assert!(ValueKind::Units.check(&VarValue::Integer(0)).is_ok());
        assert!(ValueKind::Units.check(&VarValue::Integer(16)).is_ok());
        assert!(
            ValueKind::Units
                .check(&VarValue::Text("400/s".into()))
                .is_ok()
        );
        assert!(ValueKind::Units.check(&VarValue::Integer(-1)).is_err());
        assert!(
            ValueKind::Units
                .check(&VarValue::Text("lots".into()))
                .is_err()
        );
        assert!(ValueKind::Units.check(&VarValue::Float(0.5)).is_err());
    }

    #[test]
    fn placeholders_and_literals() {
        let p: Param<u64> = serde_json::from_str("\"{rooms}\"").expect("var");
        assert_eq!(p, Param::Var("rooms".into()));
        let p: Param<u64> = serde_json::from_str("16").expect("value");
        assert_eq!(p, Param::Value(16));
        let p: Param<Rate> = serde_json::from_str("\"0.45/s\"").expect("rate");
        assert_eq!(serde_json::to_string(&p).expect("ser"), "\"0.45/s\"");
        assert!(serde_json::from_str::<Param<u64>>("0").is_err());
        assert!(serde_json::from_str::<Param<Duration>>("30").is_err());
        assert!(serde_json::from_str::<Param<u64>>("\"{Rooms}\"").is_err());
    }

    #[test]
    fn bare_numbers_for_quantities_explain_the_units() {
        let error = ValueKind::Quantity(QuantityKind::Rate)
            .check(&VarValue::Integer(4))
            .expect_err("bare number");
        assert!(error.contains("ambiguous"), "{error}");
        assert!(error.contains("\"0.45/s\""), "{error}");
    }
}
