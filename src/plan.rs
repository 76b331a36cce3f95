//! `headroom plan`: ceilings per instance, the binding one, and dollars per unit-month.

use std::io::Write;
use std::path::PathBuf;

use annotate_snippets::Renderer;
use anyhow::{Context, Result, bail};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use headroom_pricing::PriceTable;
use headroom_pricing::fit::fit;
use headroom_pricing::plan::{
    FitJson, FleetJson, InstanceJson, InstancePlan, Lines, Model, Report, Selection,
    SloCeilingJson, ceiling_sweep, for_budget, for_units, memory_sweep, plan_instance, slo_ceiling,
};
use headroom_pricing::points::{self, Sweep, Unit};
use headroom_spec::{Percent, Size};

use crate::exit;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The spec: its [capacity] and [plan] are the defaults the flags override.
    spec: Option<PathBuf>,
    /// A results file from `headroom run` [default: results/<bench>/results.json, with a spec].
    #[arg(long, conflicts_with = "points")]
    results: Option<PathBuf>,
    /// Points measured elsewhere (a CSV, units in the column names' suffixes).
    #[arg(long, requires = "x")]
    points: Option<PathBuf>,
    /// The CSV column that counts units.
    #[arg(long)]
    x: Option<String>,
    /// An instance type to price (repeatable); the spec's [plan] instances by default.
    #[arg(long = "instance", value_name = "NAME")]
    instances: Vec<String>,
    /// The series memory is provisioned against (`rss` by default).
    #[arg(long)]
    memory: Option<String>,
    /// Memory kept for the OS and the rest of the image (512MiB by default).
    #[arg(long)]
    reserve: Option<Size>,
    /// The server's own limit on units (1 or more).
    #[arg(long, value_parser = at_least_one)]
    cap: Option<u64>,
    /// A CPU ceiling in units, instead of the SLO sweep's (1 or more).
    #[arg(long, value_parser = at_least_one)]
    cpu_ceiling: Option<u64>,
    /// The share of the binding ceiling to leave free, less than all of it ("25%").
    #[arg(long, value_parser = headroom_share)]
    headroom: Option<Percent>,
    /// EBS gp3 storage per instance, in GB (0 or more).
    #[arg(long, value_parser = non_negative)]
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
    #[arg(long, value_parser = at_least_one)]
    units: Option<u64>,
    /// The most units this much a month holds, per instance type, ranked (above 0).
    #[arg(long, value_name = "USD", value_parser = positive)]
    budget: Option<f64>,
    /// What a unit is called (`room`), when no spec says.
    #[arg(long)]
    unit: Option<String>,
    /// Print the plan as JSON (the contract in docs/planning.md, schemas/plan.schema.json).
    #[arg(long)]
    json: bool,
    /// Exit 2 when an instance cannot be priced: its binding ceiling was not measured (the SLOs
    /// failed already at the first step) or lies far past the data.
    #[arg(long)]
    check: bool,
    /// The caller checked the results belong to the spec and said so (the page does).
    #[arg(skip)]
    results_checked: bool,
}

impl PlanArgs {
    /// The spec's own plan over a results file, no flag overriding it: what a page shows.
    pub(crate) fn for_page(spec: &std::path::Path, results: &std::path::Path) -> PlanArgs {
        PlanArgs {
            spec: Some(spec.to_path_buf()),
            results: Some(results.to_path_buf()),
            points: None,
            x: None,
            instances: Vec::new(),
            memory: None,
            reserve: None,
            cap: None,
            cpu_ceiling: None,
            headroom: None,
            ebs_gb: None,
            rds: None,
            ipv4: None,
            slos: Vec::new(),
            units: None,
            budget: None,
            unit: None,
            json: true,
            check: false,
            results_checked: true,
        }
    }
}

/// What `plan` works out: the model, a plan per instance, notes, and the JSON report.
pub(crate) struct Planned {
    pub model: Model,
    pub plans: Vec<InstancePlan>,
    pub notes: Vec<String>,
    pub report: Report,
    /// `--budget`, or the spec's `budget_usd_per_month`.
    pub budget: Option<f64>,
}

