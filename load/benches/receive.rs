//! The rooms driver's receive path against a bare tungstenite read loop, in frames per second
//! of one core, measured in the same run.
//!
//! A source thread writes pre-encoded server frames (a 220-byte chat message with a stamp) over
//! loopback as fast as the socket takes them, so the reader is always the bottleneck. The
//! reader runs on a current-thread tokio runtime and either drops each frame (bare: the floor
//! of what any tokio-tungstenite client pays) or hands it to the driver's [`Inbox`] (stamp
//! parsed in place, the message's atomics updated, the latency batched into a histogram). CPU
//! time is the reading thread's own (`CLOCK_THREAD_CPUTIME_ID`). The two alternate, seven
//! times each; the medians and their ratio are printed.
//!
//! `cargo bench -p headroom-runner --bench receive` (goal: the driver at 90 % of bare or more).

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use futures_util::StreamExt;
use headroom_load::fanout::{Stamp, Tracker};
use headroom_load::rooms::{Inbox, socket_config};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::Role;

const FRAMES: u64 = 1_500_000;
const REPEATS: usize = 7;
/// Distinct messages the frames carry; each is expected at more recipients than it reaches, so
/// every frame takes the full path (no completion short-cut).
const MESSAGES: u64 = 4096;

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

/// 64 KiB blocks of frames stamped with message ids 0..MESSAGES, cycling.
fn blocks() -> (Vec<u8>, u64) {
    let mut block = Vec::new();
    let mut frames = 0;
    while block.len() < 64 * 1024 {
        let mut text = String::from(r#"{"type":"message","room":3,"stamp":""#);
        Stamp {
            id: frames % MESSAGES,
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
        let (block, per_block) = blocks();
        let Ok((mut stream, _)) = listener.accept() else {
            return 0;
        };
        let _ = stream.set_nodelay(true);
        let mut sent = 0;
        while sent < FRAMES {
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
            let mut inbox = Inbox::new(tracker, 0, false);
            while let Some(message) = ws.next().await {
                let before = inbox.received();
                let ended = inbox.on_ready(Some(message), &mut ws);
                frames += inbox.received() - before;
                if ended.is_some() {
                    break;
                }
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

fn main() {
    let tracker = Tracker::new(Instant::now(), Duration::from_secs(3600), MESSAGES);
    for _ in 0..MESSAGES {
        tracker.open(1, u32::MAX);
    }
    // A warm-up pass of each, not counted.
    pass(false, &tracker);
    pass(true, &tracker);
    let (mut bare, mut driver) = (Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        let (frames, cpu) = pass(false, &tracker);
        bare.push(frames as f64 / cpu);
        let (frames, cpu) = pass(true, &tracker);
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
