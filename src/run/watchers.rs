//! Everything that watches a run as it goes: the terminal view, the streams (`--stream`) and
//! the dashboard (`--dashboard`). Each takes the runner's events; none can stop the run.

use anyhow::Result;
use headroom_matrix::RunMatrix;
use headroom_runner::Event;

use super::args::RunArgs;
use super::progress::Progress;
use crate::live::dashboard::{Dashboard, DashboardOptions};
use crate::live::{Invocation, Labelling, Streams};

/// `--run-id`, else the bench and the UTC second the run starts.
pub(super) fn run_id(args: &RunArgs, bench: &str) -> String {
    args.run_id.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        crate::live::default_run_id(bench, now)
    })
}

/// The files the watchers write, claimed by the guard before anything is written.
pub(super) struct Claimed {
    /// `--dashboard-export`, where it is written.
    pub export: Option<crate::outputs::Claimed>,
    /// Each `--stream`'s file, in order (none for stdout or an endpoint).
    pub streams: Vec<Option<crate::outputs::Claimed>>,
}

/// Claims the watchers' files: the dashboard's export, then each stream's.
pub(super) fn claim(args: &RunArgs, outputs: &mut crate::outputs::Outputs) -> Result<Claimed> {
    let export = args
        .dashboard_export
        .as_deref()
        .map(|path| {
            outputs.claim(
                path,
                "--dashboard-export",
                crate::outputs::Output::DashboardExport,
            )
        })
        .transpose()?;
    let streams = crate::live::claim_files(&args.streams, outputs)?;
    Ok(Claimed { export, streams })
}

/// The run's watchers.
pub(super) struct Watchers {
    progress: Progress,
    streams: Streams,
    labelling: Labelling,
    dashboard: Option<Dashboard>,
}

impl Watchers {
    /// Every watcher asked for, ready (a stream's file created, the dashboard listening):
    /// what cannot be is refused here, before anything runs.
    pub(super) fn start(
        args: &RunArgs,
        matrix: &RunMatrix,
        run_id: &str,
        claimed: Claimed,
    ) -> Result<Watchers> {
        let streams = Streams::start(&args.streams, claimed.streams, &matrix.target.allow_hosts)?;
        let labelling = Labelling::new(Invocation {
            run_id: run_id.to_owned(),
            bench: matrix.bench.name.clone(),
            segment: args.segment.map(|share| share.to_string()),
        });
        Ok(Watchers {
            progress: Progress::new(args.live_every.as_std()),
            streams,
            labelling,
            dashboard: dashboard(args, &matrix.bench.name, run_id, claimed.export)?,
        })
    }

    /// The runner's event, to every watcher; a stream's failure said once, above the view.
    pub(super) fn event(&mut self, event: Event<'_>) {
        if !self.streams.is_empty() {
            if let Some(line) = self.labelling.line_of(&event) {
                self.streams.send(&line);
            }
            if matches!(event, Event::Progress { .. } | Event::RunFinished { .. }) {
                for news in self.streams.news() {
                    self.progress.say(&news);
                }
            }
        }
        if let Some(dashboard) = &mut self.dashboard {
            dashboard.event(&event);
        }
        self.progress.show(event);
    }

    /// The runs are over: the view cleared, the streams sent what they hold.
    pub(super) fn run_ended(&mut self) {
        self.progress = Progress::new(std::time::Duration::ZERO);
        for news in self.streams.finish() {
            eprintln!("{news}");
        }
    }

    /// The page is written (or not): the dashboard shows it, is exported, and stops.
    pub(super) fn finish(self, out: &std::path::Path, page: Option<std::path::PathBuf>) {
        if let Some(failed) = self
            .dashboard
            .and_then(|dashboard| dashboard.finish(out, page))
        {
            eprintln!("warning: {failed}");
        }
    }
}

/// The dashboard asked for (`--dashboard`, `--dashboard-export`), its server listening; where
/// it listens is said, and said twice when it is not loopback.
fn dashboard(
    args: &RunArgs,
    bench: &str,
    run_id: &str,
    export: Option<crate::outputs::Claimed>,
) -> Result<Option<Dashboard>> {
    if !args.dashboard && export.is_none() {
        return Ok(None);
    }
    let serve = args
        .dashboard
        .then(|| std::net::SocketAddr::new(args.dashboard_host, args.dashboard_port));
    let options = DashboardOptions { serve, export };
    let dashboard = Dashboard::start(options, bench, run_id)?;
    if let Some(address) = dashboard.address {
        eprintln!("dashboard: http://{address}/");
        if !address.ip().is_loopback() {
            eprintln!(
                "note: the dashboard listens on {address}, not on loopback: anyone who can reach this machine can watch the run"
            );
        }
    }
    Ok(Some(dashboard))
}
