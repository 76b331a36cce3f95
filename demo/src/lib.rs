//! The demo target: a small server under test that ships with headroom, so every example runs
//! on a fresh machine with nothing else installed (`headroom demo-target --port N`).
//!
//! It is not part of the pipeline: it is what the pipeline measures. It serves an in-memory
//! notes REST API, sign-in (`/api/login`, `/api/me`), `/healthz`, WebSocket rooms that broadcast each message to the room's other
//! peers, per-room state of a configurable size (memory grows with open rooms), optional
//! synchronous CPU work per save (a CPU ceiling exists), fault knobs for tests, and `/metrics`
//! in Prometheus text. Its output (one line when it listens, and what the knobs ask for) goes
//! to stdout and stderr, which the runner captures per point.

#![warn(missing_docs)]
// A server program: its output is its log, which the runner captures into a file per point.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod accounts;
mod faults;
mod metrics;
mod notes;
mod pg;
mod ration;
pub use notes::seed_bytes;
mod rooms;
mod socket_io;
mod sse;
mod tls;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use headroom_spec::{Duration, Percent, Size};

/// What the demo target does; every knob has a flag of `headroom demo-target`.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on (loopback by default).
    pub host: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// Bytes each open room holds (its document), touched so they are resident.
    pub room_state: Size,
    /// Notes created at start, each of `note_size` bytes of body.
    pub seed_notes: u64,
    /// The size of a seeded note.
    pub note_size: Size,
    /// Synchronous CPU work of one save pass, plus this much per open room.
    pub rebuild_cpu: Duration,
    /// CPU time a rebuild pass spends per open room.
    pub rebuild_cpu_per_room: Duration,
    /// How long after an edit its room is saved; edits reach the other peers after the pass.
    pub save_window: Duration,
    /// CPU each notes API request takes, one request at a time (a single-threaded server):
    /// the API answers at most one request per `request_cpu`.
    pub request_cpu: Duration,
    /// CPU each notes API request takes on a thread of its own, in parallel with the others:
    /// the API answers at most one request per `request_cpu_each` on each core it is given.
    pub request_cpu_each: Duration,
    /// Hold every request for `stall_for` once every `stall_every`.
    pub stall_every: Option<Duration>,
    /// How long a stall lasts.
    pub stall_for: Duration,
    /// Hold one request in this many (every one but `/healthz` and `/metrics`) for
    /// `stall_one_for` before answering it: a server some of whose requests get stuck.
    pub stall_one_in: Option<u64>,
    /// How long `stall_one_in`'s requests are held.
    pub stall_one_for: Duration,
    /// The share of broadcasts to drop, spread evenly.
    pub drop_broadcasts: Percent,
    /// The share of broadcasts to one peer of each room (the first to join, of those open) to
    /// drop, spread evenly: a peer that misses a known share of messages.
    pub drop_to_one_peer: Percent,
    /// Exit with status 3 after this long.
    pub exit_after: Option<Duration>,
    /// Answer `/healthz` with 503 until this long after start.
    pub ready_after: Option<Duration>,
    /// Answer at most this many requests a second (all but `/healthz` and `/metrics`), the
    /// rest 503 at once: a known ceiling.
    pub answer_rate: Option<f64>,
    /// Keep running on SIGTERM (a target that must be killed).
    pub ignore_sigterm: bool,
    /// Write this many bytes of log lines to stdout at start.
    pub log_spam: Size,
    /// Ping every socket this often.
    pub ping_every: Option<Duration>,
    /// Close a socket that sent nothing (not even a pong) for this long.
    pub idle_close: Option<Duration>,
    /// CPU spent on each message frame sent to a peer, as a server that encrypts (TLS) or
    /// serializes per recipient does: fan-out then costs CPU in proportion to the frames.
    pub frame_cpu: Duration,
    /// Socket.IO: the server pings every socket this often.
    pub socket_io_ping_interval: Duration,
    /// Socket.IO: a socket whose pong is this late is dropped.
    pub socket_io_ping_timeout: Duration,
    /// Socket.IO: disconnect every socket (`41`) this long after it connected.
    pub socket_io_disconnect_after: Option<Duration>,
    /// SSE: end every stream this long after it opened, as a server that recycles its
    /// streams does: EventSource clients reopen them with `Last-Event-ID`.
    pub sse_end_after: Option<Duration>,
    /// Threads that spin on the CPU for as long as the server runs: a server that uses every
    /// core it is given, to test CPU limits against.
    pub busy_threads: u32,
    /// Serve TLS: HTTPS (HTTP/1.1 or HTTP/2, by ALPN) and WSS. Plain HTTP otherwise
    /// (HTTP/1.1, or HTTP/2 by prior knowledge).
    pub tls: Option<Certificate>,
    /// Keep the notes in this PostgreSQL database (a `postgres://` URL) instead of memory.
    pub database: Option<String>,
    /// Connections to the database, all opened at start and held.
    pub pool: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            room_state: Size::from_bytes(0),
            seed_notes: 0,
            note_size: Size::from_bytes(200),
            rebuild_cpu: Duration::ZERO,
            rebuild_cpu_per_room: Duration::ZERO,
            save_window: Duration::ZERO,
            request_cpu: Duration::ZERO,
            request_cpu_each: Duration::ZERO,
            stall_every: None,
            stall_for: Duration::ZERO,
            stall_one_in: None,
            stall_one_for: Duration::ZERO,
            drop_broadcasts: Percent::new(0.0),
            drop_to_one_peer: Percent::new(0.0),
            exit_after: None,
            ready_after: None,
            answer_rate: None,
            ignore_sigterm: false,
            log_spam: Size::from_bytes(0),
            ping_every: None,
            idle_close: None,
            frame_cpu: Duration::ZERO,
            socket_io_ping_interval: Duration::from_secs(25),
            socket_io_ping_timeout: Duration::from_secs(20),
            socket_io_disconnect_after: None,
            sse_end_after: None,
            busy_threads: 0,
            tls: None,
            database: None,
            pool: 10,
        }
    }
}

