//! Reading the files a command is given: bounded (a device or a pipe never read without
//! end), typed (a results file of another shape named as one), and whole (one segment's share
//! is not a run).

use std::path::Path;

use anyhow::{Context, Result};

/// A results file, typed: a file of another format, or with a field that does not fit, is
/// refused with both named.
pub(crate) fn read_results(path: &Path) -> Result<headroom_results::Results> {
    let text = read_bounded(path, MAX_RESULTS_BYTES, "the results file", "")?;
    headroom_results::Results::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// A results file of a whole run: one segment's share is a part of the load, not the server's
/// capacity, and is refused with the way to join the shares.
pub(crate) fn read_whole_results(path: &Path) -> Result<headroom_results::Results> {
    let results = read_results(path)?;
    refuse_share(&results, path)?;
    Ok(results)
}

/// Refuses one segment's share where a whole run is meant.
pub(crate) fn refuse_share(results: &headroom_results::Results, path: &Path) -> Result<()> {
    if let Some(share) = &results.segment {
        anyhow::bail!(
            "{} holds share {} of {} of a segmented run (run on `{}`), not a whole run: join the shares with `headroom merge` first, and read the merged file",
            path.display(),
            share.index,
            share.count,
            share.host
        );
    }
    Ok(())
}

/// The largest spec headroom reads: a spec is a page of TOML, and a file far larger is not
/// one (a 700,000-value list took gigabytes to validate).
pub(crate) const MAX_SPEC_BYTES: u64 = 1024 * 1024;
/// The largest price table headroom reads.
pub(crate) const MAX_PRICE_TABLE_BYTES: u64 = 16 * 1024 * 1024;
/// The largest points file (`--points`: a CSV, k6's or Locust's output) headroom reads.
pub(crate) const MAX_POINTS_BYTES: u64 = 64 * 1024 * 1024;
/// The largest results file headroom reads: a run's histograms take kilobytes, so a search of
/// thousands of runs stays far under it.
pub(crate) const MAX_RESULTS_BYTES: u64 = 512 * 1024 * 1024;

/// Reads a text file of at most `limit` bytes; `what` names it in the error (`the spec`),
/// `named` says where it was named (` named at spec.toml:20:10`), or is empty.
pub(crate) fn read_bounded(path: &Path, limit: u64, what: &str, named: &str) -> Result<String> {
    use std::os::unix::fs::FileTypeExt;
    let cannot = || format!("cannot read {what} `{}`{named}", path.display());
    let metadata = std::fs::metadata(path).with_context(cannot)?;
    let kind = metadata.file_type();
    if kind.is_char_device() || kind.is_block_device() || kind.is_socket() || kind.is_dir() {
        anyhow::bail!(
            "{what} `{}`{named} is {}, not a file: name the file",
            path.display(),
            if kind.is_dir() {
                "a folder"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "a device"
            }
        );
    }
    let size = metadata.len();
    if size > limit {
        anyhow::bail!(
            "{what} `{}`{named} is {} bytes: headroom reads at most {} bytes of it",
            path.display(),
            headroom_pricing::numbers::count(size as f64),
            headroom_pricing::numbers::count(limit as f64)
        );
    }
    // A device or a pipe has no size to check first: read at most one byte past the limit.
    let mut text = String::new();
    let file = std::fs::File::open(path).with_context(cannot)?;
    std::io::Read::read_to_string(&mut std::io::Read::take(file, limit + 1), &mut text)
        .with_context(cannot)?;
    if text.len() as u64 > limit {
        anyhow::bail!(
            "{what} `{}`{named} goes on past {} bytes (a device or a pipe?): headroom reads at most that much of it",
            path.display(),
            headroom_pricing::numbers::count(limit as f64)
        );
    }
    Ok(text)
}

/// The column names on the first line of a CSV data file, or why there are none.
pub(crate) fn data_columns(path: &Path) -> std::result::Result<Vec<String>, String> {
    use headroom_spec::scenario::{MAX_DATA_BYTES, MAX_DATA_ROWS};
    let shown = path.display();
    // What `run` will refuse is refused here too, before any target starts: a device or a
    // pipe (read without end), a file past the size a run reads, past the rows, or empty.
    let metadata = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
    if !metadata.is_file() {
        return Err(format!(
            "{shown} is not a regular file (a device, a pipe or a folder): name a CSV file"
        ));
    }
    if metadata.len() > MAX_DATA_BYTES {
        return Err(format!(
            "{shown} is {} bytes, over the {} a run reads: use fewer rows",
            headroom_spec::numbers::count(metadata.len() as f64),
            headroom_spec::numbers::count(MAX_DATA_BYTES as f64)
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .from_path(path)
        .map_err(|e| format!("{shown}: {e}"))?;
    let header = reader.headers().map_err(|e| format!("{shown}: {e}"))?;
    let columns: Vec<String> = header.iter().map(|c| c.trim().to_owned()).collect();
    if columns.iter().all(String::is_empty) {
        return Err(format!("{shown} has no header line"));
    }
    let mut rows = 0usize;
    let mut record = csv::StringRecord::new();
    while reader
        .read_record(&mut record)
        .map_err(|e| format!("{shown}, line {}: {e}", rows + 2))?
    {
        rows += 1;
        if rows > MAX_DATA_ROWS {
            return Err(format!(
                "{shown} has over {} rows: use fewer",
                headroom_spec::numbers::count(MAX_DATA_ROWS as f64)
            ));
        }
    }
    if rows == 0 {
        return Err(format!("{shown} has no row below its header"));
    }
    Ok(columns)
}
