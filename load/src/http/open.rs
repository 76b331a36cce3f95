//! The open model on one load thread: a pacing task releases each arrival at its intended
//! time into a waiting line; connection workers (one per connection, opened as the line
//! needs them, up to this thread's share of `max_connections`) take arrivals from it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use headroom_spec::scenario::Arrivals;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::job::{Job, Share, per_second};
use super::recorder::Failed;
use super::recorder::{Recorder, Times};
use crate::stripe::{self, Lane, RateCurve};
use crate::web::ErrorKind;

/// Arrivals released back to back (the generator behind its schedule) before the pacing task
/// lets the connection workers run.
const BATCH: u32 = 32;

/// Connections being opened at once at most, per thread: when the generator falls behind,
/// every due arrival finds every connection busy, and opening one for each (connects cost
/// CPU) would put it further behind. The arrivals wait in line for these instead.
const MAX_OPENING: u64 = 8;

/// An arrival released to the line.
#[derive(Clone, Copy)]
struct Arrival {
    /// Its number over the whole run (every thread and segment): what picks its request.
    number: u64,
    intended: Instant,
    released: Instant,
}

/// The thread's waiting line and its connection workers.
struct Line {
    job: Rc<Job>,
    recorder: Rc<RefCell<Recorder>>,
    queue: RefCell<VecDeque<Arrival>>,
    /// Workers waiting for an arrival, each woken by its own signal.
    idle: RefCell<Vec<Rc<Notify>>>,
    workers: Cell<u64>,
    max_workers: u64,
    /// Workers started whose connection is not ready yet.
    opening: Cell<u64>,
    /// Arrivals in line or being sent.
    outstanding: Cell<u64>,
    max_outstanding: u64,
    closing: Cell<bool>,
    /// This thread's place among the load threads, which numbers its workers apart from
    /// the other threads'.
    share: Share,
}

pub(super) async fn run(job: Rc<Job>, share: Share, recorder: Rc<RefCell<Recorder>>) {
    let scenario = &job.scenario;
    let peak = per_second(scenario.rate.as_ref());
    let (from, to) = if scenario.executor.is_ramping() {
        (per_second(scenario.start_rate.as_ref()), peak)
    } else {
        (peak, peak)
    };
    let line = Rc::new(Line {
        job: Rc::clone(&job),
        recorder,
        queue: RefCell::new(VecDeque::new()),
        idle: RefCell::new(Vec::new()),
        workers: Cell::new(0),
        max_workers: share.of(job.segment.of(scenario.max_connections)),
        opening: Cell::new(0),
        outstanding: Cell::new(0),
        max_outstanding: share.of(job.segment.of(scenario.max_in_flight)),
        closing: Cell::new(false),
        share,
    });
    let pacer = super::pacer::Pacer::new();
    let mut schedule = job.schedule_now();
    let mut decided = job.hold.window().is_some();
    // Arrivals are numbered over the whole run; this thread takes its stripe of them (of its
    // segment's), so the threads of every segment together send the one schedule.
    let curve = RateCurve::new(schedule.stages(), from, to);
    let lane = Lane::new(job.segment, share.index, share.threads);
    let stride = (job.segment.count * share.threads as u64) as f64;
    let mut arrivals = match scenario.arrivals {
        Arrivals::Fixed => stripe::Arrivals::fixed(curve, lane),
        Arrivals::Poisson => stripe::Arrivals::poisson(curve, lane, job.seed),
    };
    let mut back_to_back = 0;
    while !*job.cancel.borrow() {
        // Once the run's hold is decided, the peak lasts until it ends, then the ramp-down.
        if !decided && job.hold.window().is_some() {
            decided = true;
            schedule = job.schedule_now();
            arrivals.follow(RateCurve::new(schedule.stages(), from, to));
        }
        let Some((number, t)) = arrivals.next() else {
            break;
        };
        // The end is compared in whole nanoseconds, as the measured window is.
        let offset = Duration::from_secs_f64(t);
        if offset >= schedule.total() {
            break;
        }
        let intended = job.start + offset;
        if intended > Instant::now() {
            // This thread's gap between arrivals now, which sets how finely the pacer wakes.
            let rate = schedule.at(t, from, to);
            let gap = if rate > 0.0 { stride / rate } else { 1.0 };
            pacer
                .until(intended, Duration::from_secs_f64(gap.min(1.0)))
                .await;
            back_to_back = 0;
        } else {
            back_to_back += 1;
            if back_to_back >= BATCH {
                back_to_back = 0;
                tokio::task::yield_now().await;
            }
        }
        line.arrive(number, intended, Instant::now());
    }
    line.close().await;
}

