//! Prices over time: `plan --check` and the age of the prices a plan stands on (issue 46).

use crate::common::headroom;

/// Issue 46: `plan --check` refuses out-of-date prices, naming each row and why; `--stale-ok`
/// says them and passes; today's shipped prices pass.
#[test]
fn plan_check_refuses_stale_prices_unless_stale_ok() {
    let old = [
        "plan",
        "--cpu-ceiling",
        "100",
        "--instance",
        "CX22",
        "--prices",
        "tests/fixtures/prices/hetzner-2025.toml",
        "--check",
    ];
    let (exit, stdout, stderr) = headroom(&old);
    assert_eq!(exit, 2, "{stderr}");
    assert!(stdout.contains("CX22"), "the plan is still shown: {stdout}");
    assert!(
        stderr.contains("error: plan --check refuses 1 out-of-date price(s) (older than 180 days")
            && stderr.contains(
                "CX22: as of 2025-08-19: 468 days old (over 180), stale since 2026-04-01: the provider changed its prices"
            )
            && stderr.contains(
                "(priced from prices/data/prices.toml, the shipped table, then tests/fixtures/prices/hetzner-2025.toml)"
            )
            && stderr.contains("(--stale-ok)"),
        "{stderr}"
    );
    let accepted: Vec<&str> = old.iter().copied().chain(["--stale-ok"]).collect();
    let (exit, _, stderr) = headroom(&accepted);
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        stderr.contains("note: priced with 1 out-of-date price(s), accepted by --stale-ok: CX22: as of 2025-08-19"),
        "{stderr}"
    );
    // A longer allowed age leaves the provider's change: still refused, for it alone.
    let longer: Vec<&str> = old
        .iter()
        .copied()
        .chain(["--max-price-age", "1000d"])
        .collect();
    let (exit, _, stderr) = headroom(&longer);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("CX22: stale since 2026-04-01") && !stderr.contains("days old"),
        "{stderr}"
    );
    // The shipped table's servers, read on 2026-11-30, are within 180 days.
    let (exit, _, stderr) = headroom(&[
        "plan",
        "--cpu-ceiling",
        "100",
        "--instance",
        "CX23",
        "--instance",
        "t4g.medium",
        "--check",
    ]);
    assert_eq!(exit, 0, "{stderr}");
    assert!(!stderr.contains("out-of-date"), "{stderr}");
    let (exit, _, stderr) = headroom(&["plan", "--instance", "CX23", "--stale-ok"]);
    assert_eq!(exit, 1, "{stderr}");
    assert!(stderr.contains("--check"), "{stderr}");
}
