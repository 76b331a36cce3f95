//! What a newcomer gets wrong is refused by name: a budget past a billion, a device as the
//! spec, a segment's share taken for a whole run.

use super::*;

/// `plan --budget 1e308` printed a fleet of 18446744073709551615 (a count saturated): a budget
/// past a billion a month is refused, naming the bound; one within it still plans.
#[test]
fn a_budget_past_a_billion_is_refused() {
    let (code, _, said) =
        common::headroom(&["plan", "--budget", "1e308", "--instance", "c7g.medium"]);
    assert_eq!(code, 1, "a usage error: {said}");
    assert!(
        said.contains("it must be at most 1,000,000,000 a month"),
        "{said}"
    );
    let (code, out, said) = common::headroom(&[
        "plan",
        "--points",
        "tests/fixtures/points/cpu-sweep.csv",
        "--x",
        "users",
        "--unit",
        "user",
        "--memory",
        "rss_mib",
        "--instance",
        "c7g.medium",
        "--budget",
        "1000000000",
    ]);
    assert_eq!(code, 0, "{said}");
    assert!(!out.contains("18446744073709551615"), "{out}");
}

/// A device given as the spec was read without bound: `validate /dev/zero` is refused at once,
/// read not at all; so are a results file that is a device (`render`, `compare`) and points.
#[test]
fn a_device_given_as_the_spec_is_read_bounded() {
    let (code, _, said) = common::headroom(&["validate", "/dev/zero"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("spec `/dev/zero` is a device, not a file: name the file"),
        "{said}"
    );
    let (code, _, said) = common::headroom(&["compare", "/dev/zero", "/dev/zero"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("the results file `/dev/zero` is a device, not a file"),
        "{said}"
    );
}

/// One segment's share rendered as a whole run's page, and `compare` took it for one: a share
/// is refused where a whole run is meant, with the way to join the shares.
#[test]
fn a_segments_share_is_not_taken_for_a_whole_run() {
    let dir = fresh_out("share");
    let dir = dir.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let mut results = relay();
    results.segment = Some(SegmentRef {
        index: 1,
        count: 3,
        host: "loader-1".to_owned(),
    });
    let share = dir.join("segment-1-of-3.json");
    std::fs::write(&share, to_text(&results)).expect("written");
    let share = share.display().to_string();
    let fixture = common::fixtures::RELAY_RESULTS_PATH;
    for args in [
        vec![
            "render",
            "examples/relay.toml",
            "--results",
            share.as_str(),
            "--out",
            "/dev/null",
        ],
        vec!["compare", fixture, share.as_str()],
        vec!["plan", "examples/relay.toml", "--results", share.as_str()],
    ] {
        let (code, _, said) = common::headroom(&args);
        assert_eq!(code, 1, "{args:?}: {said}");
        assert!(
            said.contains("holds share 1 of 3 of a segmented run (run on `loader-1`), not a whole run: join the shares with `headroom merge` first"),
            "{args:?}: {said}"
        );
    }
    clean("share");
}
