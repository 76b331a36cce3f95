//! The steady state: after the load, the server's metrics scraped and its process group read,
//! each reduced as the spec says.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use headroom_matrix::ResolvedMeasure;
use headroom_spec::Reducer;
use tokio::time::Instant;

use crate::results::{MetricsResult, ProcessSample};
use crate::sample::Sampled;
use crate::scrape;
use headroom_load::web;

/// After the load: wait `settle`, then `scrapes` readings `every` apart of the metrics and the
/// process groups, reduced as the spec says; with what is known of each missing series (a
/// metric name not scraped, and the scraped name closest to it).
pub(crate) async fn steady_state(
    measure: &ResolvedMeasure,
    endpoint: Option<&web::Endpoint>,
    groups: Vec<(Option<String>, crate::sample::ServerProcesses)>,
    start: Instant,
) -> (MetricsResult, Sampled, Vec<String>) {
    let steady = &measure.steady_state;
    tokio::time::sleep(steady.settle.as_std()).await;
    let mut metrics = MetricsResult::default();
    let mut sampled = Sampled::of(groups);
    let mut seen = BTreeSet::new();
    // Series read by a command are read during the load, not here.
    let scraped: Vec<_> = measure
        .series
        .iter()
        .filter(|series| series.metric.is_some())
        .collect();
    for k in 0..steady.scrapes {
        if k > 0 {
            tokio::time::sleep(steady.every.as_std()).await;
        }
        if let Some(endpoint) = endpoint {
            let got = web::get(
                endpoint.address,
                &endpoint.host,
                endpoint.authorization.as_deref(),
                &endpoint.path,
                endpoint.tls.as_deref(),
                Duration::from_secs(5),
            )
            .await;
            let failed = match &got {
                Ok((200, _)) => None,
                Ok((status, _)) => Some(format!("answered {status}")),
                Err(web::ErrorKind::Connect) => Some("no connection".to_owned()),
                Err(web::ErrorKind::Timeout) => Some("no answer within 5s".to_owned()),
                Err(web::ErrorKind::Protocol) => Some("an answer that was not HTTP".to_owned()),
            };
            if let Some(why) = failed {
                metrics.failed_scrapes += 1;
                metrics.scrape_error = Some(format!("GET {} {why}", endpoint.path));
            }
            if let Ok((200, body)) = got {
                let samples = scrape::parse(&String::from_utf8_lossy(&body));
                seen.extend(samples.iter().map(|sample| sample.name.clone()));
                let mut picked = BTreeMap::new();
                for series in &scraped {
                    if let Some(value) = scrape::select(&samples, series) {
                        picked.insert(series.name.clone(), value);
                    }
                }
                metrics.scrapes.push(picked);
            }
        }
        sampled.take(start);
    }
    for series in &scraped {
        let values: Vec<f64> = metrics
            .scrapes
            .iter()
            .filter_map(|s| s.get(&series.name).copied())
            .collect();
        match steady.reduce.of(&values) {
            Some(value) => {
                metrics.steady.insert(series.name.clone(), value);
            }
            None => metrics.missing.push(series.name.clone()),
        }
    }
    let unknown = scraped
        .iter()
        .filter(|series| metrics.missing.contains(&series.name))
        .filter_map(|series| series.metric.as_deref())
        .filter(|metric| !seen.contains(*metric))
        .map(|metric| unscraped(metric, &seen))
        .collect();
    (metrics, sampled, unknown)
}

/// A metric name no scrape held, said with the scraped name closest to it.
fn unscraped(metric: &str, seen: &BTreeSet<String>) -> String {
    if seen.is_empty() {
        return format!("`{metric}` was not scraped: the metrics held no series at all");
    }
    let closest = headroom_compiler::suggest::closest(metric, seen.iter().map(String::as_str));
    match closest {
        Some(name) => format!(
            "`{metric}` is not among the {} metric names scraped: did you mean `{name}`?",
            seen.len()
        ),
        None => format!(
            "`{metric}` is not among the {} metric names scraped (`curl` the metrics to see them)",
            seen.len()
        ),
    }
}

/// The steady-state readings of the process group reduced to one: `None` without a reading,
/// and CPU `None` unless two readings measured it (one scrape reads no CPU).
pub(crate) fn steady_process(readings: &[ProcessSample], reduce: Reducer) -> Option<ProcessSample> {
    let last = readings.last()?;
    let rss: Vec<f64> = readings.iter().map(|r| r.rss_bytes as f64).collect();
    let cpu: Vec<f64> = readings.iter().filter_map(|r| r.cpu_pct).collect();
    Some(ProcessSample {
        t_s: last.t_s,
        rss_bytes: reduce.of(&rss)? as u64,
        cpu_pct: reduce.of(&cpu),
        processes: last.processes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(rss_bytes: u64, cpu_pct: Option<f64>) -> ProcessSample {
        ProcessSample {
            t_s: 1.0,
            rss_bytes,
            cpu_pct,
            processes: 1,
        }
    }

    /// Issue 11, item 4: one steady-state reading measures memory but not CPU (CPU is the
    /// difference of two readings): the steady CPU is `None`, never 0 %.
    /// A misspelt metric name is said with the scraped name it is likely a typo of.
    #[test]
    fn an_unscraped_metric_names_the_closest_scraped_one() {
        let seen: BTreeSet<String> = ["chat_connected_sockets", "process_cpu_seconds_total"]
            .map(String::from)
            .into();
        assert_eq!(
            unscraped("chat_connected_socket", &seen),
            "`chat_connected_socket` is not among the 2 metric names scraped: did you mean `chat_connected_sockets`?"
        );
        assert!(unscraped("heap_bytes", &seen).ends_with("(`curl` the metrics to see them)"));
    }

    #[test]
    fn one_reading_measures_no_cpu() {
        let one = steady_process(&[reading(100, None)], Reducer::Median).expect("a reading");
        assert_eq!(one.rss_bytes, 100);
        assert_eq!(one.cpu_pct, None);
        let three = steady_process(
            &[
                reading(100, None),
                reading(110, Some(20.0)),
                reading(120, Some(40.0)),
            ],
            Reducer::Median,
        )
        .expect("readings");
        assert_eq!((three.rss_bytes, three.cpu_pct), (110, Some(30.0)));
        assert_eq!(steady_process(&[], Reducer::Median), None);
    }
}
