//! The run table: a row per run of each phase, as `headroom run` prints it at the end, and the
//! one-line summary of a run the progress shows.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};
use headroom_figures::{Named, read};
use headroom_matrix::slo::{ScenarioFigure, Statistic};
use headroom_runner::results::{ErrorCounts, RoomsResult, RunResult, ScenarioResult};

/// A point's swept variables as people read them: `rooms = 16, rate = 4/s`.
pub(crate) fn variables(
    at: &std::collections::BTreeMap<String, headroom_spec::VarValue>,
) -> String {
    crate::live::point_words(at)
}

pub(super) fn one_line(result: &RunResult) -> String {
    if let Some(failure) = &result.failure {
        return format!("failed: {}", failure.describe());
    }
    let mut parts = Vec::new();
    let http: Vec<_> = measured(result).filter(|s| s.rooms.is_none()).collect();
    if !http.is_empty() {
        parts.push(http_words(&http));
    }
    parts.extend(
        measured(result)
            .filter_map(|s| s.rooms.as_ref())
            .map(rooms_words),
    );
    if let Some(tls) = tls_handshakes(result) {
        parts.push(tls);
    }
    // Scenarios take their sources from the same pool: the most any used is how many there were.
    if let Some(sources) = measured(result).filter_map(|s| s.source_addresses).max() {
        parts.push(format!("from {} source addresses", thousands(sources)));
    }
    let rss = result
        .process
        .steady
        .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes));
    let failed = result.slo.iter().filter(|v| v.pass == Some(false)).count();
    if result.slo.is_empty() {
        parts.push(format!("RSS {rss}"));
    } else {
        parts.push(format!("RSS {rss}, {failed} SLO failed"));
    }
    let mut line = format!("ok: {}", parts.join("; "));
    if result.generator.bound {
        line.push_str(" (generator-bound)");
    } else if result.generator.paused.is_some()
        && let Some(pauses) = result.generator.pauses
    {
        line.push_str(&format!(
            " (the machine paused the generator: {} pauses, longest {:.0} ms; a caveat, not a bound)",
            pauses.count, pauses.longest_ms
        ));
    }
    if let Some(machine) = result.machine_cpu.filter(|m| m.competed()) {
        line.push_str(&format!(
            " ({} over the hold: the server had less of the machine than a quiet one gives)",
            machine.describe()
        ));
    }
    line
}

/// The HTTP scenarios of a run in words: requests, errors by kind, starts dropped, and what
/// failed outside the hold.
fn http_words(http: &[&ScenarioResult]) -> String {
    let requests: u64 = http.iter().map(|s| s.requests).sum();
    let mut errors = ErrorCounts::default();
    for scenario in http {
        errors.add(&scenario.errors);
    }
    // Starts skipped at `max_in_flight` are said too, apart from errors, as the table does.
    let dropped: u64 = http.iter().map(|s| s.dropped).sum();
    let mut text = format!(
        "{} requests, {} errors",
        thousands(requests),
        thousands(errors.total())
    );
    // By kind, as the results file has them (`12 unexpected status (12 × 500)`).
    if errors.total() > 0 {
        text.push_str(&format!(" ({})", errors.describe()));
    }
    if dropped > 0 {
        text.push_str(&format!(", {} starts dropped", thousands(dropped)));
    }
    // Failures outside the hold are in no figure but `failed`: never dropped silently.
    let mut outside = ErrorCounts::default();
    for scenario in http {
        outside.add(&failed_outside(scenario));
    }
    if outside.total() > 0 {
        text.push_str(&format!(
            ", and outside the hold {} failed ({})",
            thousands(outside.total()),
            outside.describe()
        ));
    }
    text
}

