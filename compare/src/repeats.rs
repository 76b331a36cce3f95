//! How many repeats a comparison needs, said before a run: the phases whose lever a
//! `compare --by` could never call better or worse at the repeats they run.

use headroom_matrix::RunMatrix;

use crate::verdict::fewest_repeats_a_side;

/// A phase that sweeps a lever (a variable other than the units) at too few repeats a point
/// for `headroom compare --by` to call a change.
#[derive(Debug, Clone, PartialEq)]
pub struct TooFewRepeats {
    /// The phase.
    pub phase: String,
    /// The lever it sweeps.
    pub variable: String,
    /// Its repeats a point.
    pub repeats: u32,
    /// The fewest a side that can be told apart.
    pub needed: usize,
}

/// Every phase of `matrix` that sweeps a lever at fewer repeats than a verdict needs (not a
/// search, not a phase run in an instance's shape).
pub fn levers_with_too_few_repeats(matrix: &RunMatrix) -> Vec<TooFewRepeats> {
    let needed = fewest_repeats_a_side();
    let units = matrix.capacity.units.as_deref();
    let mut found = Vec::new();
    for phase in matrix.phases.iter().filter(|p| p.emulates.is_none()) {
        if phase.repeats as usize >= needed || phase.search.is_some() {
            continue;
        }
        let levers = phase
            .axes
            .iter()
            .filter(|axis| Some(axis.variable.as_str()) != units && axis.values.len() >= 2);
        found.extend(levers.map(|axis| TooFewRepeats {
            phase: phase.name.clone(),
            variable: axis.variable.clone(),
            repeats: phase.repeats,
            needed,
        }));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{can_tell, fewest_against};

    /// The exact test's own limits: 3 against 3 cannot reach 5 % (2 / C(6, 3) = 0.1), 4
    /// against 4 can (2 / 70), and 3 against 5 can (2 / 56).
    #[test]
    fn the_fewest_repeats_come_from_the_test() {
        assert_eq!(fewest_repeats_a_side(), 4);
        assert!(!can_tell(3, 3));
        assert!(can_tell(4, 4));
        assert_eq!(fewest_against(3), Some(5));
        assert_eq!(fewest_against(1), None);
    }

    #[test]
    fn a_lever_at_three_repeats_is_found_and_the_units_are_not() {
        let text = r#"
[bench]
name = "levers"
[vars]
rate = "10/s"
cache = "on"
[target]
url = "http://127.0.0.1:8080"
[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/?cache={cache}" }]
[capacity]
units = "rate"
[[phase]]
name = "sweep"
hold = "10s"
repeats = 3
vary = { rate = ["10/s", "20/s"], cache = ["on", "off"] }
[[phase]]
name = "enough"
hold = "10s"
repeats = 4
vary = { cache = ["on", "off"] }
"#;
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        let compiled = headroom_compiler::Compiler::new().compile(text, &prices);
        let matrix = compiled
            .matrix
            .unwrap_or_else(|| panic!("compiles: {:?}", compiled.diagnostics));
        assert_eq!(
            levers_with_too_few_repeats(&matrix),
            [TooFewRepeats {
                phase: "sweep".to_owned(),
                variable: "cache".to_owned(),
                repeats: 3,
                needed: 4
            }]
        );
    }
}
