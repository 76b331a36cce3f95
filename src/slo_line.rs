//! `plan`'s line on the SLO ceiling: where a listed sweep's SLOs broke, or the bracket a
//! search found.

/// Where the SLOs broke, in one line: `SLO ceiling, from `rooms`: the last step that passed…`.
pub(crate) fn slo_sentence(slo: &headroom_pricing::plan::SloCeilingJson) -> String {
    if let Some(search) = &slo.search {
        return searched_sentence(slo, search);
    }
    let at = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), units);
    let said = match (slo.units, slo.first_failing) {
        (None, first) if !slo.breached => format!(
            "nothing was measured at the first step, {}: where the ceiling lies is unknown",
            at(first)
        ),
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
    format!("SLO ceiling, from `{}`: {said}{broke}", slo.phase)
}

/// A searched ceiling in one line: `SLO ceiling, searched in `load`: 1,180: passes at 1,180,
/// fails at 1,240 (±4.8 %, 5 % asked), 11 runs in 6.0 min; at 1,240: …`.
fn searched_sentence(
    slo: &headroom_pricing::plan::SloCeilingJson,
    search: &headroom_pricing::plan::SearchedCeiling,
) -> String {
    let spent = search.spent();
    let warm = search.warm();
    let said = match (slo.units, slo.first_failing) {
        (Some(pass), Some(fail)) => {
            let within = search.within();
            let broke = if slo.broke.is_empty() {
                String::new()
            } else {
                format!("; at {}: {}", units(fail), slo.broke.join("; "))
            };
            format!(
                "{}: passes at {}, fails at {}{within}, {spent}{warm}{broke}",
                units(pass),
                units(pass),
                units(fail)
            )
        }
        _ => format!("{}, {spent}{warm}", search.said),
    };
    format!("SLO ceiling, searched in `{}`: {said}", slo.phase)
}

/// A count as `plan` prints it (`1,180`), `-` where there is none.
pub(crate) fn units(value: f64) -> String {
    if value.is_finite() {
        headroom_pricing::numbers::count(value)
    } else {
        "-".to_owned()
    }
}
