//! `--stream json-lines=PATH`: one JSON object a line (`schemas/stream-line.schema.json`),
//! flushed as each burst arrives, so `tail -f` shows every second as it closes.

use std::io::Write;

use anyhow::Context;
use headroom_runner::results::stream::StreamLine;

use super::sink::Sink;

/// The file (or stdout) the lines go to.
pub(crate) struct JsonLines {
    out: Box<dyn Write + Send>,
    place: String,
}

impl JsonLines {
    /// `place` created (truncated) at `path`, the file the guard claimed for it, or stdout
    /// for `-`.
    pub(crate) fn open(
        place: &str,
        claimed: Option<&crate::outputs::Claimed>,
    ) -> anyhow::Result<JsonLines> {
        let out: Box<dyn Write + Send> = match claimed {
            None => Box::new(std::io::stdout()),
            Some(claimed) => {
                let file = crate::outputs::create(claimed).with_context(|| {
                format!(
                    "--stream json-lines={place}: cannot create the file (does its folder exist?)"
                )
            })?;
                Box::new(std::io::BufWriter::new(file))
            }
        };
        Ok(JsonLines {
            out,
            place: place.to_owned(),
        })
    }
}

impl Sink for JsonLines {
    fn send(&mut self, lines: &[StreamLine]) -> Result<(), String> {
        let JsonLines { out, place } = self;
        let failed = |e: std::io::Error| format!("cannot write to {place}: {e}");
        for line in lines {
            let text = serde_json::to_string(line).map_err(|e| e.to_string())?;
            out.write_all(text.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .map_err(failed)?;
        }
        out.flush().map_err(failed)
    }
}
