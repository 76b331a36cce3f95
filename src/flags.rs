//! The values of flags that clap cannot parse alone: a budget, a share, a count, a
//! percentage, `NAME=VALUE`; each refused with what it must be.

use headroom_spec::Percent;

/// `SERVICE=INSTANCE` (`--place`).
pub(crate) fn service_instance(text: &str) -> std::result::Result<(String, String), String> {
    match text.split_once('=') {
        Some((service, instance)) if !service.is_empty() && !instance.is_empty() => {
            Ok((service.to_owned(), instance.to_owned()))
        }
        _ => Err(format!(
            "`{text}` is not SERVICE=INSTANCE (`db=r7g.medium`)"
        )),
    }
}

/// A number of 0 or more (`--ebs-gb`): NaN, infinities and negatives are refused.
pub(crate) fn non_negative(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err("it must be a finite number of 0 or more".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// A monthly budget (`--budget`): above 0 and at most a billion; NaN and infinities are
/// refused.
pub(crate) fn budget(text: &str) -> std::result::Result<f64, String> {
    let most = headroom_spec::MAX_BUDGET_PER_MONTH;
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= most => Ok(x),
        Ok(x) if x.is_finite() && x > most => Err(format!(
            "it must be at most {} a month: past that, a fleet's count is no plan",
            headroom_spec::numbers::count(most)
        )),
        Ok(_) => Err("it must be a finite number above 0".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// A whole number of 1 or more (`--units`, `--cap`, `--cpu-ceiling`).
pub(crate) fn at_least_one(text: &str) -> std::result::Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("it must be a whole number of 1 or more".to_owned()),
    }
}

/// A headroom share under 100 % (`--headroom`): 100 % or more leaves nothing to plan with.
pub(crate) fn headroom_share(text: &str) -> std::result::Result<Percent, String> {
    let share: Percent = text.parse().map_err(|e| format!("{e}"))?;
    if share.fraction() >= 1.0 {
        return Err(format!(
            "{text} leaves nothing to plan with: the headroom is the share of the ceiling kept free, under 100 % (\"25%\")"
        ));
    }
    Ok(share)
}

/// `3%` (or `3`) as the fraction 0.03; from 0 to 100 %.
pub(crate) fn percent(text: &str) -> std::result::Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(value) if (0.0..=100.0).contains(&value) => Ok(value / 100.0),
        _ => Err(format!(
            "`{text}` is not a percentage from 0 to 100: write it as `3%`"
        )),
    }
}

/// `NAME=VALUE`, split at the first `=`.
pub(crate) fn name_value(text: &str) -> std::result::Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!(
            "`{text}` is not NAME=VALUE: write it as `--set workers=2`"
        )),
    }
}
