//! The planner against worked examples (the relay page), edge by edge.

use super::*;
use crate::PriceTable;
use crate::fit::fit;
use crate::points::MeasuredSweep;

fn relay_model() -> Model {
    let rooms = [1.0, 4.0, 16.0, 32.0, 64.0, 128.0];
    let rss_mib = [218.8, 260.9, 399.7, 546.5, 863.9, 1506.2];
    let points: Vec<(f64, f64)> = rooms
        .into_iter()
        .zip(rss_mib.map(|m| m * 1_048_576.0))
        .collect();
    Model {
        unit: "room".to_owned(),
        people_per_unit: 1.0,
        memory: Some(fit(&points).expect("fit")),
        reserve_bytes: 512.0 * 1_048_576.0,
        cpu_ceiling: Some(57.0),
        cap: Some(128.0),
        lines: Lines {
            ebs_gb: Some(30.0),
            rds: Some("db.t4g.micro".to_owned()),
            public_ipv4: 0,
            egress_gb: None,
        },
        ..Model::default()
    }
}

/// The relay capacity page's cost table, by hand: 334 and 742 rooms by memory, 57 by CPU,
/// $0.43 and $0.86 per room-month; all in with 30 GB gp3 and a db.t4g.micro, $38.61 and
/// $63.14 a month, $0.68 and $1.11 per room.
#[test]
fn the_relay_page_by_hand() {
    let table = PriceTable::embedded().expect("table");
    let model = relay_model();
    let expected = [
        ("t4g.medium", 334.0, 0.43, 38.61, 0.68),
        ("t4g.large", 742.0, 0.86, 63.14, 1.11),
    ];
    for (name, by_memory, per_room, all_in, all_in_per_room) in expected {
        let plan = plan_instance(table.instance(name).expect("instance"), &model, &table);
        assert_eq!(
            plan.ceilings[&Resource::Memory].units,
            Some(by_memory),
            "{name}"
        );
        assert_eq!(
            (plan.binding.resource.as_str(), plan.binding.units),
            ("cpu", Some(57.0))
        );
        assert_eq!(plan.not_priced, None);
        assert_eq!(
            plan.runner_up.as_ref().map(|b| b.resource.as_str()),
            Some("cap")
        );
        let cents = |x: f64| (x * 100.0).round() / 100.0;
        assert_eq!(plan.per_unit_month.map(cents), Some(per_room), "{name}");
        assert_eq!(cents(plan.all_in.per_month), all_in, "{name}");
        assert_eq!(
            plan.all_in.per_unit_month.map(cents),
            Some(all_in_per_room),
            "{name}"
        );
        assert!(
            plan.all_in
                .lines
                .iter()
                .any(|l| l.shared && l.name.contains("db.t4g.micro"))
        );
        assert!(
            plan.warnings.iter().any(|w| w.contains("burstable")),
            "{:?}",
            plan.warnings
        );
    }
}

/// With the server's CPU per room measured, a burstable instance gets its sustained ceiling
/// and the surplus credits above it: t4g.medium's baseline is 20 % of 2 vCPUs = 0.4 cores;
/// at 0.1 + 0.01 cores per room it sustains 30 rooms, and at the 57 planned it runs 0.27 cores
/// above the baseline: 0.27 × 730 h × $0.04 = $7.88 a month.
#[test]
fn a_burstable_instance_with_cpu_data_prices_its_credits() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    let points: Vec<(f64, f64)> = [1.0, 10.0, 20.0, 40.0].map(|r| (r, 0.1 + 0.01 * r)).into();
    model.cpu = Some(fit(&points).expect("cpu fit"));
    let plan = plan_instance(
        table.instance("t4g.medium").expect("t4g.medium"),
        &model,
        &table,
    );
    assert_eq!(plan.ceilings[&Resource::CpuSustained].units, Some(30.0));
    let credits = plan
        .all_in
        .lines
        .iter()
        .find(|l| l.name.contains("credits"))
        .expect("credits");
    assert!(
        (credits.per_month - 0.27 * 730.0 * 0.04).abs() < 1e-6,
        "{}",
        credits.per_month
    );
    assert!(plan.warnings.iter().all(|w| !w.contains("assumes burst")));
}

