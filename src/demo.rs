//! `headroom demo-target`: the built-in server under test, with its knobs as flags.

use anyhow::{Context, Result};

use crate::exit;

/// The demo target's knobs; sizes and durations are written as in specs.
#[derive(clap::Args)]
pub struct DemoTarget {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// The port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Bytes each open room holds while anyone is in it.
    #[arg(long, default_value = "0B")]
    room_state: headroom_spec::Size,
    /// Notes stored at start.
    #[arg(long, default_value_t = 0)]
    seed_notes: u64,
    /// The body size of each seeded note.
    #[arg(long, default_value = "200B")]
    note_size: headroom_spec::Size,
    /// Synchronous CPU work of one save pass.
    #[arg(long, default_value = "0s")]
    rebuild_cpu: headroom_spec::Duration,
    /// More CPU work per pass for every open room.
    #[arg(long, default_value = "0s")]
    rebuild_cpu_per_room: headroom_spec::Duration,
    /// How long after an edit its room is saved; edits reach the other peers after the pass.
    #[arg(long, default_value = "0s")]
    save_window: headroom_spec::Duration,
    /// CPU time each notes API request takes, served one at a time as a single-threaded server
    /// would: the API answers at most 1/DURATION requests a second
    #[arg(long, default_value = "0s")]
    request_cpu: headroom_spec::Duration,
    /// CPU time each notes API request takes on a thread of its own, in parallel with the
    /// others: the API answers at most 1/DURATION requests a second on each core it is given
    #[arg(long, default_value = "0s")]
    request_cpu_each: headroom_spec::Duration,
    /// Answer at most N requests a second (all but /healthz and /metrics) and the rest 503 at
    /// once: a known ceiling (a token bucket holding a tenth of a second's)
    #[arg(long, value_name = "N", value_parser = answer_rate)]
    answer_rate: Option<f64>,
    /// Hold every request for --stall-for once this often.
    #[arg(long)]
    stall_every: Option<headroom_spec::Duration>,
    /// How long each stall lasts.
    #[arg(long, default_value = "0s")]
    stall_for: headroom_spec::Duration,
    /// Hold one request in N (all but /healthz and /metrics) for --stall-one-for before
    /// answering it: a server some of whose requests get stuck
    #[arg(long, value_name = "N")]
    stall_one_in: Option<u64>,
    /// How long --stall-one-in's requests are held.
    #[arg(long, default_value = "0s")]
    stall_one_for: headroom_spec::Duration,
    /// The share of broadcasts to drop, spread evenly ("1%").
    #[arg(long, default_value = "0%")]
    drop_broadcasts: headroom_spec::Percent,
    /// The share of the broadcasts to one peer of each room (its first, of those open) to
    /// drop, spread evenly ("3%"): a peer that misses a known share of messages.
    #[arg(long, default_value = "0%")]
    drop_to_one_peer: headroom_spec::Percent,
    /// Exit with status 3 after this long.
    #[arg(long)]
    exit_after: Option<headroom_spec::Duration>,
    /// Answer /healthz with 503 until this long after start.
    #[arg(long)]
    ready_after: Option<headroom_spec::Duration>,
    /// Keep running on SIGTERM, so only SIGKILL stops it.
    #[arg(long)]
    ignore_sigterm: bool,
    /// Write this much log output at start ("100MB").
    #[arg(long, default_value = "0B")]
    log_spam: headroom_spec::Size,
    /// Ping every socket this often.
    #[arg(long)]
    ping_every: Option<headroom_spec::Duration>,
    /// Close sockets that sent nothing, not even a pong, for this long.
    #[arg(long)]
    idle_close: Option<headroom_spec::Duration>,
    /// CPU spent on each message frame sent to a peer ("250us"), as a server that encrypts or
    /// serializes per recipient does.
    #[arg(long, default_value = "0s")]
    frame_cpu: headroom_spec::Duration,
    /// Socket.IO (`/socket.io/`): ping every socket this often.
    #[arg(long, default_value = "25s")]
    socket_io_ping_interval: headroom_spec::Duration,
    /// Socket.IO: drop a socket whose pong is this late.
    #[arg(long, default_value = "20s")]
    socket_io_ping_timeout: headroom_spec::Duration,
    /// Socket.IO: disconnect every socket (packet `41`) this long after it connected.
    #[arg(long)]
    socket_io_disconnect_after: Option<headroom_spec::Duration>,
    /// SSE (`/sse/{room}`): end every stream this long after it opened, so clients reopen it
    /// with `Last-Event-ID`.
    #[arg(long)]
    sse_end_after: Option<headroom_spec::Duration>,
    /// Threads that spin on the CPU for as long as the server runs (to test CPU limits).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    busy_threads: u32,
    /// Serve HTTPS and WSS (HTTP/1.1 and HTTP/2 by ALPN) with this PEM certificate chain.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Serve HTTPS and WSS with a certificate for localhost made at start, which nothing
    /// trusts: load it with `insecure_skip_verify = true`.
    #[arg(long, conflicts_with = "tls_cert")]
    tls_self_signed: bool,
    /// Keep the notes in this PostgreSQL database (`postgres://user@127.0.0.1:PORT/db`)
    /// instead of memory; the notes table is made when it is not there. Seed it from a
    /// setup step (--seed-notes fills memory only).
    #[arg(long, conflicts_with = "seed_notes")]
    database: Option<String>,
    /// Connections to --database, every one opened at start and held.
    #[arg(long, default_value_t = 10, requires = "database", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pool: u32,
}

