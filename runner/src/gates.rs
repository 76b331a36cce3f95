//! The hand-over between the load and the steady state, shared by the run and its scenarios
//! (so neither module reaches into the other).

use std::sync::Arc;

use tokio::sync::watch;

/// The hand-over between the load and the steady state: every scenario arrives once (HTTP when
/// its load ends, rooms once drained with the sockets still open); the runner measures, then
/// releases the rooms to ramp down.
pub(crate) struct Gates {
    arrivals: Arc<watch::Sender<usize>>,
    release: watch::Receiver<bool>,
}

impl Gates {
    /// Gates that count arrivals into `arrivals` and open when `release` turns true.
    pub(crate) fn new(
        arrivals: Arc<watch::Sender<usize>>,
        release: watch::Receiver<bool>,
    ) -> Gates {
        Gates { arrivals, release }
    }

    /// One scenario's gate.
    pub(crate) fn gate(&self) -> Gate {
        Gate {
            arrivals: Arc::clone(&self.arrivals),
            arrived: false,
            release: self.release.clone(),
        }
    }
}

/// One scenario's side of [`Gates`]. Dropping it counts as arriving, so a scenario that fails
/// early never holds the run up.
pub(crate) struct Gate {
    arrivals: Arc<watch::Sender<usize>>,
    arrived: bool,
    release: watch::Receiver<bool>,
}

impl Gate {
    pub(crate) fn arrive(&mut self) {
        if !std::mem::replace(&mut self.arrived, true) {
            self.arrivals.send_modify(|n| *n += 1);
        }
    }

    /// Turns true once the runner has measured the steady state.
    pub(crate) fn release_watch(&self) -> watch::Receiver<bool> {
        self.release.clone()
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.arrive();
    }
}