/// Works out the plan; `Err(code)` when the spec did not compile (its diagnostics are shown).
pub(crate) fn plan(
    args: &PlanArgs,
    renderer: Option<&Renderer>,
) -> Result<std::result::Result<Planned, u8>> {
    let mut table = PriceTable::embedded().context("the shipped price table is broken")?;
    let mut model = Model {
        unit: "unit".to_owned(),
        people_per_unit: 1.0,
        ..Model::default()
    };
    let mut instances = Vec::new();
    let mut compiled_spec = None;
    let mut default_results = None;
    let mut budget = args.budget;
    let mut memory_series = "rss".to_owned();
    let mut provider = "aws".to_owned();
    let (mut memory_phase, mut ceiling_phase, mut units_var) = (None, None, None);
    model.reserve_bytes = 512.0 * 1_048_576.0;
    model.lines.public_ipv4 = 1;
    model.today = Some(crate::prices::today()?.0);
    model.max_price_age_days = 180;
    if let Some(spec) = &args.spec {
        let Some(compiled) = crate::compile_for_use(spec, renderer)? else {
            return Ok(Err(exit::USAGE));
        };
        let Some(plan) = &compiled.compilation.plan else {
            return Ok(Err(exit::USAGE));
        };
        let capacity = &plan.capacity;
        default_results = Some(crate::default_results(&plan.bench.name));
        compiled_spec = Some((
            spec.clone(),
            plan.bench.name.clone(),
            compiled.source.clone(),
        ));
        model.unit = plan.bench.unit.clone();
        model.people_per_unit = plan
            .bench
            .people_per_unit
            .value()
            .map_or(1.0, |p| *p as f64);
        model.reserve_bytes = capacity.reserve.bytes() as f64;
        model.cap = capacity.cap.map(|c| c as f64);
        model.headroom = capacity.headroom.fraction();
        model.cpu_scales_with_vcpus = capacity.cpu_scales_with_vcpus;
        memory_series = capacity.memory.clone();
        memory_phase = capacity.memory_phase.clone();
        ceiling_phase = capacity.ceiling_phase.clone();
        units_var = capacity.units.clone();
        if let Some(spec_plan) = &plan.plan {
            instances = spec_plan.instances.clone();
            budget = budget.or(spec_plan.budget_usd_per_month);
            provider = spec_plan.provider.as_str().to_owned();
            model.max_price_age_days =
                (spec_plan.max_price_age.as_secs_f64() / 86_400.0).round() as i64;
            model.lines = Lines {
                ebs_gb: spec_plan.ebs_gb,
                rds: spec_plan.rds.clone(),
                public_ipv4: spec_plan.public_ipv4,
                egress_gb: spec_plan.egress_gb,
            };
            if let Some(file) = &spec_plan.prices {
                let path = spec
                    .parent()
                    .unwrap_or(std::path::Path::new("."))
                    .join(file);
                let text = crate::read_bounded(
                    &path,
                    crate::MAX_PRICE_TABLE_BYTES,
                    "the price table",
                    "",
                )?;
                table.extend(
                    PriceTable::from_toml(&text)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
                );
            }
        }
    }
    // With a spec and neither --results nor --points, the spec's own results: the same file
    // `headroom run` wrote and the page is rendered from.
    let results_path = match (&args.results, &args.points) {
        (Some(path), _) => Some(path.clone()),
        (None, None) => match default_results {
            Some(path) if path.exists() => Some(path),
            Some(path) => {
                notes_missing(&path);
                None
            }
            None => None,
        },
        (None, Some(_)) => None,
    };
    let sweeps: Vec<Sweep> = match (&results_path, &args.points, &args.x) {
        (Some(path), _, _) => {
            let results = crate::read_results(path)?;
            if let Some((spec, bench, source)) = &compiled_spec
                && !args.results_checked
            {
                crate::check_results_of(spec, bench, source, &results, path)?;
            }
            // Unrecorded cores leave the SLO ceiling unscaled (the note says so), never 1.
            if let Some(cores) = results.environment.logical_cores {
                model.measured_cores = cores as f64;
            }
            points::from_results(&results)
        }
        (None, Some(path), Some(x)) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read points `{}`", path.display()))?;
            units_var = Some(x.clone());
            vec![
                points::from_csv(&text, x)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            ]
        }
        _ => Vec::new(),
    };
    // Flags override the spec.
    if let Some(unit) = &args.unit {
        model.unit = unit.clone();
    }
    if let Some(memory) = &args.memory {
        memory_series = memory.clone();
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
    if !args.instances.is_empty() {
        instances = args.instances.clone();
    }
    if instances.is_empty() && (args.units.is_some() || budget.is_some()) {
        // Every priced instance of the provider is a candidate.
        instances = table.instance_ids(&provider).map(str::to_owned).collect();
    }

    let mut sweeps = sweeps;
    for slo in &args.slos {
        apply_slo(&mut sweeps, slo)?;
    }
    let selection = Selection {
        units: units_var.as_deref(),
        memory_series: &memory_series,
        memory_phase: memory_phase.as_deref(),
        ceiling_phase: ceiling_phase.as_deref(),
    };
    let mut notes = Vec::new();
    let mut fits = Vec::new();
    if !sweeps.is_empty() {
        match memory_sweep(&sweeps, selection) {
            Ok(mut chosen) => {
                if args.points.is_some() {
                    chosen.because = "the points given with --points";
                }
                let sweep = chosen.sweep;
                if let Some(series) = sweep.series.iter().find(|p| p.name == memory_series) {
                    match fit(&series.points) {
                        Ok(f) => {
                            fits.push(fit_json(
                                sweep,
                                &memory_series,
                                series.unit,
                                chosen.because,
                                &f,
                            ));
                            model.memory = Some(f);
                        }
                        Err(why) => notes.push(format!(
                            "no memory fit of `{memory_series}` in `{}`: {why}",
                            sweep.name
                        )),
                    }
                }
                if let Some(cpu) = sweep.series.iter().find(|p| p.name == "cpu")
                    && let Ok(f) = fit(&cpu.points)
                {
                    fits.push(fit_json(sweep, "cpu", cpu.unit, chosen.because, &f));
                    model.cpu = Some(f);
                }
            }
            Err(why) => notes.push(why),
        }
        if model.cpu_ceiling.is_none() {
            match ceiling_sweep(&sweeps, selection) {
                Ok(chosen) => {
                    let because = if args.points.is_some() {
                        "the points given with --points"
                    } else {
                        chosen.because
                    };
                    model.slo = slo_ceiling(chosen.sweep, because);
                }
                Err(why) => notes.push(why),
            }
        }
    }
    // Measurements alone (no instance named) still say where the SLOs broke and what a unit
    // weighs; with nothing measured either, there is nothing to say.
    if instances.is_empty() && sweeps.is_empty() {
        bail!(
            "name the instances to price: `--instance t4g.medium` (or [plan] instances in the spec)"
        );
    }
    if instances.is_empty() {
        notes.push(
            "no instance was named, so nothing is priced: add `--instance t4g.medium` (or [plan] instances in the spec)".to_owned(),
        );
    }
    let mut plans = Vec::new();
    for name in &instances {
        let instance = table.instance(name).with_context(|| {
            format!("`{name}` is not in the price table; `headroom prices` lists the instances")
        })?;
        plans.push(plan_instance(instance, &model, &table));
    }
    let mut warnings: Vec<String> = notes.clone();
    for plan in &plans {
        for warning in &plan.warnings {
            if !warnings.contains(warning) {
                warnings.push(warning.clone());
            }
        }
    }
    let report = Report {
        unit: model.unit.clone(),
        fits,
        slo_ceiling: model.slo.as_ref().map(SloCeilingJson::from),
        instances: plans.iter().map(InstanceJson::from).collect(),
        for_units: args.units.map(|n| {
            for_units(&plans, n as f64)
                .iter()
                .map(FleetJson::from)
                .collect()
        }),
        for_budget: budget.map(|b| for_budget(&plans, b).iter().map(FleetJson::from).collect()),
        hours_per_month: headroom_pricing::entries::HOURS_PER_MONTH,
        warnings,
    };
    Ok(Ok(Planned {
        model,
        plans,
        notes,
        report,
        budget,
    }))
}

