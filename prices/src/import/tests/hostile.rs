//! Issue 57: a price file a team downloads and imports is input from outside. Text planted in
//! every field an importer copies stays data; prices and sizes no provider lists, a date after
//! today, a cut-short set of pages and a file too large to be the provider's are refused,
//! naming the product and writing nothing.

use super::*;

/// What an attacker writes into a name: the end of the line, a closing bracket, a quote, and
/// a whole row of its own at a price of nothing.
const PLANT: &str = "m7g.xlarge\"]\n[[aws_ec2]]\nid = \"m7g.xlarge\"\nprovider = \"aws\"\nvcpu = 4\nmemory_gib = 16.0\nusd_per_hour = 0.0001\nsource = \"planted\"\nas_of = \"2026-01-01\"\n# ";

/// The imported table as written holds exactly `ids` as rows: the planted row is nowhere,
/// no line of the file starts a table that the import did not write, and the text reads back.
fn holds_only(import: &Import, ids: &[&str]) {
    let text = import.to_toml().expect("TOML");
    let table = PriceTable::from_toml(&text).expect("the import reads back");
    let listed: Vec<&str> = table.listed().iter().map(|l| l.id.as_str()).collect();
    assert_eq!(listed, ids, "{text}");
    let headers = text
        .lines()
        .filter(|line| line.trim_start().starts_with('['))
        .count();
    assert_eq!(
        headers,
        ids.len() + 1,
        "one header per row, and [import]: {text}"
    );
    assert!(
        !text
            .lines()
            .any(|line| line.trim_start().starts_with("usd_per_hour = 0.0001")),
        "a planted price is a line of the table: {text}"
    );
    let record = &table.imported().next().expect("[import]").1;
    assert_eq!(record.left_out, import.notes);
}

/// An EC2 instance's attributes, Linux on shared tenancy, with `edit` applied.
fn instance(edit: impl Fn(&mut serde_json::Value)) -> serde_json::Value {
    let mut attributes = serde_json::json!({
        "instanceType": "m7g.large", "vcpu": "2", "memory": "8 GiB", "regionCode": "us-east-1",
        "operatingSystem": "Linux", "operation": "RunInstances", "tenancy": "Shared",
        "preInstalledSw": "NA", "capacitystatus": "Used", "licenseModel": "No License required"
    });
    edit(&mut attributes);
    attributes
}

/// Every text field the AWS importer copies, each planted in turn: the instance type, the
/// region, a volume's API name, the SKU, the unit and the term codes. Where a name is planted
/// the product is left out and said, escaped; the table holds only the rows it should.
#[test]
fn text_planted_in_an_aws_offer_stays_data() {
    let good = (
        "GOOD",
        "Compute Instance",
        instance(|_| {}),
        "0.0816",
        "Hrs",
    );
    for field in ["instanceType", "regionCode"] {
        let planted = instance(|a| a[field] = serde_json::json!(PLANT));
        let text = offer(
            "AmazonEC2",
            "2026-09-09T00:46:05Z",
            &[
                good.clone(),
                ("BAD", "Compute Instance", planted, "0.0001", "Hrs"),
            ],
        );
        let import = aws::import(
            text.as_bytes(),
            "offer.json",
            &aws::Filter::default(),
            TODAY,
        )
        .expect(field);
        holds_only(&import, &["m7g.large"]);
        let said = import
            .notes
            .iter()
            .find(|n| n.starts_with("sku BAD"))
            .expect("the planted product is said");
        assert!(
            said.contains(&format!("its `{field}` `m7g.xlarge\\\"]\\n[[aws_ec2]]")),
            "{said}"
        );
        assert!(!said.contains('\n'), "{said}");
    }
    let volume = serde_json::json!({ "volumeApiName": PLANT, "regionCode": "us-east-1" });
    let unit = PLANT;
    let text = offer(
        "AmazonEC2",
        "2026-09-09T00:46:05Z",
        &[
            good.clone(),
            ("VOL", "Storage", volume, "0.08", "GB-Mo"),
            (
                PLANT,
                "Compute Instance",
                instance(|a| a["instanceType"] = "c7g.large".into()),
                "0.0725",
                unit,
            ),
        ],
    );
    let import =
        aws::import(text.as_bytes(), PLANT, &aws::Filter::default(), TODAY).expect("import");
    holds_only(&import, &["m7g.large"]);
    assert!(
        import
            .notes
            .iter()
            .any(|n| n.starts_with("c7g.large (sku m7g.xlarge\\\"]\\n")
                && n.contains("priced per `m7g.xlarge")),
        "{:?}",
        import.notes
    );
    // The file's name (the command line's) is in `[import]` and every row's source, escaped.
    let table = PriceTable::from_toml(&import.to_toml().expect("TOML")).expect("reads back");
    assert!(
        table
            .instance("m7g.large")
            .expect("the row")
            .source
            .contains(&checks::one_line(PLANT)),
        "the name is kept, escaped, as data"
    );
}