#[test]
fn headroom_and_the_slo_sweep() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    let sweep = sweep_of(&[(16.0, true), (32.0, true), (64.0, false), (128.0, false)]);
    model.slo = slo_ceiling(&sweep, "named");
    let slo = model.slo.clone().expect("judged");
    assert_eq!(
        (slo.units, slo.first_failing, slo.lower_bound),
        (Some(32.0), Some(64.0), false)
    );
    assert_eq!(slo.broke, ["`api.latency.p95 < 200ms` failed"]);
    model.headroom = 0.25;
    let plan = plan_instance(
        table.instance("m7g.large").expect("m7g.large"),
        &model,
        &table,
    );
    assert_eq!(
        (plan.binding.resource.as_str(), plan.binding.units),
        ("slo", Some(32.0))
    );
    assert_eq!(plan.planned_units, Some(24.0));
    assert!(!plan.cost_is_upper_bound);
    assert!(plan.warnings.iter().all(|w| !w.contains("burstable")));
    // 100 rooms: m7g.large holds 24 a piece, so 5 of them.
    let fleets = for_units(std::slice::from_ref(&plan), 100.0);
    assert_eq!((fleets[0].count, fleets[0].units), (5, 120.0));
    let budget = for_budget(std::slice::from_ref(&plan), 300.0);
    assert!(
        budget[0].per_month <= 300.0 && budget[0].count >= 1,
        "{budget:?}"
    );
    let never = sweep_of(&[(1.0, true), (2.0, true)]);
    assert_eq!(slo_ceiling(&never, "").map(|c| c.lower_bound), Some(true));
}

/// A sweep judged at each x: `true` passes, `false` fails a p95 SLO.
fn sweep_of(verdicts: &[(f64, bool)]) -> MeasuredSweep {
    MeasuredSweep {
        name: "load".to_owned(),
        x: "rooms".to_owned(),
        series: Vec::new(),
        emulates: None,
        scales: None,
        measured_in: None,
        search: None,
        verdicts: verdicts
            .iter()
            .map(|&(x, pass)| {
                let mut verdict = crate::points::StepVerdict::passing();
                verdict.judge((!pass).then(|| "`api.latency.p95 < 200ms` failed".to_owned()));
                (crate::points::OrderedX(x), verdict)
            })
            .collect(),
    }
}

/// Item 1 of issue 11: every SLO fails at the first step (16). The SLO ceiling is "< 16, not
/// measured" and binds before the cap: nothing is planned and no cost per unit is given.
#[test]
fn a_ceiling_below_the_first_step_is_not_priced() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    model.slo = slo_ceiling(&sweep_of(&[(16.0, false), (64.0, false)]), "named");
    let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
    let slo = &plan.ceilings[&Resource::Slo];
    assert_eq!((slo.units, slo.below), (None, Some(16.0)));
    assert_eq!(slo.reads(), "< 16, not measured");
    assert_eq!(
        (plan.binding.resource.as_str(), plan.binding.units),
        ("slo", None)
    );
    assert_eq!(plan.planned_units, None);
    assert_eq!(plan.per_unit_month, None);
    assert_eq!(plan.all_in.per_unit_month, None);
    let why = plan.not_priced.clone().expect("a reason");
    assert!(
        why.contains("SLO ceiling lies below 16, the first step"),
        "{why}"
    );
    let fleets = for_units(std::slice::from_ref(&plan), 100.0);
    assert_eq!(fleets[0].count, 0);
    assert!(
        fleets[0]
            .note
            .as_deref()
            .unwrap_or("")
            .starts_with("not priced")
    );
}

/// Memory that does not grow with the units gives no memory ceiling, and says so: the
/// weaknesses of the fit and its slope, never a silent gap.
#[test]
fn a_flat_or_falling_memory_fit_says_why_there_is_no_memory_ceiling() {
    let table = PriceTable::embedded().expect("table");
    let points: Vec<(f64, f64)> = [(25.0, 161e6), (50.0, 160e6), (100.0, 159e6)].into();
    let model = Model {
        unit: "user".to_owned(),
        people_per_unit: 1.0,
        memory: Some(fit(&points).expect("fit")),
        cap: Some(100.0),
        ..Model::default()
    };
    let plan = plan_instance(table.instance("CX23").expect("CX23"), &model, &table);
    assert!(!plan.ceilings.contains_key(&Resource::Memory));
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.starts_with("the memory fit's slope is ")
                && w.ends_with("so no memory ceiling follows from them")),
        "{:?}",
        plan.warnings
    );
    assert!(
        plan.warnings.iter().any(|w| w.contains("only 3 points")),
        "{:?}",
        plan.warnings
    );
}

