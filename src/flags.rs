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

/// `HOST:PORT` where segments meet (`--barrier`): a host, and a port from 1 to 65535; an
/// IPv6 address in brackets (`[::1]:7070`). Found here, not after `--barrier-timeout`.
pub(crate) fn host_port(text: &str) -> std::result::Result<String, String> {
    let example = "`segment-0.bench:7070`, `127.0.0.1:7070` or `[::1]:7070`";
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!(
            "`{text}` has no port: give HOST:PORT, such as {example}"
        ));
    };
    if host.is_empty() || host == "[]" {
        return Err(format!(
            "`{text}` has no host: give HOST:PORT, such as {example}"
        ));
    }
    if host.contains(':') && !(host.starts_with('[') && host.ends_with(']')) {
        return Err(format!(
            "`{text}`: an IPv6 address goes in brackets before its port, such as {example}"
        ));
    }
    match port.parse::<u16>() {
        Ok(port) if port > 0 => Ok(text.to_owned()),
        _ => Err(format!(
            "`{port}` is not a port (1 to 65535): give HOST:PORT, such as {example}"
        )),
    }
}

/// A duration above zero (`--barrier-timeout`): a wait of nothing fails every meeting.
pub(crate) fn positive_duration(
    text: &str,
) -> std::result::Result<headroom_spec::Duration, String> {
    let duration: headroom_spec::Duration = text.parse().map_err(|e| format!("{e}"))?;
    if duration.as_micros() == 0 {
        return Err(format!(
            "`{text}` waits for nothing: every meeting would fail at once; give a time such as \"60s\""
        ));
    }
    Ok(duration)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: a barrier without a port, or a wait of nothing, is refused when parsed, not
    /// after `--barrier-timeout` has passed.
    #[test]
    fn a_barrier_is_host_port_and_its_wait_is_above_zero() {
        for good in ["127.0.0.1:7070", "segment-0.bench:7070", "[::1]:7070"] {
            assert_eq!(host_port(good).as_deref(), Ok(good));
        }
        for (bad, says) in [
            ("127.0.0.1", "has no port"),
            (":7070", "has no host"),
            ("127.0.0.1:0", "is not a port"),
            ("127.0.0.1:70000", "is not a port"),
            ("::1:7070", "goes in brackets"),
        ] {
            let error = host_port(bad).expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
        assert_eq!(
            positive_duration("90s").map(|d| d.as_micros()),
            Ok(90_000_000)
        );
        let error = positive_duration("0s").expect_err("refused");
        assert!(error.contains("waits for nothing"), "{error}");
    }
}
