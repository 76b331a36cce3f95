//! Spec variables (`[vars]`), their values, and the ranges a phase steps them over.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A variable's value. Its type comes from where it is used: `"0.45/s"` is a rate because a
/// `rate` field names the variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum VarValue {
    /// A whole number.
    Integer(i64),
    /// A number with a fraction.
    Float(f64),
    /// Text, such as a quantity with its unit (`"0.5/s"`).
    Text(String),
}

impl VarValue {
    /// What the value is, in an error message: `the number 4`, `"0.5/s"`.
    pub fn describe(&self) -> String {
        match self {
            VarValue::Integer(n) => format!("the number {n}"),
            VarValue::Float(x) => format!("the number {x}"),
            VarValue::Text(text) => format!("\"{text}\""),
        }
    }

    /// The value as a number and its unit (empty for a plain number): `400/s` is `(400, "/s")`;
    /// `None` for text that is not a quantity.
    pub fn quantity(&self) -> Option<(f64, String)> {
        numeric_parts(self).map(|(number, unit, _)| (number, unit))
    }
}

impl fmt::Display for VarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarValue::Integer(n) => write!(f, "{n}"),
            VarValue::Float(x) => write!(f, "{x}"),
            VarValue::Text(text) => f.write_str(text),
        }
    }
}

/// A point's swept values as every output writes them (the run table, the page, `compare`,
/// diagnostics, the runner's refusals): `rooms = 16, rate = 0.5`; empty for a point that
/// sweeps nothing.
pub fn point_label(at: &std::collections::BTreeMap<String, VarValue>) -> String {
    at.iter()
        .map(|(name, value)| format!("{name} = {value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `{ from = 16, to = 128, factor = 2 }` (geometric) or `{ from = 50, to = 500, step = 50 }`
/// (linear), both ends included. `from` and `to` may carry a unit (`"1/s"`, `"0.5s"`): the
/// range steps the number and keeps the unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// The first value.
    pub from: VarValue,
    /// The last value, included when a step lands on it.
    pub to: VarValue,
    /// Added at each step (linear range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    /// Multiplied at each step (geometric range); above 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
}

/// Why a range gives no usable values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeError {
    /// `from` and `to` are not numbers with the same unit.
    Ends(String),
    /// Neither or both of `step` and `factor`.
    Kind(String),
    /// A step or factor that never reaches `to`.
    Step(String),
    /// More values than a sweep may have.
    TooLong(usize),
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeError::Ends(m) | RangeError::Kind(m) | RangeError::Step(m) => f.write_str(m),
            RangeError::TooLong(n) => {
                write!(
                    f,
                    "this range has {n} values; a sweep may have at most {MAX_SWEEP_VALUES}"
                )
            }
        }
    }
}

/// The most values one axis may have; a longer sweep is a typo, not a plan.
pub const MAX_SWEEP_VALUES: usize = 10_000;

/// A value's number, its unit (empty for a plain number) and whether it is an integer.
fn numeric_parts(value: &VarValue) -> Option<(f64, String, bool)> {
    match value {
        VarValue::Integer(n) => Some((*n as f64, String::new(), true)),
        VarValue::Float(x) => Some((*x, String::new(), false)),
        VarValue::Text(text) => {
            let (number, suffix) = crate::units::split_quantity(text)?;
            Some((number, suffix.to_owned(), false))
        }
    }
}

/// Two ends (of a range, of a search) as numbers in one unit: `from`, `to`, their unit
/// (empty for plain numbers), and whether both are integers.
pub(crate) fn ends_of(
    from: &VarValue,
    to: &VarValue,
) -> Result<(f64, f64, String, bool), RangeError> {
    let (low, low_unit, low_int) = numeric_parts(from).ok_or_else(|| {
        RangeError::Ends(format!(
            "`from` must be a number or a quantity, found {}",
            from.describe()
        ))
    })?;
    let (high, high_unit, high_int) = numeric_parts(to).ok_or_else(|| {
        RangeError::Ends(format!(
            "`to` must be a number or a quantity, found {}",
            to.describe()
        ))
    })?;
    if low_unit != high_unit {
        return Err(RangeError::Ends(format!(
            "`from` and `to` must have the same unit, found {} and {}",
            from.describe(),
            to.describe()
        )));
    }
    Ok((low, high, low_unit, low_int && high_int))
}

