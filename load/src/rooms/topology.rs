//! Who is where: sockets per room, who sends, and at what rate.

use super::{SendSchedule, Socket};
use headroom_matrix::resolved::RoomsScenario;
use headroom_spec::scenario::{Arrivals, RatePer, Senders};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

impl SendSchedule {
    pub(super) fn first(&self, hold: Instant, gaps: &mut Gaps) -> Instant {
        let gap = if self.poisson {
            exponential(self.rate, gaps)
        } else {
            self.offset / self.rate
        };
        hold + Duration::from_secs_f64(gap)
    }

    pub(super) fn next(&self, previous: Instant, gaps: &mut Gaps) -> Instant {
        let gap = if self.poisson {
            exponential(self.rate, gaps)
        } else {
            1.0 / self.rate
        };
        previous + Duration::from_secs_f64(gap)
    }
}

/// A socket's random gaps (Poisson sends and reloads): its own numbered draws of the run's
/// seed, so a seed gives every socket the same gaps whichever task runs first.
pub(super) struct Gaps {
    seed: u64,
    drawn: u64,
}

impl Gaps {
    /// The gaps of socket `socket` of a run seeded `seed`.
    pub(super) fn of(seed: u64, socket: u32) -> Gaps {
        Gaps {
            seed: crate::stripe::draw(seed, u64::from(socket)),
            drawn: 0,
        }
    }

    /// The next uniform number in (0, 1].
    fn uniform(&mut self) -> f64 {
        self.drawn += 1;
        // A float in [0, 1), turned into (0, 1].
        1.0 - crate::stripe::unit(crate::stripe::draw(self.seed, self.drawn))
    }
}

/// An exponential gap with mean `1/rate`: -ln(U)/rate, U in (0, 1].
pub(super) fn exponential(rate: f64, gaps: &mut Gaps) -> f64 {
    -gaps.uniform().ln() / rate
}

/// The sockets of a run, rooms filling side by side; and how many there are per room.
pub(super) fn topology(scenario: &RoomsScenario) -> Result<(Vec<u32>, Vec<Socket>), String> {
    let rooms = scenario.rooms;
    let sizes: Vec<u32> = match (scenario.peers_per_room, scenario.peers) {
        (Some(per_room), _) => (0..rooms).map(|_| per_room as u32).collect(),
        (None, Some(peers)) => {
            let (base, extra) = (peers / rooms.max(1), peers % rooms.max(1));
            (0..rooms)
                .map(|r| (base + u64::from(r < extra)) as u32)
                .collect()
        }
        (None, None) => {
            return Err("the scenario gives neither `peers_per_room` nor `peers`".into());
        }
    };
    if let Some(&largest) = sizes.iter().max()
        && largest > crate::fanout::MAX_RECIPIENTS
    {
        return Err(format!(
            "{largest} peers in one room are more than the {} recipients a message can be tracked at: spread them over more rooms",
            crate::fanout::MAX_RECIPIENTS
        ));
    }
    let total: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
    if total > u64::from(u32::MAX) {
        return Err(format!("{total} sockets are more than one generator holds"));
    }
    // Peer by peer across the rooms (no rooms: no peers).
    let peers = sizes
        .iter()
        .copied()
        .max()
        .map_or(0..0, |largest| 0..largest);
    let mut sockets = Vec::with_capacity(total as usize);
    for peer in peers {
        for (room, &size) in sizes.iter().enumerate() {
            if peer < size {
                sockets.push(Socket {
                    index: sockets.len() as u32,
                    room: room as u32,
                    peer,
                    sends: None,
                });
            }
        }
    }
    if let Some(send) = scenario.send.as_ref().filter(|_| !scenario.idle) {
        let rate = send.rate.as_per_second();
        let is_sender = |s: &Socket| match send.senders {
            Senders::All => true,
            Senders::OnePerRoom => s.peer == 0,
        };
        let senders_in = |room: u32| match send.senders {
            Senders::All => sizes[room as usize],
            Senders::OnePerRoom => u32::from(sizes[room as usize] > 0),
        };
        let total_senders = sockets.iter().filter(|s| is_sender(s)).count().max(1) as f64;
        let poisson = send.arrivals == Arrivals::Poisson;
        let mut rank = 0f64;
        for socket in sockets.iter_mut().filter(|s| is_sender(s)) {
            let in_room = f64::from(senders_in(socket.room).max(1));
            let (sender_rate, offset) = match send.per {
                RatePer::Sender => (rate, rank / total_senders),
                RatePer::Room => (
                    rate / in_room,
                    (f64::from(socket.room) / rooms.max(1) as f64 + f64::from(socket.peer))
                        / in_room,
                ),
                RatePer::Scenario => (rate / total_senders, rank / total_senders),
            };
            rank += 1.0;
            if sender_rate > 0.0 {
                socket.sends = Some(SendSchedule {
                    rate: sender_rate,
                    offset: offset.fract(),
                    poisson,
                });
            }
        }
    }
    Ok((sizes, sockets))
}

/// The address to connect to for `ws://` or `wss://host:port/path` (`written` as the spec
/// wrote it), if load may go there, and its authority when it is `wss://`; other schemes are
/// refused with why.
pub(super) async fn resolve(
    url: &str,
    written: &str,
    allowed: &crate::web::Allowed,
) -> Result<(SocketAddr, Option<String>), String> {
    let (secure, rest) = match (url.strip_prefix("ws://"), url.strip_prefix("wss://")) {
        (Some(rest), _) => (false, rest),
        (None, Some(rest)) => (true, rest),
        (None, None) => {
            return Err(format!(
                "`{url}` is not a ws:// or wss:// URL the runner can open: write it as ws://127.0.0.1:{{port}}/…"
            ));
        }
    };
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let dial = crate::web::with_port(authority, secure);
    let address = crate::web::resolve(&dial, url, written, allowed).await?;
    Ok((address, secure.then(|| authority.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket's gaps are its own and repeat with the seed; their mean is `1/rate`.
    #[test]
    fn a_sockets_gaps_repeat_with_the_seed_and_keep_their_mean() {
        let gaps = |seed, socket| {
            let mut gaps = Gaps::of(seed, socket);
            (0..5)
                .map(|_| exponential(2.0, &mut gaps))
                .collect::<Vec<f64>>()
        };
        assert_eq!(gaps(1, 4), gaps(1, 4));
        assert_ne!(gaps(1, 4), gaps(1, 5));
        assert_ne!(gaps(1, 4), gaps(2, 4));
        let mut all = Gaps::of(9, 0);
        let n = 100_000;
        let mean = (0..n).map(|_| exponential(2.0, &mut all)).sum::<f64>() / f64::from(n);
        // The mean of 100,000 exponential gaps: 0.5 s, its standard error 0.0016 s.
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