/// A `vcpu` in words is read (`2 vCPU`) or the product is named with why (`two`); a memory
/// that is not GiB likewise. Nothing priced falls out unsaid.
#[test]
fn a_vcpu_in_words_is_read_or_named() {
    let text = offer(
        "AmazonEC2",
        "2026-09-09T00:46:05Z",
        &[
            (
                "WORDS",
                "Compute Instance",
                instance(|a| a["vcpu"] = "2 vCPU".into()),
                "0.0816",
                "Hrs",
            ),
            (
                "TWO",
                "Compute Instance",
                instance(|a| {
                    a["vcpu"] = "two".into();
                    a["instanceType"] = "c7g.large".into();
                }),
                "0.0725",
                "Hrs",
            ),
            (
                "MB",
                "Compute Instance",
                instance(|a| {
                    a["memory"] = "8192 MB".into();
                    a["instanceType"] = "r7g.large".into();
                }),
                "0.1071",
                "Hrs",
            ),
        ],
    );
    let import =
        aws::import(text.as_bytes(), "o.json", &aws::Filter::default(), TODAY).expect("import");
    assert_eq!(import.table.aws_ec2.len(), 1);
    assert_eq!(import.table.aws_ec2[0].vcpu, 2);
    let mut notes = import.notes.clone();
    notes.sort();
    assert_eq!(
        notes,
        [
            "sku MB: its `memory` is `8192 MB`, not a size in GiB (`8 GiB`): a product of a kind priced here that cannot be read",
            "sku TWO: its `vcpu` is `two`, not a count of vCPUs (`2`): a product of a kind priced here that cannot be read",
        ]
    );
}

/// Negative, zero and absurd prices, no vCPUs, negative memory and a publication date after
/// today are refused, each product named; nothing is imported.
#[test]
fn prices_and_sizes_no_provider_lists_are_refused() {
    for (usd, why) in [
        (
            "-0.01",
            "-0.01 $ an hour is not a price the provider charges",
        ),
        (
            "0.0000000000",
            "0 $ an hour is not a price the provider charges",
        ),
        (
            "100000000000",
            "100000000000 $ an hour is not a price the provider charges",
        ),
    ] {
        let text = offer(
            "AmazonEC2",
            "2026-09-09T00:46:05Z",
            &[("SKU1", "Compute Instance", instance(|_| {}), usd, "Hrs")],
        );
        let error =
            aws::import(text.as_bytes(), "o.json", &aws::Filter::default(), TODAY).expect_err(usd);
        let said = error.to_string();
        assert!(
            said.starts_with(&format!("m7g.large (sku SKU1): {why}")),
            "{said}"
        );
        assert!(
            said.ends_with("download it again; nothing was written)"),
            "{said}"
        );
    }
    for (edit, why) in [
        ("0", "its `vcpu` is `0`, not a count of vCPUs"),
        ("-8 GiB", "its `memory` is `-8 GiB`, not a size in GiB"),
    ] {
        let attributes = instance(|a| {
            if edit == "0" {
                a["vcpu"] = edit.into();
            } else {
                a["memory"] = edit.into();
            }
        });
        let text = offer(
            "AmazonEC2",
            "2026-09-09T00:46:05Z",
            &[("S", "Compute Instance", attributes, "0.08", "Hrs")],
        );
        let error = aws::import(text.as_bytes(), "o.json", &aws::Filter::default(), TODAY)
            .expect_err("nothing priced");
        assert!(error.to_string().contains(why), "{error}");
    }
    let future = offer(
        "AmazonEC2",
        "2031-01-01T00:00:00Z",
        &[("S", "Compute Instance", instance(|_| {}), "0.0816", "Hrs")],
    );
    let error = aws::import(future.as_bytes(), "o.json", &aws::Filter::default(), TODAY)
        .expect_err("from the future");
    assert!(
        error
            .to_string()
            .starts_with("the file says it was published 2031-01-01, after today (2026-12-06)"),
        "{error}"
    );
}

