//! `headroom plan`: ceilings per instance, the binding one, and dollars per unit-month.

use crate::slo_line::units;
use std::io::Write;
use std::path::PathBuf;

use annotate_snippets::Renderer;
use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::PriceTable;
use headroom_pricing::plan::{InstancePlan, Model, Resource};
use headroom_pricing::planner::{self, Measured, Planned, Request};
use headroom_pricing::points;
use headroom_spec::{Percent, Size};

use crate::exit;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The spec: its [capacity] and [plan] are the defaults the flags override.
    spec: Option<PathBuf>,
    /// A results file from `headroom run` [default: results/<bench>/results.json, with a spec].
    #[arg(long, conflicts_with = "points")]
    results: Option<PathBuf>,
    /// Points measured elsewhere: a CSV (units in the column names' suffixes), or k6 summary
    /// exports, k6 CSV outputs or Locust stats CSVs, one file per step (repeat the flag).
    #[arg(long, requires = "x", value_name = "FILE")]
    points: Vec<PathBuf>,
    /// What counts units: the CSV's column, or what the tools' steps count (`users`).
    #[arg(long)]
    x: Option<String>,
    /// The step of one k6 or Locust file whose name does not say it.
    #[arg(long, requires = "points")]
    step: Option<f64>,
    /// An instance type to price (repeatable); the spec's [plan] instances by default.
    #[arg(long = "instance", value_name = "NAME")]
    instances: Vec<String>,
    /// Price a stack apart: a service on an instance of its own, `db=r7g.medium` (repeatable;
    /// the spec's [plan] place by default).
    #[arg(long = "place", value_name = "SERVICE=INSTANCE", value_parser = crate::flags::service_instance)]
    place: Vec<(String, String)>,
    /// The series memory is provisioned against (`rss` by default).
    #[arg(long)]
    memory: Option<String>,
    /// Memory kept for the OS and the rest of the image (512MiB by default).
    #[arg(long)]
    reserve: Option<Size>,
    /// The server's own limit on units (1 or more).
    #[arg(long, value_parser = crate::flags::at_least_one)]
    cap: Option<u64>,
    /// A CPU ceiling in units, instead of the SLO sweep's (1 or more).
    #[arg(long, value_parser = crate::flags::at_least_one)]
    cpu_ceiling: Option<u64>,
    /// The share of the binding ceiling to leave free, less than all of it ("25%").
    #[arg(long, value_parser = crate::flags::headroom_share)]
    headroom: Option<Percent>,
    /// EBS gp3 storage per instance, in GB (0 or more).
    #[arg(long, value_parser = crate::flags::non_negative)]
    ebs_gb: Option<f64>,
    /// A managed database class shared by the fleet.
    #[arg(long)]
    rds: Option<String>,
    /// Public IPv4 addresses per instance.
    #[arg(long)]
    ipv4: Option<u32>,
    /// An SLO over a series of the points, in its column's unit: `--slo 'p95_ms < 200'`
    /// (repeatable). A point fails when any SLO fails there; the SLO ceiling follows.
    #[arg(long = "slo", value_name = "SERIES < VALUE")]
    slos: Vec<String>,
    /// The cheapest fleet that holds this many units, per instance type, ranked (1 or more).
    #[arg(long, value_parser = crate::flags::at_least_one)]
    units: Option<u64>,
    /// The most units this much a month holds, per instance type, ranked (above 0).
    #[arg(long, value_name = "USD", value_parser = crate::flags::budget)]
    budget: Option<f64>,
    /// What a unit is called (`room`), when no spec says.
    #[arg(long)]
    unit: Option<String>,
    /// Price only from this table (same format as the shipped one, or what `headroom prices
    /// import` wrote); given again, from these tables, a later one's entries over an
    /// earlier's. An instance they lack is refused and a line they lack is said to be left
    /// out of the all-in cost, unless `--fall-back-prices`.
    #[arg(long, value_name = "FILE")]
    prices: Vec<PathBuf>,
    /// With --prices: what those tables lack is priced from the spec's own (its `[plan]
    /// prices` over the shipped table), each instance naming the table its price came from.
    #[arg(long, requires = "prices")]
    fall_back_prices: bool,
    /// Print the plan as JSON (the contract in docs/planning.md, schemas/plan.schema.json).
    #[arg(long)]
    json: bool,
    /// Exit 2 when an instance cannot be priced: its binding ceiling was not measured (the SLOs
    /// failed already at the first step) or lies far past the data; or when a price it uses is
    /// out of date (older than the allowed age, or changed by its provider since), unless
    /// `--stale-ok`.
    #[arg(long)]
    check: bool,
    /// Prices older than this are out of date ("90d"; the spec's `[plan] max_price_age`, 180
    /// days by default).
    #[arg(long, value_name = "AGE", value_parser = crate::flags::positive_duration)]
    max_price_age: Option<headroom_spec::Duration>,
    /// With --check: out-of-date prices are said, not refused.
    #[arg(long, requires = "check")]
    stale_ok: bool,
    /// Carry an SLO ceiling measured at several core counts (`[plan] scale_cores`) past twice
    /// the largest of them: a guess past the data, marked wherever it is shown.
    #[arg(long)]
    extrapolate: bool,
}

