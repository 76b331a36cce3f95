//! Prometheus text metrics: the samples of a scrape, and the series a spec picks from them.
//!
//! A small parser of the text exposition format (name, labels, value): the runner needs only
//! the samples, not types or help, and this keeps a date-time library out of the tree.

use std::collections::BTreeMap;

use headroom_spec::Series;

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Every sample of a scrape; lines that do not parse are skipped.
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|line| parse_line(line.trim()))
        .collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        let mut key = String::new();
        let end;
        loop {
            let (i, c) = chars.next()?;
            match c {
                '}' => {
                    end = i + 1;
                    break;
                }
                ',' | ' ' => {}
                '=' => {
                    if chars.next()?.1 != '"' {
                        return None;
                    }
                    let mut value = String::new();
                    loop {
                        let (_, c) = chars.next()?;
                        match c {
                            '\\' => match chars.next()?.1 {
                                'n' => value.push('\n'),
                                other => value.push(other),
                            },
                            '"' => break,
                            other => value.push(other),
                        }
                    }
                    labels.insert(std::mem::take(&mut key), value);
                }
                other => key.push(other),
            }
        }
        rest = &body[end..];
    }
    let value = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        number => number.parse().ok()?,
    };
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// The value of a series: the samples of its metric that carry all its labels, summed (a
/// series without labels over a labelled metric is its total).
pub fn select(samples: &[Sample], series: &Series) -> Option<f64> {
    let matching: Vec<f64> = samples
        .iter()
        .filter(|s| series.metric.as_deref() == Some(s.name.as_str()))
        .filter(|s| {
            series
                .labels
                .iter()
                .all(|(k, v)| s.labels.get(k) == Some(v))
        })
        .map(|s| s.value)
        .collect();
    (!matching.is_empty()).then(|| matching.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP suite_memory_split Memory by segment.
# TYPE suite_memory_split gauge
suite_memory_split{segment="heap"} 40705776
suite_memory_split{segment="rss",note="a \"quoted\", value"} 2.33e8
requests_total{route="list"} 3
requests_total{route="get"} 4
up 1 1700000000000
broken{segment="x" 1
"#;

    fn series(metric: &str, labels: &[(&str, &str)]) -> Series {
        Series {
            name: "x".into(),
            metric: Some(metric.into()),
            command: None,
            every: None,
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            unit: None,
            better: None,
        }
    }

    #[test]
    fn parses_names_labels_values_and_escapes() {
        let samples = parse(TEXT);
        assert_eq!(samples.len(), 5);
        assert_eq!(samples[1].labels["note"], "a \"quoted\", value");
        assert_eq!(samples[1].value, 2.33e8);
        assert_eq!(samples[4].name, "up");
    }

    #[test]
    fn selects_by_labels_and_sums_the_rest() {
        let samples = parse(TEXT);
        assert_eq!(
            select(
                &samples,
                &series("suite_memory_split", &[("segment", "heap")])
            ),
            Some(40705776.0)
        );
        assert_eq!(select(&samples, &series("requests_total", &[])), Some(7.0));
        assert_eq!(
            select(&samples, &series("requests_total", &[("route", "post")])),
            None
        );
    }
}
