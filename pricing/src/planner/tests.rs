use super::*;
use crate::points::{SeriesPoints, Unit};

fn measured(cpu: Vec<(f64, f64)>) -> Measured {
    let rss = (1..=5)
        .map(|x| (f64::from(x), 1e7 + 1e5 * f64::from(x)))
        .collect();
    Measured {
        sweeps: vec![MeasuredSweep {
            name: "rooms".to_owned(),
            x: "rooms".to_owned(),
            series: vec![
                SeriesPoints {
                    name: "rss".to_owned(),
                    unit: Unit::Bytes,
                    points: rss,
                },
                SeriesPoints {
                    name: "cpu".to_owned(),
                    unit: Unit::Plain,
                    points: cpu,
                },
            ],
            emulates: None,
            scales: None,
            measured_in: None,
            verdicts: Default::default(),
            search: None,
        }],
        cores: Some(2.0),
        given_points: false,
    }
}

/// The CPU over the hold is planned with when its line holds (0.1 core per room), and
/// only reported, with the reason, when it is weak (three scattered points).
#[test]
fn a_weak_cpu_fit_is_reported_not_planned_with() {
    let table = PriceTable::embedded().expect("table");
    let mut request = Request::new(None);
    request.instances = vec!["t4g.medium".to_owned()];
    let line = (1..=5)
        .map(|x| (f64::from(x), 0.1 * f64::from(x)))
        .collect();
    let planned = plan(&request, &measured(line), &table).expect("a plan");
    let cpu = planned.model.cpu.as_ref().expect("a cpu fit");
    assert!((cpu.slope - 0.1).abs() < 1e-9);
    assert!(
        planned
            .report
            .fits
            .iter()
            .any(|f| f.series == "cpu" && !f.weak)
    );
    let scattered = vec![(1.0, 0.5), (2.0, 0.1), (3.0, 0.9)];
    let planned = plan(&request, &measured(scattered), &table).expect("a plan");
    assert!(planned.model.cpu.is_none());
    assert!(planned.model.cpu_fit_weak);
    assert!(
        planned
            .report
            .fits
            .iter()
            .any(|f| f.series == "cpu" && f.weak)
    );
    assert!(
        planned
            .notes
            .iter()
            .any(|n| n.starts_with("the CPU fit over `rooms` is weak")),
        "{:?}",
        planned.notes
    );
}

/// The CPU ceiling is the instance's vCPUs at the target over the cores per unit:
/// t4g.medium's 2 vCPU × 80 % at 0.3 core a room is 5 rooms, and it binds.
#[test]
fn the_cpu_ceiling_is_the_vcpus_at_the_target_over_the_fit() {
    let table = PriceTable::embedded().expect("table");
    let mut request = Request::new(None);
    request.instances = vec!["t4g.medium".to_owned()];
    let line = (1..=5)
        .map(|x| (f64::from(x), 0.3 * f64::from(x)))
        .collect();
    let planned = plan(&request, &measured(line), &table).expect("a plan");
    let instance = &planned.plans[0];
    let cpu = instance
        .ceilings
        .get(&crate::plan::Resource::CpuMeasured)
        .expect("a measured CPU ceiling");
    assert_eq!(cpu.units, Some(5.0));
    assert!(cpu.plannable());
    assert!(
        cpu.note.contains("scaled to 2 vCPU, not measured there"),
        "{}",
        cpu.note
    );
    assert_eq!(
        instance.binding.resource,
        crate::plan::Resource::CpuMeasured
    );
    // A given ceiling replaces it.
    request.model.cpu_ceiling = Some(3.0);
    let line = (1..=5)
        .map(|x| (f64::from(x), 0.3 * f64::from(x)))
        .collect();
    let planned = plan(&request, &measured(line), &table).expect("a plan");
    assert!(
        !planned.plans[0]
            .ceilings
            .contains_key(&crate::plan::Resource::CpuMeasured)
    );
}

