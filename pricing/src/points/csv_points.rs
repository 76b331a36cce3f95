//! A points CSV (`--points sweep.csv`): a header naming the columns, units in their
//! suffixes, a row per point; optional `pass` or `failed` columns judge each row.

use std::collections::BTreeMap;

use super::{MeasuredSweep, OrderedX, PointsError, SeriesPoints, StepVerdict, Unit, series_unit};

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "pass" | "ok" => Some(true),
        "false" | "no" | "0" | "fail" | "failed" => Some(false),
        _ => None,
    }
}

/// Reads a CSV with a header: the `x` column, numeric series columns (unit from the suffix),
/// and optional `pass` or `failed` columns.
pub fn from_csv(text: &str, x: &str) -> Result<MeasuredSweep, PointsError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| PointsError::Csv {
            line: 1,
            column: 1,
            message: e.to_string(),
        })?
        .clone();
    let columns = Columns::of(&header, x)?;
    let (x_index, series_columns) = (columns.x, &columns.series);
    let mut series: Vec<SeriesPoints> = series_columns
        .iter()
        .map(|(_, name)| SeriesPoints {
            name: name.clone(),
            unit: series_unit(name).0,
            points: Vec::new(),
        })
        .collect();
    let mut verdicts = BTreeMap::new();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            PointsError::Csv {
                line,
                column: 1,
                message: e.to_string(),
            }
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let cells = Cells {
            record: &record,
            line,
        };
        let x_value = cells.number(x_index, x)?;
        cells.plausible(x_index, x, Unit::Plain, x_value)?;
        if x_value < 0.0 {
            return Err(cells.wrong(x_index, x, "is negative: a count of units never is"));
        }
        rows += 1;
        for ((index, name), target) in series_columns.iter().zip(series.iter_mut()) {
            if record.get(*index).is_some_and(str::is_empty) {
                continue; // An empty cell: this series was not measured at this row.
            }
            let (unit, scale) = series_unit(name);
            let value = cells.number(*index, name)? * scale;
            cells.plausible(*index, name, unit, value)?;
            target.points.push((x_value, value));
        }
        if let Some(passed) = cells.passed(&columns)? {
            let entry = verdicts
                .entry(OrderedX(x_value))
                .or_insert_with(StepVerdict::passing);
            entry.judge((!passed).then(|| format!("line {line} of the points is marked failed")));
        }
    }
    if rows == 0 {
        return Err(PointsError::Csv {
            line: 2,
            column: 1,
            message: "the file has its header line and no point: write a row per point under it"
                .to_owned(),
        });
    }
    series.retain(|s| !s.points.is_empty());
    Ok(MeasuredSweep::new("csv", x, series, verdicts))
}

/// Where the columns are: `x`, the optional `pass` and `failed`, and every other one a
/// series.
struct Columns {
    x: usize,
    pass: Option<usize>,
    failed: Option<usize>,
    series: Vec<(usize, String)>,
}

impl Columns {
    /// The columns of `header`, with `x` among them.
    fn of(header: &csv::StringRecord, x: &str) -> Result<Columns, PointsError> {
        let x_index = header
            .iter()
            .position(|h| h == x)
            .ok_or_else(|| PointsError::Csv {
                line: 1,
                column: 1,
                message: format!("no column `{x}`; the columns are: {}", columns(header)),
            })?;
        let pass = header.iter().position(|h| h == "pass");
        let failed = header.iter().position(|h| h == "failed");
        let series = header
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != x_index && Some(*i) != pass && Some(*i) != failed)
            .map(|(i, h)| (i, h.to_owned()))
            .collect();
        Ok(Columns {
            x: x_index,
            pass,
            failed,
            series,
        })
    }
}

/// The cells of one row, read with the line and column of a wrong one.
struct Cells<'a> {
    record: &'a csv::StringRecord,
    line: u64,
}

impl Cells<'_> {
    /// Whether the row passed, by its `pass` column, else its `failed` one; `None` when it
    /// has neither.
    fn passed(&self, columns: &Columns) -> Result<Option<bool>, PointsError> {
        let verdict = |index: Option<usize>, column: &str| match index {
            Some(index) => self.verdict(index, column).map(Some),
            None => Ok(None),
        };
        Ok(
            match (
                verdict(columns.pass, "pass")?,
                verdict(columns.failed, "failed")?,
            ) {
                (Some(pass), _) => Some(pass),
                (None, Some(failed)) => Some(!failed),
                (None, None) => None,
            },
        )
    }

    /// `` `text` in column `what` `` and `why`, at the cell.
    fn wrong(&self, index: usize, what: &str, why: &str) -> PointsError {
        PointsError::Csv {
            line: self.line,
            column: index + 1,
            message: format!(
                "`{}` in column `{what}` {why}",
                self.record.get(index).unwrap_or_default()
            ),
        }
    }

    /// The cell as a finite number.
    fn number(&self, index: usize, what: &str) -> Result<f64, PointsError> {
        let text = self.record.get(index).unwrap_or_default();
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.wrong(index, what, "is not a number"))
    }

    /// Refuses a value (in its kept unit) no machine measures.
    fn plausible(
        &self,
        index: usize,
        what: &str,
        unit: Unit,
        value: f64,
    ) -> Result<(), PointsError> {
        implausible(unit, value).map_or(Ok(()), |why| Err(self.wrong(index, what, why)))
    }

    /// The cell as a verdict (`true`, `pass`, `failed`…).
    fn verdict(&self, index: usize, column: &str) -> Result<bool, PointsError> {
        let text = self.record.get(index).unwrap_or_default();
        parse_bool(text).ok_or_else(|| self.wrong(index, column, "is not true or false"))
    }
}

