//! Names that point elsewhere: SLO figures, capacity series and phases, priced instances.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use crate::slo;
use crate::slo::SloErrorKind;
use crate::suggest::did_you_mean;
use std::collections::BTreeSet;

impl<'a> Checker<'a> {
    pub(super) fn slos(&mut self) {
        let figures = slo::catalogue(self.spec);
        for (name, expression) in &self.spec.slo {
            let pointer = format!("/slo/{}", escape(name));
            match slo::parse(name, expression, &figures) {
                Ok(rule) => self.slo.push(rule),
                Err(error) => {
                    let code = match error.kind {
                        SloErrorKind::Syntax => Code::BadSlo,
                        SloErrorKind::UnknownFigure => Code::UnknownFigure,
                        SloErrorKind::Unit => Code::SloUnit,
                    };
                    let span = self.inner_span(&pointer, error.range.clone());
                    let label = match error.kind {
                        SloErrorKind::Syntax => "not `figure < value`",
                        SloErrorKind::UnknownFigure => "no scenario produces this",
                        SloErrorKind::Unit => "wrong unit for this figure",
                    };
                    self.push(
                        Diagnostic::new(code, error.message)
                            .at(&pointer, span)
                            .label(label)
                            .hint(error.hint),
                    );
                }
            }
        }
    }

    /// `[compare] fail_on`: each rule read (the schema's pattern has refused what is not one).
    pub(super) fn gates(&mut self) {
        let Some(compare) = &self.spec.compare else {
            return;
        };
        for (i, rule) in compare.fail_on.iter().enumerate() {
            match headroom_spec::compare::GateRule::parse(rule) {
                Ok(gate) => self.gates.push(gate),
                Err(error) => {
                    let pointer = format!("/compare/fail_on/{i}");
                    let span = self.value_span(&pointer);
                    let label = match &error {
                        headroom_spec::compare::NotAGate::Syntax(_) => {
                            "expected a figure and a signed percentage"
                        }
                        headroom_spec::compare::NotAGate::Renamed { .. } => "a figure's old name",
                    };
                    self.push(
                        Diagnostic::new(Code::BadGate, error.to_string())
                            .at(&pointer, span)
                            .label(label),
                    );
                }
            }
        }
    }

    pub(super) fn capacity(&mut self) {
        self.capacity_units();
        self.capacity_memory();
        self.capacity_phases_vary_units();
        self.capacity_shares();
        self.capacity_phases_exist();
    }

    /// `units` names a declared variable.
    fn capacity_units(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        if let Some(units) = &capacity.units
            && !spec.vars.contains_key(units)
        {
            let hint =
                did_you_mean(units, spec.vars.keys().map(String::as_str)).unwrap_or_else(|| {
                    format!(
                        "name the variable that counts {}s, e.g. `units = \"rooms\"`",
                        spec.bench.unit
                    )
                });
            self.push(
                Diagnostic::new(
                    Code::UnknownVariable,
                    format!("`units` names `{units}`, which [vars] does not declare"),
                )
                .at("/capacity/units", self.value_span("/capacity/units"))
                .label("not a variable")
                .hint(hint),
            );
        }
    }

    /// `memory` names a series something measures.
    fn capacity_memory(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        let mut series: Vec<&str> = vec!["rss"];
        series.extend(spec.measure.series.iter().map(|s| s.name.as_str()));
        for phase in &spec.phases {
            series.extend(
                phase
                    .measure
                    .iter()
                    .flat_map(|m| m.series.iter().map(|s| s.name.as_str())),
            );
        }
        if !series.contains(&capacity.memory.as_str()) {
            self.push(
                Diagnostic::new(
                    Code::UnknownReference,
                    format!(
                        "`memory` names series `{}`, which nothing measures",
                        capacity.memory
                    ),
                )
                .at("/capacity/memory", self.value_span("/capacity/memory"))
                .label("no such series")
                .hint(
                    did_you_mean(&capacity.memory, series.iter().copied()).unwrap_or_else(|| {
                        format!("use `rss` or a series of [measure]: {}", series.join(", "))
                    }),
                ),
            );
        }
    }

