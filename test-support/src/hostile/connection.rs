//! What every hostile server does with a connection: wait for a request's head, and hold a
//! connection the client may close.

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Keeps a connection open and unanswered until the client gives up on it (closes it), the
/// server stops or its lifetime ends: a client's timeout frees the thread.
pub(super) fn hold_unanswered(stream: &mut TcpStream, stop: &AtomicBool, deadline: Instant) {
    let mut buffer = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match stream.read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Where a request's headers end (after the blank line), once they have.
pub(super) fn header_end(request: &[u8]) -> Option<usize> {
    request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}
