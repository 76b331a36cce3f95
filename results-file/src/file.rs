//! Reading and writing the file: atomically, format first, every misfit named by its place.

use super::{READABLE_FORMATS, RESULTS_FORMAT, Results};
use serde::Deserialize;
use std::path::Path;

/// Why a results file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file could not be read as results of this format.
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why, with the place in the file when there is one.
        reason: ReadError,
    },
}

/// Why a text is not results this headroom reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or no `format` field: not a results file at all.
    #[error("not a headroom results file ({0})")]
    NotResults(String),
    /// A results file of another version of the format.
    #[error(
        "a results file of format {found}, and this headroom reads formats 1 and {RESULTS_FORMAT}: re-run `headroom run` with this headroom, or read it with the headroom that wrote it"
    )]
    OtherFormat {
        /// The format the file says it has.
        found: u64,
    },
    /// The right format, but a field that does not fit it.
    #[error("results of format {format} with a field that does not fit at `{place}`: {message}")]
    Field {
        /// The format the file says it has.
        format: u64,
        /// Where, as a path of fields (`phases[0].points[2].runs[0].process`).
        place: String,
        /// What serde said.
        message: String,
    },
}

/// A temporary file beside `path` (`path` + `.tmp`), then a rename: a reader never sees half a
/// file, and an interrupted write leaves the old one whole. Creates the folder if needed.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = std::path::PathBuf::from(temporary);
    // A file (or a link, or a device) left at the temporary name by anyone is never written
    // through: it is removed, and the temporary made new.
    match std::fs::remove_file(&temporary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    drop(file);
    std::fs::rename(&temporary, path)
}

impl Results {
    /// Writes the file atomically ([`write_atomically`]), every URL in it masked
    /// ([`crate::masked_urls`]: the spec's and the messages' alike).
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        let error = |source| ResultsError::Write {
            path: path.display().to_string(),
            source,
        };
        let mut value = serde_json::to_value(self).map_err(|e| error(std::io::Error::other(e)))?;
        crate::masked_url::mask_every_url(&mut value);
        let text =
            serde_json::to_string_pretty(&value).map_err(|e| error(std::io::Error::other(e)))?;
        write_atomically(path, &(text + "\n")).map_err(error)
    }

    /// Reads a results file ([`Results::from_json`]).
    pub fn read(path: &Path) -> Result<Results, ResultsError> {
        let error = |reason: ReadError| ResultsError::Read {
            path: path.display().to_string(),
            reason,
        };
        // A regular file of at most MOST_BYTES: a device or a pipe is never read without end.
        const MOST_BYTES: u64 = 512 * 1024 * 1024;
        let metadata =
            std::fs::metadata(path).map_err(|e| error(ReadError::NotResults(e.to_string())))?;
        if !metadata.is_file() || metadata.len() > MOST_BYTES {
            return Err(error(ReadError::NotResults(format!(
                "not a regular file of at most {MOST_BYTES} bytes"
            ))));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| error(ReadError::NotResults(e.to_string())))?;
        Results::from_json(&text).map_err(error)
    }

    /// Results from their JSON text. The format is checked first, so a file of another
    /// version is named as one, not as a field that does not fit.
    pub fn from_json(text: &str) -> Result<Results, ReadError> {
        #[derive(Deserialize)]
        struct Format {
            format: Option<u64>,
        }
        let version: Format =
            serde_json::from_str(text).map_err(|e| ReadError::NotResults(e.to_string()))?;
        match version.format {
            None => return Err(ReadError::NotResults("it has no `format`".to_owned())),
            Some(found) if !READABLE_FORMATS.iter().any(|&f| u64::from(f) == found) => {
                return Err(ReadError::OtherFormat { found });
            }
            Some(_) => {}
        }
        let format = version.format.unwrap_or_default();
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|e| ReadError::Field {
            format,
            place: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }
}

/// FNV-1a, 64 bits: a stable hash of the spec's text that needs no dependency.
pub fn spec_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}
