//! Where a stream's lines go: what the JSON-lines file and Prometheus remote write each are.

use headroom_runner::results::stream::StreamLine;

/// Where a stream's lines go.
pub(crate) trait Sink: Send + 'static {
    /// The lines that came together, in order.
    fn send(&mut self, lines: &[StreamLine]) -> Result<(), String>;
}