/// Issue 12: a reserve of all the instance's memory is said, not planned around silently.
#[test]
fn a_reserve_of_all_the_memory_is_said() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.reserve_bytes = 4.0 * 1_073_741_824.0;
    let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
    assert_eq!(plan.ceilings[&Resource::Memory].units, Some(0.0));
    assert_eq!(plan.planned_units, None);
    assert_eq!(
        plan.not_priced.as_deref(),
        Some("the memory ceiling, less 0 % headroom, leaves no whole room to plan with")
    );
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.starts_with("t4g.medium: the reserve (4096 MiB) is all of its 4 GiB")),
        "{:?}",
        plan.warnings
    );
}

/// Item 16: a lower-bound ceiling binds; the cost per unit is an upper bound.
#[test]
fn a_lower_bound_ceiling_prices_an_upper_bound() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    model.cap = None;
    model.slo = slo_ceiling(&sweep_of(&[(25.0, true), (50.0, true), (100.0, true)]), "");
    let plan = plan_instance(table.instance("t4g.medium").expect("t4g"), &model, &table);
    assert_eq!(plan.binding.reads, "≥ 100");
    assert_eq!(plan.planned_units, Some(100.0));
    assert!(plan.cost_is_upper_bound);
    assert_eq!(plan.not_priced, None);
}

/// Item 15: a memory ceiling far past the data (3,800× the largest measured) reads as an
/// extrapolation, never as a plain number, and when it binds nothing is priced.
#[test]
fn a_memory_ceiling_far_past_the_data_is_flagged_and_not_priced() {
    let table = PriceTable::embedded().expect("table");
    // 25–100 users at 8 KiB each over 60 MiB: a CX23's 4 GiB holds ~450,000.
    let points: Vec<(f64, f64)> = [25.0, 50.0, 75.0, 100.0]
        .map(|u| (u, 60.0 * 1_048_576.0 + u * 8192.0))
        .into();
    let model = Model {
        unit: "user".to_owned(),
        people_per_unit: 1.0,
        memory: Some(fit(&points).expect("fit")),
        reserve_bytes: 512.0 * 1_048_576.0,
        ..Model::default()
    };
    let plan = plan_instance(table.instance("CX23").expect("CX23"), &model, &table);
    let memory = &plan.ceilings[&Resource::Memory];
    let times = memory.extrapolated.expect("flagged");
    assert!(times > 1000.0, "{times}");
    assert!(
        memory
            .reads()
            .contains("the largest measured: not a ceiling to plan with"),
        "{}",
        memory.reads()
    );
    assert_eq!(plan.binding.resource, Resource::Memory);
    assert_eq!(plan.planned_units, None);
    assert_eq!(plan.per_unit_month, None);
    assert!(
        plan.not_priced
            .as_deref()
            .unwrap_or("")
            .contains("extrapolation"),
        "{:?}",
        plan.not_priced
    );
    // Inside the limit it is a plain ceiling.
    assert_eq!(factor(3789.0), "3,800×");
    assert_eq!(factor(57.5), "58×");
    assert_eq!(factor(2.6), "2.6×");
}

fn emulated_ceiling(
    phase: &str,
    units: Option<f64>,
    first_failing: Option<f64>,
) -> EmulatedCeiling {
    EmulatedCeiling {
        slo: SloCeiling {
            phase: phase.to_owned(),
            chosen_because: "run in the instance's shape".to_owned(),
            units,
            first_failing,
            broke: Vec::new(),
            breached: first_failing.is_some(),
            lower_bound: first_failing.is_none(),
            search: None,
        },
        shape: "2 vCPU, 3.5GiB".to_owned(),
        measured_in: Some("2 CPU, 3584MiB memory, no swap (cgroup v1)".to_owned()),
    }
}

