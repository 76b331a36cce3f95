//! The flags of `headroom run`.

use std::path::PathBuf;

/// The flags of `headroom run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The spec to run.
    pub(super) spec: PathBuf,
    /// Run only this phase (repeatable); the results file keeps the other phases.
    #[arg(long = "phase", value_name = "NAME")]
    pub(super) phases: Vec<String>,
    /// The results file [default: results/<bench>/results.json]. An earlier file there is
    /// kept as OUT.prev; a file that is not a results file is refused (see --force).
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Replace a file at --out that is not a headroom results file (it is kept as OUT.prev).
    #[arg(long)]
    pub(super) force: bool,
    /// Runs of every point, instead of the spec's `repeats`.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(super) repeat: Option<u32>,
    /// Scale durations, steps and repeats down, for CI and a first look (the results say so).
    #[arg(long)]
    pub(super) quick: bool,
    /// Exit with 2 when an SLO failed, or could not be measured, at some point.
    #[arg(long)]
    pub(super) check: bool,
    /// Do not render the capacity page (capacity.md beside the results) at the end.
    #[arg(long)]
    pub(super) no_page: bool,
    /// Run even when the matrix is estimated to take over a day.
    #[arg(long)]
    pub(super) yes: bool,
    /// Run the ceiling phase once more in this instance's shape (its vCPUs and memory less the
    /// reserve; a burstable one at its baseline too), as `[plan] emulate` does for every
    /// priced instance (repeatable).
    #[arg(long, value_name = "INSTANCE")]
    pub(super) emulate: Vec<String>,
    /// Run the target with the whole machine, not in the shape `[target] limits` describe
    /// (where no cgroup is writable); the table, the results and the page say so.
    #[arg(long)]
    pub(super) ignore_limits: bool,
    /// A run over whose hold other processes took an eighth of the machine's cores (at least
    /// 0.25) is run again up to N times before it is kept as it is; then a search judges no
    /// failed SLO on it, and `compare` calls nothing on it. 0 keeps every first try and
    /// judges it as it is, the other work said beside it.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        env = "HEADROOM_COMPETED_RERUNS",
        hide_env_values = true
    )]
    pub(super) competed_reruns: u32,
    // Its help states the segment rule in the words the docs use (`segment_help`).
    #[arg(
        long,
        value_name = "INDEX/COUNT",
        value_parser = headroom_runner::Segment::parse,
        help = segment_help()
    )]
    pub(super) segment: Option<headroom_runner::Segment>,
    /// The seed of what a run draws at random: HTTP scenarios' Poisson arrivals and weighted
    /// request mix, rooms' Poisson sends and reloads, for a run to repeat them draw for draw
    /// (`data` rows in `random` order stay random) [default: new for each run; with
    /// --segment, the spec's hash, the same for every share].
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// With --segment: where the segments meet, HOST:PORT. Segment 0 serves it (an address
    /// of its machine), the others ask it; every run starts on all segments at the instant it
    /// announces, and segment 0 alone measures the target after every segment's load.
    #[arg(long, value_name = "HOST:PORT", requires = "segment", value_parser = crate::flags::host_port)]
    pub(super) barrier: Option<String>,
    /// How long a meeting at the barrier waits for every segment before the run fails,
    /// naming the segments that never came.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        requires = "barrier",
        value_parser = crate::flags::positive_duration
    )]
    pub(super) barrier_timeout: headroom_spec::Duration,
    /// Set a `[vars]` value for this run, as if the spec said it (repeatable): `--set
    /// workers=2`. Checked as the spec's own value; the results record it, and `compare`
    /// names it where two files differ.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = crate::flags::name_value)]
    pub(super) set: Vec<(String, String)>,
    /// Send every second of the load as it closes (repeatable): `json-lines=PATH` (`-`:
    /// stdout, the run's tables then go to stderr) writes one JSON object a line,
    /// `schemas/stream-line.schema.json`; `prometheus-rw=URL` writes the series to a
    /// Prometheus remote write receiver (loopback, or a host `[target] allow_hosts` names);
    /// docs/live.md. A stream that fails is said once and never stops the run.
    #[arg(long = "stream", value_name = "KIND=WHERE", value_parser = crate::live::StreamSpec::parse)]
    pub(super) streams: Vec<crate::live::StreamSpec>,
    /// What names this invocation in each run's record and in every stream's lines
    /// [default: the bench and the UTC start, `notes-api-20261203T074100Z`].
    #[arg(long, value_name = "ID")]
    pub(super) run_id: Option<String>,
    /// Off a terminal (a CI log, a pipe), how often a line tells the run in flight: the
    /// stage, each scenario's rate, latencies and errors, the server and the generator (0s:
    /// never). On a terminal the view is redrawn every second instead.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub(super) live_every: headroom_spec::Duration,
    /// Serve a live dashboard while the run lasts (docs/live.md): per-second charts of the
    /// running point, the finished runs with their SLO verdicts, the search path, and at the
    /// end the capacity page; pushed to the browser as it happens. On loopback unless
    /// --dashboard-host says otherwise.
    #[arg(long)]
    pub(super) dashboard: bool,
    /// The dashboard's port.
    #[arg(
        long,
        value_name = "PORT",
        default_value_t = 5665,
        requires = "dashboard"
    )]
    pub(super) dashboard_port: u16,
    /// The dashboard's address: loopback unless this names another (then said, since anyone
    /// who reaches it can watch the run).
    #[arg(
        long,
        value_name = "HOST",
        default_value = "127.0.0.1",
        requires = "dashboard"
    )]
    pub(super) dashboard_host: std::net::IpAddr,
    /// Write the final dashboard to FILE as one self-contained HTML file (it needs no server
    /// and nothing online).
    #[arg(long, value_name = "FILE")]
    pub(super) dashboard_export: Option<PathBuf>,
}

/// `--segment`'s help: the rule from `headroom_spec::segment`, in the words of the docs.
pub(super) fn segment_help() -> String {
    format!(
        "Send share INDEX of COUNT of every run's load: {}. The shares of one run, on as many machines, add up to its load exactly; `headroom merge` joins their partial results (docs/scale-out.md)",
        headroom_spec::segment::RULE
    )
}