/// A rooms scenario of a run in words: sockets open (and why not), messages and frames.
fn rooms_words(rooms: &RoomsResult) -> String {
    let (sockets, messages) = (&rooms.sockets, &rooms.messages);
    let mut text = format!(
        "{} of {} sockets open",
        thousands(sockets.opened),
        thousands(sockets.planned)
    );
    // Why the others did not open: each kind by its cause (ports and the namespace's
    // refusals with their own words below).
    let causes = headroom_runner::results::ConnectFailures {
        ports: 0,
        rejected: 0,
        ..sockets.failed.clone()
    };
    if let Some(why) = causes.describe() {
        text.push_str(&format!(" ({why})"));
    }
    if sockets.failed.ports > 0 {
        text.push_str(&format!(
            " ({} found no free local port)",
            thousands(sockets.failed.ports)
        ));
    }
    if let Some(rejected) = rooms.rejections() {
        text.push_str(&format!(" ({rejected})"));
    }
    if let Some(drops) = rooms.drops() {
        text.push_str(&format!(
            ", {} dropped by the server ({drops})",
            thousands(sockets.closed_by_server)
        ));
    }
    if sockets.dropped.too_large > 0 {
        text.push_str(&format!(
            ", {} cut by headroom (a frame or event over its bound: 16 MiB a WebSocket frame, 8 MiB an SSE event)",
            thousands(sockets.dropped.too_large)
        ));
    }
    if messages.sent > 0 {
        text.push_str(&format!(
            ", {} messages, {} of {} frames delivered",
            thousands(messages.sent),
            thousands(messages.delivered),
            thousands(messages.expected)
        ));
    }
    text.push_str(&delivery_faults(messages));
    text
}

/// `, 16 misrouted (outside the sender's room), 8 duplicates`: copies that are no deliveries,
/// and first copies at peers not open when the message was sent; empty when there were none.
fn delivery_faults(messages: &headroom_runner::results::MessageCounts) -> String {
    let mut text = String::new();
    if messages.misrouted > 0 {
        text.push_str(&format!(
            ", {} misrouted (outside the sender's room)",
            thousands(messages.misrouted)
        ));
    }
    if messages.duplicates > 0 {
        text.push_str(&format!(", {} duplicates", thousands(messages.duplicates)));
    }
    if messages.unexpected > 0 {
        text.push_str(&format!(
            ", {} at peers not open when sent",
            thousands(messages.unexpected)
        ));
    }
    text
}

/// `12 TLS handshakes, p50 1.03 ms, p99 2.42 ms`: every scenario's handshakes together (their
/// histograms merged), apart from the requests' latencies; `None` without TLS.
fn tls_handshakes(result: &RunResult) -> Option<String> {
    let mut all = headroom_runner::results::histogram::new();
    for scenario in measured(result).filter(|s| s.tls.is_some()) {
        let histogram = scenario.histogram(headroom_runner::results::HistogramKey::TlsHandshake)?;
        all.add(&histogram).ok()?;
    }
    if all.is_empty() {
        return None;
    }
    let at = |q: f64| ms(all.value_at_quantile(q) as f64 / 1000.0);
    Some(format!(
        "{} TLS handshakes, p50 {}, p99 {}",
        thousands(all.len()),
        at(0.5),
        at(0.99)
    ))
}

/// The scenarios that ran (not skipped).
fn measured(result: &RunResult) -> impl Iterator<Item = &ScenarioResult> {
    result.scenarios.values().filter(|s| s.skipped.is_none())
}

/// `4393` → `4,393`, as the pages write counts.
fn thousands(n: u64) -> String {
    headroom_templates::format::count(n as f64)
}

fn mib(bytes: u64) -> String {
    headroom_templates::format::mib(bytes as f64, None)
}

pub(super) fn ms(value: f64) -> String {
    headroom_templates::format::duration_ms(value)
}

