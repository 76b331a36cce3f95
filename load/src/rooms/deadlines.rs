//! When a socket next has something to do: a send, a ping, a page reload, its close, or the
//! server's ping overdue; set by the run's stage as it moves on. Shared by WebSocket peers and
//! SSE streams.

use super::reload::spawn_reload;
use super::topology::{Gaps, exponential};
use super::{Ended, Shared, Socket, Stage};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// When this socket next has something to do; `far` is never.
pub(super) struct Deadlines {
    /// The socket's random gaps (Poisson sends and reloads).
    pub(super) gaps: Gaps,
    pub(super) far: Instant,
    pub(super) hold_end: Instant,
    pub(super) next_send: Instant,
    pub(super) next_ping: Instant,
    pub(super) next_reload: Instant,
    pub(super) close_at: Instant,
    /// Socket.IO: the server is taken for gone when no ping came by then.
    pub(super) ping_deadline: Instant,
}

impl Deadlines {
    pub(super) fn new(shared: &Shared, socket: Socket) -> Deadlines {
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        Deadlines {
            gaps: Gaps::of(shared.seed, socket.index),
            far,
            hold_end: far,
            next_send: far,
            next_ping: shared
                .ping_every
                .map_or(far, |every| Instant::now() + every),
            next_reload: far,
            close_at: far,
            ping_deadline: far,
        }
    }

    /// The next of them.
    pub(super) fn due(&self) -> Instant {
        self.next_send
            .min(self.next_ping)
            .min(self.next_reload)
            .min(self.close_at)
            .min(self.ping_deadline)
    }

    /// The run moved to `stage`: the hold schedules sends and reloads, the drain stops them
    /// (once the sends intended in the hold are made),
    /// the close sets this socket's turn (its `share` of the ramp-down). `Some` on abort.
    pub(super) fn enter(
        &mut self,
        stage: Stage,
        shared: &Shared,
        socket: Socket,
        share: f64,
    ) -> Option<Ended> {
        match stage {
            Stage::Connecting => {}
            Stage::Hold { start, end } => {
                self.hold_end = end;
                if let Some(plan) = socket.sends {
                    self.next_send = plan.first(start, &mut self.gaps);
                }
                if let Some(reload) = &shared.reload {
                    let first = if reload.poisson {
                        exponential(1.0 / reload.mean, &mut self.gaps)
                    } else {
                        reload.mean * share
                    };
                    self.next_reload = start + Duration::from_secs_f64(first);
                }
            }
            Stage::Drain => {
                // Sends intended in the hold that a late wake-up has not made yet are made
                // now (their stamps keep the intended times): dropped, the hold would count
                // fewer than it intended (1,998 of 2,000 on a busy CI machine).
                if self.next_send >= self.hold_end {
                    self.next_send = self.far;
                }
                self.next_reload = self.far;
            }
            Stage::Close { start, over } => {
                self.next_send = self.far;
                self.next_reload = self.far;
                self.close_at = start + over.mul_f64(share);
            }
            Stage::Abort => return Some(Ended::ByUs),
        }
        None
    }
}

/// A page reload due now: started, and the next one scheduled (none past the hold).
pub(super) fn reload_due(shared: &Arc<Shared>, socket: Socket, at: &mut Deadlines) {
    let Some(reload) = &shared.reload else {
        return;
    };
    spawn_reload(shared, socket, at.next_reload);
    let gap = if reload.poisson {
        exponential(1.0 / reload.mean, &mut at.gaps)
    } else {
        reload.mean
    };
    at.next_reload += Duration::from_secs_f64(gap);
    if at.next_reload >= at.hold_end {
        at.next_reload = at.far;
    }
}