/// The request the flags make: the spec's own (when given) with each flag over it, the
/// prices it may use, and the points to plan over. `Err(code)` when the spec did not compile
/// (its diagnostics are shown).
fn request(
    args: &PlanArgs,
    renderer: &Renderer,
) -> Result<std::result::Result<(Request, Measured, PriceTable), u8>> {
    let today = Some(crate::prices::today()?);
    let (mut request, table, spec_results) = match &args.spec {
        Some(spec) => {
            let Some(compiled) = crate::compile_for_use(spec, Some(renderer))? else {
                return Ok(Err(exit::USAGE));
            };
            let Some(matrix) = &compiled.compilation.matrix else {
                return Ok(Err(exit::USAGE));
            };
            let request = Request::of_spec(matrix, today);
            let default = crate::default_results(&matrix.bench.name);
            let bench = matrix.bench.name.clone();
            (
                request,
                compiled.prices,
                Some((spec, bench, compiled.source, default)),
            )
        }
        None => (
            Request::new(today),
            PriceTable::embedded().context("the shipped price table is broken")?,
            None,
        ),
    };
    let table = crate::plan_prices::table(&args.prices, args.fall_back_prices, table)?;
    let mut provenance = None;
    let mut measured = match (&args.results, args.points.first(), &args.x, &spec_results) {
        (Some(path), _, _, _) => {
            let results = crate::read_whole_results(path)?;
            provenance = Some(match &spec_results {
                Some((spec, bench, source, _)) => {
                    crate::provenance::check_results_of(spec, bench, source, &results, path)?
                }
                None => crate::provenance::of_results(&results, path),
            });
            Measured::from_results(&results)
        }
        (None, Some(_), Some(x), _) => {
            request.units_variable = Some(x.clone());
            let given = Measured::given(crate::given_points::read(&args.points, x, args.step)?);
            crate::given_points::memory_is_a_column(args.memory.as_deref(), &args.points, &given)?;
            if args.memory.is_none()
                && let Some(series) = given.lone_memory_series(&request.memory_series)
            {
                eprintln!(
                    "note: memory is fitted over `{series}`, the points' one column in bytes (--memory names another)"
                );
                request.memory_series = series;
            }
            given
        }
        // With a spec and neither --results nor --points, the spec's own results: the same
        // file `headroom run` wrote and the page is rendered from.
        (None, None, _, Some((spec, bench, source, default))) if default.exists() => {
            let results = crate::read_whole_results(default)?;
            let checked =
                crate::provenance::check_results_of(spec, bench, source, &results, default);
            provenance = Some(checked?);
            Measured::from_results(&results)
        }
        (None, None, _, Some((_, _, _, default))) => {
            crate::provenance::notes_missing(default);
            Measured::default()
        }
        _ => Measured::default(),
    };
    for slo in &args.slos {
        points::apply_slo(&mut measured.sweeps, slo)?;
    }
    overrides(args, &mut request);
    if args.check
        && let Some(why) =
            provenance.and_then(headroom_results::provenance::Provenance::refused_by_check)
    {
        eprintln!(
            "error: plan --check refuses these results: {why}; run the spec in full (`headroom run SPEC`), or plan without --check"
        );
        return Ok(Err(exit::SLO_FAILED));
    }
    Ok(Ok((request, measured, table)))
}