/// A row per run: what people look at first. HTTP columns when the phase has HTTP scenarios,
/// socket and delivery columns when it has rooms: as the spec gives them (`planned`, its
/// scenarios), else as its runs measured them.
pub(super) fn phase_table(
    phase: &headroom_runner::results::PhaseResults,
    planned: &[headroom_matrix::resolved::Scenario],
) -> String {
    use headroom_matrix::resolved::Scenario;
    let runs = || phase.points.iter().flat_map(|p| p.runs.iter());
    let has_http = planned.iter().any(|s| matches!(s, Scenario::Http(_)))
        || runs().any(|r| measured(r).any(|s| s.rooms.is_none()));
    let has_rooms = planned.iter().any(|s| matches!(s, Scenario::Rooms(_)))
        || runs().any(|r| measured(r).any(|s| s.rooms.is_some()));
    let mut header = vec!["point", "variables", "run"];
    if has_http || !has_rooms {
        header.extend(["requests", "req/s", "p50", "p95", "p99", "errors"]);
    }
    if has_rooms {
        header.extend(["sockets", "delivered", "seen p95", "seen by all p95"]);
    }
    let limited = runs().any(|r| applied(r).is_some());
    if limited {
        header.extend(["CPU", "throttled", "cgroup peak"]);
    }
    header.extend(["RSS", "SLO"]);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(header);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    for point in &phase.points {
        for run in &point.runs {
            let mut row = vec![
                right((point.index + 1).to_string()),
                Cell::new(variables(&point.at)),
                right(run.repeat.to_string()),
            ];
            if has_http || !has_rooms {
                row.extend(http_cells(run).map(right));
            }
            if has_rooms {
                row.extend(rooms_cells(run).map(right));
            }
            if limited {
                row.extend(limits_cells(run).map(right));
            }
            row.push(right(
                run.process
                    .steady
                    .map_or_else(|| "-".to_owned(), |s| mib(s.rss_bytes)),
            ));
            row.push(Cell::new(slo_cell(run)));
            table.add_row(row);
        }
    }
    format!("{}{}\n{table}", phase.name, limits_title(phase))
}

/// A row per run and named request, for the phases whose HTTP scenarios measured requests
/// apart: a slow route is seen beside the fast ones the scenario's percentiles mix it with.
pub(super) fn request_table(phase: &headroom_runner::results::PhaseResults) -> Option<String> {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "point",
        "variables",
        "run",
        "request",
        "requests",
        "p50",
        "p95",
        "p99",
        "errors",
    ]);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let mut rows = 0;
    for point in &phase.points {
        for run in &point.runs {
            for (scenario, result) in &run.scenarios {
                for (request, apart) in &result.by_request {
                    let latency = |value: f64| {
                        if apart.latency.count == 0 {
                            "-".to_owned()
                        } else {
                            ms(value)
                        }
                    };
                    table.add_row(vec![
                        right((point.index + 1).to_string()),
                        Cell::new(variables(&point.at)),
                        right(run.repeat.to_string()),
                        Cell::new(format!("{scenario}.{request}")),
                        right(thousands(apart.requests)),
                        right(latency(apart.latency.p50_ms)),
                        right(latency(apart.latency.p95_ms)),
                        right(latency(apart.latency.p99_ms)),
                        right(errors_cell(&apart.errors, 0)),
                    ]);
                    rows += 1;
                }
            }
        }
    }
    (rows > 0).then(|| format!("{}, by request\n{table}", phase.name))
}

/// The run's limits, when a cgroup applied them.
fn applied(run: &RunResult) -> Option<&headroom_runner::results::AppliedLimits> {
    match &run.limits {
        Some(headroom_runner::results::RunLimits::Applied(applied)) => Some(applied),
        _ => None,
    }
}

/// ` (limits: 0.5 CPU, 2GiB memory, no swap (cgroup v1))` after the phase's name: the shape
/// every run of it ran in, or that it varies by point.
fn limits_title(phase: &headroom_runner::results::PhaseResults) -> String {
    let mut shapes: Vec<String> = phase
        .points
        .iter()
        .flat_map(|p| p.runs.iter())
        .filter_map(applied)
        .map(headroom_runner::results::AppliedLimits::describe)
        .collect();
    shapes.dedup();
    match shapes.as_slice() {
        [] => String::new(),
        [shape] => format!(" (limits: {shape})"),
        _ => " (limits: a shape per point, in the results file)".to_owned(),
    }
}

