//! What a price table must be to be read: ids that are names, prices and sizes that are
//! facts, and as-of dates that are dates.

use crate::{PriceTableError, RawTable, entries, import};

impl RawTable {
    /// An id is a name (letters, digits, `.`, `_`, `+`, `-`): it is shown in tables and
    /// plans, and matched against a spec's instances.
    pub(crate) fn check_names(&self, text: &str) -> Result<(), PriceTableError> {
        let ids = self
            .instances()
            .map(|i| i.id.as_str())
            .chain(self.aws_rds.iter().map(|d| d.id.as_str()))
            .chain(self.lines().map(|(_, l)| l.id.as_str()));
        for id in ids {
            if let Err(why) = import::name(id) {
                return Err(PriceTableError::Parse {
                    message: format!("an entry's `id` {why}: name it as the provider does"),
                    span: text
                        .find(&toml::Value::String(id.to_owned()).to_string())
                        .map(|at| at..at + id.len() + 2),
                });
            }
        }
        Ok(())
    }

    /// Prices and sizes are facts about money and machines: finite, and not negative; an
    /// instance has a vCPU.
    pub(crate) fn check_numbers(&self) -> Result<(), PriceTableError> {
        let numbers = self
            .instances()
            .flat_map(|i| {
                [
                    ("usd_per_hour", i.usd_per_hour),
                    ("eur_per_month", i.eur_per_month),
                    ("eur_per_month_ipv6_only", i.eur_per_month_ipv6_only),
                    (
                        "eur_per_month_ipv6_only_pre_2026_06_15",
                        i.eur_per_month_ipv6_only_pre_2026_06_15,
                    ),
                    ("memory_gib", i.memory_gib),
                    ("memory_gb", i.memory_gb),
                    ("baseline_cpu_pct_per_vcpu", i.baseline_cpu_pct_per_vcpu),
                ]
                .map(|(key, value)| (i.id.as_str(), key, value))
            })
            .chain(self.aws_rds.iter().flat_map(|d| {
                [
                    ("usd_per_hour", d.usd_per_hour),
                    ("memory_gib", d.memory_gib),
                ]
                .map(|(key, value)| (d.id.as_str(), key, value))
            }))
            .chain(self.lines().flat_map(|(_, l)| {
                [
                    ("usd_per_unit", l.usd_per_unit),
                    ("usd_per_month_730h", l.usd_per_month_730h),
                    ("usd_per_vcpu_hour", l.usd_per_vcpu_hour),
                    ("usd_per_hour", l.usd_per_hour),
                    ("eur_per_month", l.eur_per_month),
                    ("eur_per_gb_month", l.eur_per_gb_month),
                    ("eur_per_tb", l.eur_per_tb),
                    ("pct_of_instance_price", l.pct_of_instance_price),
                    ("free_gb_per_month", l.free_gb_per_month),
                ]
                .map(|(key, value)| (l.id.as_str(), key, value))
            }));
        for (id, key, value) in numbers {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                return Err(PriceTableError::Parse {
                    message: format!(
                        "`{key}` of `{id}` is {value}: a price or a size is a finite number of 0 or more"
                    ),
                    span: None,
                });
            }
        }
        if let Some(instance) = self
            .instances()
            .find(|i| i.memory_gib.is_none() && i.memory_gb.is_none())
        {
            return Err(PriceTableError::Parse {
                message: format!(
                    "`{}` has no memory: give `memory_gib` (or `memory_gb`, as the provider lists it), as its memory ceiling is planned from it",
                    instance.id
                ),
                span: None,
            });
        }
        if let Some(instance) = self.instances().find(|i| i.vcpu == 0) {
            return Err(PriceTableError::Parse {
                message: format!(
                    "`vcpu` of `{}` is 0: an instance has at least one",
                    instance.id
                ),
                span: None,
            });
        }
        Ok(())
    }

    /// An as-of date is a fact: a date, or absent (shown as undated and counted stale).
    pub(crate) fn check_dates(&self, text: &str) -> Result<(), PriceTableError> {
        let dates = self
            .instances()
            .flat_map(|i| {
                [Some(i.as_of.as_str()), i.stale_after.as_deref()].map(|d| (i.id.as_str(), d))
            })
            .chain(self.aws_rds.iter().flat_map(|d| {
                [d.as_of.as_deref(), d.stale_after.as_deref()].map(|date| (d.id.as_str(), date))
            }))
            .chain(self.lines().flat_map(|(_, l)| {
                [l.as_of.as_deref(), l.stale_after.as_deref()].map(|d| (l.id.as_str(), d))
            }));
        for (id, as_of) in dates {
            if let Some(as_of) = as_of
                && entries::day(as_of).is_none()
            {
                return Err(PriceTableError::Parse {
                    message: format!(
                        "the as-of date of `{id}` is \"{as_of}\", not a date: write it as YYYY-MM-DD, or leave `as_of` out when no date is known (it is then shown as undated and counted stale)"
                    ),
                    span: text
                        .find(&format!("\"{as_of}\""))
                        .map(|at| at..at + as_of.len() + 2),
                });
            }
        }
        Ok(())
    }
}