    /// The memory and ceiling phases vary the units variable.
    fn capacity_phases_vary_units(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        if let Some(units) = capacity
            .units
            .as_deref()
            .filter(|u| spec.vars.contains_key(*u))
        {
            let unit = &spec.bench.unit;
            let roles = [
                (
                    "memory_phase",
                    &capacity.memory_phase,
                    format!("a memory fit per {unit}"),
                ),
                (
                    "ceiling_phase",
                    &capacity.ceiling_phase,
                    format!("a ceiling in {unit}s"),
                ),
            ];
            for (key, name, gives) in roles {
                let Some(phase) = name
                    .as_ref()
                    .and_then(|n| spec.phases.iter().find(|p| &p.name == n))
                else {
                    continue;
                };
                if !phase.vary.contains_key(units) {
                    let pointer = format!("/capacity/{key}");
                    self.push(
                        Diagnostic::new(
                            Code::PhaseMissesUnits,
                            format!(
                                "phase `{}` does not vary `{units}`, so it cannot give {gives}",
                                phase.name
                            ),
                        )
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("this phase keeps `{units}` fixed"))
                        .hint(format!(
                            "vary `{units}` in phase `{}`, or name a phase that does",
                            phase.name
                        )),
                    );
                }
            }
        }
    }

    /// A headroom under 100 %, and units to price per when [plan] prices.
    fn capacity_shares(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        if capacity.headroom.fraction() >= 1.0 {
            self.push(
                Diagnostic::new(
                    Code::OutOfRange,
                    format!(
                        "`headroom = \"{}\"` leaves nothing to plan with",
                        capacity.headroom
                    ),
                )
                .at("/capacity/headroom", self.value_span("/capacity/headroom"))
                .label("the share of the ceiling kept free must be under 100 %")
                .hint("write the share to keep free, such as \"25%\""),
            );
        }
        let target = capacity.cpu_target.fraction();
        if target <= 0.0 || target > 1.0 {
            self.push(
                Diagnostic::new(
                    Code::OutOfRange,
                    format!(
                        "`cpu_target = \"{}\"` is not a share of the vCPUs to use",
                        capacity.cpu_target
                    ),
                )
                .at(
                    "/capacity/cpu_target",
                    self.value_span("/capacity/cpu_target"),
                )
                .label("above 0 % and at most 100 %")
                .hint("write the share of the vCPUs the server may use, such as \"80%\""),
            );
        }
        if spec.plan.is_some() && capacity.units.is_none() {
            self.push(
                Diagnostic::new(Code::PlanWithoutUnits, "[plan] prices instances, but [capacity] names no `units` variable")
                    .at("/plan", self.key_span("/plan"))
                    .label("costs cannot be given per unit")
                    .hint(format!(
                        "add `units = \"…\"` to [capacity], naming the variable that counts {}s, so costs come per {}-month",
                        spec.bench.unit, spec.bench.unit
                    )),
            );
        }
    }

    /// `memory_phase` and `ceiling_phase` name phases that exist.
    fn capacity_phases_exist(&mut self) {
        let spec = self.spec;
        let capacity = &spec.capacity;
        let phases: Vec<&str> = spec.phases.iter().map(|p| p.name.as_str()).collect();
        for (key, value) in [
            ("memory_phase", &capacity.memory_phase),
            ("ceiling_phase", &capacity.ceiling_phase),
        ] {
            if let Some(name) = value
                && !phases.contains(&name.as_str())
            {
                let pointer = format!("/capacity/{key}");
                self.push(
                    Diagnostic::new(
                        Code::UnknownReference,
                        format!("`{key}` names phase `{name}`, which does not exist"),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label("no phase has this name")
                    .hint(
                        did_you_mean(name, phases.iter().copied())
                            .unwrap_or_else(|| format!("the phases are: {}", phases.join(", "))),
                    ),
                );
            }
        }
    }

    pub(super) fn plan(&mut self) {
        let Some(plan) = &self.spec.plan else { return };
        self.plan_emulate(plan);
        self.plan_scale_cores(plan);
        self.plan_instances(plan);
        self.plan_place(plan);
        self.plan_lines(plan);
        self.people_per_unit();
        self.plan_database(plan);
    }

    /// `emulate = true` runs the ceiling phase per instance: there must be one, and a target
    /// headroom starts (an external server cannot be put in a cgroup).
    fn plan_emulate(&mut self, plan: &headroom_spec::Plan) {
        if !plan.emulate {
            return;
        }
        let pointer = "/plan/emulate";
        if self.spec.capacity.ceiling_phase.is_none() {
            self.push(
                Diagnostic::new(
                    Code::MissingSetting,
                    "`emulate = true` runs the ceiling phase once per instance, and [capacity] names no `ceiling_phase`",
                )
                .at(pointer, self.value_span(pointer))
                .label("which phase to run in each instance's shape?")
                .hint("name the phase whose SLOs find the ceiling: `ceiling_phase = \"load\"` in [capacity]"),
            );
        }
        if self.spec.target.command.is_none() && self.spec.target.services.is_empty() {
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    "`emulate = true` needs a target headroom starts: an external server (`url`) cannot be held to an instance's shape",
                )
                .at(pointer, self.value_span(pointer))
                .label("the target is external")
                .hint("start the server with `command` in [target], or remove `emulate`"),
            );
        }
    }

    /// `scale_cores` runs the ceiling phase per core count: there must be one, a target
    /// headroom starts (only it can be pinned), and whole counts from one, each once.
    fn plan_scale_cores(&mut self, plan: &headroom_spec::Plan) {
        if plan.scale_cores.is_empty() {
            return;
        }
        let pointer = "/plan/scale_cores";
        if self.spec.capacity.ceiling_phase.is_none() {
            self.push(
                Diagnostic::new(
                    Code::MissingSetting,
                    "`scale_cores` runs the ceiling phase once per core count, and [capacity] names no `ceiling_phase`",
                )
                .at(pointer, self.value_span(pointer))
                .label("which phase to run at each core count?")
                .hint("name the phase whose SLOs find the ceiling: `ceiling_phase = \"load\"` in [capacity]"),
            );
        }
        if self.spec.target.command.is_none() {
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    "`scale_cores` pins the server headroom starts to whole cores: an external server (`url`) or a stack cannot be pinned yet",
                )
                .at(pointer, self.value_span(pointer))
                .label("no server of headroom's own to pin")
                .hint("start the server with `command` in [target], or remove `scale_cores`"),
            );
        }
        for (i, &count) in plan.scale_cores.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            if count == 0 {
                self.push(
                    Diagnostic::new(Code::OutOfRange, "a server pinned to 0 cores cannot run")
                        .at(&at, self.value_span(&at))
                        .label("no cores")
                        .hint("list whole core counts from 1, under this machine's cores"),
                );
            } else if plan.scale_cores[..i].contains(&count) {
                self.push(
                    Diagnostic::new(
                        Code::OutOfRange,
                        format!("{count} cores is listed twice: the ceiling phase would run twice at one size"),
                    )
                    .at(&at, self.value_span(&at))
                    .label("listed before")
                    .hint("list each core count once"),
                );
            }
        }
    }

    /// `place`: a service of the stack each, on an instance of the plan's provider.
    fn plan_place(&mut self, plan: &headroom_spec::Plan) {
        let provider = plan.provider.as_str();
        let services = &self.spec.target.services;
        for (service, instance) in &plan.place {
            let pointer = format!("/plan/place/{}", crate::document::escape(service));
            if !services.contains_key(service) {
                let known: Vec<&str> = services.keys().map(String::as_str).collect();
                let hint = if known.is_empty() {
                    "`place` prices a stack's services apart: describe them under `[target.services.NAME]`, or remove `place`".to_owned()
                } else {
                    did_you_mean(service, known.iter().copied())
                        .unwrap_or_else(|| format!("the services are: {}", known.join(", ")))
                };
                self.push(
                    Diagnostic::new(Code::Stack, format!("`place` puts `{service}` on an instance, and the stack has no such service"))
                        .at(&pointer, self.key_span(&pointer))
                        .label("names no service")
                        .hint(hint),
                );
            }
            if self
                .prices
                .instance(instance)
                .is_none_or(|found| found.provider != provider)
            {
                let ids: Vec<&str> = self.prices.instance_ids(provider).collect();
                self.push(
                    Diagnostic::new(Code::UnknownInstance, format!("`{instance}` is not a {provider} instance of the price table"))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("no instance of provider {provider} has this name"))
                        .hint(did_you_mean(instance, ids.iter().copied()).unwrap_or_else(|| {
                            "the known types are in prices/data/prices.toml; add others with `prices = \"my-prices.toml\"` in [plan]".to_owned()
                        })),
                );
            }
        }
    }

    /// Each instance listed once, priced for the plan's provider and region.
    fn plan_instances(&mut self, plan: &headroom_spec::Plan) {
        let provider = plan.provider.as_str();
        let ids: Vec<&str> = self.prices.instance_ids(provider).collect();
        let mut seen = BTreeSet::new();
        for (i, instance) in plan.instances.iter().enumerate() {
            let pointer = format!("/plan/instances/{i}");
            if !seen.insert(instance.as_str()) {
                self.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!("instance `{instance}` is listed twice"),
                    )
                    .at(&pointer, self.value_span(&pointer))
                    .label("already listed")
                    .hint("list each instance type once"),
                );
                continue;
            }
            match self.prices.instance(instance) {
                Some(found) if found.provider == provider => {}
                Some(found) => self.push(
                    Diagnostic::new(Code::UnknownInstance, format!("`{instance}` is a {} instance, but the plan prices {provider}", found.provider))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("not in the {provider} part of the price table"))
                        .hint(format!("set `provider = \"{}\"` in [plan], or pick an instance of provider {provider}", found.provider)),
                ),
                None => self.push(
                    Diagnostic::new(Code::UnknownInstance, format!("`{instance}` is not in the price table"))
                        .at(&pointer, self.value_span(&pointer))
                        .label(format!("no instance of provider {provider} has this name"))
                        .hint(did_you_mean(instance, ids.iter().copied()).unwrap_or_else(|| {
                            "the known types are in prices/data/prices.toml; add others with `prices = \"my-prices.toml\"` in [plan]".to_owned()
                        })),
                ),
            }
        }
        if let Some(region) = &plan.region {
            let other: Vec<(&str, &str)> = plan
                .instances
                .iter()
                .filter_map(|id| self.prices.instance(id))
                .filter_map(|i| Some((i.id.as_str(), i.region.as_deref()?)))
                .filter(|(_, priced)| priced != region)
                .collect();
            if let Some((id, priced)) = other.first() {
                self.push(
                    Diagnostic::new(Code::RegionNotPriced, format!("the price table has no prices for region `{region}`: `{id}` is priced for {priced}"))
                        .at("/plan/region", self.value_span("/plan/region"))
                        .label("no price of this region in the table")
                        .hint(format!("remove `region` to price {priced}, or give prices for `{region}` with `prices = \"my-prices.toml\"` in [plan]")),
                );
            }
        }
    }

    /// Lines of another provider than the plan's (EBS, egress, a budget in dollars).
    fn plan_lines(&mut self, plan: &headroom_spec::Plan) {
        let provider = plan.provider.as_str();
        if plan.provider != headroom_spec::Provider::Aws {
            for (key, what) in [("ebs_gb", "EBS storage"), ("egress_gb", "egress")] {
                let pointer = format!("/plan/{key}");
                if self.document.place(&pointer).is_some() {
                    self.push(
                        Diagnostic::new(Code::LineNotPriced, format!("`{key}` prices AWS {what}, and the plan prices {provider}: it is left out of the all-in cost"))
                            .at(&pointer, self.key_span(&pointer))
                            .label(format!("{provider} has no such line in the price table"))
                            .hint(match plan.provider {
                                headroom_spec::Provider::Azure => format!("remove `{key}`; the Azure table prices the virtual machines alone (`headroom prices import azure`), so their disks and egress are not in the all-in cost"),
                                _ => format!("remove `{key}`; {provider}'s instance prices include their disk and traffic allowance"),
                            }),
                    );
                }
            }
            if plan.budget_usd_per_month.is_some()
                && plan.provider == headroom_spec::Provider::Hetzner
            {
                self.push(
                    Diagnostic::new(Code::ConflictingSettings, format!("`budget_usd_per_month` is in US dollars, and {provider} prices in euros"))
                        .at("/plan/budget_usd_per_month", self.key_span("/plan/budget_usd_per_month"))
                        .label("the amounts cannot be compared without an exchange rate")
                        .hint("remove it, and give the budget in euros with `headroom plan --budget`"),
                );
            }
        }
    }

    /// People per unit is one number for the bench: not a variable a phase varies.
    fn people_per_unit(&mut self) {
        if let headroom_spec::Param::Var(name) = &self.spec.bench.people_per_unit
            && let Some(phase) = self
                .spec
                .phases
                .iter()
                .find(|p| p.vary.contains_key(name.as_str()))
        {
            self.push(
                Diagnostic::new(Code::ConflictingSettings, format!("`people_per_unit` follows `{name}`, which phase `{}` varies", phase.name))
                    .at("/bench/people_per_unit", self.value_span("/bench/people_per_unit"))
                    .label("a unit holds one number of people for the whole bench")
                    .hint(format!("write the number, or a variable no phase varies (the value of `{name}` in [vars] is used)")),
            );
        }
    }

    /// `rds`: an AWS database class with a sourced price.
    fn plan_database(&mut self, plan: &headroom_spec::Plan) {
        let provider = plan.provider.as_str();
        if let Some(rds) = &plan.rds {
            if plan.provider != headroom_spec::Provider::Aws {
                self.push(
                    Diagnostic::new(
                        Code::ConflictingSettings,
                        format!("`rds` is an AWS database, but the plan prices {provider}"),
                    )
                    .at("/plan/rds", self.key_span("/plan/rds"))
                    .label("not available from this provider")
                    .hint("remove `rds`, or set `provider = \"aws\"`"),
                );
            } else {
                match self.prices.database(rds) {
                    None => self.push(
                        Diagnostic::new(Code::UnknownDatabase, format!("database class `{rds}` is not in the price table"))
                            .at("/plan/rds", self.value_span("/plan/rds"))
                            .label("unknown database class")
                            .hint(did_you_mean(rds, self.prices.database_ids()).unwrap_or_else(|| {
                                format!("known classes: {}", self.prices.database_ids().collect::<Vec<_>>().join(", "))
                            })),
                    ),
                    Some(database) if database.usd_per_hour.is_none() => self.push(
                        Diagnostic::new(Code::UnsourcedPrice, format!("`{rds}` has no sourced price, so the plan cannot cost it"))
                            .at("/plan/rds", self.value_span("/plan/rds"))
                            .label("no list price in the table")
                            .hint("pick a class with a price (see prices/data/prices.toml), or give one with `prices = \"my-prices.toml\"` in [plan]"),
                    ),
                    Some(_) => {}
                }
            }
        }
    }
}
