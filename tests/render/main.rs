//! `headroom render`: the capacity page from a committed results file, snapshot by snapshot,
//! custom templates, and template errors that name the template, the line and the variable.
//! A module per theme; the helpers they share (a scratch folder, the fixture rendered or edited
//! through its types) are here.

#[path = "../common/mod.rs"]
mod common;

mod compared;
mod edited;
mod page;
mod plan;
mod plots;

use std::path::{Path, PathBuf};

use headroom_results::{Results, RunResult};
use headroom_test_support::results::{relay, to_text, typed_runs_mut};

use common::headroom;

/// The relay results, from the repository root as a user types it.
const RESULTS: &str = common::fixtures::RELAY_RESULTS_PATH;

/// A folder of the test's own under the temporary directory, emptied.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-render-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Renders the fixture's page into a scratch folder of the test's own, `extra` flags added;
/// the folder, the page's path and what `render` printed.
fn render_fixture(test: &str, page: &str, extra: &[&str]) -> (PathBuf, PathBuf, String) {
    let dir = scratch(test);
    let out = dir.join(page);
    let out_arg = out.display().to_string();
    let mut args = vec![
        "render",
        "examples/relay.toml",
        "--results",
        RESULTS,
        "--out",
        &out_arg,
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = headroom(&args);
    assert_eq!(code, 0, "{stderr}");
    (dir, out, stdout)
}

/// The relay fixture edited through its types by `edit`, written into `dir`.
fn edited_results(dir: &Path, edit: impl FnOnce(&mut Results)) -> PathBuf {
    let mut results = relay();
    edit(&mut results);
    written(dir, &to_text(&results))
}

/// `text` written into `dir` as the results file the tests edit.
fn written(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("edited-results.json");
    std::fs::write(&path, text).expect("write");
    path
}

/// `render` of the relay fixture edited by `edit`: the page, stderr and the results path.
fn render_edited(test: &str, edit: impl FnOnce(&mut Results)) -> (String, String, String) {
    let dir = scratch(test);
    let path = edited_results(&dir, edit);
    let out = dir.join("capacity.md");
    let (path_arg, out_arg) = (path.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &path_arg,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let _ = std::fs::remove_dir_all(dir);
    (page, stderr, path_arg)
}

/// The page `render` makes of the relay fixture edited by `edit`.
fn page_of_edited_results(test: &str, edit: impl FnOnce(&mut Results)) -> String {
    render_edited(test, edit).0
}

/// Every SLO verdict of the `rooms` phase turned to a pass: a sweep that never failed, for
/// pages that price.
fn rooms_pass(results: &mut Results) {
    let rooms = results.phases.iter_mut().filter(|p| p.name == "rooms");
    for point in rooms.flat_map(|phase| phase.points.iter_mut()) {
        for run in &mut point.runs {
            for verdict in &mut run.slo {
                verdict.pass = Some(true);
            }
        }
    }
}

/// The relay fixture with every SLO verdict of its `rooms` phase turned to a pass, written
/// into `dir`.
fn results_where_rooms_pass(dir: &Path) -> PathBuf {
    edited_results(dir, rooms_pass)
}

/// Every run of the results, to edit.
fn each_run(results: &mut Results, edit: impl FnMut(&mut RunResult)) {
    typed_runs_mut(results).into_iter().for_each(edit);
}
