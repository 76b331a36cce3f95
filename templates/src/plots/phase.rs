//! A plot's phase: found in the context by name, its steps labelled.

use crate::context::{PageContext, Phase, Plot};

/// The phase a latency or series plot names, from the context.
pub(super) fn phase_of<'a>(
    context: &'a PageContext,
    plot: &Plot,
) -> Result<&'a Phase, Box<dyn std::error::Error>> {
    let name = plot
        .phase
        .as_deref()
        .ok_or_else(|| format!("a {} plot names its phase", plot.kind))?;
    let phase = context.phases.iter().find(|p| p.name == name);
    Ok(phase.ok_or_else(|| format!("no phase `{name}` in the context"))?)
}

/// The steps' tick labels and the axis title: `16` under `rooms` when every step sets one
/// variable of the same name, else the whole `a = 1, b = 2`.
pub(super) fn step_labels<'a>(
    steps: impl Iterator<Item = &'a str> + Clone,
) -> (String, Vec<String>) {
    let single: Option<Vec<(&str, &str)>> = steps
        .clone()
        .map(|s| (!s.contains(", ")).then(|| s.split_once(" = "))?)
        .collect();
    match single {
        Some(pairs) if pairs.windows(2).all(|w| w[0].0 == w[1].0) && !pairs.is_empty() => (
            format!("{} (a step each, in the order run)", pairs[0].0),
            pairs.iter().map(|(_, v)| v.to_string()).collect(),
        ),
        _ => ("step".to_owned(), steps.map(str::to_owned).collect()),
    }
}
