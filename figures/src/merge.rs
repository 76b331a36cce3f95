//! `headroom merge`: the segments of a run (`run --segment i/n`) joined into the results one
//! machine would have written. Histograms add exactly (every latency, every second's
//! window), counts add, rates add over the same window; SLO verdicts are judged again on the
//! merged figures, never taken from a share. The target's own figures (memory, CPU, metrics)
//! are segment 0's, the one share that measures the target; every segment's generator
//! figures are kept, and a run is generator-bound when any share was.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use headroom_results::histogram::{deserialize_histogram, histogram_summary, serialize_histogram};
use headroom_results::{
    Connections, ErrorCounts, GeneratorResult, HistogramKey, MachinePauses, RequestCounts,
    RequestResult, Results, RunResult, ScenarioResult, TlsFigures, Window,
};

/// One segment's results and the file it came from (for the errors).
pub struct Part {
    /// The file, as given.
    pub path: String,
    /// Its results.
    pub results: Results,
}

/// Joins the segments of one run; an error names the files and what does not fit.
pub fn merge(mut parts: Vec<Part>) -> Result<Results, String> {
    // One whole run (`run --segment 0/1`, as `headroom k8s --segments 1` runs it) is its own
    // merge: the run as it is, its SLOs judged when it ran.
    if let [part] = parts.as_slice()
        && part.results.segment.is_none()
    {
        return Ok(part.results.clone());
    }
    check_parts(&mut parts)?;
    let mut merged = parts[0].results.clone();
    merged.segment = None;
    for phase in &mut merged.phases {
        for point in &mut phase.points {
            for run in &mut point.runs {
                let mut shares = Vec::with_capacity(parts.len());
                for part in &parts {
                    let share = find_run(&part.results, &phase.name, point.index, run.repeat)
                        .ok_or_else(|| {
                            format!(
                                "`{}` has no run {} of point {} of phase `{}`, which `{}` has: every segment must run every point (an interrupted segment cannot be merged)",
                                part.path,
                                run.repeat,
                                point.index + 1,
                                phase.name,
                                parts[0].path
                            )
                        })?;
                    shares.push(share);
                }
                *run = merge_run(&shares, &parts, &merged.matrix.slo)?;
            }
        }
    }
    for part in &parts[1..] {
        for phase in &part.results.phases {
            for point in &phase.points {
                for run in &point.runs {
                    if find_run(&parts[0].results, &phase.name, point.index, run.repeat).is_none() {
                        return Err(format!(
                            "`{}` has run {} of point {} of phase `{}`, which `{}` has not: every segment must run every point",
                            part.path,
                            run.repeat,
                            point.index + 1,
                            phase.name,
                            parts[0].path
                        ));
                    }
                }
            }
        }
    }
    Ok(merged)
}

/// The parts are the segments of one spec's run, each once, all of them; sorted by index.
fn check_parts(parts: &mut [Part]) -> Result<(), String> {
    let Some(first) = parts.first() else {
        return Err("no results to merge".to_owned());
    };
    let (first_path, first) = (first.path.clone(), first.results.clone());
    let segment_of = |part: &Part| {
        part.results.segment.clone().ok_or_else(|| {
            format!(
                "`{}` is not a segment's results: it was run without --segment",
                part.path
            )
        })
    };
    let count = segment_of(&parts[0])?.count;
    for part in parts.iter() {
        let segment = segment_of(part)?;
        let results = &part.results;
        if results.spec.hash != first.spec.hash {
            return Err(format!(
                "`{}` and `{first_path}` are results of different specs (spec hash {} and {}): merge the segments of one run",
                part.path, results.spec.hash, first.spec.hash
            ));
        }
        if segment.count != count {
            return Err(format!(
                "`{}` is segment {}/{} and `{first_path}` one of {count}: merge the segments of one run",
                part.path, segment.index, segment.count
            ));
        }
        if results.seed != first.seed || results.quick != first.quick {
            return Err(format!(
                "`{}` and `{first_path}` ran with different seeds or --quick: their schedules are not shares of one",
                part.path
            ));
        }
    }
    parts.sort_by_key(|part| part.results.segment.as_ref().map_or(0, |s| s.index));
    for (expected, part) in parts.iter().enumerate() {
        let index = part.results.segment.as_ref().map_or(0, |s| s.index);
        if index < expected as u64 {
            return Err(format!(
                "segment {index}/{count} is given twice (`{}` and another): give each once",
                part.path
            ));
        }
        if index > expected as u64 {
            return Err(format!(
                "segment {expected}/{count} is missing: give all {count} segments"
            ));
        }
    }
    if parts.len() as u64 != count {
        return Err(format!(
            "segment {}/{count} is missing: give all {count} segments",
            parts.len()
        ));
    }
    Ok(())
}