/// Issue 30: a server that uses one core (`[target] cores = 1`, one Python worker) gets
/// the CPU ceiling of one core on a 2-vCPU t4g.medium: 1 × 80 % at 0.3 core a room is 2
/// rooms, not the 5 of both vCPUs, and the note says why.
#[test]
fn a_server_of_one_core_gets_the_cpu_ceiling_of_one_core() {
    let table = PriceTable::embedded().expect("table");
    let mut request = Request::new(None);
    request.instances = vec!["t4g.medium".to_owned()];
    request.model.server_cores = Some(1.0);
    let line = (1..=5)
        .map(|x| (f64::from(x), 0.3 * f64::from(x)))
        .collect();
    let planned = plan(&request, &measured(line), &table).expect("a plan");
    let cpu = planned.plans[0]
        .ceilings
        .get(&crate::plan::Resource::CpuMeasured)
        .expect("a measured CPU ceiling");
    assert_eq!(cpu.units, Some(2.0), "{}", cpu.note);
    assert!(
        cpu.note
            .starts_with("(1 core of 2 vCPU × 80 % − 0.000 cores) / 0.3000 cores per unit"),
        "{}",
        cpu.note
    );
    assert!(
        cpu.note
            .ends_with("the server uses at most 1 core ([target] cores)"),
        "{}",
        cpu.note
    );
}

/// Issue 14: the CPU line is fitted over the steps that passed their SLOs: a saturated
/// server's CPU stops growing (1.05 cores at 1,600/s on 1 ms a request), and a line through
/// it would promise more than the server does. The steps left out are said.
#[test]
fn the_cpu_fit_leaves_out_steps_past_the_slo() {
    let table = PriceTable::embedded().expect("table");
    let request = Request::new(None);
    let mut saturated = measured(vec![
        (1.0, 0.1),
        (2.0, 0.2),
        (3.0, 0.3),
        (4.0, 0.4),
        (5.0, 0.42),
    ]);
    let mut failed = points::StepVerdict::passing();
    failed.judge(Some("api.latency.p95 < 200ms (measured 900 ms)".to_owned()));
    saturated.sweeps[0]
        .verdicts
        .insert(points::OrderedX(5.0), failed);
    let planned = plan(&request, &saturated, &table).expect("a plan");
    let cpu = planned.model.cpu.as_ref().expect("a cpu fit");
    assert!((cpu.slope - 0.1).abs() < 1e-9, "{cpu:?}");
    assert!(
        planned.notes.iter().any(|n| n
            == "the CPU fit over `rooms` leaves out 1 step where the SLOs failed: a saturated server's CPU stops growing"),
        "{:?}",
        planned.notes
    );
}

/// Results without the CPU over the hold say so, and name the way around it.
#[test]
fn results_without_cpu_say_no_cpu_ceiling_is_measured() {
    let table = PriceTable::embedded().expect("table");
    let mut request = Request::new(None);
    request.instances = vec!["t4g.medium".to_owned()];
    let mut without = measured(Vec::new());
    without.sweeps[0].series.retain(|s| s.name != "cpu");
    let planned = plan(&request, &without, &table).expect("a plan");
    assert!(planned.model.cpu.is_none());
    assert!(
        planned
            .notes
            .iter()
            .any(|n| n.starts_with("the results carry no CPU over the hold for `rooms`")),
        "{:?}",
        planned.notes
    );
}

/// Points given as a CSV whose one bytes column is not the default's name: memory is fitted
/// over it; with the default's name, or two bytes columns, nothing is guessed.
#[test]
fn the_lone_bytes_column_of_given_points_is_the_memory() {
    let series = |name: &str, unit| SeriesPoints {
        name: name.to_owned(),
        unit,
        points: vec![(1.0, 1e6)],
    };
    let given = |all: Vec<SeriesPoints>| Measured {
        sweeps: vec![MeasuredSweep::new("csv", "rooms", all, BTreeMap::new())],
        cores: None,
        given_points: true,
    };
    let one = given(vec![
        series("rss_mib", Unit::Bytes),
        series("p95_ms", Unit::Seconds),
    ]);
    assert_eq!(one.lone_memory_series("rss").as_deref(), Some("rss_mib"));
    let named = given(vec![series("rss", Unit::Bytes)]);
    assert_eq!(named.lone_memory_series("rss"), None);
    let two = given(vec![
        series("rss_mib", Unit::Bytes),
        series("heap_bytes", Unit::Bytes),
    ]);
    assert_eq!(two.lone_memory_series("rss"), None);
}