/// Each flag given replaces what the spec says.
fn overrides(args: &PlanArgs, request: &mut Request) {
    let model = &mut request.model;
    if let Some(unit) = &args.unit {
        model.unit = unit.clone();
    }
    if let Some(reserve) = args.reserve {
        model.reserve_bytes = reserve.bytes() as f64;
    }
    if let Some(cap) = args.cap {
        model.cap = Some(cap as f64);
    }
    if let Some(cpu) = args.cpu_ceiling {
        model.cpu_ceiling = Some(cpu as f64);
    }
    if let Some(headroom) = args.headroom {
        model.headroom = headroom.fraction();
    }
    if let Some(gb) = args.ebs_gb {
        model.lines.ebs_gb = Some(gb);
    }
    if let Some(rds) = &args.rds {
        model.lines.rds = Some(rds.clone());
    }
    if let Some(ipv4) = args.ipv4 {
        model.lines.public_ipv4 = ipv4;
    }
    if let Some(age) = args.max_price_age {
        model.max_price_age_days = (age.as_secs_f64() / 86_400.0).round() as i64;
    }
    model.extrapolate = args.extrapolate;
    if let Some(memory) = &args.memory {
        request.memory_series = memory.clone();
    }
    if !args.instances.is_empty() {
        request.instances = args.instances.clone();
    }
    if !args.place.is_empty() {
        request.place = args.place.clone();
    }
    if args.budget.is_some() {
        request.budget = args.budget;
    }
    request.units = args.units;
}

pub fn run(args: PlanArgs, renderer: &Renderer) -> Result<u8> {
    let (request, measured, table) = match request(&args, renderer)? {
        Ok(asked) => asked,
        Err(code) => return Ok(code),
    };
    let planned = planner::plan(&request, &measured, &table).map_err(|error| match &error {
        planner::PlanError::UnknownInstance(name) if !args.prices.is_empty() => anyhow::anyhow!(
            "`{name}` is not in {}: it is priced only from the tables --prices names. Import its provider's prices into one (`headroom prices import`), or add --fall-back-prices to price what they lack from the spec's tables (the shipped one)",
            args.prices
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => anyhow::anyhow!(error),
    })?;
    let plans = &planned.plans;
    let unpriced = plans.iter().filter(|p| p.not_priced.is_some()).count();
    let placed = planned.placement.iter().flat_map(|p| &p.services);
    let stale = crate::plan_prices::stale_prices(plans.iter().chain(placed.map(|s| &s.plan)));
    let refused_stale = args.check && !args.stale_ok && !stale.is_empty();
    let code = if args.check && unpriced > 0 || refused_stale {
        exit::SLO_FAILED
    } else {
        exit::OK
    };
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &planned.report)?;
        writeln!(stdout)?;
    } else {
        write_text(&mut stdout, &planned, &request)?;
    }
    if args.check && unpriced > 0 {
        eprintln!(
            "error: {unpriced} of {} instances cannot be priced (--check)",
            plans.len()
        );
    }
    if args.check {
        crate::plan_prices::say_stale(
            &stale,
            args.stale_ok,
            request.model.max_price_age_days,
            &planned.report.price_tables,
        );
    }
    Ok(code)
}