/// The certificate the demo target serves TLS with.
#[derive(Debug, Clone)]
pub enum Certificate {
    /// A PEM certificate chain and its private key.
    Files {
        /// The chain.
        cert: PathBuf,
        /// Its key.
        key: PathBuf,
    },
    /// A certificate for localhost and 127.0.0.1 made at start, trusted by nobody: for
    /// `insecure_skip_verify` on loopback.
    SelfSigned,
}

/// What every handler shares.
pub(crate) struct App {
    pub options: Options,
    pub started: Instant,
    pub notes: notes::Notes,
    pub rooms: rooms::Rooms,
    pub channels: sse::Channels,
    pub metrics: metrics::Counters,
    pub stall: faults::Stall,
    /// `answer_rate`'s bucket.
    pub ration: Option<std::sync::Mutex<ration::Ration>>,
    /// The one worker that serves API requests when they cost CPU (`request_cpu`).
    pub api_worker: tokio::sync::Mutex<()>,
    /// Who signed in (`/api/login`).
    pub sessions: accounts::Sessions,
    /// The notes' database, with `--database`; the notes are in memory without it.
    pub database: Option<pg::Database>,
}

/// A bound demo target, not yet serving.
pub struct Server {
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    /// TLS, when the options ask for it.
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// Binds the port and prepares the state (seeded notes included).
pub async fn bind(options: Options) -> std::io::Result<Server> {
    let address = SocketAddr::new(options.host, options.port);
    let listener = tokio::net::TcpListener::bind(address).await?;
    let tls = match &options.tls {
        Some(certificate) => Some(tls::acceptor(certificate)?),
        None => None,
    };
    let database = match &options.database {
        Some(url) => Some(pg::Database::connect(url, options.pool).await?),
        None => None,
    };
    let app = Arc::new(App {
        database,
        notes: notes::Notes::seeded(options.seed_notes, options.note_size.bytes()),
        rooms: rooms::Rooms::default(),
        channels: sse::Channels::default(),
        metrics: metrics::Counters::default(),
        stall: faults::Stall::default(),
        ration: options
            .answer_rate
            .map(|rate| std::sync::Mutex::new(ration::Ration::new(rate))),
        api_worker: tokio::sync::Mutex::new(()),
        sessions: accounts::Sessions::default(),
        started: Instant::now(),
        options,
    });
    Ok(Server { listener, app, tls })
}

impl Server {
    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until SIGTERM or SIGINT (or until a fault knob ends the process).
    pub async fn run(self) -> std::io::Result<()> {
        let Server { listener, app, tls } = self;
        faults::start(&app);
        let router = Router::new()
            .route("/healthz", get(healthz))
            .route("/metrics", get(metrics::render))
            .merge(if app.database.is_some() {
                pg::routes()
            } else {
                notes::routes()
            })
            .merge(accounts::routes())
            .merge(rooms::routes())
            .merge(sse::routes())
            .layer(socket_io::layer(&app))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&app),
                faults::gate,
            ))
            .with_state(Arc::clone(&app));
        use axum::serve::ListenerExt;
        println!(
            "headroom demo target listening on {}",
            listener.local_addr()?
        );
        let shutdown = faults::shutdown_signal(app.options.ignore_sigterm);
        if let Some(acceptor) = tls {
            return tls::serve(listener, acceptor, router, shutdown).await;
        }
        tokio::select! {
            // Small frames go out at once, as Node's `ws` and most servers send them.
            served = axum::serve(listener.tap_io(|tcp| { let _ = tcp.set_nodelay(true); }), router) => served,
            () = shutdown => {
                println!("headroom demo target stopping");
                Ok(())
            }
        }
    }
}

