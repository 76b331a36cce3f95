//! Servers that misbehave the way real ones do, for the load generator's unit tests and the
//! end-to-end runs alike: one that never accepts (its listen queue full), one that accepts
//! and never answers, one that answers a few requests and dies, one that reads slowly. Each
//! listens on loopback only, serves from threads of its own, and stops when dropped or after
//! [`LIFETIME`], whichever comes first: a test that forgets one leaves nothing running.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a hostile server serves: no test loads one longer.
pub const LIFETIME: Duration = Duration::from_secs(60);

/// The most connections one serves at a time (a thread each); more wait in the queue.
const MOST_CONNECTIONS: u64 = 256;

/// How often a waiting thread looks whether its server was dropped.
const POLL: Duration = Duration::from_millis(20);

/// The answer every hostile server that answers gives.
const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

/// A loopback server whose listen queue is full and which never accepts: the kernel drops
/// the SYNs of new connections, so a connect waits out its retries (two minutes) unless the
/// client gives up first. What the queue holds completed its handshake and is never served.
pub struct NeverAccepting {
    port: u16,
    _listener: socket2::Socket,
    _queued: Vec<TcpStream>,
}

impl NeverAccepting {
    /// Listens with a backlog of one and fills the queue.
    pub fn start() -> NeverAccepting {
        use socket2::{Domain, Socket, Type};
        let listener = Socket::new(Domain::IPV4, Type::STREAM, None)
            .unwrap_or_else(|e| panic!("a socket: {e}"));
        let any_port = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        listener
            .bind(&any_port.into())
            .unwrap_or_else(|e| panic!("bound to loopback: {e}"));
        listener
            .listen(1)
            .unwrap_or_else(|e| panic!("listening: {e}"));
        let port = listener
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map_or_else(|| panic!("a loopback address"), |a| a.port());
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        // Fill the accept queue: a connect that completes sits there, never accepted; once
        // the queue is full, connects time out.
        let queued = (0..4)
            .filter_map(|_| TcpStream::connect_timeout(&address, Duration::from_millis(300)).ok())
            .collect();
        NeverAccepting {
            port,
            _listener: listener,
            _queued: queued,
        }
    }

    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// What a hostile server does with a connection it accepted.
#[derive(Clone, Copy, Debug)]
enum Manner {
    /// Reads the request and never answers (the connection stays open until the server goes).
    Stalls,
    /// Reads the request and answers `200`; after `answers` answers, closes its listener and
    /// every connection it holds.
    DiesAfter { answers: u64 },
    /// Reads the request `chunk` bytes every `every`, then answers `200`.
    ReadsSlowly { chunk: usize, every: Duration },
    /// Answers an upgrade or a stream the way no server should (`upgrade.rs`).
    Upgrades(Upgrade),
}

/// A server that answers every upgrade (or stream) as `upgrade` says, then holds the
/// connection until the client goes.
pub fn upgrading(upgrade: Upgrade) -> Hostile {
    Hostile::start(Manner::Upgrades(upgrade))
}

/// A hostile server that accepts: the way it misbehaves, its counts, and its thread.
pub struct Hostile {
    port: u16,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    acceptor: Option<JoinHandle<()>>,
}

/// What a hostile server saw.
#[derive(Default, Debug)]
struct Counts {
    accepted: AtomicU64,
    requests: AtomicU64,
    answered: AtomicU64,
    open: AtomicU64,
}

/// A server that accepts, reads each request, and never answers it: a hung worker, a lost
/// lock. Every request waits out the client's timeout.
pub fn stalling() -> Hostile {
    Hostile::start(Manner::Stalls)
}

/// A server that answers `200` to its first `answers` requests (one a connection), then dies:
/// its listener closed, so later connects are refused. With a few answers, it is also the
/// readiness port of a target that itself never answers.
pub fn dying_after(answers: u64) -> Hostile {
    Hostile::start(Manner::DiesAfter { answers })
}

/// A server that reads each request `chunk` bytes every `every` before it answers `200`: a
/// request of `n` bytes is answered no sooner than `(n / chunk − 1) × every` after it arrived.
pub fn reading_slowly(chunk: usize, every: Duration) -> Hostile {
    assert!(chunk > 0, "a slow reader reads something");
    Hostile::start(Manner::ReadsSlowly { chunk, every })
}

impl Hostile {
    fn start(manner: Manner) -> Hostile {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap_or_else(|e| panic!("bound to loopback: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("its address: {e}"))
            .port();
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("a non-blocking listener: {e}"));
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let acceptor = {
            let (stop, counts) = (Arc::clone(&stop), Arc::clone(&counts));
            std::thread::spawn(move || accept(&listener, manner, &stop, &counts))
        };
        Hostile {
            port,
            stop,
            counts,
            acceptor: Some(acceptor),
        }
    }

    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.counts.accepted.load(Ordering::Relaxed)
    }

