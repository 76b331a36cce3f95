//! The rooms driver's receive path against a bare tungstenite read loop, in frames per second
//! of one core, measured in the same run.
//!
//! A source thread writes pre-encoded server frames (a 220-byte chat message with a stamp) over
//! loopback as fast as the socket takes them, so the reader is always the bottleneck. The
//! reader runs on a current-thread tokio runtime and either drops each frame (bare: the floor
//! of what any tokio-tungstenite client pays) or hands it to the driver's [`Inbox`] of one of
//! eight recipients in turn, each message reaching each once (stamp parsed in place, the
//! message's recipient bits and atomics updated, the latency batched into a histogram). CPU
//! time is the reading thread's own (`CLOCK_THREAD_CPUTIME_ID`). The two alternate, seven
//! times each; the medians and their ratio are printed.
//!
//! `cargo bench -p headroom-runner --bench receive` (goal: the driver at 90 % of bare or more).

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use futures_util::StreamExt;
use headroom_load::fanout::{Member, Stamp, Tracker};
use headroom_load::rooms::{Inbox, socket_config};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

const FRAMES: u64 = 1_500_000;
const REPEATS: usize = 7;
/// The sockets the frames go to in turn, each with an inbox of its own: every message reaches
/// each of them once, as a room's peers get it (a second copy at one would be a duplicate,
/// which takes a shorter path).
const RECIPIENTS: u64 = 8;
/// Messages a pass's frames carry (a block past `FRAMES` too), each expected at one more peer
/// than it reaches, so every frame takes the full path (no completion short-cut).
const MESSAGES: u64 = (FRAMES + 1024) / RECIPIENTS + 1;

/// An unmasked server text frame.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x81];
    match payload.len() {
        n @ 0..=125 => out.push(n as u8),
        n @ 126..=65535 => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

/// A 64 KiB block of frames stamped with message ids from `first` on, and how many.
fn block(first: u64) -> (Vec<u8>, u64) {
    let mut block = Vec::new();
    let mut frames = 0;
    while block.len() < 64 * 1024 {
        let mut text = String::from(r#"{"type":"message","room":3,"stamp":""#);
        Stamp {
            id: (first + frames) / RECIPIENTS,
            sent_us: 1,
        }
        .write_text(&mut text);
        text.push_str(r#"","payload":""#);
        while text.len() < 218 {
            text.push('x');
        }
        text.push_str(r#""}"#);
        block.extend_from_slice(&frame(text.as_bytes()));
        frames += 1;
    }
    (block, frames)
}

/// Writes `FRAMES` frames (rounded up to whole blocks) to the first connection, then closes.
fn source(listener: TcpListener) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return 0;
        };
        let _ = stream.set_nodelay(true);
        let mut sent = 0;
        while sent < FRAMES {
            let (block, per_block) = block(sent);
            if stream.write_all(&block).is_err() {
                break;
            }
            sent += per_block;
        }
        sent
    })
}

fn thread_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// One pass: frames read and the reading thread's CPU seconds.
fn pass(driver: bool, tracker: &Tracker) -> (u64, f64) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let writer = source(listener);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (frames, cpu) = runtime.block_on(async {
        let stream = TcpStream::connect(address).expect("connect");
        stream.set_nonblocking(true).expect("nonblocking");
        let stream = tokio::net::TcpStream::from_std(stream).expect("tokio stream");
        let mut ws =
            WebSocketStream::from_raw_socket(stream, Role::Client, Some(socket_config(Some(220))))
                .await;
        let started = thread_cpu_s();
        let mut frames = 0u64;
        if driver {
            // Frame k goes to recipient k mod RECIPIENTS, as the stream writes message k /
            // RECIPIENTS once for each.
            let mut inboxes: Vec<Inbox> = (0..RECIPIENTS as u32)
                .map(|k| Inbox::new(tracker, recipient(k), false))
                .collect();
            while let Some(message) = ws.next().await {
                let inbox = &mut inboxes[(frames % RECIPIENTS) as usize];
                if inbox.on_message(message).is_some() {
                    break;
                }
                frames += 1;
            }
        } else {
            while let Some(Ok(message)) = ws.next().await {
                std::hint::black_box(&message);
                frames += 1;
            }
        }
        (frames, thread_cpu_s() - started)
    });
    let sent = writer.join().unwrap_or(0);
    assert_eq!(frames, sent, "every frame read");
    (frames, cpu)
}

fn median(values: &[f64]) -> f64 {
    headroom_spec::Reducer::Median
        .of(values)
        .unwrap_or(f64::NAN)
}

/// The sender, the recipients and a peer that never reads, of one room.
const SENDER: Member = Member {
    socket: 0,
    room: 0,
    peer: 0,
};
const SILENT: Member = Member {
    socket: RECIPIENTS as u32 + 1,
    room: 0,
    peer: RECIPIENTS as u32 + 1,
};

/// Recipient `k` (0 to `RECIPIENTS`).
fn recipient(k: u32) -> Member {
    Member {
        socket: k + 1,
        room: 0,
        peer: k + 1,
    }
}

/// A tracker with `MESSAGES` sent by `SENDER`, each expected at every recipient and the
/// silent peer: every receipt is a first copy.
fn tracker() -> Tracker {
    let size = RECIPIENTS as u32 + 2;
    let tracker = Tracker::new(Instant::now(), Duration::from_secs(3600), MESSAGES, &[size]);
    for member in (0..RECIPIENTS as u32)
        .map(recipient)
        .chain([SENDER, SILENT])
    {
        tracker.enter(member);
    }
    for _ in 0..MESSAGES {
        tracker.open(SENDER);
    }
    tracker
}

fn main() {
    // A warm-up pass of each, not counted.
    pass(false, &tracker());
    pass(true, &tracker());
    let (mut bare, mut driver) = (Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        let (frames, cpu) = pass(false, &tracker());
        bare.push(frames as f64 / cpu);
        // A fresh tracker a pass: each frame its message's first copy.
        let (frames, cpu) = pass(true, &tracker());
        driver.push(frames as f64 / cpu);
    }
    let ratios: Vec<f64> = bare.iter().zip(&driver).map(|(b, d)| d / b).collect();
    let (bare_min, bare_max) = (
        bare.iter().copied().fold(f64::MAX, f64::min),
        bare.iter().copied().fold(0.0, f64::max),
    );
    let (driver_min, driver_max) = (
        driver.iter().copied().fold(f64::MAX, f64::min),
        driver.iter().copied().fold(0.0, f64::max),
    );
    let report = format!(
        "receive path, {FRAMES} frames of 220 B per pass, {REPEATS} alternating passes each\n\
         bare tokio-tungstenite loop: median {:.0} frames/s per core (range {:.0}–{:.0})\n\
         rooms driver (Inbox):        median {:.0} frames/s per core (range {:.0}–{:.0})\n\
         driver / bare: median {:.1} % (pairs: {})\n",
        median(&bare),
        bare_min,
        bare_max,
        median(&driver),
        driver_min,
        driver_max,
        median(&ratios) * 100.0,
        ratios
            .iter()
            .map(|r| format!("{:.1} %", r * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = std::io::stdout().write_all(report.as_bytes());
}
