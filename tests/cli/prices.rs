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
                "(priced from tests/fixtures/prices/hetzner-2025.toml)"
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

/// An AWS offer of `products` (sku, instanceType, USD an hour), Linux on shared tenancy in
/// us-east-1, published `published`.
fn ec2_offer(products: &[(&str, &str, &str)], published: &str) -> String {
    let mut items = serde_json::Map::new();
    let mut terms = serde_json::Map::new();
    for (sku, instance, usd) in products {
        items.insert(
            (*sku).to_owned(),
            serde_json::json!({ "sku": sku,
            "productFamily": "Compute Instance", "attributes": {
            "instanceType": instance, "vcpu": "4", "memory": "16 GiB", "regionCode": "us-east-1",
            "operatingSystem": "Linux", "operation": "RunInstances", "tenancy": "Shared",
            "preInstalledSw": "NA", "capacitystatus": "Used",
            "licenseModel": "No License required" } }),
        );
        terms.insert(
            (*sku).to_owned(),
            serde_json::json!({ format!("{sku}.JRTCKXETXF"): {
            "offerTermCode": "JRTCKXETXF", "priceDimensions": { "d": { "unit": "Hrs",
            "beginRange": "0", "pricePerUnit": { "USD": usd } } } } }),
        );
    }
    serde_json::json!({ "offerCode": "AmazonEC2", "publicationDate": published,
        "products": items, "terms": { "OnDemand": terms } })
    .to_string()
}

