//! An axis over numbers, linear or logarithmic, with its tick marks chosen here: plots draw in
//! the scale's own coordinate (the value, or its base-10 logarithm), so one chart type serves
//! both, and a line is a line on either.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};

use crate::format;

/// A numeric axis from `low` to `high`: logarithmic when the values span a decade or more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale {
    low: f64,
    high: f64,
    /// Base-10 logarithmic.
    pub log: bool,
}

impl Scale {
    /// An axis that shows `low..=high` with a margin: logarithmic when `high` is ten times
    /// `low` or more (and `low` above 0), else linear, from 0 when `low` is near it.
    pub fn over(low: f64, high: f64) -> Scale {
        let (low, high) = if low <= high {
            (low, high)
        } else {
            (high, low)
        };
        if low > 0.0 && high / low >= 10.0 {
            let margin = ((high / low).log10() * 0.06).max(0.05);
            return Scale {
                low: low / 10f64.powf(margin),
                high: high * 10f64.powf(margin),
                log: true,
            };
        }
        let low = if low >= 0.0 && low < 0.5 * high {
            0.0
        } else {
            low
        };
        let margin = if high > low {
            (high - low) * 0.08
        } else {
            (high.abs() * 0.05).max(1.0)
        };
        Scale {
            low: if low == 0.0 { 0.0 } else { low - margin },
            high: high + margin,
            log: false,
        }
    }

    /// Where a value lies in the chart's coordinate (on a log scale, a value under the axis
    /// at its foot).
    pub fn at(&self, value: f64) -> f64 {
        if self.log {
            value.max(self.low).log10()
        } else {
            value
        }
    }

    /// The value at a chart coordinate: `at`'s inverse.
    pub fn value_of(&self, coordinate: f64) -> f64 {
        if self.log {
            10f64.powf(coordinate)
        } else {
            coordinate
        }
    }

    /// The chart's coordinate range.
    pub fn range(&self) -> std::ops::Range<f64> {
        self.at(self.low)..self.at(self.high)
    }

    /// The lowest and highest value shown.
    pub fn bounds(&self) -> (f64, f64) {
        (self.low, self.high)
    }

    /// Tick marks at round values (1, 2 and 5 of each decade on a log axis, a step of 1, 2 or 5
    /// times a power of ten on a linear one), as chart coordinates and labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            let mut ticks = self.log_ticks(&[1.0, 2.0, 5.0]);
            if ticks.len() > 9 {
                ticks = self.log_ticks(&[1.0]);
            }
            return ticks;
        }
        let step = round_step((self.high - self.low) / 5.0);
        let first = (self.low / step).ceil() as i64;
        let last = (self.high / step).floor() as i64;
        (first..=last)
            .map(|i| {
                let value = i as f64 * step;
                (value, label(value, step))
            })
            .collect()
    }

    fn log_ticks(&self, mantissas: &[f64]) -> Vec<(f64, String)> {
        let first = self.low.log10().floor() as i32;
        let last = self.high.log10().ceil() as i32;
        let mut ticks = Vec::new();
        for exponent in first..=last {
            for mantissa in mantissas {
                let value = mantissa * 10f64.powi(exponent);
                if value >= self.low && value <= self.high {
                    let step = 10f64.powi(exponent);
                    ticks.push((value.log10(), label(value, step)));
                }
            }
        }
        ticks
    }
}

/// The smallest of 1, 2 and 5 times a power of ten at or above `raw`.
fn round_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// A tick's label: thousands grouped, as many decimals as the step needs.
fn label(value: f64, step: f64) -> String {
    if step >= 1.0 {
        format::count(value)
    } else {
        let decimals = (-step.log10()).ceil().max(0.0) as usize;
        format!("{value:.decimals$}")
    }
}

/// The label of the tick at coordinate `at`, or nothing between ticks: for a chart's label
/// formatter.
pub(super) fn tick_label(ticks: &[(f64, String)], at: f64) -> String {
    ticks
        .iter()
        .find(|(tick, _)| (tick - at).abs() <= 1e-9 * tick.abs().max(1.0))
        .map(|(_, label)| label.clone())
        .unwrap_or_default()
}

/// A chart axis over `range` whose marks are exactly `ticks` (plotters' own `WithKeyPoints`
/// over `f64` cannot take a label formatter: its format option is the float range's).
#[derive(Debug, Clone)]
pub(super) struct Ticked {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    pub fn new(range: std::ops::Range<f64>, ticks: &[(f64, String)]) -> Ticked {
        Ticked {
            range,
            ticks: ticks.iter().map(|(at, _)| *at).collect(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span == 0.0 {
            return limit.0;
        }
        let share = (value - self.range.start) / span;
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(scale: Scale) -> Vec<String> {
        scale.ticks().into_iter().map(|(_, l)| l).collect()
    }

    #[test]
    fn values_over_decades_get_a_log_axis_with_round_ticks() {
        let scale = Scale::over(50.0, 6_400.0);
        assert!(scale.log);
        assert_eq!(
            labels(scale),
            ["50", "100", "200", "500", "1,000", "2,000", "5,000"]
        );
        // Equal ratios lie at equal distances.
        let gap = |a: f64, b: f64| scale.at(b) - scale.at(a);
        assert!((gap(100.0, 200.0) - gap(1_000.0, 2_000.0)).abs() < 1e-12);
        // Many decades: one tick a decade.
        assert_eq!(
            labels(Scale::over(1.0, 1e6)),
            ["1", "10", "100", "1,000", "10,000", "100,000", "1,000,000"]
        );
    }

    #[test]
    fn a_narrow_range_is_linear_from_zero_when_near_it() {
        let scale = Scale::over(100.0, 400.0);
        assert!(!scale.log);
        assert_eq!(scale.bounds().0, 0.0);
        assert_eq!(labels(scale), ["0", "100", "200", "300", "400"]);
        let scale = Scale::over(3_400.0, 3_600.0);
        assert!(scale.bounds().0 > 3_300.0, "{scale:?}");
        assert_eq!(labels(scale), ["3,400", "3,450", "3,500", "3,550", "3,600"]);
        assert_eq!(
            labels(Scale::over(0.2, 0.8)),
            ["0.0", "0.2", "0.4", "0.6", "0.8"]
        );
    }

    #[test]
    fn a_label_is_found_only_at_its_tick() {
        let ticks = Scale::over(50.0, 6_400.0).ticks();
        assert_eq!(tick_label(&ticks, 2.0), "100");
        assert_eq!(tick_label(&ticks, 2.1), "");
    }

    #[test]
    fn steps_are_round() {
        for (raw, step) in [
            (0.7, 1.0),
            (1.3, 2.0),
            (230.0, 500.0),
            (0.03, 0.05),
            (5.0, 5.0),
        ] {
            let got = round_step(raw);
            assert!((got - step).abs() < step * 1e-9, "{raw}: {got}");
        }
    }
}
