//! The page and `plan` from the same results: one answer, the cost table figure for figure,
//! ceilings below the first step or past the last, units of several people, a budget.

use super::*;
use headroom_pricing::plan::{PlanReport, Resource};
use headroom_templates::PageContext;

/// A `plan --json` output, checked against its schema and read as its type.
fn plan_report(json: &str) -> PlanReport {
    common::contract("plan.schema.json", json)
}

/// Issue 11, the headline: `headroom plan SPEC` with neither --results nor --points reads the
/// spec's own results file, the one the page is rendered from, and says the same thing.
#[test]
fn plan_and_the_page_give_the_same_answer_from_the_same_results() {
    let dir = scratch("same-answer");
    std::fs::copy(
        common::root().join("examples/relay.toml"),
        dir.join("relay.toml"),
    )
    .expect("spec");
    std::fs::create_dir_all(dir.join("results/relay")).expect("results dir");
    std::fs::copy(
        common::fixtures::path("relay-results.json"),
        dir.join("results/relay/results.json"),
    )
    .expect("results");
    let (code, plan, stderr) = common::headroom_in(&dir, &["plan", "relay.toml", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let plan_text = plan;
    let plan = plan_report(&plan_text);
    let (code, context, stderr) =
        common::headroom_in(&dir, &["render", "relay.toml", "--dump-context"]);
    assert_eq!(code, 0, "{stderr}");
    let context: PageContext = common::contract("page-context.schema.json", &context);
    let on_page = context.plan.expect("the page's plan");
    assert_eq!(
        serde_json::to_value(&on_page).expect("JSON"),
        serde_json::from_str::<serde_json::Value>(&plan_text).expect("JSON"),
        "the page's plan is `plan --json`, field for field"
    );
    // And that answer is the right one: the SLOs failed at the first step of `rooms`.
    let slo = plan.slo_ceiling.expect("an SLO ceiling");
    assert_eq!(slo.phase, "rooms");
    assert_eq!(slo.units, None);
    assert_eq!(slo.first_failing, Some(16.0));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 13: the page's cost table is `plan --json`, figure for figure. The page and `plan`
/// call one planner over the same results; each cell of each instance's row is the JSON's
/// figure as the page writes it (dollars to the cent, units as counts).
#[test]
fn the_pages_cost_table_is_plan_json_figure_for_figure() {
    let dir = scratch("cost-table");
    let results = results_where_rooms_pass(&dir);
    let out = dir.join("capacity.md");
    let (results_arg, out_arg) = (results.display().to_string(), out.display().to_string());
    let (code, json, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &results_arg,
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let plan = plan_report(&json);
    let (code, _, stderr) = headroom(&[
        "render",
        "examples/relay.toml",
        "--results",
        &results_arg,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    let table = page.split("## Cost per room").nth(1).expect("a cost table");
    let header: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("| instance"))
        .expect("header")
        .split('|')
        .map(str::trim)
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
    };
    let dollars = |x: Option<f64>| format!("${:.2}", x.expect("a figure"));
    let instances = &plan.instances;
    assert_eq!(instances.len(), 2, "{plan:?}");
    for instance in instances {
        let name = &instance.name;
        let row: Vec<&str> = table
            .lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row for {name} in {table}"))
            .split('|')
            .map(str::trim)
            .collect();
        // Something is priced here, so the figures compared are numbers, not blanks.
        let planned = instance.planned_units.expect("planned units");
        assert_eq!(row[column("per month")], dollars(Some(instance.usd_month)));
        assert_eq!(
            row[column("binding ceiling")],
            format!(
                "{} ({})",
                instance.binding.reads,
                instance.binding.resource.as_str()
            )
        );
        assert_eq!(row[column("planned rooms")], planned.to_string());
        assert_eq!(
            row[column("per room-month")],
            dollars(instance.usd_per_unit_month)
        );
        assert_eq!(
            row[column("all in / month")],
            dollars(Some(instance.all_in.usd_month))
        );
        assert_eq!(
            row[column("all in per room")],
            dollars(instance.all_in.usd_per_unit_month)
        );
    }
    // The figures themselves: the cap of 128 rooms binds; $24.53 / 128 = $0.19.
    assert_eq!(instances[0].planned_units, Some(128.0));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11, item 1: every SLO already fails at the first step of the ceiling phase. The SLO
/// ceiling is "< 16, not measured": no planned rooms, no cost per room, the table says why, and
/// `plan --check` exits 2.
#[test]
fn a_ceiling_below_the_first_step_is_not_priced() {
    let (_, stdout, _) = headroom(&["plan", "examples/relay.toml", "--results", RESULTS]);
    assert!(stdout.contains("< 16, not measured (slo)"), "{stdout}");
    assert!(
        stdout.contains("t4g.medium: not priced: the SLO ceiling lies below 16, the first step"),
        "{stdout}"
    );
    assert!(!stdout.contains("$0.19"), "{stdout}");
    // The fixture is `--quick` results of an older relay.toml, which `--check` refuses
    // outright: the gate is held here on full results of the spec as it is.
    let dir = scratch("below-first-step");
    let full = edited_results(&dir, |results| {
        results.quick = false;
        let spec =
            std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("the spec");
        results.spec.hash = headroom_results::spec_hash(&spec);
    });
    let full = full.display().to_string();
    let (code, json, said) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &full,
        "--json",
        "--check",
    ]);
    assert!(!said.contains("warning: reading"), "{said}");
    assert_eq!(code, 2, "--check exits 2 when nothing can be priced");
    let report = plan_report(&json);
    for instance in &report.instances {
        assert_eq!(instance.planned_units, None);
        assert_eq!(instance.usd_per_unit_month, None);
        assert_eq!(instance.all_in.usd_per_unit_month, None);
        assert_eq!(instance.binding.resource, Resource::Slo);
        let slo = instance
            .ceilings
            .get(&Resource::Slo)
            .expect("an SLO ceiling");
        assert_eq!(slo.below, Some(16.0));
        assert!(instance.not_priced.is_some(), "{instance:?}");
    }
    let (code, _, _) = headroom(&["plan", "examples/relay.toml", "--results", RESULTS]);
    assert_eq!(code, 0, "without --check the plan is printed and exits 0");
    let _ = std::fs::remove_dir_all(dir);
}

/// A unit of several people: the cost table gains per-person columns, each the per-unit figure
/// divided by the people in a unit, and says so.
#[test]
fn a_unit_of_several_people_is_priced_per_person_too() {
    let dir = scratch("people");
    let passing = results_where_rooms_pass(&dir);
    let passing = passing.display().to_string();
    let spec = std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("spec");
    let (before, after) = spec
        .split_once("people_per_unit = 1")
        .expect("the relay example counts one person a room");
    let spec_path = dir.join("relay.toml");
    std::fs::write(&spec_path, format!("{before}people_per_unit = 4{after}")).expect("spec");
    let out = dir.join("capacity.md");
    let (spec_arg, out_arg) = (spec_path.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        &spec_arg,
        "--results",
        &passing,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    assert!(
        page.contains("| per room-month | per person-month | all in / month | all in per room | all in per person |"),
        "{page}"
    );
    // t4g.medium: $24.53 over 128 rooms of 4 people is $0.048 a person; all in, $42.26 is $0.083.
    assert!(
        page.contains("| 128 | $0.19 | $0.048 | $42.26 | $0.33 | $0.083 |"),
        "{page}"
    );
    assert!(
        page.contains("\"per person\" divides that by 4, the people in a room"),
        "{page}"
    );
    // Both per-person figures are the planner's (`plan --json`), not made in the template.
    let (code, json, stderr) = headroom(&["plan", &spec_arg, "--results", &passing, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let medium = plan_report(&json)
        .instances
        .into_iter()
        .find(|i| i.name == "t4g.medium")
        .expect("t4g.medium");
    let per_person = medium.usd_per_person_month.expect("a cost per person");
    let all_in_per_person = medium
        .all_in
        .usd_per_person_month
        .expect("all in, per person");
    assert!(
        (per_person - 24.528 / 128.0 / 4.0).abs() < 1e-9,
        "{per_person}"
    );
    let all_in_per_unit = medium.all_in.usd_per_unit_month.expect("all in, per room");
    assert!((all_in_per_person - all_in_per_unit / 4.0).abs() < 1e-12);
    assert_eq!(format!("{all_in_per_person:.3}"), "0.083");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11, item 10: `[plan] budget_usd_per_month` is not silently ignored: `plan` lists what
/// the budget holds, as `--budget` does.
#[test]
fn the_specs_budget_is_planned_with() {
    let dir = scratch("budget");
    let spec = std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("spec");
    let spec = spec.replacen("[plan]\n", "[plan]\nbudget_usd_per_month = 100\n", 1);
    let spec_path = dir.join("relay.toml");
    std::fs::write(&spec_path, spec).expect("spec");
    let passing = results_where_rooms_pass(&dir);
    let (spec_arg, results_arg) = (
        spec_path.display().to_string(),
        passing.display().to_string(),
    );
    let (code, stdout, stderr) = headroom(&["plan", &spec_arg, "--results", &results_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("With 100.00 a month, the most rooms first:"),
        "{stdout}"
    );
    // 128 rooms a t4g.medium ($42.26 all in, the database counted once): two hold 256.
    assert!(
        stdout.contains("┆ t4g.medium ┆     2 ┆   256 ┆"),
        "{stdout}"
    );
    let (_, json, _) = headroom(&["plan", &spec_arg, "--results", &results_arg, "--json"]);
    let report = plan_report(&json);
    let fleets = report.for_budget.expect("the spec's budget planned");
    assert_eq!(fleets[0].instance, "t4g.medium", "{fleets:?}");
    assert_eq!((fleets[0].count, fleets[0].units), (2, 256.0), "{fleets:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 11, item 2, the results path: a ceiling phase in which every step passed is a lower
/// bound (`≥ 128`, `lower_bound: true`, `first_failing: null`), and so is its ceiling.
#[test]
fn a_results_sweep_that_passed_everything_is_a_lower_bound() {
    let dir = scratch("lower-bound");
    let passing = results_where_rooms_pass(&dir).display().to_string();
    let (code, json, stderr) = headroom(&[
        "plan",
        "examples/relay.toml",
        "--results",
        &passing,
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report = plan_report(&json);
    let slo = report.slo_ceiling.as_ref().expect("an SLO ceiling");
    assert_eq!(slo.phase, "rooms");
    assert!(slo.lower_bound, "{slo:?}");
    assert_eq!(slo.first_failing, None, "{slo:?}");
    assert_eq!(slo.units, Some(128.0), "{slo:?}");
    let ceiling = report.instances[0]
        .ceilings
        .get(&Resource::Slo)
        .expect("an SLO ceiling");
    assert_eq!(ceiling.reads, "≥ 128", "{ceiling:?}");
    assert!(ceiling.lower_bound);
    let _ = std::fs::remove_dir_all(dir);
}

/// A runner-up that is a lower bound (every step passed) trails by at least what it shows:
/// "slo trails at ≥ 128 (at least +0 %)", not a "+0 %" that reads as a tie.
#[test]
fn a_lower_bound_runner_up_trails_by_at_least() {
    let dir = scratch("at-least");
    let results = results_where_rooms_pass(&dir);
    let results_arg = results.display().to_string();
    let (code, stdout, stderr) =
        headroom(&["plan", "examples/relay.toml", "--results", &results_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("t4g.medium: cap binds at 128; slo trails at ≥ 128 (at least +0 %)"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 46: the page prices with today's tables; where the results say the run priced from
/// others (a table refreshed since), a caveat names both by their digests, so no reader takes
/// the page's dollars for the run's. The same tables say nothing.
#[test]
fn a_page_priced_from_other_tables_than_the_runs_says_so() {
    let dir = scratch("other-tables");
    let shipped = headroom_pricing::PriceTable::embedded().expect("the shipped table");
    let today: Vec<headroom_results::TableSource> = shipped.sources().to_vec();
    let mut older = today[0].clone();
    older.sha256 = "0123456789ab".repeat(5) + "cdef";
    let page_of = |tables: Vec<headroom_results::TableSource>, name: &str| {
        let results = edited_results(&dir, |results| {
            rooms_pass(results);
            results.price_tables = tables;
        });
        let out = dir.join(name);
        let (results_arg, out_arg) = (results.display().to_string(), out.display().to_string());
        let (code, _, stderr) = headroom(&[
            "render",
            "examples/relay.toml",
            "--results",
            &results_arg,
            "--out",
            &out_arg,
        ]);
        assert_eq!(code, 0, "{stderr}");
        std::fs::read_to_string(&out).expect("page")
    };
    let page = page_of(vec![older], "older.md");
    let said = format!(
        "The costs are priced from other price tables than the run's: the run priced from {} (sha256 `0123456789ab`); this page from {} (sha256 `{}`).",
        today[0].name,
        today[0].name,
        &today[0].sha256[..12]
    );
    assert!(page.contains(&said), "{page}");
    let page = page_of(today, "same.md");
    assert!(!page.contains("other price tables"), "{page}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 46: a page priced from out-of-date prices says so, naming the row and why, as
/// `plan --check --stale-ok` accepts them (tests/cli/prices.rs): the relay example priced on a
/// team's own 2025 table (CX22 at its 2025-08-19 price, which Hetzner changed on 2026-04-01).
#[test]
fn a_page_priced_from_stale_prices_says_which_and_why() {
    let dir = scratch("stale-page");
    let passing = results_where_rooms_pass(&dir).display().to_string();
    let spec = std::fs::read_to_string(common::root().join("examples/relay.toml")).expect("spec");
    let (before, _) = spec.split_once("[plan]").expect("the relay example prices");
    let table = common::root().join("tests/fixtures/prices/hetzner-2025.toml");
    let spec_path = dir.join("relay.toml");
    std::fs::write(
        &spec_path,
        format!(
            "{before}[plan]\nprovider = \"hetzner\"\ninstances = [\"CX22\"]\nprices = \"{}\"\n",
            table.display()
        ),
    )
    .expect("spec");
    let out = dir.join("capacity.md");
    let (spec_arg, out_arg) = (spec_path.display().to_string(), out.display().to_string());
    let (code, _, stderr) = headroom(&[
        "render",
        &spec_arg,
        "--results",
        &passing,
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&out).expect("page");
    assert!(page.contains("€3.79"), "{page}");
    let said: Vec<&str> = page
        .lines()
        .filter(|line| line.contains("CX22") && line.contains("stale since 2026-04-01"))
        .collect();
    assert!(!said.is_empty(), "{page}");
    assert!(
        page.lines()
            .any(|line| line.contains("CX22") && line.contains("days old (over 180)")),
        "{page}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