/// A Hetzner answer: `servers` (name, monthly net) at `location`, an address at €0.50.
fn hetzner_answer(servers: &[(&str, &str)], location: &str) -> String {
    let types: Vec<serde_json::Value> = servers
        .iter()
        .map(|(name, net)| {
            serde_json::json!({ "id": 1, "name": name, "prices": [{ "location": location,
                "price_hourly": { "net": "0.0048", "gross": "0.0057" },
                "price_monthly": { "net": net, "gross": "3.5700" } }] })
        })
        .collect();
    serde_json::json!({ "pricing": {
        "currency": "EUR", "vat_rate": "19.00",
        "primary_ips": [{ "type": "ipv4", "prices": [{ "location": location,
            "price_hourly": { "net": "0.0008", "gross": "0.001" },
            "price_monthly": { "net": "0.5000", "gross": "0.595" } }] }],
        "server_types": types } })
    .to_string()
}

fn hetzner(text: &str, table: &PriceTable) -> Result<Import, ImportError> {
    hetzner::import(
        text.as_bytes(),
        "pricing.json",
        &hetzner::Options {
            location: "fsn1".to_owned(),
            tier: hetzner::Tier::NewOrders,
            specs: (table, "the shipped table"),
            today: TODAY.to_owned(),
        },
    )
}

/// A forged server type's name (a newline and a CX33 row at €0.01) is said escaped and
/// never becomes a row; a location planted in the answer stays a string of the error.
#[test]
fn text_planted_in_a_hetzner_answer_stays_data() {
    let shipped = PriceTable::embedded().expect("shipped");
    let forged = "CX99\n[[hetzner_cloud]]\nid = \"CX33\"\nprovider = \"hetzner\"\nvcpu = 4\nmemory_gb = 8.0\neur_per_month = 0.01\nsource = \"x\"\nas_of = \"2026-01-01\"\n# ";
    let text = hetzner_answer(&[("cx23", "3.4900"), (forged, "1.0000")], "fsn1");
    let import = hetzner(&text, &shipped).expect("import");
    holds_only(&import, &["CX23", "hetzner-primary-ipv4"]);
    let said = import
        .notes
        .iter()
        .find(|n| n.starts_with("CX99"))
        .expect("said");
    assert!(
        said.starts_with("CX99\\n[[hetzner_cloud]]\\nid = \\\"CX33\\\""),
        "{said}"
    );
    let elsewhere = hetzner_answer(&[("cx23", "3.4900")], "nbg1\n[[hetzner_cloud]]");
    let error = hetzner(&elsewhere, &shipped).expect_err("not at fsn1");
    assert!(
        error
            .to_string()
            .ends_with("the answer prices nbg1\\n[[hetzner_cloud]]"),
        "{error}"
    );
    let error = hetzner::import(
        text.as_bytes(),
        "pricing.json",
        &hetzner::Options {
            location: "fsn1\n[x]".to_owned(),
            tier: hetzner::Tier::NewOrders,
            specs: (&shipped, "the shipped table"),
            today: TODAY.to_owned(),
        },
    )
    .expect_err("a location is a name");
    assert!(
        error
            .to_string()
            .starts_with("the location `fsn1\\n[x]` is not a name"),
        "{error}"
    );
}

#[test]
fn a_hetzner_price_no_provider_charges_is_refused() {
    let shipped = PriceTable::embedded().expect("shipped");
    for net in ["-3.49", "0.0000", "1e11", "cheap"] {
        let text = hetzner_answer(&[("cx23", net)], "fsn1");
        let error = hetzner(&text, &shipped).expect_err(net);
        assert!(
            error.to_string().starts_with("server type cx23 at fsn1: "),
            "{error}"
        );
    }
}

