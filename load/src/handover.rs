//! The hand-over between the load and the steady state, shared by the run and its scenarios
//! (so neither module reaches into the other).

use std::sync::Arc;

use tokio::sync::watch;

/// The hand-over between the load and the steady state: every scenario arrives once (HTTP when
/// its load ends, rooms once drained with the sockets still open); the runner measures, then
/// releases the rooms to ramp down.
pub struct Handover {
    arrivals: Arc<watch::Sender<usize>>,
    release: watch::Receiver<bool>,
}

impl Handover {
    /// A hand-over that counts arrivals into `arrivals` and open when `release` turns true.
    pub fn new(arrivals: Arc<watch::Sender<usize>>, release: watch::Receiver<bool>) -> Handover {
        Handover { arrivals, release }
    }

    /// One scenario's arrival.
    pub fn for_scenario(&self) -> ScenarioHandover {
        ScenarioHandover {
            arrivals: Arc::clone(&self.arrivals),
            arrived: false,
            release: self.release.clone(),
        }
    }
}

/// One scenario's side of [`Handover`]. Dropping it counts as arriving, so a scenario that fails
/// early never holds the run up.
pub struct ScenarioHandover {
    arrivals: Arc<watch::Sender<usize>>,
    arrived: bool,
    release: watch::Receiver<bool>,
}

impl ScenarioHandover {
    /// This scenario has arrived: its load ended (HTTP), or its rooms drained.
    pub fn arrive(&mut self) {
        if !std::mem::replace(&mut self.arrived, true) {
            self.arrivals.send_modify(|n| *n += 1);
        }
    }

    /// Turns true once the runner has measured the steady state.
    pub fn release_watch(&self) -> watch::Receiver<bool> {
        self.release.clone()
    }
}

impl Drop for ScenarioHandover {
    fn drop(&mut self) {
        self.arrive();
    }
}