fn find_run<'a>(
    results: &'a Results,
    phase: &str,
    point: usize,
    repeat: u32,
) -> Option<&'a RunResult> {
    results
        .phases
        .iter()
        .find(|p| p.name == phase)?
        .points
        .iter()
        .find(|p| p.index == point)?
        .runs
        .iter()
        .find(|r| r.repeat == repeat)
}

/// One run from its shares (segment 0 first).
fn merge_run(
    shares: &[&RunResult],
    parts: &[Part],
    slo: &[headroom_matrix::slo::SloRule],
) -> Result<RunResult, String> {
    let mut run = shares[0].clone();
    run.started_ms = shares.iter().map(|r| r.started_ms).min().unwrap_or(0);
    run.duration_s = shares.iter().map(|r| r.duration_s).fold(0.0, f64::max);
    if run.failure.is_none()
        && let Some((index, failed)) = shares
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.failure.as_ref().map(|f| (i, f)))
    {
        run.notes.push(format!(
            "segment {index} ({}) failed: {}",
            host(&parts[index]),
            failed.describe()
        ));
        run.failure = Some(failed.clone());
    }
    for (index, share) in shares.iter().enumerate().skip(1) {
        for note in &share.notes {
            run.notes.push(format!("segment {index}: {note}"));
        }
    }
    let mut scenarios = BTreeMap::new();
    for name in run.scenarios.keys() {
        let mut of_name = Vec::with_capacity(shares.len());
        for (index, share) in shares.iter().enumerate() {
            let scenario = share.scenarios.get(name).ok_or_else(|| {
                format!(
                    "`{}` has no scenario `{name}` in run {}: the segments did not run the same load",
                    parts[index].path, run.repeat
                )
            })?;
            of_name.push(scenario);
        }
        scenarios.insert(name.clone(), merge_scenario(&of_name)?);
    }
    run.scenarios = scenarios;
    run.generator = merge_generator(shares);
    run.machine_cpu = merge_machine_cpu(shares, parts);
    if run.failure.is_none()
        && let Some((scenario, why)) = crate::users::stuck(&run)
    {
        run.failure = Some(headroom_results::Failure::UsersStuck { scenario, why });
    }
    run.slo = if matches!(
        run.failure,
        None | Some(
            headroom_results::Failure::NothingMeasured { .. }
                | headroom_results::Failure::UsersStuck { .. }
        )
    ) {
        crate::verdict::evaluate(slo, &run)
    } else {
        Vec::new()
    };
    Ok(run)
}

fn host(part: &Part) -> &str {
    part.results
        .segment
        .as_ref()
        .map_or("", |s| s.host.as_str())
}

/// What others took of the machines: of segments on hosts of their own, the most any host's
/// others took; of segments sharing a host, nothing (each would count the others' generators
/// as other work).
fn merge_machine_cpu(
    shares: &[&RunResult],
    parts: &[Part],
) -> Option<headroom_results::MachineCpu> {
    let hosts: std::collections::BTreeSet<&str> = parts.iter().map(host).collect();
    if hosts.len() < parts.len() {
        return None;
    }
    shares
        .iter()
        .try_fold(headroom_results::MachineCpu::default(), |most, share| {
            let machine = share.machine_cpu?;
            Some(headroom_results::MachineCpu {
                others_cores: most.others_cores.max(machine.others_cores),
                stolen_cores: most.stolen_cores.max(machine.stolen_cores),
                ..machine
            })
        })
}

/// Every share's generator figures kept; the run generator-bound when any share was.
fn merge_generator(shares: &[&RunResult]) -> GeneratorResult {
    let each: Vec<GeneratorResult> = shares
        .iter()
        .map(|r| GeneratorResult {
            segments: Vec::new(),
            ..r.generator.clone()
        })
        .collect();
    let bound = each.iter().position(|g| g.bound);
    GeneratorResult {
        schedule_lag_p99_ms: each
            .iter()
            .map(|g| g.schedule_lag_p99_ms)
            .fold(0.0, f64::max),
        cpu_cores: each.iter().map(|g| g.cpu_cores).sum(),
        cores_available: each.iter().map(|g| g.cores_available).sum(),
        cores_left: None,
        threads: each.iter().map(|g| g.threads).sum(),
        bound: bound.is_some(),
        reason: bound.map(|i| {
            format!(
                "segment {i}: {}",
                each[i].reason.as_deref().unwrap_or("generator-bound")
            )
        }),
        // Each segment's machine paused on its own: their pauses together, the longest of any.
        pauses: each
            .iter()
            .filter_map(|g| g.pauses)
            .reduce(|a, b| MachinePauses {
                count: a.count + b.count,
                longest_ms: a.longest_ms.max(b.longest_ms),
            }),
        paused: each
            .iter()
            .enumerate()
            .find_map(|(i, g)| Some(format!("segment {i}: {}", g.paused.as_deref()?))),
        segments: each,
    }
}