/// Issue 14: an instance measured in its shape takes that SLO ceiling as measured, unscaled,
/// and says so; at its baseline, the sustained ceiling is the one measured there, and the
/// credits above it come from the measured gap: planned 400 of a burst ceiling of 600 over a
/// sustained 200 is half-way, so 0.8 of the 1.6 vCPU above t4g.medium's 0.4 baseline:
/// 0.8 × 730 h × $0.04 = $23.36 a month.
#[test]
fn an_emulated_instance_is_planned_with_its_measured_ceilings() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    model.memory = None;
    model.cap = Some(400.0);
    model.measured_cores = 8.0;
    model.cpu_scales_with_vcpus = true;
    model.emulated.insert(
        "t4g.medium".to_owned(),
        Emulated {
            full: Some(emulated_ceiling(
                "load@t4g.medium",
                Some(600.0),
                Some(800.0),
            )),
            baseline: Some(emulated_ceiling(
                "load@t4g.medium-baseline",
                Some(200.0),
                Some(300.0),
            )),
        },
    );
    let plan = plan_instance(
        table.instance("t4g.medium").expect("t4g.medium"),
        &model,
        &table,
    );
    // Not scaled from the 8 measured cores: measured in the instance's shape.
    assert_eq!(plan.ceilings[&Resource::Slo].units, Some(600.0));
    assert!(
        plan.ceilings[&Resource::Slo].note.ends_with(
            "; measured in t4g.medium's shape, 2 CPU, 3584MiB memory, no swap (cgroup v1)"
        ),
        "{}",
        plan.ceilings[&Resource::Slo].note
    );
    assert_eq!(plan.ceilings[&Resource::CpuSustained].units, Some(200.0));
    assert_eq!(plan.planned_units, Some(400.0));
    let credits = plan
        .all_in
        .lines
        .iter()
        .find(|l| l.name.contains("credits"))
        .expect("credits");
    assert!(
        (credits.per_month - 0.8 * 730.0 * 0.04).abs() < 1e-6,
        "{}",
        credits.per_month
    );
    assert!(
        plan.measured.starts_with("SLO ceiling measured at 2 CPU, 3584MiB memory, no swap (cgroup v1), and at its baseline"),
        "{}",
        plan.measured
    );
    // Another instance, not emulated, is scaled from the machine measured on, and says so.
    model.slo = Some(emulated_ceiling("load", Some(300.0), Some(400.0)).slo);
    let other = plan_instance(
        table.instance("c7g.large").expect("c7g.large"),
        &model,
        &table,
    );
    assert_eq!(
        other.measured,
        "SLO ceiling scaled from a machine with 8 cores to 2 vCPU, not measured on it"
    );
}

/// A baseline phase that failed already at its first step gives no sustained ceiling, and the
/// credits above it are the whole gap, said to be at most that: 1.6 vCPU × 730 h × $0.04.
#[test]
fn credits_without_a_measured_baseline_ceiling_are_an_upper_bound() {
    let table = PriceTable::embedded().expect("table");
    let mut model = relay_model();
    model.cpu_ceiling = None;
    model.memory = None;
    model.cap = Some(400.0);
    model.emulated.insert(
        "t4g.medium".to_owned(),
        Emulated {
            full: Some(emulated_ceiling(
                "load@t4g.medium",
                Some(600.0),
                Some(800.0),
            )),
            baseline: Some(emulated_ceiling(
                "load@t4g.medium-baseline",
                None,
                Some(100.0),
            )),
        },
    );
    let plan = plan_instance(
        table.instance("t4g.medium").expect("t4g.medium"),
        &model,
        &table,
    );
    let sustained = &plan.ceilings[&Resource::CpuSustained];
    assert_eq!((sustained.units, sustained.below), (None, Some(100.0)));
    let credits = plan
        .all_in
        .lines
        .iter()
        .find(|l| l.name.contains("credits"))
        .expect("credits");
    assert_eq!(
        credits.name,
        "surplus CPU credits (1.60 vCPU above the baseline, at most: the gap was not measured at both ends)"
    );
    assert!(
        (credits.per_month - 1.6 * 730.0 * 0.04).abs() < 1e-6,
        "{}",
        credits.per_month
    );
}

mod searched;

