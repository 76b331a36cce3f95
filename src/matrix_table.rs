//! `headroom compile`'s table: a row per point, a row per searching phase, and the estimate.

use crate::{human_duration, plural, run};

/// The run matrix as people read it: a row per point.
pub(crate) fn matrix_table(matrix: &headroom_matrix::RunMatrix) -> String {
    use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "phase",
        "point",
        "variables",
        "repeats",
        "per run",
        "total",
    ]);
    for phase in &matrix.phases {
        if let Some(search) = &phase.search {
            table.add_row(search_row(phase, search));
            continue;
        }
        for point in &phase.points {
            let variables = run::variables(&point.at);
            table.add_row(vec![
                Cell::new(&phase.name),
                Cell::new(point.index + 1).set_alignment(CellAlignment::Right),
                Cell::new(variables),
                Cell::new(phase.repeats).set_alignment(CellAlignment::Right),
                Cell::new(human_duration(point.run_time)).set_alignment(CellAlignment::Right),
                Cell::new(human_duration(
                    point.run_time.saturating_mul(u64::from(phase.repeats)),
                ))
                .set_alignment(CellAlignment::Right),
            ]);
        }
    }
    let (summary, budget) = summary(matrix);
    let headroom_starts = matrix.target.command.is_some() || !matrix.target.services.is_empty();
    let started = match matrix.target.process {
        _ if !headroom_starts => "an external target, neither started nor stopped by headroom",
        headroom_spec::target::ProcessMode::PerPhase => {
            "one target per phase, kept for all its runs (process = \"per-phase\")"
        }
        headroom_spec::target::ProcessMode::PerPoint => "a fresh target per run",
    };
    format!(
        "{}: {summary}\n{table}\nestimated {} (load, settle, scrapes and cool-down; server start-up not included{budget}); {started}",
        matrix.bench.name,
        human_duration(matrix.estimated)
    )
}

/// The matrix in one line (points, phases and runs, or the searches at their budget), and
/// what the estimate says of the searches.
fn summary(matrix: &headroom_matrix::RunMatrix) -> (String, &'static str) {
    let points: usize = matrix
        .phases
        .iter()
        .filter(|p| p.search.is_none())
        .map(|p| p.points.len())
        .sum();
    let budgets: Vec<u32> = matrix
        .phases
        .iter()
        .filter_map(|p| p.search.as_ref())
        .map(|s| s.max_runs)
        .collect();
    let searched: Vec<String> = match budgets.as_slice() {
        [] => Vec::new(),
        [one] => vec![format!("a search of up to {one} runs")],
        many => vec![format!(
            "{} searches (up to {} runs)",
            many.len(),
            many.iter().sum::<u32>()
        )],
    };
    // A search's runs are made as it goes: counted at its budget, and said so.
    if searched.is_empty() {
        (
            format!(
                "{} in {}, {}",
                plural(points, "point"),
                plural(matrix.phases.len(), "phase"),
                plural(matrix.runs.len(), "run")
            ),
            "",
        )
    } else {
        let listed = (points > 0).then(|| {
            format!(
                "{}, {}",
                plural(points, "point"),
                plural(matrix.runs.len(), "run")
            )
        });
        (
            format!(
                "{} in {}",
                listed
                    .into_iter()
                    .chain(searched)
                    .collect::<Vec<_>>()
                    .join(" and "),
                plural(matrix.phases.len(), "phase")
            ),
            "; a search at its budget",
        )
    }
}

/// A searching phase's row: what it searches, its ends and precision, its budget.
fn search_row(
    phase: &headroom_matrix::MatrixPhase,
    search: &headroom_matrix::PhaseSearch,
) -> Vec<comfy_table::Cell> {
    use comfy_table::{Cell, CellAlignment};
    let cap = if search.capped { " (the cap)" } else { "" };
    let per_run = phase
        .points
        .iter()
        .map(|p| p.run_time)
        .max()
        .unwrap_or_default();
    vec![
        Cell::new(&phase.name),
        Cell::new("search"),
        Cell::new(format!(
            "{} from {} to {}{cap} within {}; probes held {}",
            search.variable,
            search.from,
            search.to,
            search.precision,
            human_duration(search.probe_hold)
        )),
        Cell::new(format!(
            "{} ({} a probe)",
            phase.repeats, search.probe_repeats
        ))
        .set_alignment(CellAlignment::Right),
        Cell::new(human_duration(per_run)).set_alignment(CellAlignment::Right),
        Cell::new(format!(
            "≤ {} ({} runs, {})",
            human_duration(phase.estimated),
            search.max_runs,
            human_duration(search.max_time)
        ))
        .set_alignment(CellAlignment::Right),
    ]
}