/// An Azure page: `items` (armSkuName, retail price), `next` its `NextPageLink`.
fn azure_page(items: &[(&str, f64)], region: &str, next: Option<&str>) -> String {
    let items: Vec<serde_json::Value> = items
        .iter()
        .map(|(sku, price)| {
            serde_json::json!({ "currencyCode": "USD", "retailPrice": price,
                "armRegionName": region, "armSkuName": sku, "skuName": "B1s",
                "productName": "Virtual Machines BS Series", "serviceName": "Virtual Machines",
                "unitOfMeasure": "1 Hour", "type": "Consumption",
                "effectiveStartDate": "2025-10-01T00:00:00Z" })
        })
        .collect();
    serde_json::json!({ "BillingCurrency": "USD", "Items": items, "NextPageLink": next,
        "Count": items.len() })
    .to_string()
}

fn azure(pages: &[String], sizes: &azure::Sizes) -> Result<Import, ImportError> {
    let pages = pages
        .iter()
        .enumerate()
        .map(|(k, page)| (page.as_bytes(), format!("page-{k}.json")))
        .collect();
    azure::import(
        pages,
        &azure::Options {
            region: "eastus".to_owned(),
            sizes: Some(sizes),
            today: TODAY.to_owned(),
        },
    )
}

/// A planted `armSkuName` is left out and said; a cut-short set (the last page's
/// `NextPageLink` not null) and prices no provider charges are refused.
#[test]
fn azure_pages_are_data_and_whole() {
    let sizes = azure_sizes();
    let page = azure_page(&[("Standard_B1s", 0.0104), (PLANT, 0.0001)], "eastus", None);
    let import = azure(&[page], &sizes).expect("import");
    holds_only(&import, &["Standard_B1s"]);
    assert!(
        import
            .notes
            .iter()
            .any(|n| n.starts_with("an item's `armSkuName` `m7g.xlarge\\\"]\\n")),
        "{:?}",
        import.notes
    );
    let first = azure_page(
        &[("Standard_B1s", 0.0104)],
        "eastus",
        Some("https://prices.azure.com/api/retail/prices?$skip=1000"),
    );
    let error = azure(&[first], &sizes).expect_err("cut short");
    assert!(
        error.to_string().starts_with("page-0.json is the last page given, but its `NextPageLink` names another (`https://prices.azure.com/api/retail/prices?$skip=1000`): the set is cut short"),
        "{error}"
    );
    for price in [-0.01, 0.0, 1e11] {
        let page = azure_page(&[("Standard_B1s", price)], "eastus", None);
        let error = azure(&[page], &sizes).expect_err("implausible");
        assert!(
            error.to_string().starts_with("Standard_B1s in eastus: "),
            "{error}"
        );
    }
    let sizes_text = r#"[{"name": "Standard_B1s", "numberOfCores": 0, "memoryInMb": -8192}]"#;
    let error = azure::Sizes::read(sizes_text.as_bytes(), "sizes.json").expect_err("no cores");
    assert!(
        error
            .to_string()
            .starts_with("size `Standard_B1s`: 0 vCPUs is not a machine's"),
        "{error}"
    );
}

/// A file read whole is refused past its bound before it is parsed: a Hetzner answer or an
/// Azure page of hundreds of megabytes is no provider's.
#[test]
fn a_file_past_the_bound_is_refused() {
    let shipped = PriceTable::embedded().expect("shipped");
    let huge = std::io::repeat(b' ').take(MAX_WHOLE_FILE_BYTES + 10);
    let error = hetzner::import(
        huge,
        "huge.json",
        &hetzner::Options {
            location: "fsn1".to_owned(),
            tier: hetzner::Tier::NewOrders,
            specs: (&shipped, "the shipped table"),
            today: TODAY.to_owned(),
        },
    )
    .expect_err("too large");
    assert_eq!(
        error,
        ImportError::TooLarge {
            file: "huge.json".to_owned(),
            limit: MAX_WHOLE_FILE_BYTES
        }
    );
    let huge = std::io::repeat(b' ').take(MAX_WHOLE_FILE_BYTES + 10);
    let error = azure::import(
        vec![(huge, "page.json".to_owned())],
        &azure::Options {
            region: "eastus".to_owned(),
            sizes: None,
            today: TODAY.to_owned(),
        },
    )
    .expect_err("too large");
    assert!(matches!(error, ImportError::TooLarge { .. }), "{error}");
}