/// The histograms of every share, added; their summaries recomputed from them.
fn merge_histograms(
    shares: &[&ScenarioResult],
) -> Result<BTreeMap<HistogramKey, Histogram<u64>>, String> {
    let mut merged: BTreeMap<HistogramKey, Histogram<u64>> = BTreeMap::new();
    for share in shares {
        for (name, text) in &share.histograms {
            let histogram = deserialize_histogram(text)
                .ok_or_else(|| format!("histogram `{name}` cannot be read"))?;
            match merged.get_mut(name) {
                Some(sum) => sum
                    .add(&histogram)
                    .map_err(|e| format!("histogram `{name}`: {e}"))?,
                None => {
                    merged.insert(*name, histogram);
                }
            }
        }
    }
    Ok(merged)
}

fn merge_scenario(shares: &[&ScenarioResult]) -> Result<ScenarioResult, String> {
    let first = shares[0];
    if shares.iter().all(|s| s.skipped.is_some()) {
        return Ok(first.clone());
    }
    let histograms = merge_histograms(shares)?;
    let sum = |f: fn(&ScenarioResult) -> u64| shares.iter().map(|s| f(s)).sum::<u64>();
    let rooms = first.rooms.is_some();
    Ok(ScenarioResult {
        kind: first.kind.clone(),
        skipped: None,
        requests: sum(|s| s.requests),
        ok: sum(|s| s.ok),
        dropped: sum(|s| s.dropped),
        errors: add_errors(shares.iter().map(|s| &s.errors)),
        duration_s: shares.iter().map(|s| s.duration_s).fold(0.0, f64::max),
        // Every share's rate is over the same window: they add.
        rate: shares.iter().map(|s| s.rate).sum(),
        latency: summary(
            &histograms,
            if rooms {
                HistogramKey::Seen
            } else {
                HistogramKey::Latency
            },
        ),
        unexpected_latency: histograms
            .get(&HistogramKey::UnexpectedLatency)
            .map(histogram_summary),
        schedule_lag: summary(&histograms, HistogramKey::ScheduleLag),
        connection_wait: summary(&histograms, HistogramKey::ConnectionWait),
        windows: merge_windows(shares)?,
        outside_hold: merge_outside_hold(shares, &histograms),
        users: merge_users(shares),
        held: merge_held(shares),
        connections: shares.iter().filter_map(|s| s.connections.as_ref()).fold(
            None,
            |sum: Option<Connections>, c| {
                let sum = sum.unwrap_or_default();
                Some(Connections {
                    opened: sum.opened + c.opened,
                    queued_at_limit: sum.queued_at_limit + c.queued_at_limit,
                })
            },
        ),
        by_request: merge_by_request(shares)?,
        rooms: merge_rooms(shares, &histograms),
        tls: shares.iter().any(|s| s.tls.is_some()).then(|| TlsFigures {
            handshakes: shares
                .iter()
                .filter_map(|s| s.tls.as_ref())
                .map(|t| t.handshakes)
                .sum(),
            handshake: summary(&histograms, HistogramKey::TlsHandshake),
        }),
        // Addresses of different machines: summed, as each share's are its own.
        source_addresses: shares
            .iter()
            .filter_map(|s| s.source_addresses)
            .reduce(|a, b| a + b),
        histograms: histograms
            .iter()
            .map(|(key, h)| (*key, serialize_histogram(h)))
            .collect(),
    })
}

