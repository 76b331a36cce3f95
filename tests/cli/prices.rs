//! Prices over time: `plan --check` and the age of the prices a plan stands on (issue 46).

use crate::common::{headroom, root};

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

/// Issue 46: `prices import` writes a table from a provider's own file that `plan --prices`
/// prices from: the AWS excerpt's gp3 line, dated by the file and fingerprinted by its bytes,
/// with what it left out on stderr; a file that is not the format is named with its line and
/// column, and exits 1.
#[test]
fn prices_import_writes_a_table_plan_prices_from() {
    let out = std::env::temp_dir().join(format!("headroom-import-{}.toml", std::process::id()));
    let out_arg = out.display().to_string();
    let fixture = "test-support/fixtures/prices/aws-ec2-us-east-2.json";
    let (exit, _, stderr) = headroom(&["prices", "import", "aws", fixture, "--out", &out_arg]);
    assert_eq!(exit, 0, "{stderr}");
    let sha = headroom_pricing::sha256_hex(&std::fs::read(root().join(fixture)).expect("fixture"));
    assert!(
        stderr.contains(&format!("1 row from AWS Price List bulk offer AmazonEC2 ({fixture}, published 2023-03-22, sha256 {sha})")),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: left out: m5.large (sku 8D49XP354UEYTHGM): no on-demand price"),
        "{stderr}"
    );
    let (exit, stdout, stderr) = headroom(&["prices", "--prices", &out_arg, "--provider", "aws"]);
    assert_eq!(exit, 0, "{stderr}");
    let gp3 = stdout
        .lines()
        .rfind(|line| line.contains("ebs-gp3-storage"))
        .expect("the imported gp3 line");
    assert!(
        gp3.contains("2023-03-22") && gp3.contains("$0.08 per GB-month"),
        "{gp3}"
    );
    let _ = std::fs::remove_file(&out);
    let (exit, _, stderr) = headroom(&["prices", "import", "aws", "README.md"]);
    assert_eq!(exit, 1, "{stderr}");
    assert!(stderr.contains("README.md:1:1: expected value"), "{stderr}");
}

/// Issue 46: `prices import azure` reads the Retail Prices API's pages with the region's sizes
/// (`az vm list-sizes`) into `[[azure_vm]]` rows `prices` lists: Standard_B1s on Linux at
/// $0.0104 an hour, 1 vCPU, 1 GiB; what it left out is on stderr; a page that is not JSON is
/// named with its line and column, and exits 1.
#[test]
fn prices_import_azure_reads_the_pages_with_the_sizes() {
    let out = std::env::temp_dir().join(format!("headroom-azure-{}.toml", std::process::id()));
    let out_arg = out.display().to_string();
    let (b1s, d2s, sizes) = (
        "test-support/fixtures/prices/azure-retail-b1s-eastus.json",
        "test-support/fixtures/prices/azure-retail-d2s-v3-eastus-item.json",
        "test-support/fixtures/prices/azure-sizes-b1s.json",
    );
    let (exit, _, stderr) = headroom(&[
        "prices", "import", "azure", b1s, d2s, "--region", "eastus", "--sizes", sizes, "--out",
        &out_arg,
    ]);
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "1 row from Azure Retail Prices API at eastus, Linux pay-as-you-go ({b1s}, {d2s}, no publication date, sha256 "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: left out: 1 item of eastus: Windows"),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: left out: Standard_D2s_v3: the prices carry no cores or memory"),
        "{stderr}"
    );
    let (exit, stdout, stderr) = headroom(&[
        "prices",
        "--prices",
        &out_arg,
        "--provider",
        "azure",
        "--json",
    ]);
    assert_eq!(exit, 0, "{stderr}");
    let listing: headroom_pricing::entries::PriceListing =
        crate::common::contract("prices.schema.json", &stdout);
    let [entry] = &listing.entries[..] else {
        panic!("one entry: {stdout}")
    };
    assert_eq!(
        (entry.id.as_str(), entry.provider.as_str(), entry.vcpu),
        ("Standard_B1s", "azure", Some(1))
    );
    let month = entry.usd_per_month.expect("a month");
    assert!((month - 0.0104 * 730.0).abs() < 1e-9, "{month}");
    let _ = std::fs::remove_file(&out);
    let (exit, _, stderr) = headroom(&[
        "prices",
        "import",
        "azure",
        b1s,
        "README.md",
        "--region",
        "eastus",
    ]);
    assert_eq!(exit, 1, "{stderr}");
    assert!(stderr.contains("README.md:1:1: expected value"), "{stderr}");
}

/// Issue 46: a spec prices Azure virtual machines from an imported table: `provider =
/// "azure"` validates with the table's sizes, a budget in US dollars is Azure's currency, and
/// EBS (AWS's) is said to be left out of the all-in cost, with why.
#[test]
fn an_azure_plan_validates_from_an_imported_table() {
    let spec = "tests/fixtures/prices/with-azure-prices.toml";
    let (exit, stdout, stderr) = headroom(&["validate", "--format", "json", spec]);
    assert_eq!(exit, 0, "{stdout}{stderr}");
    let diagnostics: Vec<headroom_compiler::DiagnosticJson> =
        serde_json::from_str(&stdout).expect("JSON");
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["W006"], "{stdout}");
    assert_eq!(
        diagnostics[0].hint.as_deref(),
        Some(
            "remove `ebs_gb`; the Azure table prices the virtual machines alone (`headroom prices import azure`), so their disks and egress are not in the all-in cost"
        )
    );
}
