//! Upgrades answered wrong: a WebSocket handshake with the wrong accept key, a Socket.IO
//! session whose open packet is not one, a frame over any client's bound, an event stream
//! whose one event never ends.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::connection::{header_end, hold_unanswered};

/// How a hostile server answers a WebSocket upgrade or an event stream's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upgrade {
    /// `101`, with a `Sec-WebSocket-Accept` that is not the key's.
    WrongAcceptKey,
    /// A right `101`, then an Engine.IO open packet that is not one (`0not json`).
    MalformedEngineIoOpen,
    /// A right `101`, then a binary frame's header announcing 100 MiB.
    OversizedFrame,
    /// `200 text/event-stream`, then one event's data line of 9 MiB, never ended.
    OversizedEvent,
}

/// Reads the request's head and answers as `upgrade` says, then holds the connection.
pub(super) fn serve(
    stream: &mut TcpStream,
    upgrade: Upgrade,
    stop: &AtomicBool,
    deadline: Instant,
) {
    let Some(head) = read_head(stream, stop, deadline) else {
        return;
    };
    let key = header(&head, "sec-websocket-key").unwrap_or_default();
    let switching = |accept: &str| {
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        )
    };
    let right =
        switching(&tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes()));
    let mut answer: Vec<u8> = match upgrade {
        Upgrade::WrongAcceptKey => switching("d3JvbmcgYWNjZXB0IGtleQ==").into_bytes(),
        Upgrade::MalformedEngineIoOpen => {
            let mut bytes = right.into_bytes();
            // An unmasked text frame: `0not json`.
            let packet = b"0not json";
            bytes.extend_from_slice(&[0x81, packet.len() as u8]);
            bytes.extend_from_slice(packet);
            bytes
        }
        Upgrade::OversizedFrame => {
            let mut bytes = right.into_bytes();
            // A binary frame's header announcing 100 MiB; its payload never follows.
            bytes.extend_from_slice(&[0x82, 127]);
            bytes.extend_from_slice(&(100u64 << 20).to_be_bytes());
            bytes
        }
        Upgrade::OversizedEvent => {
            let mut bytes =
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\ndata: "
                    .to_vec();
            bytes.resize(bytes.len() + (9 << 20), b'x');
            bytes
        }
    };
    if stream.write_all(&answer).is_err() {
        return;
    }
    answer.clear();
    let _ = stream.flush();
    hold_unanswered(stream, stop, deadline);
}

/// A request's head, once its blank line came; `None` when the client went first.
fn read_head(stream: &mut TcpStream, stop: &AtomicBool, deadline: Instant) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match stream.read(&mut buffer) {
            Ok(0) => return None,
            Ok(read) => head.extend_from_slice(&buffer[..read]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return None,
        }
        if let Some(end) = header_end(&head) {
            return Some(String::from_utf8_lossy(&head[..end]).into_owned());
        }
    }
    None
}

/// A header's value in a request's head.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim().to_owned())
}
