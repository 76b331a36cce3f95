//! `headroom run` end to end against the built-in demo target, on loopback: the figures in the
//! results file, and what happens when the target misbehaves or the runner is interrupted.
//! Every fault test asserts the named verdict, a results file that matches its schema and holds
//! the completed runs, and that no target process is left behind. A module per theme; the
//! helpers several share are here.

#[path = "../common/mod.rs"]
mod common;

mod build_image;
mod carried;
mod compare;
mod competed;
mod examples;
mod examples_rooms;
mod external_server;
mod hosts;
mod http;
mod limits;
mod live;
mod live_dashboard;
mod live_prometheus;
mod pictures;
mod postgres;
mod rooms;
mod runs;
mod search;
mod secrets;
mod segments;
mod signals;
mod socket_io;
mod sse;
mod stacks;
mod targets;
mod tls;
mod under_kubernetes;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use common::root;
use common::run::*;

/// `headroom run --quick` on an example, checked against its schema; the runs, each whole.
/// The examples' quick runs load the machine (chat opens 12,800 sockets, and the demo target
/// holds 1.8 GiB for them): run together on two cores they starve each other's targets, and
/// sockets time out for reasons that are the test's, not the target's. One at a time.
fn examples_one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static EXAMPLES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    EXAMPLES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run_example_quick(name: &str, extra: &[&str]) -> Value {
    let _alone = examples_one_at_a_time();
    run_example_quick_beside_others(name, extra)
}

/// An example whose checks hold whatever runs beside it (counts, limits, what the page says;
/// no latency or CPU known answer), so it need not wait for the others: it shares the
/// machine with them.
fn run_example_quick_beside_others(name: &str, extra: &[&str]) -> Value {
    let out = fresh_out(name);
    run_spec_quick(name, &format!("examples/{name}.toml"), &out, extra)
}

/// `run --quick` of `spec` (relative to the repository) into `out`; every run must pass.
fn run_spec_quick(name: &str, spec: &str, out: &Path, extra: &[&str]) -> Value {
    let out_arg = out.display().to_string();
    let mut args = vec!["run", "--quick", spec, "--out", &out_arg];
    args.extend(extra);
    // The chat's phases are CPU sizes: another test's load would take CPU from its targets.
    let output = if name == "chat" {
        headroom_alone(&args)
    } else {
        headroom(&args, &[])
    };
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = read_results(out);
    for run in typed_runs(&typed(&results)) {
        assert!(run.failure.is_none(), "{:?}", run.failure);
    }
    // Issue 43: in every example's page, no plot has text over data or under the body size.
    if let Some(folder) = out.parent()
        && folder.join("capacity.md").is_file()
    {
        common::plots::assert_plots_read_well(folder);
    }
    results
}

/// Whether this machine has a cgroup headroom may write; `false` printed as a skip, with why.
fn cgroups_writable(test: &str) -> bool {
    match headroom_runner::cgroup::detect() {
        Ok(_) => true,
        Err(why) => {
            common::say(&format!("skipped {test}: {why}"));
            false
        }
    }
}

/// Runs a fixture that is expected to write no results.
fn run_without_results(name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let out = fresh_out(name);
    let spec = format!("tests/fixtures/run/{name}.toml");
    let out_arg = out.display().to_string();
    let mut args = vec!["run", spec.as_str(), "--out", out_arg.as_str()];
    args.extend(extra);
    (headroom(&args, &[]), out)
}

/// Issue 43: the page of `spec`'s results `out` as one HTML file beside them, as Chromium shows
/// it: the answer first, plots as wide as the column and text at body size; with
/// `UPDATE_DOCS=1` its picture is kept as `picture` (in docs/images). How many plots it has
/// (`None` without Chromium, said).
fn html_page_reads_well(spec: &str, out: &Path, picture: Option<&str>) -> Option<usize> {
    let html = out.with_file_name("capacity.html");
    let (results, page) = (out.display().to_string(), html.display().to_string());
    let args = [
        "render",
        spec,
        "--results",
        &results,
        "--format",
        "html",
        "--out",
        &page,
    ];
    let output = headroom(&args, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    common::plots::assert_html_page_reads_well(&html, picture)
}