/// Issue 57: an offer whose product name plants a `[[aws_ec2]]` row (m7g.xlarge at $0.0001
/// an hour) imports as data: the row is not in the table `prices` lists, and `plan --prices`
/// of it refuses m7g.xlarge (not in the table it was given) instead of pricing it from the
/// planted row or, silently, from the shipped table; `--fall-back-prices` prices it from the
/// shipped table and says so.
#[test]
fn a_planted_row_never_reaches_a_plan() {
    let dir = std::env::temp_dir().join(format!("headroom-planted-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let planted = "c7g.large\n[[aws_ec2]]\nid = \"m7g.xlarge\"\nprovider = \"aws\"\nvcpu = 4\nmemory_gib = 16.0\nusd_per_hour = 0.0001\nsource = \"x\"\nas_of = \"2026-09-09\"\n# ";
    let offer = dir.join("offer.json");
    std::fs::write(
        &offer,
        ec2_offer(
            &[("A", "c7g.large", "0.0725"), ("B", planted, "0.0001")],
            "2026-09-09T00:46:05Z",
        ),
    )
    .expect("offer");
    let table = dir.join("aws.toml");
    let (offer_arg, table_arg) = (offer.display().to_string(), table.display().to_string());
    let (exit, _, stderr) = headroom(&["prices", "import", "aws", &offer_arg, "--out", &table_arg]);
    assert_eq!(exit, 0, "{stderr}");
    assert!(stderr.contains(": 1 row from AWS Price List"), "{stderr}");
    assert!(
        stderr.contains("note: left out: sku B: its `instanceType` `c7g.large\\n[[aws_ec2]]\\nid = \\\"m7g.xlarge\\\""),
        "{stderr}"
    );
    let (exit, stdout, stderr) = headroom(&["prices", "--prices", &table_arg, "--json"]);
    assert_eq!(exit, 0, "{stderr}");
    let listing: headroom_pricing::entries::PriceListing =
        crate::common::contract("prices.schema.json", &stdout);
    let from_import: Vec<&str> = listing
        .entries
        .iter()
        .filter(|e| e.source.contains("offer.json"))
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(from_import, ["c7g.large"]);
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "--cpu-ceiling",
            "100",
            "--instance",
            "m7g.xlarge",
            "--prices",
            &table_arg,
        ];
        args.extend_from_slice(extra);
        headroom(&args)
    };
    let (exit, _, stderr) = plan(&[]);
    assert_eq!(exit, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "`m7g.xlarge` is not in {table_arg}: it is priced only from the tables --prices names"
        )),
        "{stderr}"
    );
    let (exit, stdout, stderr) = plan(&["--fall-back-prices"]);
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        stdout.contains("m7g.xlarge: priced from prices/data/prices.toml, the shipped table"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 57: prices no provider charges, a publication date after today and a file past the
/// bound are refused with the file, the product and the fix; the `--out` file is not
/// written.
#[test]
fn prices_import_refuses_impossible_prices_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("headroom-impossible-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let table = dir.join("aws.toml");
    let table_arg = table.display().to_string();
    for (usd, published, said) in [
        (
            "-0.01",
            "2026-09-09T00:46:05Z",
            "c7g.large (sku A): -0.01 $ an hour is not a price the provider charges",
        ),
        (
            "0",
            "2026-09-09T00:46:05Z",
            "c7g.large (sku A): 0 $ an hour is not a price",
        ),
        (
            "1e11",
            "2026-09-09T00:46:05Z",
            "c7g.large (sku A): 100000000000 $ an hour",
        ),
        (
            "0.0725",
            "2099-01-01T00:00:00Z",
            "the file says it was published 2099-01-01, after today",
        ),
    ] {
        let offer = dir.join("offer.json");
        std::fs::write(&offer, ec2_offer(&[("A", "c7g.large", usd)], published)).expect("offer");
        let offer_arg = offer.display().to_string();
        let (exit, _, stderr) =
            headroom(&["prices", "import", "aws", &offer_arg, "--out", &table_arg]);
        assert_eq!(exit, 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {offer_arg}: {said}")),
            "{stderr}"
        );
        assert!(
            stderr.contains("download it again; nothing was written"),
            "{stderr}"
        );
        assert!(!table.exists(), "{usd}: a table was written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 57: `prices import hetzner` and `azure` of a 500 MB file refuse it within a 200 MiB
/// address-space limit (`prlimit --as`), naming the file and the bound, with no abort; the
/// AWS importer streams (docs/performance.md measures it on a 521 MB file).
#[test]
fn a_500_mb_answer_is_refused_within_200_mib() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::say("skipped: `prlimit` (util-linux) is not on this machine");
        return;
    }
    let big = std::env::temp_dir().join(format!("headroom-big-{}.json", std::process::id()));
    // A sparse file: 500 MB long, no disk taken.
    std::fs::File::create(&big)
        .and_then(|file| file.set_len(500 * 1024 * 1024))
        .expect("a sparse file");
    let big_arg = big.display().to_string();
    for args in [
        vec![
            "prices",
            "import",
            "hetzner",
            &big_arg,
            "--location",
            "fsn1",
        ],
        vec!["prices", "import", "azure", &big_arg, "--region", "eastus"],
    ] {
        let output = std::process::Command::new("prlimit")
            .arg(format!("--as={}", 200 * 1024 * 1024))
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .args(&args)
            .current_dir(root())
            .output()
            .expect("prlimit");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "error: {big_arg} is over 16 MiB, more than the provider's file (tens to hundreds of KiB) can be: give the file as downloaded"
            ),
            "{args:?}"
        );
    }
    let _ = std::fs::remove_file(&big);
}

/// Issue 57: a price dated after today is out of date: `plan --check` refuses it (it passed
/// forever before), naming the row and why.
#[test]
fn plan_check_refuses_a_price_from_the_future() {
    let dir = std::env::temp_dir().join(format!("headroom-future-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let table = dir.join("future.toml");
    std::fs::write(
        &table,
        r#"[[aws_ec2]]
id = "t4g.medium"
provider = "aws"
vcpu = 2
memory_gib = 4.0
usd_per_hour = 0.0336
source = "a table of the future"
as_of = "2099-01-01"
"#,
    )
    .expect("table");
    let table_arg = table.display().to_string();
    let (exit, _, stderr) = headroom(&[
        "plan",
        "--cpu-ceiling",
        "100",
        "--instance",
        "t4g.medium",
        "--prices",
        &table_arg,
        "--check",
    ]);
    assert_eq!(exit, 2, "{stderr}");
    assert!(
        stderr.contains("t4g.medium: as of 2099-01-01, after today"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
