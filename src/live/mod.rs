//! What `headroom run` shows and sends while it runs: the terminal view and the live streams
//! (`--stream`). Every output reads the runner's events; none of them can stop or slow the
//! run: a stream works on a thread of its own behind a bounded queue, and its failure is said
//! once.

use headroom_runner::Event;
use headroom_runner::results::stream::{
    RunLabels, SecondKind, StreamLine, StreamSecond, StreamServer,
};

pub(crate) mod dashboard;
mod json_lines;
mod prometheus;
mod sink;
mod stream;
pub(crate) mod view;

pub(crate) use stream::{StreamSpec, Streams, claim_files};

/// The run's fixed labels: which invocation, which bench, which segment.
pub(crate) struct Invocation {
    pub(crate) run_id: String,
    pub(crate) bench: String,
    pub(crate) segment: Option<String>,
}

/// The labels of the run in flight, kept from `RunStarted`.
pub(crate) struct Labelling {
    invocation: Invocation,
    current: Option<RunLabels>,
}

impl Labelling {
    pub(crate) fn new(invocation: Invocation) -> Labelling {
        Labelling {
            invocation,
            current: None,
        }
    }

    /// The stream line an event makes, if it makes one; a run's start sets the labels.
    pub(crate) fn line_of(&mut self, event: &Event<'_>) -> Option<StreamLine> {
        match event {
            Event::RunStarted {
                phase,
                point,
                repeat,
                ..
            } => {
                self.current = Some(RunLabels {
                    format: headroom_results::stream::STREAM_LINE_FORMAT,
                    run_id: self.invocation.run_id.clone(),
                    bench: self.invocation.bench.clone(),
                    phase: (*phase).to_owned(),
                    point: point.index,
                    at: point.at.clone(),
                    repeat: *repeat,
                    segment: self.invocation.segment.clone(),
                });
                None
            }
            Event::Second {
                scenario,
                unix_ms,
                window,
                gauges,
            } => Some(StreamLine::Second(StreamSecond {
                labels: self.current.clone()?,
                scenario: (*scenario).to_owned(),
                kind: if gauges.rooms.is_some() {
                    SecondKind::Rooms
                } else {
                    SecondKind::Http
                },
                unix_ms: *unix_ms,
                window: (*window).clone(),
            })),
            Event::Sampled {
                service,
                unix_ms,
                sample,
            } => Some(StreamLine::Server(StreamServer {
                labels: self.current.clone()?,
                service: service.map(str::to_owned),
                unix_ms: *unix_ms,
                sample: **sample,
            })),
            _ => None,
        }
    }
}

/// A point's swept values in words, as the run table writes them: `readers = 400`, or
/// `(one point)`.
pub(crate) fn point_words(
    at: &std::collections::BTreeMap<String, headroom_spec::VarValue>,
) -> String {
    if at.is_empty() {
        return "(one point)".to_owned();
    }
    headroom_spec::vars::point_label(at)
}

/// A point's words in parentheses after its number (`point 3 (readers = 400)`); `(one point)`
/// has its own.
pub(crate) fn in_parens(words: &str) -> String {
    if words.starts_with('(') {
        words.to_owned()
    } else {
        format!("({words})")
    }
}

/// The default `--run-id`: the bench and the UTC second the invocation started,
/// `notes-api-20261203T074100Z`.
pub(crate) fn default_run_id(bench: &str, unix_s: u64) -> String {
    let at = i64::try_from(unix_s)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    format!("{bench}-{}", at.strftime("%Y%m%dT%H%M%SZ"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A second as a stream line, for the streams' own tests.
    pub(crate) const SECOND_LINE: &str = r#"{"line":"second","format":1,"run_id":"r1","bench":"b","phase":"load","point":0,"at":{},"repeat":1,"scenario":"api","kind":"http","unix_ms":1796283661000,"t_s":0,"requests":3,"errors":1,"errors_by_kind":{"connect":0,"timeout":0,"status":1,"protocol":0,"check":0},"p50_ms":1.0,"p95_ms":2.0,"p99_ms":2.0}"#;

    #[test]
    fn a_point_is_named_once_in_parentheses() {
        assert_eq!(in_parens("readers = 400"), "(readers = 400)");
        let none = point_words(&std::collections::BTreeMap::new());
        assert_eq!(in_parens(&none), "(one point)");
    }

    #[test]
    fn a_run_id_names_the_bench_and_its_utc_start() {
        // 2026-12-03 07:41:00 UTC.
        assert_eq!(
            default_run_id("notes-api", 1_796_283_660),
            "notes-api-20261203T074100Z"
        );
        assert_eq!(default_run_id("b", 0), "b-19700101T000000Z");
        // A leap day.
        assert_eq!(default_run_id("b", 951_782_400), "b-20000229T000000Z");
    }
}
