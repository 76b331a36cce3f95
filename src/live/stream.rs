//! The live streams of `run --stream KIND=WHERE`: each one a thread of its own fed through a
//! bounded queue, so a slow or broken output never slows the run; a failure is kept and said
//! once by the run's own output, and the results file stays the record.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use headroom_runner::results::stream::StreamLine;

use super::json_lines::JsonLines;
use super::sink::Sink;

/// Lines a stream may have waiting before new ones are dropped (and that said): minutes of a
/// dozen scenarios.
const QUEUED_LINES: usize = 16_384;

/// How long the end of the run waits for a stream to send what it holds.
const DRAIN_AT_END: Duration = Duration::from_secs(10);

/// One `--stream` as asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamSpec {
    /// `json-lines=PATH`, `json-lines=-` for stdout.
    JsonLines(String),
    /// `prometheus-rw=URL`: Prometheus remote write.
    PrometheusRw(String),
}

/// The kinds `--stream` takes, for its help and its errors.
pub(crate) const STREAM_KINDS: &str =
    "json-lines=PATH (or json-lines=- for stdout) and prometheus-rw=URL";

impl StreamSpec {
    /// `KIND=WHERE`, or what is wrong with it and the fix.
    pub(crate) fn parse(text: &str) -> Result<StreamSpec, String> {
        let Some((kind, place)) = text.split_once('=') else {
            return Err(format!(
                "`{}` is not KIND=WHERE; the streams are {STREAM_KINDS}",
                headroom_results::masked_urls(text)
            ));
        };
        if place.is_empty() {
            return Err(format!(
                "`{text}` says where to send nothing: {STREAM_KINDS}"
            ));
        }
        match kind {
            "json-lines" => Ok(StreamSpec::JsonLines(place.to_owned())),
            "prometheus-rw" => Ok(StreamSpec::PrometheusRw(place.to_owned())),
            other => Err(format!(
                "`{other}` is not a stream; the streams are {STREAM_KINDS}"
            )),
        }
    }

    /// Whether it writes to stdout (the run's tables then go to stderr).
    pub(crate) fn takes_stdout(&self) -> bool {
        matches!(self, StreamSpec::JsonLines(place) if place == "-")
    }
}

/// Claims the file of every `json-lines=PATH` stream (none for stdout or an endpoint), in the
/// order of `specs`, before any is created: a refused one truncates none.
pub(crate) fn claim_files(
    specs: &[StreamSpec],
    outputs: &mut crate::outputs::Outputs,
) -> anyhow::Result<Vec<Option<crate::outputs::Claimed>>> {
    let mut claimed = Vec::with_capacity(specs.len());
    for spec in specs {
        claimed.push(match spec {
            StreamSpec::JsonLines(place) if place != "-" => Some(outputs.claim(
                std::path::Path::new(place),
                "--stream json-lines",
                crate::outputs::Output::JsonLines,
            )?),
            _ => None,
        });
    }
    Ok(claimed)
}

/// A stream at work: its queue, its thread, and what went wrong.
struct Running {
    name: String,
    queue: Option<SyncSender<StreamLine>>,
    thread: Option<JoinHandle<()>>,
    failure: Arc<Mutex<Option<String>>>,
    dropped: u64,
    said: bool,
}

/// Every `--stream` of the run.
#[derive(Default)]
pub(crate) struct Streams {
    running: Vec<Running>,
}

impl Streams {
    /// Opens each stream at the file claimed for it, if any (a file that cannot be created, an
    /// endpoint load's host rule refuses: here, before anything runs) and starts its thread.
    pub(crate) fn start(
        specs: &[StreamSpec],
        claimed: Vec<Option<crate::outputs::Claimed>>,
        allow_hosts: &[String],
    ) -> anyhow::Result<Streams> {
        let mut running = Vec::new();
        for (spec, path) in specs.iter().zip(claimed) {
            let (name, sink): (String, Box<dyn Sink>) = match spec {
                StreamSpec::JsonLines(place) => (
                    format!("json-lines={place}"),
                    Box::new(JsonLines::open(place, path.as_ref())?),
                ),
                StreamSpec::PrometheusRw(url) => (
                    format!("prometheus-rw={}", headroom_results::masked_urls(url)),
                    Box::new(super::prometheus::RemoteWrite::open(url, allow_hosts)?),
                ),
            };
            running.push(Running::start(name, sink)?);
        }
        Ok(Streams { running })
    }

    /// Whether any stream runs.
    pub(crate) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Queues `line` on every stream; a full queue drops it, counted.
    pub(crate) fn send(&mut self, line: &StreamLine) {
        for stream in &mut self.running {
            stream.send(line.clone());
        }
    }

