//! Price lists as the providers publish them, read into headroom's price table: the AWS Price
//! List bulk offer file (streamed: its EC2 file is about 450 MB), Hetzner Cloud's
//! `/v1/pricing` answer and the pages of Azure's Retail Prices API. Every row names the provider's file, its publication date (or the
//! day it was imported, where the file has none) and the file's SHA-256, so a plan priced from
//! it says where each dollar came from.

pub mod aws;
pub mod azure;
pub mod hetzner;
mod rows;

#[cfg(test)]
mod tests;

use std::io::Read;

use sha2::Digest;

pub use rows::{DatabaseRow, ImportedTable, InstanceRow, LineRow};

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
        format!(
            "{} ({}, {published}, sha256 {})",
            self.what, self.file, self.sha256
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
    /// The table as TOML, headed by its provenance and the notes, readable by
    /// `--prices FILE` and `[plan] prices`.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        let mut text = format!(
            "# Imported by `headroom prices import` from {}.\n# Provider: {}. Every row's `as_of` is the file's publication date (the day of import where it has none).\n",
            self.provenance.source(),
            self.provenance.provider
        );
        for note in &self.notes {
            text.push_str(&format!("# Left out: {note}\n"));
        }
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

/// `2023-03-22` from `2023-03-22T14:56:51Z`; `None` when it does not start with a day.
pub(crate) fn day_of(timestamp: &str) -> Option<String> {
    let day = timestamp.get(..10)?;
    crate::entries::day(day).map(|_| day.to_owned())
}

/// A decimal string (`"0.0800000000"`) as a number; `None` when it is not a finite one.
pub(crate) fn decimal(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}