/// A number of 0 or more (`--ebs-gb`): NaN, infinities and negatives are refused.
fn non_negative(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err("it must be a finite number of 0 or more".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// A number above 0 (`--budget`): NaN, infinities, 0 and negatives are refused.
fn positive(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err("it must be a finite number above 0".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// A whole number of 1 or more (`--units`, `--cap`, `--cpu-ceiling`).
fn at_least_one(text: &str) -> std::result::Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("it must be a whole number of 1 or more".to_owned()),
    }
}

/// A headroom share under 100 % (`--headroom`): 100 % or more leaves nothing to plan with.
fn headroom_share(text: &str) -> std::result::Result<Percent, String> {
    let share: Percent = text.parse().map_err(|e| format!("{e}"))?;
    if share.fraction() >= 1.0 {
        return Err(format!(
            "{text} leaves nothing to plan with: the headroom is the share of the ceiling kept free, under 100 % (\"25%\")"
        ));
    }
    Ok(share)
}

/// Says on stderr that the spec's default results file is not there yet.
fn notes_missing(path: &std::path::Path) {
    eprintln!(
        "note: no results at {}: `headroom run` writes them (or give --results / --points); planning from flags alone",
        path.display()
    );
}

/// A fit as the plan JSON gives it.
fn fit_json(
    sweep: &Sweep,
    series: &str,
    unit: Unit,
    because: &str,
    f: &headroom_pricing::fit::Fit,
) -> FitJson {
    FitJson {
        series: series.to_owned(),
        unit: match (series, unit) {
            ("cpu", _) => "cores",
            (_, Unit::Bytes) => "bytes",
            (_, Unit::Seconds) => "seconds",
            (_, Unit::Fraction) => "fraction",
            (_, Unit::Plain) => "count",
        }
        .to_owned(),
        phase: sweep.name.clone(),
        chosen_because: because.to_owned(),
        x: sweep.x.clone(),
        intercept: f.intercept,
        slope: f.slope,
        r2: f.r2,
        n: f.n,
        slope_ci95: f.slope_ci95,
        max_x: f.max_x,
        weak: f.is_weak(),
        weaknesses: f.weaknesses(),
    }
}

pub fn run(args: PlanArgs, renderer: &Renderer) -> Result<u8> {
    let Planned {
        model,
        plans,
        notes,
        report,
        budget,
    } = match plan(&args, Some(renderer))? {
        Ok(planned) => planned,
        Err(code) => return Ok(code),
    };
    let unpriced = plans.iter().filter(|p| p.not_priced.is_some()).count();
    let code = if args.check && unpriced > 0 {
        exit::SLO_FAILED
    } else {
        exit::OK
    };
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
        return Ok(code);
    }
    if let Some(slo) = &report.slo_ceiling {
        let at = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), units);
        let said = match (slo.units, slo.first_failing) {
            (None, first) => format!(
                "the SLOs failed already at the first step, {}: the ceiling is below it, not measured",
                at(first)
            ),
            (Some(last), None) => {
                format!(
                    "every step passed, up to {}: the ceiling is at least that",
                    units(last)
                )
            }
            (Some(last), Some(first)) => format!(
                "the last step that passed every SLO is {}; at {}:",
                units(last),
                units(first)
            ),
        };
        let broke = if slo.broke.is_empty() {
            String::new()
        } else {
            format!(" {}", slo.broke.join("; "))
        };
        writeln!(stdout, "SLO ceiling, from `{}`: {said}{broke}", slo.phase)?;
    }
    for fit in report.fits.iter().filter(|f| f.series != "cpu") {
        writeln!(
            stdout,
            "memory fit, from `{}` ({}): {} points{}",
            fit.phase,
            fit.chosen_because,
            fit.n,
            if fit.weak { ", weak" } else { "" }
        )?;
    }
    if !plans.is_empty() {
        writeln!(stdout, "{}", plan_table(&plans, &model))?;
    }
    for plan in &plans {
        if let Some(why) = &plan.not_priced {
            writeln!(stdout, "{}: not priced: {why}", plan.name)?;
        } else if let (Some(runner_up), Some(binding)) = (&plan.runner_up, plan.binding.units)
            && binding > 0.0
        {
            // How far it trails, only when both are numbers to plan with.
            let plannable = plan
                .ceilings
                .get(&runner_up.resource)
                .is_some_and(|c| c.plannable());
            let trails = runner_up
                .units
                .filter(|_| plannable)
                .map(|u| format!(" (+{:.0} %)", (u / binding - 1.0) * 100.0))
                .unwrap_or_default();
            writeln!(
                stdout,
                "{}: {} binds at {}; {} trails at {}{trails}",
                plan.name,
                plan.binding.resource,
                plan.binding.reads,
                runner_up.resource,
                runner_up.reads,
            )?;
        }
        if plan.cost_is_upper_bound {
            writeln!(
                stdout,
                "{}: the {} ceiling is a lower bound, so each cost per {} is at most what is shown; sweep past {} to find the real ceiling",
                plan.name,
                headroom_pricing::plan::resource_name(&plan.binding.resource),
                model.unit,
                plan.binding.units.map_or_else(|| "-".to_owned(), units)
            )?;
        }
        if model.people_per_unit > 1.0
            && let Some(per_person) = plan.per_person_month
        {
            writeln!(
                stdout,
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
    }
    for plan in &plans {
        for line in &plan.all_in.lines {
            let scope = if line.shared {
                "shared by the fleet"
            } else {
                "per instance"
            };
            writeln!(
                stdout,
                "{}: {} {:.2}/month ({scope}; as of {})",
                plan.name, line.name, line.per_month, line.as_of
            )?;
        }
    }
    for note in &notes {
        writeln!(stdout, "note: {note}")?;
    }
    let mut warned = std::collections::BTreeSet::new();
    for plan in &plans {
        for warning in &plan.warnings {
            if warned.insert(warning.clone()) {
                writeln!(stdout, "warning: {warning}")?;
            }
        }
    }
    if let Some(units) = args.units {
        writeln!(
            stdout,
            "\nTo hold {units} {}, the cheapest first:",
            headroom_pricing::numbers::plural(&model.unit)
        )?;
        writeln!(stdout, "{}", fleet_table(&for_units(&plans, units as f64)))?;
    }
    if let Some(budget) = budget {
        writeln!(
            stdout,
            "\nWith {budget:.2} a month, the most {} first:",
            headroom_pricing::numbers::plural(&model.unit)
        )?;
        writeln!(stdout, "{}", fleet_table(&for_budget(&plans, budget)))?;
    }
    let as_of: std::collections::BTreeSet<&str> = plans.iter().map(|p| p.as_of.as_str()).collect();
    if !plans.is_empty() {
        writeln!(
            stdout,
            "A month is 730 hours; instance prices as of {}. Costs are per planned {}: the binding ceiling less {:.0} % headroom.",
            as_of.into_iter().collect::<Vec<_>>().join(", "),
            model.unit,
            model.headroom * 100.0
        )?;
    }
    if args.check && unpriced > 0 {
        eprintln!(
            "error: {unpriced} of {} instances cannot be priced (--check)",
            plans.len()
        );
    }
    Ok(code)
}

/// An amount as pages write it: to the cent, two significant digits under one ($0.038), €
/// for EUR.
fn money(currency: &str, value: f64) -> String {
    headroom_templates::format::money(value, Some(currency.to_owned()))
}

fn units(value: f64) -> String {
    if value.is_finite() {
        headroom_pricing::numbers::count(value)
    } else {
        "-".to_owned()
    }
}

/// The ceilings as columns, in the order they are reasoned about; only those some plan has.
const CEILING_COLUMNS: [(&str, &str); 4] = [
    ("memory", "by memory"),
    ("slo", "SLO"),
    ("cpu", "CPU (given)"),
    ("cap", "cap"),
];

fn plan_table(plans: &[InstancePlan], model: &Model) -> String {
    let mut table = Table::new();
    let unit = &model.unit;
    let columns: Vec<(&str, &str)> = CEILING_COLUMNS
        .into_iter()
        .filter(|(key, _)| plans.iter().any(|p| p.ceilings.contains_key(*key)))
        .collect();
    let mut header = vec![
        "instance".to_owned(),
        "vCPU / RAM".to_owned(),
        "per month".to_owned(),
    ];
    header.extend(columns.iter().map(|(key, title)| {
        if *key == "memory" {
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
                    .get(*key)
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

fn fleet_table(fleets: &[headroom_pricing::plan::Fleet]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "rank",
        "instance",
        "count",
        "holds",
        "per month",
        "why not first",
    ]);
    for (rank, fleet) in fleets.iter().enumerate() {
        table.add_row(vec![
            Cell::new(rank + 1).set_alignment(CellAlignment::Right),
            Cell::new(&fleet.instance),
            Cell::new(fleet.count).set_alignment(CellAlignment::Right),
            Cell::new(units(fleet.units)).set_alignment(CellAlignment::Right),
            Cell::new(if fleet.per_month.is_finite() {
                money(fleet.currency, fleet.per_month)
            } else {
                "-".to_owned()
            })
            .set_alignment(CellAlignment::Right),
            Cell::new(fleet.note.clone().unwrap_or_default()),
        ]);
    }
    table.to_string()
}

/// Applies `--slo 'SERIES < VALUE'` to the points: a point where the series breaks the
/// threshold fails. The value is in the series' column unit (`p95_ms < 200` is 200 ms).
fn apply_slo(sweeps: &mut [Sweep], slo: &str) -> Result<()> {
    const OPERATORS: [&str; 5] = ["<=", ">=", "==", "<", ">"];
    let (at, op) = OPERATORS
        .iter()
        .filter_map(|op| slo.find(op).map(|at| (at, *op)))
        .min_by_key(|(at, op)| (*at, std::cmp::Reverse(op.len())))
        .with_context(|| format!("`--slo {slo}` has no comparison; write it as `p95_ms < 200`"))?;
    let series = slo[..at].trim();
    let threshold: f64 = slo[at + op.len()..]
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .with_context(|| format!("`--slo {slo}`: the value after `{op}` is not a finite number"))?;
    let scale = headroom_pricing::points::unit_scale(series);
    let threshold = threshold * scale;
    let mut found = false;
    for sweep in sweeps.iter_mut() {
        let Some(points) = sweep
            .series
            .iter()
            .find(|s| s.name == series)
            .map(|s| s.points.clone())
        else {
            continue;
        };
        found = true;
        for (x, value) in points {
            let holds = match op {
                "<" => value < threshold,
                "<=" => value <= threshold,
                ">" => value > threshold,
                ">=" => value >= threshold,
                _ => (value - threshold).abs() <= f64::EPSILON * threshold.abs().max(1.0),
            };
            let verdict = sweep
                .verdicts
                .entry(headroom_pricing::points::OrderedX(x))
                .or_insert_with(headroom_pricing::points::Verdict::passing);
            verdict.judge((!holds).then(|| format!("`{slo}` failed")));
        }
    }
    if !found {
        bail!("`--slo {slo}`: no sweep has a series `{series}`");
    }
    Ok(())
}
