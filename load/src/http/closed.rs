//! The closed model on one load thread: its share of the virtual users, each a task with its
//! own connection.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tokio::time::Instant;

use super::flow::{Rows, UserData};
use super::job::{Job, Share};
use super::recorder::{Recorder, Times};
use headroom_matrix::resolved::ThinkTime;
use headroom_spec::think::UserStart;

pub(super) async fn run(job: Rc<Job>, share: Share, recorder: Rc<RefCell<Recorder>>) {
    let scenario = &job.scenario;
    // The compiler requires `vus` of a virtual-user executor.
    let peak = scenario.vus.unwrap_or(0);
    // Ramping starts from `start_vus`, none unless the spec says.
    let from = if scenario.executor.is_ramping() {
        scenario.start_vus.map_or(0.0, |v| v as f64)
    } else {
        peak as f64
    };
    let mut users = tokio::task::JoinSet::new();
    // Users are numbered over the whole run; this thread takes its stripe of its segment's
    // (user `i + n·(t + threads·j)`): as users ramp up, every segment and thread gets its turn.
    let lane = crate::stripe::Lane::new(job.segment, share.index, share.threads);
    for user in lane.numbers(peak) {
        users.spawn_local(user_loop(
            Rc::clone(&job),
            Rc::clone(&recorder),
            user,
            from,
            peak as f64,
        ));
    }
    while users.join_next().await.is_some() {}
}

/// One virtual user: active while the schedule has at least `user + 1` users.
async fn user_loop(job: Rc<Job>, recorder: Rc<RefCell<Recorder>>, user: u64, from: f64, peak: f64) {
    let mut thinking = Thinking::of(&job, user);
    // Spread: a user's first request waits a random part of a mean think time after it
    // becomes active, so users do not send in step (`start = "together"` keeps the burst).
    let mut offset = thinking.first_offset(job.scenario.start);
    let start = job.start;
    let client = &job.client;
    let mut connections = client.connections(&job.streams, user);
    // Its row (with `mode = "unique"`, its own), the values it captured, and its next `once`
    // request (a login): all of them in order first, and again after one fails.
    let mut data = UserData {
        row: client.rows.as_ref().and_then(Rows::take),
        captured: vec![None; client.captures.len()],
    };
    let mut step = 0;
    // Its picks of the weighted mix: its own numbered draws of the run's seed, so a seed sends
    // every user the same requests in the same order.
    let mut picks = 0u64;
    let user_seed = crate::stripe::draw(job.mix_seed, user);
    tokio::time::sleep_until(start).await;
    loop {
        let now = Instant::now();
        // The end as far as it is known now: the peak lasts until the run's hold ends.
        let end = job.end_now();
        if now >= end || *job.cancel.borrow() {
            break;
        }
        let active = job
            .schedule_now()
            .at((now - start).as_secs_f64(), from, peak);
        if (user as f64) >= active.round() {
            tokio::time::sleep(Duration::from_millis(20).min(end - now)).await;
            continue;
        }
        if let Some(offset) = offset.take()
            && !offset.is_zero()
        {
            tokio::time::sleep(offset.min(end - now)).await;
            continue;
        }
        let request = match client.once.get(step) {
            Some(&first) => first,
            None => {
                picks += 1;
                client.pick(crate::stripe::draw(user_seed, picks))
            }
        };
        let sent = client
            .send(&mut connections, request, now, &data, || ())
            .await;
        let done = Instant::now();
        for (index, value) in sent.captured {
            data.captured[index] = Some(value);
        }
        if step < client.once.len() {
            step = if sent.outcome.is_ok() { step + 1 } else { 0 };
        }
        {
            let mut recorder = recorder.borrow_mut();
            for _ in 0..sent.opened {
                recorder.connected();
            }
            if let Some(took) = sent.handshake {
                recorder.handshake(took);
            }
            // A user's latency runs from its connection ready: its own think and connect are
            // not the server's answer time.
            let times = Times {
                intended: sent.at,
                released: sent.at,
                sent: sent.at,
                done,
            };
            recorder.done(times, request, sent.outcome);
        }
        // No think: the next request starts in this same turn (a zero sleep would still wait
        // for the timer's next tick).
        let pause = thinking.next_pause();
        let end = job.end_now();
        if !pause.is_zero() && done < end {
            tokio::time::sleep(pause.min(end - done)).await;
        }
    }
}

/// A user's think times and its start: its own numbered draws of the run's seed.
struct Thinking {
    think: Option<ThinkTime>,
    seed: u64,
    thoughts: u64,
}

impl Thinking {
    fn of(job: &Job, user: u64) -> Thinking {
        Thinking {
            think: job.scenario.think,
            seed: crate::stripe::draw(job.think_seed, user),
            thoughts: 0,
        }
    }

    /// The wait before its first request: a random part of a mean think time when users
    /// start spread (and think), none when they start together.
    fn first_offset(&self, start: UserStart) -> Option<Duration> {
        match (start, self.think) {
            (UserStart::Spread, Some(think)) => Some(Duration::from_secs_f64(
                think.mean_s() * crate::stripe::unit(crate::stripe::draw(self.seed, 0)),
            )),
            _ => None,
        }
    }

    /// Its next think time (none without `think`).
    fn next_pause(&mut self) -> Duration {
        self.thoughts += 1;
        self.think.map_or(Duration::ZERO, |think| {
            think.draw(crate::stripe::unit(crate::stripe::draw(
                self.seed,
                self.thoughts,
            )))
        })
    }
}