/// The plan as people read it: the SLO ceiling, the fits, the table, a line per instance on
/// what binds, the cost lines, notes and warnings, the fleets asked for, and the footing.
fn write_text(out: &mut impl Write, planned: &Planned, request: &Request) -> Result<()> {
    let Planned {
        model,
        plans,
        notes,
        placement,
        report,
    } = planned;
    write_answer(out, plans, model)?;
    if let Some(slo) = &report.slo_ceiling {
        writeln!(out, "{}", crate::slo_line::slo_sentence(slo))?;
    }
    crate::fit::write_fits(out, report, &model.unit)?;
    if let Some(scaled) = &report.scaled_ceilings {
        crate::scaled::write_scaled(out, scaled, &model.unit)?;
    }
    if !plans.is_empty() {
        writeln!(out, "{}", plan_table(plans, model))?;
    }
    for plan in plans {
        write_binding(out, plan, model)?;
        writeln!(out, "{}: {}", plan.name, plan.measured)?;
        if report.price_tables.len() > 1 {
            writeln!(out, "{}: priced from {}", plan.name, plan.price_table)?;
        }
    }
    for plan in plans {
        for line in &plan.all_in.lines {
            let scope = if line.shared {
                "shared by the fleet"
            } else {
                "per instance"
            };
            writeln!(
                out,
                "{}: {} {:.2}/month ({scope}; as of {})",
                plan.name, line.name, line.per_month, line.as_of
            )?;
        }
    }
    if let Some(placement) = placement {
        crate::placed::write(out, placement, model, |placed| plan_table(placed, model))?;
        for placed in &placement.services {
            write_binding(out, &placed.plan, model)?;
        }
    }
    for note in notes {
        writeln!(out, "note: {note}")?;
    }
    let mut warned = std::collections::BTreeSet::new();
    let placed = placement
        .iter()
        .flat_map(|p| p.services.iter().map(|s| &s.plan));
    for plan in plans.iter().chain(placed) {
        for warning in &plan.warnings {
            if warned.insert(warning.clone()) {
                writeln!(out, "warning: {warning}")?;
            }
        }
    }
    crate::plan_fleets::write_fleets(out, plans, request, &model.unit)?;
    let as_of: std::collections::BTreeSet<&str> = plans.iter().map(|p| p.as_of.as_str()).collect();
    if !plans.is_empty() {
        writeln!(
            out,
            "A month is 730 hours; instance prices as of {}. Costs are per planned {}: the binding ceiling less {:.0} % headroom.",
            as_of.into_iter().collect::<Vec<_>>().join(", "),
            model.unit,
            model.headroom * 100.0
        )?;
        writeln!(
            out,
            "{}",
            crate::plan_prices::priced_from(&report.price_tables)
        )?;
    }
    Ok(())
}

/// What binds on one instance and what trails it, or why it is not priced; an upper-bound
/// cost said as one; the cost per person.
/// The answer first, a line per priced instance: the units it holds, what binds them, and
/// what a unit costs a month (all in beside it); how each was found follows.
fn write_answer(out: &mut impl Write, plans: &[InstancePlan], model: &Model) -> Result<()> {
    let unit = &model.unit;
    for plan in plans {
        let (Some(planned), Some(cost), None) =
            (plan.planned_units, plan.per_unit_month, &plan.not_priced)
        else {
            continue;
        };
        let at_most = if plan.cost_is_upper_bound {
            "at most "
        } else {
            ""
        };
        let all_in = plan
            .all_in
            .per_unit_month
            .filter(|all_in| (all_in - cost).abs() > f64::EPSILON)
            .map(|all_in| format!(" ({at_most}{} all in)", money(plan.currency, all_in)))
            .unwrap_or_default();
        writeln!(
            out,
            "{}: {} {} planned, {} binding at {}; {at_most}{} per {unit}-month{all_in}",
            plan.name,
            units(planned),
            headroom_pricing::numbers::plural(unit),
            plan.binding.resource.name(),
            plan.binding.reads,
            money(plan.currency, cost),
        )?;
    }
    Ok(())
}

fn write_binding(out: &mut impl Write, plan: &InstancePlan, model: &Model) -> Result<()> {
    if let Some(why) = &plan.not_priced {
        writeln!(out, "{}: not priced: {why}", plan.name)?;
    } else if let (Some(runner_up), Some(binding)) = (&plan.runner_up, plan.binding.units)
        && binding > 0.0
    {
        // How far it trails, only when both are numbers to plan with.
        let ceiling = plan.ceilings.get(&runner_up.resource);
        let plannable = ceiling.is_some_and(|c| c.plannable());
        // A runner-up that is a lower bound (every step passed) trails by at least this much.
        let at_least = if ceiling.is_some_and(|c| c.lower_bound) {
            "at least "
        } else {
            ""
        };
        let trails = runner_up
            .units
            .filter(|_| plannable)
            .map(|u| format!(" ({at_least}+{:.0} %)", (u / binding - 1.0) * 100.0))
            .unwrap_or_default();
        writeln!(
            out,
            "{}: {} binds at {}; {} trails at {}{trails}",
            plan.name,
            plan.binding.resource,
            plan.binding.reads,
            runner_up.resource,
            runner_up.reads,
        )?;
    }
    // A ceiling carried to more cores is a range: its own note says where its top lies.
    let carried = plan
        .ceilings
        .get(&plan.binding.resource)
        .is_some_and(|c| c.high.is_some());
    if plan.cost_is_upper_bound && carried {
        writeln!(
            out,
            "{}: the {} ceiling is the lower end of a range carried to its cores, so each cost per {} is at most what is shown; measure it at those cores to narrow it",
            plan.name,
            plan.binding.resource.name(),
            model.unit,
        )?;
    } else if plan.cost_is_upper_bound {
        writeln!(
            out,
            "{}: the {} ceiling is a lower bound, so each cost per {} is at most what is shown; sweep past {} to find the real ceiling",
            plan.name,
            plan.binding.resource.name(),
            model.unit,
            plan.binding.units.map_or_else(|| "-".to_owned(), units)
        )?;
    }
    if model.people_per_unit > 1.0
        && let Some(per_person) = plan.per_person_month
    {
        writeln!(
            out,
            "{}: {}{} per person-month ({} people per {})",
            plan.name,
            if plan.cost_is_upper_bound {
                "at most "
            } else {
                ""
            },
            money(plan.currency, per_person),
            model.people_per_unit,
            model.unit
        )?;
    }
    Ok(())
}

