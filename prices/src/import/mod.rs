//! Price lists as the providers publish them, read into headroom's price table: the AWS Price
//! List bulk offer file (streamed: its EC2 file is about 450 MB), Hetzner Cloud's
//! `/v1/pricing` answer and the pages of Azure's Retail Prices API. Every row names the provider's file, its publication date (or the
//! day it was imported, where the file has none) and the file's SHA-256, so a plan priced from
//! it says where each dollar came from.

pub mod aws;
pub mod azure;
pub(crate) mod checks;
pub mod hetzner;
mod rows;

#[cfg(test)]
mod tests;

use std::io::Read;

use sha2::Digest;

pub(crate) use checks::name;
pub use checks::shown;
pub use rows::{DatabaseRow, ImportRecord, ImportedTable, InstanceRow, LineRow};

/// The most bytes a file read whole is taken at (a Hetzner answer, an Azure page, a region's
/// sizes): the real ones are tens to hundreds of KiB; the AWS offer files are streamed and
/// have no such bound.
pub const MAX_WHOLE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a provider's file could not be read into a table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The file is not JSON, or not the JSON this format has, at a line and column.
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// What serde_json said.
        message: String,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
    },
    /// One of several files (Azure's pages) is not JSON, at a line and column.
    #[error("{file}:{line}:{column}: {message}")]
    JsonIn {
        /// The file as named.
        file: String,
        /// What serde_json said.
        message: String,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
    },
    /// The JSON is not this provider's format: what is missing or out of place.
    #[error("{0}")]
    Format(String),
    /// Nothing in the file matched what was asked (a region, a location): what was there.
    #[error("{0}")]
    NothingMatched(String),
    /// Prices or sizes no provider lists (negative, zero, absurd) or a date after today:
    /// each product named with what is wrong. Nothing is written.
    #[error(
        "{}: this is not the file as the provider published it (download it again; nothing was written)",
        listed(.0)
    )]
    Implausible(Vec<String>),
    /// A file over the bound a file read whole is taken at.
    #[error(
        "{file} is over {} MiB, more than the provider's file (tens to hundreds of KiB) can be: give the file as downloaded",
        limit / (1024 * 1024)
    )]
    TooLarge {
        /// The file as named.
        file: String,
        /// The bound.
        limit: u64,
    },
}

/// The first 20 of `items`, joined, and how many more.
fn listed(items: &[String]) -> String {
    const LISTED: usize = 20;
    let mut text = items
        .iter()
        .take(LISTED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > LISTED {
        text.push_str(&format!("; and {} more", items.len() - LISTED));
    }
    text
}

impl From<serde_json::Error> for ImportError {
    fn from(error: serde_json::Error) -> ImportError {
        let message = error.to_string();
        // serde_json appends " at line L column C"; the error carries both apart.
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.clone(), |(head, _)| head.to_owned());
        ImportError::Json {
            message,
            line: error.line(),
            column: error.column(),
        }
    }
}

/// Where an imported table's prices come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// `aws`, `hetzner`, `azure`.
    pub provider: String,
    /// What the file is, in words (`AWS Price List bulk offer AmazonEC2 us-east-2`).
    pub what: String,
    /// The file as named on the command line.
    pub file: String,
    /// The day the provider published the file (`YYYY-MM-DD`), where it says.
    pub published: Option<String>,
    /// The file's SHA-256, hex.
    pub sha256: String,
}

impl Provenance {
    /// The `source` every row carries: what, where, when, which bytes.
    pub fn source(&self) -> String {
        let published = self.published.as_deref().map_or_else(
            || "no publication date".to_owned(),
            |d| format!("published {d}"),
        );
        // On one line, whatever the file is called: no text of an import ends a line of its table.
        format!(
            "{} ({}, {published}, sha256 {})",
            self.what,
            checks::one_line(&self.file),
            self.sha256
        )
    }
}

/// A provider's file read into a table, with what was left out and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// Where its prices come from.
    pub provenance: Provenance,
    /// The rows, in the shipped table's format.
    pub table: ImportedTable,
    /// What was read but left out, and why, in words.
    pub notes: Vec<String>,
}

impl Import {
    /// The table as TOML, readable by `--prices FILE` and `[plan] prices`: its provenance and
    /// what was left out in `[import]` (strings, so no text of the provider's file can become
    /// a line of the table), then the rows.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        #[derive(serde::Serialize)]
        struct Head<'a> {
            import: &'a ImportRecord,
        }
        let record = ImportRecord {
            provider: self.provenance.provider.clone(),
            source: self.provenance.source(),
            left_out: self.notes.clone(),
        };
        let mut text = String::from(
            "# Imported by `headroom prices import`: where the prices come from and what was left\n# out are in [import]. Every row's `as_of` is the file's publication date (the day of\n# import where it has none).\n\n",
        );
        text.push_str(&toml::to_string_pretty(&Head { import: &record })?);
        text.push('\n');
        text.push_str(&toml::to_string(&self.table)?);
        Ok(text)
    }
}

/// A reader that hashes what passes through it, so a file streamed once is both parsed and
/// fingerprinted.
pub struct Hashing<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: Read> Hashing<R> {
    /// Hashes what `inner` yields.
    pub fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            hasher: sha2::Sha256::new(),
        }
    }

    /// The SHA-256 of everything `inner` yields, hex, once it is read to its end (JSON may be
    /// followed by whitespace the parser does not read).
    pub fn finish(mut self) -> std::io::Result<String> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok(self
            .hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect())
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// A file read whole, at most [`MAX_WHOLE_FILE_BYTES`] (refused past it, before it is parsed),
/// and its SHA-256.
pub(crate) fn read_whole(reader: impl Read, file: &str) -> Result<(Vec<u8>, String), ImportError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_WHOLE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ImportError::Format(format!("{file} could not be read: {e}")))?;
    if bytes.len() as u64 > MAX_WHOLE_FILE_BYTES {
        return Err(ImportError::TooLarge {
            file: file.to_owned(),
            limit: MAX_WHOLE_FILE_BYTES,
        });
    }
    let sha256 = crate::sha256_hex(&bytes);
    Ok((bytes, sha256))
}

/// A publication date after `today` refused: a price list is published before it is read.
pub(crate) fn not_after_today(published: &str, today: &str) -> Result<(), ImportError> {
    if published > today {
        return Err(ImportError::Implausible(vec![format!(
            "the file says it was published {published}, after today ({today})"
        )]));
    }
    Ok(())
}

/// `2023-03-22` from `2023-03-22T14:56:51Z`; `None` when it does not start with a day.
pub(crate) fn day_of(timestamp: &str) -> Option<String> {
    let day = timestamp.get(..10)?;
    crate::entries::day(day).map(|_| day.to_owned())
}

/// A decimal string (`"0.0800000000"`) as a number; `None` when it is not a finite one.
pub(crate) fn decimal(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}