/// The limits columns of a run: CPU over the hold (cores, from /proc), the share of CPU
/// periods its quota stopped it in, the cgroup's memory peak.
fn limits_cells(run: &RunResult) -> [String; 3] {
    let cpu = run
        .process
        .hold_cpu_cores
        .map_or_else(|| "-".to_owned(), |cores| format!("{cores:.2}"));
    let Some(applied) = applied(run) else {
        return [cpu, "-".to_owned(), "-".to_owned()];
    };
    [
        cpu,
        applied
            .throttled_share()
            .map_or_else(|| "-".to_owned(), |share| format!("{:.0} %", share * 100.0)),
        applied
            .memory_peak_bytes
            .map_or_else(|| "-".to_owned(), mib),
    ]
}

/// The HTTP columns of a run: requests, req/s, p50, p95, p99 (the worst scenario's), errors.
fn http_cells(run: &RunResult) -> [String; 6] {
    let http: Vec<_> = measured(run).filter(|s| s.rooms.is_none()).collect();
    let requests: u64 = http.iter().map(|s| s.requests).sum();
    let rate: f64 = http.iter().map(|s| s.rate).sum();
    let dropped: u64 = http.iter().map(|s| s.dropped).sum();
    let mut errors = ErrorCounts::default();
    for scenario in &http {
        errors.add(&scenario.errors);
    }
    let outside: u64 = http.iter().map(|s| failed_outside(s).total()).sum();
    [
        thousands(requests),
        // No request: no rate (not "0.0", nor the "-0.0" an empty sum can give).
        if requests == 0 {
            "-".to_owned()
        } else {
            format!("{rate:.1}")
        },
        worst(run, false, ScenarioFigure::Latency, Statistic::P50),
        worst(run, false, ScenarioFigure::Latency, Statistic::P95),
        worst(run, false, ScenarioFigure::Latency, Statistic::P99),
        match outside {
            0 => errors_cell(&errors, dropped),
            n => format!(
                "{} (+{} outside the hold)",
                errors_cell(&errors, dropped),
                thousands(n)
            ),
        },
    ]
}

/// The requests of a scenario intended outside the run's hold that failed, by why.
fn failed_outside(scenario: &headroom_runner::results::ScenarioResult) -> ErrorCounts {
    scenario
        .outside_hold
        .as_ref()
        .map(|o| o.errors.clone())
        .unwrap_or_default()
}

