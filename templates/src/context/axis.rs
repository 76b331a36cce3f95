//! Where a phase's points lie on a number line: the one variable it sweeps, when that is a
//! number, so plots put the points at their values (ordered by load, to scale) and not in the
//! order they ran.

use headroom_results::PhaseResults;
use schemars::JsonSchema;
use serde::Serialize;

/// The one swept variable of a phase whose every point is a number of one unit.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Axis {
    /// The variable's name: `readers`.
    pub variable: String,
    /// Its unit as the spec writes it (`/s`), empty for a plain number.
    pub unit: String,
}

impl Axis {
    /// The axis title: `readers`, `rate (/s)`; on a log scale `rate (/s, log scale)`.
    pub fn title(&self, log: bool) -> String {
        match (self.unit.is_empty(), log) {
            (true, false) => self.variable.clone(),
            (true, true) => format!("{} (log scale)", self.variable),
            (false, false) => format!("{} ({})", self.variable, self.unit),
            (false, true) => format!("{} ({}, log scale)", self.variable, self.unit),
        }
    }
}

/// The axis of a phase and each point's value on it, in the phase's order; `None` when a point
/// sweeps several variables, another one, or one that is not a number.
pub(super) fn of(phase: &PhaseResults) -> Option<(Axis, Vec<f64>)> {
    let mut axis: Option<Axis> = None;
    let mut values = Vec::with_capacity(phase.points.len());
    for point in &phase.points {
        let mut at = point.at.iter();
        let (Some((variable, value)), None) = (at.next(), at.next()) else {
            return None;
        };
        let (number, unit) = value.quantity()?;
        if !number.is_finite() {
            return None;
        }
        match &axis {
            Some(axis) if axis.variable != *variable || axis.unit != unit => return None,
            Some(_) => {}
            None => {
                axis = Some(Axis {
                    variable: variable.clone(),
                    unit,
                })
            }
        }
        values.push(number);
    }
    Some((axis?, values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_spec::VarValue;

    fn phase(points: &[&[(&str, VarValue)]]) -> PhaseResults {
        let points: Vec<serde_json::Value> = points
            .iter()
            .enumerate()
            .map(|(index, at)| {
                let at: serde_json::Map<String, serde_json::Value> = at
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), serde_json::to_value(v).expect("value")))
                    .collect();
                serde_json::json!({ "index": index, "at": at, "runs": [] })
            })
            .collect();
        serde_json::from_value(serde_json::json!({ "name": "load", "points": points }))
            .expect("a phase")
    }

    #[test]
    fn one_numeric_variable_is_an_axis_with_its_unit() {
        let rate = |text: &str| VarValue::Text(text.to_owned());
        let (axis, values) = of(&phase(&[
            &[("rate", rate("400/s"))],
            &[("rate", rate("100/s"))],
            &[("rate", rate("400/s"))],
        ]))
        .expect("an axis");
        assert_eq!(axis.title(false), "rate (/s)");
        assert_eq!(axis.title(true), "rate (/s, log scale)");
        assert_eq!(values, [400.0, 100.0, 400.0]);
        let (axis, values) = of(&phase(&[
            &[("readers", VarValue::Integer(50))],
            &[("readers", VarValue::Float(62.5))],
        ]))
        .expect("an axis");
        assert_eq!(axis.title(true), "readers (log scale)");
        assert_eq!(values, [50.0, 62.5]);
    }

    #[test]
    fn several_variables_words_or_mixed_units_are_no_axis() {
        let two = phase(&[&[("a", VarValue::Integer(1)), ("b", VarValue::Integer(2))]]);
        assert!(of(&two).is_none());
        let words = phase(&[&[("cache", VarValue::Text("on".into()))]]);
        assert!(of(&words).is_none());
        let units = phase(&[
            &[("rate", VarValue::Text("1/s".into()))],
            &[("rate", VarValue::Text("1/m".into()))],
        ]);
        assert!(of(&units).is_none());
        let renamed = phase(&[
            &[("a", VarValue::Integer(1))],
            &[("b", VarValue::Integer(2))],
        ]);
        assert!(of(&renamed).is_none());
        assert!(of(&phase(&[&[]])).is_none());
    }
}
