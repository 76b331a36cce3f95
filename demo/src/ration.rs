//! `--answer-rate N`: a server that answers at most N requests a second and refuses the rest
//! with 503 at once, a known ceiling for the ceiling search to find. A token bucket: N tokens
//! a second, room for a tenth of a second of them, so a load at N a second or less is never
//! refused however its arrivals jitter, and a load of R > N has (R − N) / R refused.

use std::time::Instant;

/// The tokens a second and how many the bucket holds.
#[derive(Debug)]
pub(crate) struct Ration {
    per_second: f64,
    room: f64,
    tokens: f64,
    filled_at: Option<Instant>,
}

impl Ration {
    /// A bucket of `per_second` tokens a second, full.
    pub(crate) fn new(per_second: f64) -> Ration {
        let room = (per_second / 10.0).max(1.0);
        Ration {
            per_second,
            room,
            tokens: room,
            filled_at: None,
        }
    }

    /// Whether a request arriving `now` is answered (it takes a token) or refused.
    pub(crate) fn take(&mut self, now: Instant) -> bool {
        if let Some(then) = self.filled_at {
            let added = now.saturating_duration_since(then).as_secs_f64() * self.per_second;
            self.tokens = (self.tokens + added).min(self.room);
        }
        self.filled_at = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Arrivals at `rate` a second, evenly spaced, for `seconds`: how many were refused.
    fn refused(answer_rate: f64, rate: f64, seconds: f64) -> u64 {
        let mut ration = Ration::new(answer_rate);
        let start = Instant::now();
        let arrivals = (rate * seconds) as u64;
        (0..arrivals)
            .filter(|k| {
                let at = start + Duration::from_secs_f64(*k as f64 / rate);
                !ration.take(at)
            })
            .count() as u64
    }

    /// The known answer: at the answer rate or under it nothing is refused; over it, the
    /// excess (R − N) / R is, less the bucket's tenth of a second.
    #[test]
    fn a_load_past_the_answer_rate_is_refused_its_excess() {
        assert_eq!(refused(1_000.0, 1_000.0, 10.0), 0);
        assert_eq!(refused(1_000.0, 950.0, 10.0), 0);
        let over = refused(1_000.0, 1_100.0, 10.0);
        // 11,000 arrivals, 10,000 tokens over 10 s and 100 in the bucket at the start.
        assert!((899..=901).contains(&over), "{over}");
        // 2,000 arrivals over 1 s, the last at 0.9995 s: 1,099 tokens by then (the 100 held
        // and 999.5 added), so 901 refused.
        assert_eq!(refused(1_000.0, 2_000.0, 1.0), 901);
    }

    /// Jitter within a tenth of a second is absorbed: two arrivals at one instant, then a gap.
    #[test]
    fn bunched_arrivals_at_the_rate_are_not_refused() {
        let mut ration = Ration::new(100.0);
        let start = Instant::now();
        let refused = (0..500u64)
            .filter(|k| {
                let pair = k / 2;
                let at = start + Duration::from_millis(pair * 20);
                !ration.take(at)
            })
            .count();
        assert_eq!(refused, 0);
    }
}
