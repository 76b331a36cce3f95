//! A closed model's users, kept up with or stuck. `vus` users thinking `think` send about
//! `vus / (think + answer)` requests a second; a server that holds some requests for seconds
//! holds their users with them, so fewer requests arrive, and the latency of the answers that
//! did come (the slow ones ended after the hold, or timed out with no latency at all) looks
//! fine. The hold's rate against what the users would send is what shows it.

use headroom_results::{RunResult, ScenarioResult};
use headroom_spec::numbers::{count, duration_ms};

/// Under this share of what its users would send, a closed-model scenario's users were stuck.
pub const KEPT_UP_AT_LEAST: f64 = 0.9;

/// What a closed-model scenario's users sent over the hold against what they would have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeepingUp {
    /// Requests intended in the hold, per second of it.
    pub rate: f64,
    /// What the users send at their think time and the hold's median answer, per second.
    pub expected: f64,
    /// `rate / expected`.
    pub share: f64,
    /// Whether they were stuck: under [`KEPT_UP_AT_LEAST`] of `expected` even with the
    /// chance of a short hold forgiven. A user sends a whole number of requests in the hold,
    /// one more or one fewer as its pace falls, and drawn think times add a count's own spread:
    /// so the count may fall short by one a user and three standard deviations (√ of the
    /// count expected) before the shortfall says anything.
    pub stuck: bool,
}

/// What a closed-model scenario's users sent against what they would have; `None` for the
/// open model, users with no think time (their pace is the answers' alone, and a median says
/// little of it), no answer to take a median from, or no hold recorded.
pub fn keeping_up(result: &ScenarioResult) -> Option<KeepingUp> {
    let users = result.users?;
    if users.users == 0 || users.think_mean_s <= 0.0 || result.latency.count == 0 {
        return None;
    }
    let expected = users.users as f64 / (users.think_mean_s + result.latency.p50_ms / 1000.0);
    let hold_s = result.held?.length_s();
    let (sent, due) = (result.rate * hold_s, expected * hold_s);
    let chance = users.users as f64 + 3.0 * due.sqrt();
    Some(KeepingUp {
        rate: result.rate,
        expected,
        share: result.rate / expected,
        stuck: sent + chance < KEPT_UP_AT_LEAST * due,
    })
}

/// The first closed-model scenario of `run` whose users were stuck (under
/// [`KEPT_UP_AT_LEAST`] of what they would send), and why in words: "3,586/s of the ~6,000/s
/// 6,400 users send thinking 1 s at the median answer of 67 ms (56 %, under 90 %); 499
/// requests timed out; outside the hold 3,120 requests ended, p95 26.8 s".
pub fn stuck(run: &RunResult) -> Option<(String, String)> {
    run.scenarios.iter().find_map(|(name, result)| {
        let users = result.users?;
        let kept = keeping_up(result)?;
        if !kept.stuck {
            return None;
        }
        let mut why = format!(
            "{}/s of the ~{}/s {} users send thinking {} at the median answer of {} ({:.0} %, under {:.0} %)",
            count(kept.rate.round()),
            count(kept.expected.round()),
            count(users.users as f64),
            duration_ms(users.think_mean_s * 1000.0),
            duration_ms(result.latency.p50_ms),
            kept.share * 100.0,
            KEPT_UP_AT_LEAST * 100.0
        );
        let outside = result.outside_hold.as_ref();
        let timeouts = result.errors.timeout + outside.map_or(0, |o| o.errors.timeout);
        if timeouts > 0 {
            why.push_str(&format!("; {} requests timed out", count(timeouts as f64)));
        }
        if let Some(outside) = outside.filter(|o| o.requests > 0) {
            why.push_str(&format!(
                "; outside the hold {} requests ended",
                count(outside.requests as f64)
            ));
            if let Some(latency) = &outside.latency {
                why.push_str(&format!(
                    ", p95 {}, the slowest {}",
                    duration_ms(latency.p95_ms),
                    duration_ms(latency.max_ms)
                ));
            }
        }
        Some((name.clone(), why))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_results::{ErrorCounts, RequestCounts, Summary, Users};

    fn closed(users: u64, think_s: f64, p50_ms: f64, rate: f64) -> ScenarioResult {
        ScenarioResult {
            held: Some(headroom_results::Interval {
                from_s: 3.0,
                to_s: 33.0,
            }),
            users: Some(Users {
                users,
                think_mean_s: think_s,
            }),
            rate,
            latency: Summary {
                count: 100,
                p50_ms,
                ..Summary::default()
            },
            ..ScenarioResult::default()
        }
    }

    /// 6,400 users thinking 1 s at a median answer of 67 ms would send ~6,000/s: at 3,586/s
    /// they were stuck, and the sentence says how much and what became of their requests.
    #[test]
    fn users_sending_far_less_than_their_pace_are_stuck() {
        let mut run = RunResult::started(1, 0);
        let mut browse = closed(6_400, 1.0, 67.0, 3_586.0);
        browse.errors = ErrorCounts {
            timeout: 499,
            ..ErrorCounts::default()
        };
        browse.outside_hold = Some(RequestCounts {
            requests: 3_120,
            latency: Some(Summary {
                count: 3_000,
                p95_ms: 26_800.0,
                max_ms: 29_100.0,
                ..Summary::default()
            }),
            ..RequestCounts::default()
        });
        let kept = keeping_up(&browse).expect("closed, with think");
        assert!((kept.expected - 5_998.1).abs() < 0.1, "{kept:?}");
        run.scenarios.insert("browse".to_owned(), browse);
        let (scenario, why) = stuck(&run).expect("stuck");
        assert_eq!(scenario, "browse");
        assert_eq!(
            why,
            "3,586/s of the ~5,998/s 6,400 users send thinking 1.00 s at the median answer of \
             67.0 ms (60 %, under 90 %); 499 requests timed out; outside the hold 3,120 \
             requests ended, p95 26.80 s, the slowest 29.10 s"
        );
    }

    /// Users that kept their pace, users with no think time and the open model are not stuck;
    /// nor are ten users whose 5 s hold sent 15 requests where 25 were due: a user more or
    /// less each is a short hold's chance, not a stuck server.
    #[test]
    fn users_at_their_pace_are_not_stuck() {
        let mut run = RunResult::started(1, 0);
        run.scenarios
            .insert("steady".to_owned(), closed(100, 1.0, 5.0, 98.0));
        let mut short = closed(10, 2.0, 5.0, 3.0);
        short.held = Some(headroom_results::Interval {
            from_s: 1.0,
            to_s: 6.0,
        });
        let kept = keeping_up(&short).expect("closed");
        assert!(kept.share < 0.9 && !kept.stuck, "{kept:?}");
        run.scenarios.insert("short".to_owned(), short);
        run.scenarios
            .insert("thoughtless".to_owned(), closed(100, 0.0, 5.0, 1.0));
        run.scenarios.insert(
            "open".to_owned(),
            ScenarioResult {
                rate: 1.0,
                ..ScenarioResult::default()
            },
        );
        assert_eq!(stuck(&run), None);
        assert_eq!(keeping_up(&run.scenarios["thoughtless"]), None);
    }
}