/// Binds and serves: what `headroom demo-target` runs.
pub async fn serve(options: Options) -> std::io::Result<()> {
    bind(options).await?.run().await
}

async fn healthz(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    match app.options.ready_after {
        Some(after) if app.started.elapsed() < after.as_std() => {
            (StatusCode::SERVICE_UNAVAILABLE, "starting")
        }
        _ => (StatusCode::OK, "ok"),
    }
}

/// CPU work of `cpu` on this thread's own CPU clock, as encoding a frame costs: a thread that
/// is preempted, or throttled by a CPU quota, still spends all of it. A wall-clock spin counts
/// the time it waited as work done, so under a quota of half a CPU a server that needs 0.65 of
/// one would seem to need less, and hold a load it cannot.
pub(crate) fn busy_cpu(cpu: std::time::Duration) {
    let thread_cpu = || {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        std::time::Duration::new(
            u64::try_from(now.tv_sec).unwrap_or(0),
            u32::try_from(now.tv_nsec).unwrap_or(0),
        )
    };
    let start = thread_cpu();
    let mut x: u64 = 1;
    while thread_cpu().saturating_sub(start) < cpu {
        for _ in 0..1000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
        std::hint::black_box(x);
    }
}

/// Synchronous work for `duration` of wall-clock time, as a handler that computes something:
/// its service time is the same however the machine shares its cores, which the queueing
/// known answers rely on.
pub(crate) fn busy(duration: std::time::Duration) {
    let start = std::time::Instant::now();
    let mut x: u64 = 1;
    while start.elapsed() < duration {
        for _ in 0..1000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
        std::hint::black_box(x);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// CPU work is counted on the thread's own clock: it never ends before that much wall
    /// time (a thread cannot run faster than the clock), and it ends.
    #[test]
    fn cpu_work_spends_its_cpu_time() {
        let started = Instant::now();
        super::busy_cpu(Duration::from_millis(30));
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(30), "{took:?}");
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}