/// Issue 46: a Hetzner server is priced as Hetzner quotes it since 2026, without its primary
/// IPv4; the spec's addresses are a line at the table's IPv4 price (none for an IPv6-only
/// plan). A price that includes one address (an older table's `eur_per_month` alone) takes no
/// line, and more addresses than it holds are said, not priced.
#[test]
fn a_hetzner_server_and_its_addresses_are_priced_apart() {
    let table = PriceTable::embedded().expect("table");
    let cx23 = table.instance("CX23").expect("CX23");
    let priced = |public_ipv4: u32, instance: &crate::Instance, table: &PriceTable| {
        let model = Model {
            cpu_ceiling: Some(100.0),
            lines: Lines {
                public_ipv4,
                ..Lines::default()
            },
            ..relay_model()
        };
        plan_instance(instance, &model, table)
    };
    let plan = priced(1, cx23, &table);
    assert_eq!((plan.currency, plan.per_month), ("EUR", 5.49));
    let names: Vec<(&str, f64)> = plan
        .all_in
        .lines
        .iter()
        .map(|l| (l.name.as_str(), l.per_month))
        .collect();
    assert_eq!(names, [("primary IPv4 × 1", 0.5)]);
    assert!((plan.all_in.per_month - 5.99).abs() < 1e-9, "{plan:?}");
    let ipv6_only = priced(0, cx23, &table);
    assert!(ipv6_only.all_in.lines.is_empty(), "{ipv6_only:?}");
    assert!((ipv6_only.all_in.per_month - 5.49).abs() < 1e-9);
    let older = PriceTable::from_toml(
        "[[hetzner_cloud]]\nid = \"CX22\"\nprovider = \"hetzner\"\nvcpu = 2\nmemory_gb = 4.0\neur_per_month = 3.79\nsource = \"a 2025 snapshot\"\nas_of = \"2025-08-19\"\n",
    )
    .expect("an older table");
    let cx22 = older.instance("CX22").expect("CX22");
    let one = priced(1, cx22, &older);
    assert_eq!(one.per_month, 3.79);
    assert!(one.all_in.lines.is_empty(), "{one:?}");
    let two = priced(2, cx22, &older);
    assert!(
        two.warnings.iter().any(|w| w
            == "CX22's price includes one primary IPv4 and the table has no price without it: 2 addresses asked, priced as one"),
        "{:?}",
        two.warnings
    );
}

/// Issue 46: an Azure virtual machine (a table `prices import azure` wrote) is priced in US
/// dollars by its hour, with none of AWS's lines beside it, even where the model asks for EBS,
/// RDS and egress (`compile` refuses those keys for Azure); its public IPv4 is said to be left
/// out of the all-in cost, as the table has no Azure address price.
#[test]
fn an_azure_vm_is_priced_by_its_hour_without_aws_lines() {
    let mut table = PriceTable::embedded().expect("table");
    table.extend(
        PriceTable::from_toml(
            "[[azure_vm]]\nid = \"Standard_B1s\"\nprovider = \"azure\"\nregion = \"eastus\"\nvcpu = 1\nmemory_gib = 1.0\nusd_per_hour = 0.0104\nsource = \"Azure Retail Prices API at eastus\"\nas_of = \"2026-12-06\"\n",
        )
        .expect("an Azure table"),
    );
    let b1s = table.instance("Standard_B1s").expect("B1s");
    let model = Model {
        cpu_ceiling: Some(100.0),
        lines: Lines {
            public_ipv4: 1,
            ebs_gb: Some(20.0),
            egress_gb: Some(100.0),
            rds: Some("db.t4g.micro".to_owned()),
        },
        ..relay_model()
    };
    let plan = plan_instance(b1s, &model, &table);
    assert_eq!(plan.currency, "USD");
    assert!((plan.per_month - 0.0104 * 730.0).abs() < 1e-9, "{plan:?}");
    assert!(plan.all_in.lines.is_empty(), "{:?}", plan.all_in.lines);
    assert!((plan.all_in.per_month - plan.per_month).abs() < 1e-12);
    assert!(
        plan.warnings.iter().any(|w| w
            == "Standard_B1s: the price table has no Azure public IP price: its 1 address is not in the all-in cost"),
        "{:?}",
        plan.warnings
    );
}
