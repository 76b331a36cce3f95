//! What an instance costs a month, the lines beside it (EBS, IPv4, RDS, egress), and the age
//! of each price.

use super::{CostLine, Model, dated};
use crate::entries::HOURS_PER_MONTH;
use crate::{Instance, PriceTable};

/// The instance's currency and its price a month (730 hours of its hourly price; a Hetzner
/// server's without its primary IPv4 where the table has that price).
pub(super) fn instance_month(
    instance: &Instance,
    warnings: &mut Vec<String>,
) -> (&'static str, f64) {
    match (instance.usd_per_hour, instance.eur_month()) {
        (Some(hour), _) => ("USD", hour * HOURS_PER_MONTH),
        (None, Some((eur, _))) => ("EUR", eur),
        (None, None) => {
            warnings.push(format!("{} has no sourced price", instance.id));
            ("USD", 0.0)
        }
    }
}

/// The monthly lines of a Hetzner server: its primary IPv4 addresses (`[plan] public_ipv4`),
/// where its price is without them. A price that includes one (an older table's
/// `eur_per_month` alone) takes no line, and more than one address is said, not priced.
pub(super) fn eur_lines(
    instance: &Instance,
    model: &Model,
    table: &PriceTable,
    lines: &mut Vec<CostLine>,
    warnings: &mut Vec<String>,
) {
    let addresses = model.lines.public_ipv4;
    match instance.eur_month() {
        Some((_, true)) if addresses != 1 => warnings.push(format!(
            "{}'s price includes one primary IPv4 and the table has no price without it: {addresses} addresses asked, priced as one",
            instance.id
        )),
        Some((_, false)) if addresses > 0 => {
            match table
                .line("hetzner-primary-ipv4")
                .and_then(|l| l.eur_per_month.map(|p| (p, dated(&l.as_of))))
            {
                Some((price, as_of)) => lines.push(CostLine {
                    name: format!("primary IPv4 × {addresses}"),
                    per_month: f64::from(addresses) * price,
                    shared: false,
                    as_of,
                }),
                None => warnings.push(
                    "the price table has no `hetzner-primary-ipv4` line: the servers' addresses are not in the all-in cost".to_owned(),
                ),
            }
        }
        _ => {}
    }
}

/// The lines of an Azure virtual machine: none are in the table (an import reads the VMs'
/// prices alone), so its public IPv4 addresses are said to be left out of the all-in cost.
/// The spec's AWS lines (EBS, RDS, egress) are refused for Azure by `compile`.
pub(super) fn azure_lines(instance: &Instance, model: &Model, warnings: &mut Vec<String>) {
    let addresses = model.lines.public_ipv4;
    if addresses > 0 {
        warnings.push(format!(
            "{}: the price table has no Azure public IP price: its {addresses} {} not in the all-in cost",
            instance.id,
            if addresses == 1 { "address is" } else { "addresses are" }
        ));
    }
}

/// The monthly lines of the model priced in USD: EBS gp3, public IPv4, RDS, egress.
pub(super) fn usd_lines(
    model: &Model,
    table: &PriceTable,
    lines: &mut Vec<CostLine>,
    warnings: &mut Vec<String>,
) {
    let priced = |id: &str| {
        table
            .line(id)
            .and_then(|l| l.usd_per_unit.map(|p| (p, dated(&l.as_of))))
    };
    // A line the model asks for and the table lacks is said, never left out in silence.
    let mut lacking = |id: &str, what: &str| {
        warnings.push(format!(
            "the price table has no `{id}` line: {what} not in the all-in cost"
        ));
    };
    if let Some(gb) = model.lines.ebs_gb {
        match priced("ebs-gp3-storage") {
            Some((price, as_of)) => lines.push(CostLine {
                name: format!("EBS gp3, {gb} GB"),
                per_month: gb * price,
                shared: false,
                as_of,
            }),
            None => lacking("ebs-gp3-storage", "the EBS volume is"),
        }
    }
    if model.lines.public_ipv4 > 0 {
        match priced("public-ipv4") {
            Some((price, as_of)) => {
                let n = f64::from(model.lines.public_ipv4);
                lines.push(CostLine {
                    name: format!("public IPv4 × {n}"),
                    per_month: n * price * HOURS_PER_MONTH,
                    shared: false,
                    as_of,
                });
            }
            None => lacking("public-ipv4", "the public IPv4 addresses are"),
        }
    }
    if let Some(rds) = &model.lines.rds {
        match table
            .database(rds)
            .and_then(|d| d.usd_per_hour.map(|h| (h, dated(&d.as_of))))
        {
            Some((hour, as_of)) => lines.push(CostLine {
                name: format!("RDS {rds}"),
                per_month: hour * HOURS_PER_MONTH,
                shared: true,
                as_of,
            }),
            None => warnings.push(format!(
                "RDS {rds} has no sourced price: it is not in the all-in cost"
            )),
        }
    }
    if let Some(gb) = model.lines.egress_gb {
        match table
            .line("data-transfer-out-internet-first-10tb")
            .and_then(|line| Some((line, line.usd_per_unit?)))
        {
            Some((line, price)) => {
                // No free allowance in the table: every GB is billed.
                let billed = line.free_gb_per_month.map_or(gb, |free| gb - free).max(0.0);
                lines.push(CostLine {
                    name: format!("egress, {gb} GB ({billed} GB billed)"),
                    per_month: billed * price,
                    shared: true,
                    as_of: dated(&line.as_of),
                });
            }
            None => warnings.push(
                "the price table has no `data-transfer-out-internet-first-10tb` line: egress is not in the all-in cost".to_owned(),
            ),
        }
    }
}

/// A price older than the model allows (an undated one counts as stale), or changed by its
/// provider since: a warning and a stale price; nothing without today's date.
pub(super) fn stale_price(
    as_of: &str,
    stale_after: Option<&str>,
    name: &str,
    model: &Model,
    warnings: &mut Vec<String>,
    stale: &mut Vec<super::StalePrice>,
) {
    let Some(today) = model.today else {
        return;
    };
    let why = crate::entries::staleness(as_of, stale_after, today, model.max_price_age_days);
    if why.is_empty() {
        return;
    }
    for reason in &why {
        warnings.push(format!("the price of {name}: {reason}"));
    }
    stale.push(super::StalePrice {
        name: name.to_owned(),
        as_of: as_of.to_owned(),
        why,
    });
}