/// An amount as pages write it: to the cent, two significant digits under one ($0.038), €
/// for EUR.
fn money(currency: &str, value: f64) -> String {
    headroom_templates::format::money(value, Some(currency.to_owned()))
}

/// The ceilings as columns, in the order they are reasoned about; only those some plan has.
const CEILING_COLUMNS: [(Resource, &str); 6] = [
    (Resource::Memory, "by memory"),
    (Resource::Slo, "SLO"),
    (Resource::CpuMeasured, "CPU"),
    (Resource::CpuSustained, "sustained"),
    (Resource::Cpu, "CPU (given)"),
    (Resource::Cap, "cap"),
];

fn plan_table(plans: &[InstancePlan], model: &Model) -> String {
    let mut table = Table::new();
    let unit = &model.unit;
    let columns: Vec<(Resource, &str)> = CEILING_COLUMNS
        .into_iter()
        .filter(|(key, _)| plans.iter().any(|p| p.ceilings.contains_key(key)))
        .collect();
    let mut header = vec![
        "instance".to_owned(),
        "vCPU / RAM".to_owned(),
        "per month".to_owned(),
    ];
    header.extend(columns.iter().map(|(key, title)| {
        if *key == Resource::Memory {
            format!("{} {title}", headroom_pricing::numbers::plural(unit))
        } else {
            (*title).to_owned()
        }
    }));
    header.extend([
        "binding".to_owned(),
        format!("per {unit}-month"),
        "all in / month".to_owned(),
        format!("all in per {unit}"),
    ]);
    table.load_style(UTF8_FULL_CONDENSED).set_header(header);
    for plan in plans {
        let per_unit = |value: Option<f64>| match (value, &plan.not_priced) {
            (_, Some(_)) => "not priced".to_owned(),
            (Some(v), None) if plan.cost_is_upper_bound => {
                format!("at most {}", money(plan.currency, v))
            }
            (Some(v), None) => money(plan.currency, v),
            (None, None) => "-".to_owned(),
        };
        let mut row = vec![
            Cell::new(&plan.name),
            Cell::new(format!("{} / {} GiB", plan.vcpu, plan.memory_gib)),
            Cell::new(money(plan.currency, plan.per_month)).set_alignment(CellAlignment::Right),
        ];
        row.extend(columns.iter().map(|(key, _)| {
            Cell::new(
                plan.ceilings
                    .get(key)
                    .map_or_else(|| "-".to_owned(), |c| c.reads()),
            )
            .set_alignment(CellAlignment::Right)
        }));
        row.extend([
            Cell::new(format!(
                "{} ({})",
                plan.binding.reads, plan.binding.resource
            )),
            Cell::new(per_unit(plan.per_unit_month)).set_alignment(CellAlignment::Right),
            Cell::new(money(plan.currency, plan.all_in.per_month))
                .set_alignment(CellAlignment::Right),
            Cell::new(per_unit(plan.all_in.per_unit_month)).set_alignment(CellAlignment::Right),
        ]);
        table.add_row(row);
    }
    table.to_string()
}
