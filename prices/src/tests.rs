//! The shipped table read, and tables that are no price tables refused.

use super::*;

#[test]
fn the_shipped_table_reads_with_provenance() {
    let table = PriceTable::embedded().expect("embedded table");
    let medium = table.instance("t4g.medium").expect("t4g.medium");
    assert_eq!(medium.vcpu, 2);
    assert_eq!(medium.memory_gib, Some(4.0));
    assert_eq!(medium.usd_per_hour, Some(0.0336));
    assert_eq!(medium.as_of, "2026-07-20");
    assert!(medium.burstable);
    assert_eq!(table.instance_ids("aws").count(), 27);
    assert_eq!(table.instance_ids("hetzner").count(), 13);
    assert_eq!(
        table.database("db.t4g.micro").and_then(|d| d.usd_per_hour),
        Some(0.016)
    );
    // Hetzner's servers as it quotes them since 2026: without the primary IPv4 (priced as
    // a line), its 0.50 a month added in the derived `eur_per_month`; both tiers kept.
    let cx23 = table.instance("CX23").expect("CX23");
    assert_eq!(cx23.eur_month(), Some((5.49, false)));
    assert_eq!(cx23.eur_per_month, Some(5.99));
    assert_eq!(cx23.eur_per_month_ipv6_only_pre_2026_06_15, Some(3.99));
    let ipv4 = table.line("hetzner-primary-ipv4").expect("the IPv4 line");
    assert_eq!(ipv4.eur_per_month, Some(0.5));
    // Sourced where a source exists, absent (not guessed) where none does: the Singapore
    // rows have no IPv4 price in their currency, so no month.
    assert!(table.instance("CPX22-sin").is_none());
}

#[test]
fn a_user_table_overrides_and_extends() {
    let mut table = PriceTable::embedded().expect("embedded table");
    let user = PriceTable::from_toml(
        r#"
[[aws_ec2]]
id = "t4g.medium"
provider = "aws"
vcpu = 2
memory_gib = 4.0
usd_per_hour = 0.03
source = "our invoice"
as_of = "2026-11-01"

[[aws_ec2]]
id = "x9.huge"
provider = "aws"
vcpu = 64
memory_gib = 512.0
usd_per_hour = 9.0
source = "our invoice"
as_of = "2026-11-01"
"#,
    )
    .expect("user table");
    let user = user.named("our-prices.toml");
    table.extend(user);
    assert_eq!(
        table.instance("t4g.medium").and_then(|i| i.usd_per_hour),
        Some(0.03)
    );
    assert!(table.instance("x9.huge").is_some());
    // Issue 46: both tables named where the plan's dollars are, the shipped one first.
    let names: Vec<&str> = table.sources().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [SHIPPED, "our-prices.toml"]);
    let ours = &table.sources()[1];
    assert_eq!(ours.entries, 2);
    assert_eq!(
        (ours.oldest_as_of.as_deref(), ours.newest_as_of.as_deref()),
        (Some("2026-11-01"), Some("2026-11-01"))
    );
    assert_eq!(ours.sha256.len(), 64);
}

/// A table's digest is the SHA-256 of its bytes (the known digest of "abc", FIPS 180-2), and
/// the shipped table's span of dates runs from its oldest dated entry to its newest.
#[test]
fn a_table_is_named_by_its_digest_and_its_dates() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let table = PriceTable::embedded().expect("embedded table");
    let [shipped] = table.sources() else {
        panic!("one source: {:?}", table.sources())
    };
    assert_eq!(shipped.sha256, sha256_hex(EMBEDDED.as_bytes()));
    assert_eq!(shipped.entries, table.listed().len());
    let oldest = shipped.oldest_as_of.as_deref().expect("dated entries");
    let newest = shipped.newest_as_of.as_deref().expect("dated entries");
    assert!(oldest < newest, "{oldest} to {newest}");
    assert!(newest.starts_with("2026-"), "{newest}");
}

/// Issue 12: a negative price or memory is refused, naming the entry and the key, and so
/// is a file with no price entries at all (a spec given as a price table).
#[test]
fn nonsense_in_a_user_table_is_refused() {
    let entry = |extra: &str| {
        format!(
            "[[aws_ec2]]\nid = \"x1\"\nprovider = \"aws\"\nvcpu = 2\nmemory_gib = 4.0\nsource = \"ours\"\nas_of = \"2026-11-01\"\n{extra}"
        )
    };
    let error = PriceTable::from_toml(&entry("usd_per_hour = -0.5\n")).expect_err("negative");
    assert_eq!(
        error.to_string(),
        "the price table is not valid: `usd_per_hour` of `x1` is -0.5: a price or a size is a finite number of 0 or more"
    );
    assert!(PriceTable::from_toml(&entry("usd_per_hour = nan\n")).is_err());
    let spec = "[bench]\nname = \"relay\"\n\n[target]\ncommand = [\"server\"]\n";
    let error = PriceTable::from_toml(spec).expect_err("a spec is no price table");
    assert!(error.to_string().contains("is this a spec?"), "{error}");
    assert!(PriceTable::from_toml(&entry("usd_per_hour = 0.05\n")).is_ok());
}

/// Issue 11, item 12: every as-of date of the shipped table is a date, and a table whose
/// date is a research note is refused, naming the entry.
#[test]
fn as_of_dates_are_dates() {
    let table = PriceTable::embedded().expect("embedded table");
    let credit = table.cpu_credit("t4g.medium").expect("t4g credits");
    assert_eq!(credit.as_of, None, "the t4g credit price has no known date");
    assert_eq!(
        table
            .database("db.t4g.micro")
            .and_then(|d| d.as_of.clone())
            .as_deref(),
        Some("2026-09-09")
    );
    let error = PriceTable::from_toml(
        "[[aws_rds]]\nid = \"db.x\"\nprovider = \"aws\"\nas_of = \"2026 (article date not shown)\"\n",
    )
    .expect_err("a note is not a date");
    assert!(error.to_string().contains("`db.x`"), "{error}");
    assert!(error.to_string().contains("YYYY-MM-DD"), "{error}");
    assert!(!EMBEDDED.contains("confidence"));
    assert!(!EMBEDDED.contains("not shown in stored copy"));
}

#[test]
fn a_broken_table_says_where() {
    let error = PriceTable::from_toml("[[aws_ec2]]\nid = 3\n").expect_err("broken");
    let PriceTableError::Parse { span, .. } = error;
    assert!(span.is_some());
}