    /// Each stream's failure or drops not said yet, once each: what the run's output says.
    pub(crate) fn news(&mut self) -> Vec<String> {
        self.running.iter_mut().filter_map(Running::news).collect()
    }

    /// Ends every stream: what is queued is sent (for up to a few seconds), then the news.
    pub(crate) fn finish(&mut self) -> Vec<String> {
        for stream in &mut self.running {
            stream.queue = None;
        }
        let deadline = std::time::Instant::now() + DRAIN_AT_END;
        for stream in &mut self.running {
            if let Some(thread) = stream.thread.take() {
                while !thread.is_finished() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                if thread.is_finished() {
                    let _ = thread.join();
                } else if let Ok(mut kept) = stream.failure.lock() {
                    kept.get_or_insert(format!(
                        "still sending after {}s at the end of the run; the rest of its lines are not sent",
                        DRAIN_AT_END.as_secs()
                    ));
                }
            }
        }
        self.news()
    }
}

impl Running {
    fn start(name: String, mut sink: Box<dyn Sink>) -> anyhow::Result<Running> {
        let (queue, lines) = sync_channel::<StreamLine>(QUEUED_LINES);
        let failure = Arc::new(Mutex::new(None));
        let kept = Arc::clone(&failure);
        let thread = std::thread::Builder::new()
            .name(format!("headroom-stream-{name}"))
            .spawn(move || pump(lines, sink.as_mut(), &kept))?;
        Ok(Running {
            name,
            queue: Some(queue),
            thread: Some(thread),
            failure,
            dropped: 0,
            said: false,
        })
    }

    fn send(&mut self, line: StreamLine) {
        let Some(queue) = &self.queue else { return };
        match queue.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.dropped += 1,
            // The thread ended on a failure: it is kept, and said.
            Err(TrySendError::Disconnected(_)) => self.queue = None,
        }
    }

    fn news(&mut self) -> Option<String> {
        if self.said {
            return None;
        }
        let failure = self.failure.lock().ok().and_then(|kept| kept.clone());
        let news = match (failure, self.dropped) {
            (Some(why), _) => format!(
                "warning: stream {}: {why}; it sends nothing more, the run goes on and its results file stays the record",
                self.name
            ),
            (None, 0) => return None,
            (None, dropped) => format!(
                "warning: stream {}: could not keep up, {dropped} lines dropped so far (and any more from now on, unsaid); the run goes on and its results file stays the record",
                self.name
            ),
        };
        self.said = true;
        Some(news)
    }
}

/// The stream's thread: lines as they come, a burst sent together, until the queue closes
/// or the sink fails (kept for the run to say).
fn pump(lines: Receiver<StreamLine>, sink: &mut dyn Sink, failure: &Mutex<Option<String>>) {
    while let Ok(first) = lines.recv() {
        let mut burst = vec![first];
        burst.extend(lines.try_iter());
        if let Err(why) = sink.send(&burst) {
            if let Ok(mut kept) = failure.lock() {
                *kept = Some(why);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_kind_equals_where() {
        assert_eq!(
            StreamSpec::parse("json-lines=out.jsonl"),
            Ok(StreamSpec::JsonLines("out.jsonl".to_owned()))
        );
        assert!(StreamSpec::parse("json-lines=-").is_ok_and(|s| s.takes_stdout()));
        let unknown = StreamSpec::parse("influx=http://127.0.0.1:8086").expect_err("refused");
        assert!(unknown.contains("`influx` is not a stream"), "{unknown}");
        assert!(unknown.contains("json-lines=PATH"), "{unknown}");
        let bare = StreamSpec::parse("json-lines").expect_err("refused");
        assert!(bare.contains("is not KIND=WHERE"), "{bare}");
        assert!(StreamSpec::parse("json-lines=").is_err());
    }

    /// A sink that fails on its second burst.
    struct Failing(u32);

    impl Sink for Failing {
        fn send(&mut self, _: &[StreamLine]) -> Result<(), String> {
            self.0 += 1;
            if self.0 >= 2 {
                Err("the disk is full".to_owned())
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn a_failed_stream_is_said_once_and_takes_lines_no_more() {
        let mut streams = Streams {
            running: vec![
                Running::start("test".to_owned(), Box::new(Failing(0))).expect("a thread"),
            ],
        };
        let line: StreamLine =
            serde_json::from_str(crate::live::tests::SECOND_LINE).expect("a line");
        let mut said = Vec::new();
        for _ in 0..50 {
            streams.send(&line);
            std::thread::sleep(Duration::from_millis(2));
            said.extend(streams.news());
        }
        said.extend(streams.finish());
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("stream test: the disk is full"),
            "{}",
            said[0]
        );
        assert!(said[0].contains("the run goes on"), "{}", said[0]);
    }
}
