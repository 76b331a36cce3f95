//! The one timer of a worker that bounds each of its requests by its own deadline.

use std::pin::Pin;
use std::task::Poll;

use tokio::time::{Instant, Sleep};

/// A worker's one timer for the deadlines of its requests. A timer armed and dropped for each
/// request costs 1.5 % of the generator's CPU (tokio's timer wheel: an insert and a removal
/// under its lock); a worker's requests go one after the other, their deadlines later and
/// later, so its timer stays set to an earlier request's deadline and, when that passes, is set
/// to the current one's: a request that ends in time (most) touches no timer at all.
pub(super) struct Deadline {
    pub(super) timer: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    /// `work`'s output, or `None` when `deadline` passed first.
    pub(super) async fn bound<F: Future>(
        &mut self,
        deadline: Instant,
        work: F,
    ) -> Option<F::Output> {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() > deadline {
            timer.as_mut().reset(deadline);
        }
        let mut work = std::pin::pin!(work);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(output));
            }
            while timer.as_mut().poll(cx).is_ready() {
                if timer.deadline() >= deadline {
                    return Poll::Ready(None);
                }
                // An earlier request's deadline: this request's is still ahead.
                timer.as_mut().reset(deadline);
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The worker's one timer bounds each request by its own deadline: an earlier request's
    /// deadline passing mid-request does not end it, and a request past its own does end.
    #[tokio::test]
    async fn one_timer_bounds_each_request_by_its_own_deadline() {
        let ms = Duration::from_millis;
        let mut deadline = Deadline { timer: None };
        let now = Instant::now();
        let quick = deadline
            .bound(now + ms(40), tokio::time::sleep(ms(5)))
            .await;
        assert!(quick.is_some(), "ended in time");
        // The timer is still set for the first request's deadline, which passes during this
        // one: it goes on to its own.
        let now = Instant::now();
        let slow = deadline
            .bound(now + ms(300), tokio::time::sleep(ms(80)))
            .await;
        assert!(slow.is_some(), "its own deadline had not passed");
        assert!(now.elapsed() >= ms(80));
        // Never answered: ends at its deadline, not before, and not much after.
        let now = Instant::now();
        let never = deadline
            .bound(now + ms(60), std::future::pending::<()>())
            .await;
        assert!(never.is_none(), "timed out");
        let took = now.elapsed();
        assert!(took >= ms(60) && took < ms(250), "took {took:?}");
        // A deadline earlier than the one the timer is set to (a shorter request's) holds too.
        let now = Instant::now();
        let _ = deadline
            .bound(now + ms(500), tokio::time::sleep(ms(1)))
            .await;
        let never = deadline
            .bound(now + ms(40), std::future::pending::<()>())
            .await;
        assert!(never.is_none());
        assert!(now.elapsed() < ms(300), "took {:?}", now.elapsed());
    }
}
