//! What a run split into segments needs (`run --segment i/n`, `headroom k8s --segments n`):
//! the one rule both are held to, so a cluster's pods are never made for a run every one of
//! them would refuse.

use std::fmt;

use headroom_matrix::MatrixPhase;
use headroom_matrix::RunMatrix;

/// How a run is to be split.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// Segments in all; one is no split, and anything goes.
    pub segments: u64,
    /// Whether the segments meet at a barrier (`--barrier`; a cluster's pods always do).
    pub barrier: bool,
    /// Whether the run is asked to judge its SLOs (`--check`).
    pub check: bool,
}

/// Why a run cannot be split into segments, each a share of every run's load.
#[derive(Debug, Clone, PartialEq)]
pub enum Unsplittable {
    /// `[target] command` or services: every segment would start a server of its own, and
    /// the shares would not add up to one server's load.
    StartsItsTarget,
    /// Setup or teardown steps without a barrier: segment 0 alone runs them, and the other
    /// segments must wait for them.
    StepsWithoutBarrier,
    /// `--check`: a share's SLOs are not judged alone.
    Checked,
    /// A phase that searches its ceiling: each probe's verdict needs the whole load's
    /// figures, which only `headroom merge` puts together after the run.
    Searches {
        /// The phase.
        phase: String,
        /// The variable it searches.
        variable: String,
    },
}

impl fmt::Display for Unsplittable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsplittable::StartsItsTarget => f.write_str(
                "every segment would start a server of its own (`command` or services in [target]): load one that runs already (`url` in [target], with `pid_file` for segment 0 to sample it)",
            ),
            Unsplittable::StepsWithoutBarrier => f.write_str(
                "segment 0 alone runs the setup and teardown steps, and the other segments must wait for them: give every segment `--barrier HOST:PORT`",
            ),
            Unsplittable::Checked => f.write_str(
                "a share's SLOs are not judged alone; merge the shares, then `headroom merge … --check`",
            ),
            Unsplittable::Searches { phase, variable } => write!(
                f,
                "phase `{phase}` searches its ceiling, and a segment judges no SLO: each probe's verdict needs the whole load's figures, which only `headroom merge` puts together after the run. Run the search on one machine (`--phase {phase}`, no segments), then list the loads around the ceiling it found (`vary = {{ {variable} = [ … ] }}`) to run them in segments",
            ),
        }
    }
}

/// Why `phases` of `matrix` cannot run split as `split` says, the first reason found; `None`
/// when they can (and always for one segment).
pub fn unsplittable<'a>(
    matrix: &RunMatrix,
    phases: impl IntoIterator<Item = &'a MatrixPhase>,
    split: Split,
) -> Option<Unsplittable> {
    if split.segments <= 1 {
        return None;
    }
    let target = &matrix.target;
    if target.command.is_some() || !target.services.is_empty() {
        return Some(Unsplittable::StartsItsTarget);
    }
    if (!target.setup.is_empty() || !target.teardown.is_empty()) && !split.barrier {
        return Some(Unsplittable::StepsWithoutBarrier);
    }
    if split.check {
        return Some(Unsplittable::Checked);
    }
    phases.into_iter().find_map(|phase| {
        let search = phase.search.as_ref()?;
        Some(Unsplittable::Searches {
            phase: phase.name.clone(),
            variable: search.variable.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(target: &str, vary: &str) -> RunMatrix {
        let text = format!(
            r#"
[bench]
name = "split"
[vars]
rate = "25/s"
[target]
{target}
[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{{rate}}"
requests = [{{ url = "http://127.0.0.1:{{port}}/" }}]
[[phase]]
name = "load"
hold = "10s"
vary = {{ rate = {vary} }}
[slo]
refused = "api.failed == 0%"
"#
        );
        let prices = headroom_pricing::PriceTable::embedded().expect("prices");
        let compiled = headroom_compiler::Compiler::new().compile(&text, &prices);
        compiled
            .matrix
            .unwrap_or_else(|| panic!("compiles: {:?}", compiled.diagnostics))
    }

    fn why(matrix: &RunMatrix, split: Split) -> Option<Unsplittable> {
        unsplittable(matrix, &matrix.phases, split)
    }

    const URL: &str = r#"url = "http://127.0.0.1:8080""#;
    const LIST: &str = r#"["10/s", "20/s"]"#;
    const TWO: Split = Split {
        segments: 2,
        barrier: false,
        check: false,
    };

    /// Each reason, found on the spec that has it; none on one that has none, and none for
    /// one segment whatever the spec.
    #[test]
    fn each_reason_is_found() {
        let running = matrix(URL, LIST);
        assert_eq!(why(&running, TWO), None);
        let started = matrix(
            r#"command = ["{headroom}", "demo-target", "--port", "{port}"]"#,
            LIST,
        );
        assert_eq!(why(&started, TWO), Some(Unsplittable::StartsItsTarget));
        let stepped = matrix(
            &format!("{URL}\n[[target.setup]]\nname = \"seed\"\ncommand = [\"true\"]"),
            LIST,
        );
        assert_eq!(why(&stepped, TWO), Some(Unsplittable::StepsWithoutBarrier));
        let met = Split {
            barrier: true,
            ..TWO
        };
        assert_eq!(why(&stepped, met), None);
        let checked = Split { check: true, ..TWO };
        assert_eq!(why(&running, checked), Some(Unsplittable::Checked));
        let searched = matrix(URL, r#"{ search = { from = "25/s", to = "3200/s" } }"#);
        assert_eq!(
            why(&searched, TWO),
            Some(Unsplittable::Searches {
                phase: "load".to_owned(),
                variable: "rate".to_owned()
            })
        );
        let one = Split {
            segments: 1,
            check: true,
            ..TWO
        };
        for matrix in [&started, &stepped, &searched] {
            assert_eq!(why(matrix, one), None);
        }
    }
}