    /// Requests read in full so far.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::Relaxed)
    }

    /// Requests answered so far.
    pub fn answered(&self) -> u64 {
        self.counts.answered.load(Ordering::Relaxed)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// The accept loop: until dropped, dead or past its lifetime. Each connection is served on a
/// thread of its own, at most [`MOST_CONNECTIONS`] at a time; all are joined before it ends.
fn accept(listener: &TcpListener, manner: Manner, stop: &Arc<AtomicBool>, counts: &Arc<Counts>) {
    let deadline = Instant::now() + LIFETIME;
    let mut served = Vec::new();
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        if let Manner::DiesAfter { answers } = manner
            && counts.answered.load(Ordering::Relaxed) >= answers
        {
            break;
        }
        if counts.open.load(Ordering::Relaxed) >= MOST_CONNECTIONS {
            std::thread::sleep(POLL);
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                counts.accepted.fetch_add(1, Ordering::Relaxed);
                counts.open.fetch_add(1, Ordering::Relaxed);
                let (stop, counts) = (Arc::clone(stop), Arc::clone(counts));
                served.push(std::thread::spawn(move || {
                    serve(stream, manner, &stop, &counts, deadline);
                    counts.open.fetch_sub(1, Ordering::Relaxed);
                }));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
    // A dying server's connections die with it.
    stop.store(true, Ordering::Relaxed);
    for thread in served {
        let _ = thread.join();
    }
}

/// One connection, served in `manner` until the server stops.
fn serve(
    mut stream: TcpStream,
    manner: Manner,
    stop: &AtomicBool,
    counts: &Counts,
    deadline: Instant,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(POLL));
    let pace = match manner {
        Manner::ReadsSlowly { chunk, every } => Some((chunk, every)),
        Manner::Upgrades(upgrade) => {
            upgrade::serve(&mut stream, upgrade, stop, deadline);
            return;
        }
        Manner::Stalls | Manner::DiesAfter { .. } => None,
    };
    if read_request(&mut stream, pace, stop, deadline).is_none() {
        return;
    }
    counts.requests.fetch_add(1, Ordering::Relaxed);
    match manner {
        Manner::Stalls => hold_unanswered(&mut stream, stop, deadline),
        Manner::DiesAfter { answers } => {
            // One answer more than promised is never given, however many came at once.
            let given = counts.answered.fetch_add(1, Ordering::Relaxed);
            if given < answers && stream.write_all(ANSWER).is_ok() {
                let _ = stream.flush();
            } else {
                counts.answered.fetch_sub(1, Ordering::Relaxed);
            }
        }
        Manner::ReadsSlowly { .. } => {
            if stream.write_all(ANSWER).is_ok() {
                counts.answered.fetch_add(1, Ordering::Relaxed);
            }
        }
        Manner::Upgrades(_) => {}
    }
}

/// Reads one request (its headers, then `content-length` bytes of body), `pace` bytes at a
/// time with a pause between, or as it comes. `None` when the peer went or the server stops.
fn read_request(
    stream: &mut TcpStream,
    pace: Option<(usize, Duration)>,
    stop: &AtomicBool,
    deadline: Instant,
) -> Option<usize> {
    let chunk = pace.map_or(64 * 1024, |(chunk, _)| chunk);
    let mut buffer = vec![0u8; chunk];
    let mut request = Vec::new();
    let mut wanted: Option<usize> = None;
    loop {
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            return None;
        }
        match stream.read(&mut buffer) {
            Ok(0) => return None,
            Ok(read) => request.extend_from_slice(&buffer[..read]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => return None,
        }
        if wanted.is_none() {
            wanted = header_end(&request).map(|end| end + content_length(&request[..end]));
        }
        if let Some(wanted) = wanted
            && request.len() >= wanted
        {
            return Some(request.len());
        }
        if let Some((_, every)) = pace {
            std::thread::sleep(every);
        }
    }
}

/// The `content-length` among `headers`, 0 without one.
fn content_length(headers: &[u8]) -> usize {
    String::from_utf8_lossy(headers)
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

mod connection;
mod upgrade;

use connection::{header_end, hold_unanswered};
pub use upgrade::Upgrade;

#[cfg(test)]
mod tests;