impl Range {
    /// The values of the range, `from` first, `to` included when a step lands on it.
    pub fn values(&self) -> Result<Vec<VarValue>, RangeError> {
        let (from, to, from_unit, integers) = ends_of(&self.from, &self.to)?;
        if from > to {
            return Err(RangeError::Ends(format!(
                "`from` ({}) is above `to` ({}); a range counts upwards",
                self.from, self.to
            )));
        }
        let make = |x: f64| -> VarValue {
            if integers {
                VarValue::Integer(x.round() as i64)
            } else if from_unit.is_empty() {
                VarValue::Float(x)
            } else {
                VarValue::Text(crate::units::format_quantity(x, &from_unit))
            }
        };
        let mut values = Vec::new();
        // A relative tolerance keeps 0.1 + 0.1 + 0.1 from missing an end of 0.3.
        let limit = to + to.abs() * 1e-9 + 1e-12;
        match (self.step, self.factor) {
            (Some(step), None) => {
                if step.is_nan() || step <= 0.0 {
                    return Err(RangeError::Step(format!(
                        "`step` must be above 0, found {step}"
                    )));
                }
                let integers = integers && step.fract() == 0.0;
                let mut i = 0u64;
                loop {
                    let x = from + step * i as f64;
                    if x > limit {
                        break;
                    }
                    values.push(if integers {
                        VarValue::Integer(x.round() as i64)
                    } else {
                        make(x)
                    });
                    if values.len() > MAX_SWEEP_VALUES {
                        return Err(RangeError::TooLong(((to - from) / step) as usize + 1));
                    }
                    i += 1;
                }
            }
            (None, Some(factor)) => {
                if factor.is_nan() || factor <= 1.0 {
                    return Err(RangeError::Step(format!(
                        "`factor` must be above 1, found {factor}"
                    )));
                }
                if from <= 0.0 {
                    return Err(RangeError::Step(
                        "a geometric range must start above 0".to_owned(),
                    ));
                }
                let mut x = from;
                while x <= limit {
                    let value = make(x);
                    // Rounding to integers can repeat a value (1, 1.5→2, 2.25→2): keep one.
                    if values.last() != Some(&value) {
                        values.push(value);
                    }
                    if values.len() > MAX_SWEEP_VALUES {
                        return Err(RangeError::TooLong(values.len()));
                    }
                    x *= factor;
                }
            }
            (None, None) => {
                return Err(RangeError::Kind(
                    "a range needs `step` (linear) or `factor` (geometric)".to_owned(),
                ));
            }
            (Some(_), Some(_)) => {
                return Err(RangeError::Kind(
                    "a range takes `step` or `factor`, not both".to_owned(),
                ));
            }
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(from: VarValue, to: VarValue, step: Option<f64>, factor: Option<f64>) -> Range {
        Range {
            from,
            to,
            step,
            factor,
        }
    }

    #[test]
    fn geometric_range_doubles_rooms() {
        let r = range(
            VarValue::Integer(16),
            VarValue::Integer(128),
            None,
            Some(2.0),
        );
        assert_eq!(
            r.values(),
            Ok([16, 32, 64, 128].map(VarValue::Integer).to_vec())
        );
    }

    #[test]
    fn linear_range_includes_the_end() {
        let r = range(
            VarValue::Integer(50),
            VarValue::Integer(500),
            Some(50.0),
            None,
        );
        let values = r.values().expect("values");
        assert_eq!(values.len(), 10);
        assert_eq!(values.last(), Some(&VarValue::Integer(500)));
    }

    #[test]
    fn ranges_keep_units() {
        let r = range(
            VarValue::Text("0.25/s".into()),
            VarValue::Text("16/s".into()),
            None,
            Some(4.0),
        );
        let values: Vec<String> = r
            .values()
            .expect("values")
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(values, ["0.25/s", "1/s", "4/s", "16/s"]);
    }

    #[test]
    fn bad_ranges_say_why() {
        let r = range(VarValue::Integer(10), VarValue::Integer(1), Some(1.0), None);
        assert!(matches!(r.values(), Err(RangeError::Ends(_))));
        let r = range(VarValue::Integer(1), VarValue::Integer(10), None, Some(1.0));
        assert!(matches!(r.values(), Err(RangeError::Step(_))));
        let r = range(VarValue::Integer(1), VarValue::Integer(10), None, None);
        assert!(matches!(r.values(), Err(RangeError::Kind(_))));
        let r = range(
            VarValue::Text("1/s".into()),
            VarValue::Text("10s".into()),
            None,
            Some(2.0),
        );
        assert!(matches!(r.values(), Err(RangeError::Ends(_))));
        let r = range(
            VarValue::Integer(1),
            VarValue::Integer(1_000_000),
            Some(1.0),
            None,
        );
        assert!(matches!(r.values(), Err(RangeError::TooLong(_))));
    }
}