/// The header's column names for a message, bounded: the first 20, each cut at 64
/// characters (a 60 MB header line once gave a 60 MB message).
fn columns(header: &csv::StringRecord) -> String {
    const MOST: usize = 20;
    const LONGEST: usize = 64;
    let mut said: Vec<String> = header
        .iter()
        .take(MOST)
        .map(|name| match name.char_indices().nth(LONGEST) {
            Some((cut, _)) => format!("{}… ({} characters)", &name[..cut], name.chars().count()),
            None => name.to_owned(),
        })
        .collect();
    if header.len() > MOST {
        said.push(format!("and {} more", header.len() - MOST));
    }
    said.join(", ")
}

/// Why a value (in its kept unit) cannot have been measured: negative memory, time or CPU,
/// or past what any machine holds (`1e300` MiB once fitted to a 300-digit slope).
fn implausible(unit: Unit, value: f64) -> Option<&'static str> {
    const MOST_BYTES: f64 = 18_446_744_073_709_551_616.0; // 2^64: 16 EiB
    const MOST_SECONDS: f64 = 3_155_760_000.0; // a century
    const MOST_FRACTION: f64 = 10_000.0; // 1,000,000 %: ten thousand cores
    const MOST_PLAIN: f64 = 1e15;
    match unit {
        Unit::Bytes if value < 0.0 => Some("is negative: memory never is"),
        Unit::Bytes if value > MOST_BYTES => Some("is over 16 EiB, more than a machine addresses"),
        Unit::Seconds if value < 0.0 => Some("is negative: a time never is"),
        Unit::Seconds if value > MOST_SECONDS => Some("is over a century"),
        Unit::Fraction if value < 0.0 => Some("is negative: a share of CPU never is"),
        Unit::Fraction if value > MOST_FRACTION => {
            Some("is over 1,000,000 %: ten thousand cores' worth")
        }
        _ if value.abs() > MOST_PLAIN => {
            Some("is over 10^15: past what a fit here keeps its precision for")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> String {
        from_csv(text, "rooms").expect_err("refused").to_string()
    }

    /// A 60 MB header line gave a 60 MB message: the columns said are bounded.
    #[test]
    fn a_huge_header_is_said_in_a_line() {
        let header = format!(
            "{},{}",
            "c".repeat(1_000_000),
            (0..100)
                .map(|i| format!("s{i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let error = from_csv(&format!("{header}\n1,2\n"), "rooms").expect_err("no x");
        let error = error.to_string();
        assert!(error.len() < 400, "{} bytes", error.len());
        assert!(
            error.contains("… (1000000 characters), s0,") && error.ends_with("and 81 more"),
            "{error}"
        );
    }

    /// R09: a header and no row was an empty table, exit 0.
    #[test]
    fn a_header_alone_is_refused() {
        let error = said("rooms,rss_mib\n");
        assert!(
            error.contains("line 2") && error.contains("no point"),
            "{error}"
        );
    }

    /// R12, R13: `1e300` MiB fitted to a 300-digit slope; negative memory to a negative one.
    #[test]
    fn values_no_machine_measures_are_refused_where_they_are() {
        for (text, line, column, why) in [
            ("rooms,rss_mib\n1,10\n2,1e300\n", 3, 2, "over 16 EiB"),
            ("rooms,rss_mib\n1,-100\n", 2, 2, "negative: memory never is"),
            ("rooms,p95_ms\n1,-3\n", 2, 2, "negative: a time never is"),
            ("rooms,cpu_pct\n1,2e6\n", 2, 2, "over 1,000,000 %"),
            ("rooms,frames\n1,1e20\n", 2, 2, "over 10^15"),
            ("rooms,rss_mib\n-4,10\n", 2, 1, "a count of units never is"),
        ] {
            let error = said(text);
            assert!(
                error.contains(&format!("line {line}, column {column}")) && error.contains(why),
                "{text:?}: {error}"
            );
        }
        let sweep = from_csv("rooms,rss_gib,idle_pct\n0,0,0\n1,1024,400\n", "rooms")
            .expect("at the edges, measurable");
        assert_eq!(sweep.series.len(), 2);
    }
}