impl DemoTarget {
    fn options(self) -> headroom_demo::Options {
        headroom_demo::Options {
            host: self.host,
            port: self.port,
            room_state: self.room_state,
            seed_notes: self.seed_notes,
            note_size: self.note_size,
            rebuild_cpu: self.rebuild_cpu,
            rebuild_cpu_per_room: self.rebuild_cpu_per_room,
            save_window: self.save_window,
            request_cpu: self.request_cpu,
            request_cpu_each: self.request_cpu_each,
            answer_rate: self.answer_rate,
            stall_every: self.stall_every,
            stall_for: self.stall_for,
            stall_one_in: self.stall_one_in,
            stall_one_for: self.stall_one_for,
            drop_broadcasts: self.drop_broadcasts,
            drop_to_one_peer: self.drop_to_one_peer,
            exit_after: self.exit_after,
            ready_after: self.ready_after,
            ignore_sigterm: self.ignore_sigterm,
            log_spam: self.log_spam,
            ping_every: self.ping_every,
            idle_close: self.idle_close,
            frame_cpu: self.frame_cpu,
            socket_io_ping_interval: self.socket_io_ping_interval,
            socket_io_ping_timeout: self.socket_io_ping_timeout,
            socket_io_disconnect_after: self.socket_io_disconnect_after,
            sse_end_after: self.sse_end_after,
            busy_threads: self.busy_threads,
            tls: match (self.tls_cert, self.tls_key) {
                (Some(cert), Some(key)) => Some(headroom_demo::Certificate::Files { cert, key }),
                _ if self.tls_self_signed => Some(headroom_demo::Certificate::SelfSigned),
                _ => None,
            },
            database: self.database,
            pool: self.pool,
        }
    }
}

/// `--answer-rate`: requests a second, a positive number.
fn answer_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a rate: give the requests a second it answers, a number over 0 (`500`)"
        )),
    }
}

pub fn run(args: DemoTarget) -> Result<u8> {
    let options = args.options();
    // Seeded notes are made before the port opens: too many would abort on allocation, or
    // swap the machine, long before a readiness timeout says anything.
    let seeded = headroom_demo::seed_bytes(options.seed_notes, options.note_size.bytes());
    let available = headroom_runner::machine::Machine::read().available_memory;
    if let Some(available) = available.filter(|a| seeded > *a / 2) {
        anyhow::bail!(
            "--seed-notes {} of --note-size {} take about {} MiB, and this machine has {} MiB available: seed fewer or smaller notes (at most half the available memory)",
            options.seed_notes,
            options.note_size,
            headroom_templates::format::count((seeded / (1024 * 1024)) as f64),
            headroom_templates::format::count((available / (1024 * 1024)) as f64)
        );
    }
    let address = format!("{}:{}", options.host, options.port);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(headroom_demo::serve(options))
        .with_context(|| format!("the demo target cannot listen on {address}"))?;
    Ok(exit::OK)
}