/// A run's errors (failed requests, as the page and the SLOs count them), by kind as the
/// results file has them, and the starts dropped at `max_in_flight` apart (never sent, so
/// not errors): `14 (12 × 500, 2 × 503)`, `98 (98 check), 37 dropped`.
fn errors_cell(errors: &ErrorCounts, dropped: u64) -> String {
    let total = errors.total();
    let some = |count: u64, what: &str| (count > 0).then(|| format!("{} {what}", thousands(count)));
    let status = if errors.statuses.is_empty() {
        some(errors.status, "status")
    } else {
        Some(errors.status_codes())
    };
    let parts: Vec<String> = [
        some(errors.connect, "connect"),
        some(errors.timeout, "timeout"),
        status,
        some(errors.protocol, "protocol"),
        some(errors.check, "check"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let cell = if parts.is_empty() {
        thousands(total)
    } else {
        format!("{} ({})", thousands(total), parts.join(", "))
    };
    match dropped {
        0 => cell,
        n => format!("{cell}, {} dropped", thousands(n)),
    }
}

/// The rooms columns of a run: sockets opened, messages delivered, seen p95, seen by all p95.
fn rooms_cells(run: &RunResult) -> [String; 4] {
    let rooms: Vec<_> = measured(run).filter(|s| s.rooms.is_some()).collect();
    let sum = |f: fn(&RoomsResult) -> u64| -> u64 {
        rooms.iter().filter_map(|s| s.rooms.as_ref()).map(f).sum()
    };
    let expected = sum(|r| r.messages.expected);
    [
        format!(
            "{} of {}",
            thousands(sum(|r| r.sockets.opened)),
            thousands(sum(|r| r.sockets.planned))
        ),
        if expected == 0 {
            "-".to_owned()
        } else {
            let faults = [
                (sum(|r| r.messages.misrouted), "misrouted"),
                (sum(|r| r.messages.duplicates), "duplicates"),
            ]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{} {what}", thousands(n)))
            .collect::<Vec<_>>();
            format!(
                "{} of {}{}",
                thousands(sum(|r| r.messages.delivered)),
                thousands(expected),
                if faults.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", faults.join(", "))
                }
            )
        },
        worst(run, true, ScenarioFigure::Seen, Statistic::P95),
        worst(run, true, ScenarioFigure::SeenByAll, Statistic::P95),
    ]
}

/// The worst of the measured HTTP (or rooms) scenarios' `figure` at `statistic`, read as the
/// figure catalogue defines it: a time that never came is `never`, the worst; none measured
/// is `-`, not 0 ms.
fn worst(run: &RunResult, rooms: bool, figure: ScenarioFigure, statistic: Statistic) -> String {
    let worst = run
        .scenarios
        .iter()
        .filter(|(_, s)| s.skipped.is_none() && s.rooms.is_some() == rooms)
        .filter_map(|(name, _)| read(run, &Named::scenario(name, figure).at(statistic)).ok())
        .map(|reading| reading.value().unwrap_or(f64::INFINITY))
        .reduce(f64::max);
    match worst {
        None => "-".to_owned(),
        Some(seconds) if seconds.is_infinite() => "never".to_owned(),
        Some(seconds) => ms(seconds * 1000.0),
    }
}

fn slo_cell(run: &RunResult) -> String {
    if let Some(failure) = &run.failure {
        return format!("run failed: {}", failure.describe());
    }
    // No SLO judged (none in the spec, or a segment's share, judged once merged): no pass.
    if run.slo.is_empty() {
        return if run.generator.bound {
            "- [generator-bound]".to_owned()
        } else {
            "-".to_owned()
        };
    }
    let failed: Vec<&str> = run
        .slo
        .iter()
        .filter(|v| v.pass == Some(false))
        .map(|v| v.name.as_str())
        .collect();
    // An SLO whose figure was not measured is never a pass.
    let unmeasured: Vec<&str> = run
        .slo
        .iter()
        .filter(|v| v.pass.is_none())
        .map(|v| v.name.as_str())
        .collect();
    let mut text = match (failed.is_empty(), unmeasured.is_empty()) {
        (true, true) => "pass".to_owned(),
        (true, false) => format!("not measured: {}", unmeasured.join(", ")),
        (false, true) => format!("fail: {}", failed.join(", ")),
        (false, false) => format!(
            "fail: {}; not measured: {}",
            failed.join(", "),
            unmeasured.join(", ")
        ),
    };
    if run.generator.bound {
        text.push_str(" [generator-bound]");
    }
    text
}

/// What a phase's kept target did, under its table: kept for the phase, its steps run once a
/// phase, how it ended (or the failure that ended the phase, and the runs it left out).
pub(crate) fn phase_target_line(target: &headroom_runner::results::PhaseTarget) -> String {
    let started = target.log.is_some() || !target.services.is_empty();
    let mut line = if started {
        "one target for the whole phase"
    } else {
        "the external target"
    }
    .to_owned();
    if let Some(ready) = target.ready_after_s {
        line.push_str(&format!(", ready after {ready:.1}s"));
    }
    if !target.steps.is_empty() {
        let steps: Vec<String> = target
            .steps
            .iter()
            .map(|step| format!("{} {} {:.1}s", step.when, step.name, step.seconds))
            .collect();
        line.push_str(&format!("; once a phase: {}", steps.join(", ")));
    }
    match &target.failure {
        Some(failure) => {
            line.push_str(&format!("; failed: {}", failure.describe()));
            match target.runs_not_run {
                0 => {}
                1 => line.push_str("; 1 run not run"),
                n => line.push_str(&format!("; {n} runs not run")),
            }
        }
        None if target.interrupted => line.push_str("; stopped when the run was interrupted"),
        None => line.push_str("; stopped after the phase's last run"),
    }
    line
}

#[cfg(test)]
mod tests;
