//! The open model's arrivals, numbered: arrival `k` of a scenario is due when the schedule's
//! cumulative count of arrivals reaches `k` (fixed) or the `k`-th point of a unit-rate Poisson
//! process drawn from the run's seed (Poisson). Numbered arrivals stripe exactly: a load
//! thread of segment `i` of `n` takes every arrival whose number is its own modulo the
//! stripes, so the segments' threads together send exactly the schedule one machine would
//! have, each arrival once, at the same instant.

use rand::{Rng, SeedableRng};

/// One share of a run: segment `index` of `count` (`--segment index/count`), which sends what
/// [`headroom_spec::segment::RULE`] says ([`Segment::owns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// From 0.
    pub index: u64,
    /// At least 1.
    pub count: u64,
}

impl Segment {
    /// The whole run, on one machine.
    pub const WHOLE: Segment = Segment { index: 0, count: 1 };

    /// `i/n`, `0 <= i < n`.
    pub fn parse(text: &str) -> Result<Segment, String> {
        let bad = || {
            format!("`{text}` is not a segment: write `INDEX/COUNT`, from `0/3` to `2/3` for three")
        };
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = index.trim().parse().map_err(|_| bad())?;
        let count: u64 = count.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Segment { index, count })
    }

    /// Whether unit `k` (a user, a room) is this segment's.
    pub fn owns(&self, k: u64) -> bool {
        k % self.count.max(1) == self.index
    }

    /// How many of units `0..total` are this segment's.
    pub fn of(&self, total: u64) -> u64 {
        let count = self.count.max(1);
        total / count + u64::from(self.index < total % count)
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A seed for one part of a run (a point's repeat, a scenario), from the seed above it and
/// the part's name: the same on every segment and every machine, and apart from its
/// neighbours'. FNV-1a over the name, finished by SplitMix64.
pub fn derive_seed(seed: u64, part: &str) -> u64 {
    let mut hash = seed ^ 0xcbf2_9ce4_8422_2325;
    for byte in part.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The `k`th draw of `seed`: a uniform 64-bit number that depends on nothing else (not on
/// which thread, segment or order asks), so a numbered arrival, user or socket draws the same
/// on every run of one seed. SplitMix64 of the seed stepped `k` times.
pub fn draw(seed: u64, k: u64) -> u64 {
    let mut z = seed.wrapping_add(k.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A draw as a uniform number in [0, 1): its top 53 bits, a double's precision.
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// A stretch of the schedule where the rate goes linearly from `begin` to `end` per second.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: f64,
    length: f64,
    begin: f64,
    end: f64,
    /// Arrivals due before it.
    before: f64,
}

impl Piece {
    fn arrivals(&self) -> f64 {
        (self.begin + self.end) / 2.0 * self.length
    }
}

/// The arrival rate over a scenario's stages and its integral: how many arrivals are due by
/// any moment, and the moment any count is reached.
#[derive(Debug, Clone)]
pub struct RateCurve {
    pieces: Vec<Piece>,
    /// Seconds from the start to the end of the last stage.
    total: f64,
}

impl RateCurve {
    /// Stages of `(ramp_up, hold, ramp_down)` seconds: `from` at the ends of the ramps, `to`
    /// during the hold (per second), as the load's `Schedule::at`.
    pub fn new(stages: (f64, f64, f64), from: f64, to: f64) -> RateCurve {
        let (up, hold, down) = stages;
        let (from, to) = (from.max(0.0), to.max(0.0));
        let mut pieces = Vec::new();
        let mut start = 0.0;
        let mut before = 0.0;
        for (length, begin, end) in [(up, from, to), (hold, to, to), (down, to, from)] {
            if length <= 0.0 {
                continue;
            }
            let piece = Piece {
                start,
                length,
                begin,
                end,
                before,
            };
            before += piece.arrivals();
            start += length;
            pieces.push(piece);
        }
        RateCurve {
            pieces,
            total: start,
        }
    }

    /// The arrivals due over the whole schedule (a fraction: the last may fall past it).
    pub fn arrivals(&self) -> f64 {
        self.pieces
            .last()
            .map_or(0.0, |last| last.before + last.arrivals())
    }

    /// Seconds from the start until `count` arrivals are due; `None` past the schedule.
    pub fn time_of(&self, count: f64) -> Option<f64> {
        let piece = self
            .pieces
            .iter()
            .rev()
            .find(|p| p.before <= count && p.arrivals() > 0.0)?;
        let due = count - piece.before;
        if due > piece.arrivals() {
            return None;
        }
        // Within the piece the count grows as `begin·s + (end − begin)·s²/(2·length)`; its root,
        // written so that neither a flat rate (no s² term) nor a ramp from zero divides by zero.
        let slope = (piece.end - piece.begin) / (2.0 * piece.length);
        let root = (piece.begin * piece.begin + 4.0 * slope * due)
            .max(0.0)
            .sqrt();
        let denominator = piece.begin + root;
        let s = if denominator > 0.0 {
            2.0 * due / denominator
        } else {
            0.0
        };
        let t = piece.start + s.min(piece.length);
        (t < self.total).then_some(t)
    }
}

/// The arrivals one load thread takes: numbers `first`, `first + stride`, … — thread `t` of
/// `threads` in segment `i` of `n` takes `k = i + n·(t + threads·j)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    first: u64,
    stride: u64,
}

impl Lane {
    /// Thread `thread` of `threads` of `segment`.
    pub fn new(segment: Segment, thread: usize, threads: usize) -> Lane {
        let count = segment.count.max(1);
        Lane {
            first: segment.index + count * thread as u64,
            stride: count * threads.max(1) as u64,
        }
    }

    /// Its numbers below `end` (virtual users).
    pub fn numbers(&self, end: u64) -> impl Iterator<Item = u64> + use<> {
        let stride = usize::try_from(self.stride).unwrap_or(usize::MAX);
        (self.first..end).step_by(stride)
    }
}

/// How arrivals are spaced.
#[derive(Debug, Clone)]
enum Spacing {
    /// Arrival `k` when `k` arrivals are due.
    Fixed,
    /// Arrival `k` when `S_k` are due, `S` the sums of unit exponential gaps drawn from one
    /// seed in order: every lane draws the same gaps and keeps its own.
    Poisson {
        gaps: Box<rand::rngs::StdRng>,
        /// The sum of the gaps drawn so far, and how many.
        sum: f64,
        drawn: u64,
    },
}

/// A lane's arrivals in order: `(k, seconds from the start)`, until the schedule ends.
#[derive(Debug, Clone)]
pub struct Arrivals {
    curve: RateCurve,
    lane: Lane,
    next: u64,
    spacing: Spacing,
}

impl Arrivals {
    /// Evenly spaced arrivals of `curve` for `lane`.
    pub fn fixed(curve: RateCurve, lane: Lane) -> Arrivals {
        Arrivals {
            curve,
            lane,
            next: lane.first,
            spacing: Spacing::Fixed,
        }
    }

    /// From now on, arrivals follow `curve`: the same schedule up to where the old one
    /// reached (a hold that lasts until the run's hold ends, decided while the load runs).
    pub fn follow(&mut self, curve: RateCurve) {
        self.curve = curve;
    }

    /// Poisson arrivals of `curve` for `lane`, the process drawn from `seed`.
    pub fn poisson(curve: RateCurve, lane: Lane, seed: u64) -> Arrivals {
        Arrivals {
            curve,
            lane,
            next: lane.first,
            spacing: Spacing::Poisson {
                gaps: Box::new(rand::rngs::StdRng::seed_from_u64(seed)),
                sum: 0.0,
                drawn: 0,
            },
        }
    }
}

impl Iterator for Arrivals {
    type Item = (u64, f64);

    fn next(&mut self) -> Option<(u64, f64)> {
        let k = self.next;
        let count = match &mut self.spacing {
            Spacing::Fixed => k as f64,
            Spacing::Poisson { gaps, sum, drawn } => {
                // Gaps of other lanes' arrivals are drawn too, so the sums are the same
                // on every lane: -ln(U), U in (0, 1].
                while *drawn <= k {
                    *sum += -(1.0 - gaps.random::<f64>()).ln();
                    *drawn += 1;
                    if *sum > self.curve.arrivals() {
                        return None;
                    }
                }
                *sum
            }
        };
        let t = self.curve.time_of(count)?;
        self.next = k.checked_add(self.lane.stride)?;
        Some((k, t))
    }
}

#[cfg(test)]
mod tests;