/// Second by second: counts add, each second's latencies from its histograms added, its
/// errors by why where every share said why (a share from a file older than that: the total
/// only).
fn merge_windows(shares: &[&ScenarioResult]) -> Result<Vec<Window>, String> {
    struct Second {
        histogram: Histogram<u64>,
        requests: u64,
        errors: u64,
        by_kind: Option<ErrorCounts>,
    }
    let mut seconds: BTreeMap<u64, Second> = BTreeMap::new();
    for share in shares {
        for window in &share.windows {
            let histogram = match &window.histogram {
                Some(text) => deserialize_histogram(text)
                    .ok_or_else(|| format!("the window at {} s cannot be read", window.t_s))?,
                // No expected answer in the second (none at all, or only failures).
                None if window.requests == window.errors => headroom_results::histogram::new(),
                None => {
                    return Err(format!(
                        "the window at {} s has no histogram (a results file older than segments): it cannot be merged exactly",
                        window.t_s
                    ));
                }
            };
            let second = seconds.entry(window.t_s).or_insert_with(|| Second {
                histogram: headroom_results::histogram::new(),
                requests: 0,
                errors: 0,
                by_kind: Some(ErrorCounts::default()),
            });
            second
                .histogram
                .add(&histogram)
                .map_err(|e| format!("the window at {} s: {e}", window.t_s))?;
            second.requests += window.requests;
            second.errors += window.errors;
            second.by_kind = match (second.by_kind.take(), &window.errors_by_kind) {
                (Some(sum), Some(kinds)) => Some(add_errors([&sum, kinds].into_iter())),
                (Some(sum), None) if window.errors == 0 => Some(sum),
                _ => None,
            };
        }
    }
    Ok(seconds
        .into_iter()
        .map(|(t_s, second)| {
            let by_kind = second.by_kind.unwrap_or_default();
            let mut window = Window::of(t_s, &second.histogram, second.requests, &by_kind);
            if window.errors != second.errors {
                // Some share did not say why: the total stands, the kinds are not known.
                window.errors = second.errors;
                window.errors_by_kind = None;
            }
            window
        })
        .collect())
}

/// The shares' users added (each segment ran its share of them), at their one think time.
fn merge_users(shares: &[&ScenarioResult]) -> Option<headroom_results::Users> {
    let first = shares.first()?.users?;
    Some(headroom_results::Users {
        users: shares.iter().filter_map(|s| s.users).map(|u| u.users).sum(),
        think_mean_s: first.think_mean_s,
    })
}

/// Segment 0's part of the run's hold (its clock is the merged run's), no longer than the
/// shortest share's: a segment that held less held the whole load less.
fn merge_held(shares: &[&ScenarioResult]) -> Option<headroom_results::Interval> {
    let first = shares.first()?.held?;
    let shortest = shares
        .iter()
        .map(|share| share.held.map_or(0.0, |held| held.length_s()))
        .fold(first.length_s(), f64::min);
    Some(headroom_results::Interval {
        from_s: first.from_s,
        to_s: first.from_s + shortest,
    })
}

/// The shares' counts outside the hold added, their latency from the merged histogram.
fn merge_outside_hold(
    shares: &[&ScenarioResult],
    histograms: &BTreeMap<HistogramKey, Histogram<u64>>,
) -> Option<RequestCounts> {
    let outside = add_counts(shares.iter().filter_map(|s| s.outside_hold.as_ref()))?;
    Some(RequestCounts {
        latency: histograms
            .get(&HistogramKey::OutsideHoldLatency)
            .map(histogram_summary),
        ..outside
    })
}

/// Counts added, their latency left out (it is not added from summaries); `None` of none.
fn add_counts<'a>(counts: impl Iterator<Item = &'a RequestCounts>) -> Option<RequestCounts> {
    let counts: Vec<&RequestCounts> = counts.collect();
    (!counts.is_empty()).then(|| RequestCounts {
        requests: counts.iter().map(|r| r.requests).sum(),
        ok: counts.iter().map(|r| r.ok).sum(),
        dropped: counts.iter().map(|r| r.dropped).sum(),
        errors: add_errors(counts.iter().map(|r| &r.errors)),
        latency: None,
    })
}

fn merge_by_request(shares: &[&ScenarioResult]) -> Result<BTreeMap<String, RequestResult>, String> {
    let mut merged: BTreeMap<String, (RequestResult, Histogram<u64>)> = BTreeMap::new();
    for share in shares {
        for (name, request) in &share.by_request {
            let histogram = deserialize_histogram(&request.histogram)
                .ok_or_else(|| format!("the histogram of request `{name}` cannot be read"))?;
            match merged.get_mut(name) {
                Some((sum, sum_histogram)) => {
                    sum.requests += request.requests;
                    sum.ok += request.ok;
                    sum.errors = add_errors([&sum.errors, &request.errors].into_iter());
                    let both = [&sum.outside_hold, &request.outside_hold];
                    sum.outside_hold = add_counts(both.into_iter().flatten());
                    sum_histogram
                        .add(&histogram)
                        .map_err(|e| format!("request `{name}`: {e}"))?;
                }
                None => {
                    merged.insert(name.clone(), (request.clone(), histogram));
                }
            }
        }
    }
    Ok(merged
        .into_iter()
        .map(|(name, (request, histogram))| {
            let request = RequestResult {
                latency: histogram_summary(&histogram),
                histogram: serialize_histogram(&histogram),
                ..request
            };
            (name, request)
        })
        .collect())
}

mod rooms;
mod sums;

use rooms::merge_rooms;
use sums::{add_errors, summary};

#[cfg(test)]
mod tests;