impl Line {
    /// An arrival released at `released`: to an idle worker, to a new connection, or in line
    /// for the next free one; dropped when `max_in_flight` are outstanding.
    fn arrive(self: &Rc<Self>, number: u64, intended: Instant, released: Instant) {
        if self.outstanding.get() >= self.max_outstanding {
            self.recorder.borrow_mut().dropped(intended);
            return;
        }
        self.outstanding.set(self.outstanding.get() + 1);
        self.queue.borrow_mut().push_back(Arrival {
            number,
            intended,
            released,
        });
        let idle = self.idle.borrow_mut().pop();
        if let Some(worker) = idle {
            worker.notify_one();
        } else if self.workers.get() < self.max_workers && self.opening.get() < MAX_OPENING {
            // Worker `w` of thread `t` is client `w * threads + t`: numbers no other thread's
            // worker takes, dense across threads.
            let client = self.workers.get() * self.share.threads as u64 + self.share.index as u64;
            self.workers.set(self.workers.get() + 1);
            self.opening.set(self.opening.get() + 1);
            tokio::task::spawn_local(Rc::clone(self).work(client));
        } else if self.workers.get() >= self.max_workers {
            // It waits for one of the `max_connections` to come free.
            self.recorder.borrow_mut().queued_at_limit();
        }
    }

    /// One connection's worker, client `number`: takes arrivals until the line closes empty.
    async fn work(self: Rc<Self>, number: u64) {
        let client = &self.job.client;
        let mut connections = client.connections(&self.job.streams, number);
        let wake = Rc::new(Notify::new());
        let mut first = true;
        loop {
            let next = self.queue.borrow_mut().pop_front();
            match next {
                Some(arrival) => {
                    // Picked first, so a request that never got a connection counts as its own;
                    // by its number, so a seed sends the same mix whichever thread takes it.
                    let draw = crate::stripe::draw(self.job.mix_seed, arrival.number);
                    let request = client.pick(draw);
                    let times = Times {
                        intended: arrival.intended,
                        released: arrival.released,
                        sent: arrival.released,
                        done: arrival.released,
                    };
                    let deadline = arrival.intended + client.timeout;
                    let (times, outcome) = if Instant::now() >= deadline {
                        if std::mem::take(&mut first) {
                            self.opening.set(self.opening.get() - 1);
                        }
                        // It waited in line past its time: no connection came free for it.
                        let at = Times {
                            sent: deadline,
                            done: deadline,
                            ..times
                        };
                        (at, Err(Failed::Kind(ErrorKind::Connect)))
                    } else {
                        let opened = || {
                            if std::mem::take(&mut first) {
                                self.opening.set(self.opening.get() - 1);
                            }
                        };
                        let data = client.request_data();
                        let sent = client
                            .send(&mut connections, request, arrival.intended, &data, opened)
                            .await;
                        let mut recorder = self.recorder.borrow_mut();
                        for _ in 0..sent.opened {
                            recorder.connected();
                        }
                        if let Some(took) = sent.handshake {
                            recorder.handshake(took);
                        }
                        let at = Times {
                            sent: sent.at,
                            done: Instant::now(),
                            ..times
                        };
                        (at, sent.outcome)
                    };
                    self.recorder.borrow_mut().done(times, request, outcome);
                    self.outstanding.set(self.outstanding.get() - 1);
                }
                None if self.closing.get() => break,
                None => {
                    // Started for an arrival another worker took: it is no longer opening.
                    if std::mem::take(&mut first) {
                        self.opening.set(self.opening.get() - 1);
                    }
                    self.idle.borrow_mut().push(Rc::clone(&wake));
                    wake.notified().await;
                }
            }
        }
    }

    /// No more arrivals: the workers finish what is in line (each request ends by its
    /// timeout) and stop.
    async fn close(&self) {
        self.closing.set(true);
        for worker in self.idle.borrow_mut().drain(..) {
            worker.notify_one();
        }
        let deadline = Instant::now() + self.job.client.timeout + Duration::from_millis(100);
        while self.outstanding.get() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
