//! A stream's HTTP/1.1 exchange, kept lean because thousands of streams sit idle: the `GET`
//! written in one write, the answer's head parsed by httparse, the body decoded in place
//! (chunked, a length, or to the close) from a 1 KiB buffer. hyper's client keeps an 8 KiB
//! write buffer, a read buffer and a task per connection: an idle stream cost the generator
//! 19.2 KiB through it, 1.84× a WebSocket (the socket bench).

use std::mem::MaybeUninit;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::tls::Transport;

/// The buffer's room for one read; a read never waits holding more.
const READ: usize = 1024;

/// A head larger than this is not an event stream's.
const MAX_HEAD: usize = 16 * 1024;

/// Headers an answer may have.
const MAX_HEADERS: usize = 64;

/// How the body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Chunks, each `size` in hex, the chunk, CRLF; the last of size 0, then trailers.
    Chunked(Chunk),
    /// `Content-Length` bytes left.
    Length(u64),
    /// To the end of the connection.
    ToClose,
}

/// Where a chunked body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// At a chunk's size line.
    Size,
    /// In a chunk: bytes left.
    Data(u64),
    /// After a chunk: its CRLF.
    End,
    /// After the last chunk: trailer lines up to an empty one.
    Trailers,
}

/// How a body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// The server ended it: the last chunk, the length reached, or the close of a body that
    /// runs to the close.
    Ended,
    /// It broke: the connection closed or failed mid-body, or the body was not valid.
    Broken,
}

/// An answer's head, as far as a stream needs it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) event_stream: bool,
}

/// The body of a stream's answer, decoded as it arrives.
pub(crate) struct Body {
    transport: Transport,
    /// Bytes read and not yet decoded, from `start`.
    buffer: Vec<u8>,
    start: usize,
    framing: Framing,
    /// Bytes that came with the head (a resumed stream's replay, often) and were not decoded
    /// yet: the first `fill` hands them over without waiting for more.
    unread: bool,
}

impl Body {
    /// Writes `request` (a whole head) on `transport` and reads the answer's head.
    pub(crate) async fn exchange(
        mut transport: Transport,
        request: &[u8],
    ) -> std::io::Result<(Head, Body)> {
        transport.write_all(request).await?;
        transport.flush().await?;
        let mut buffer = Vec::with_capacity(READ);
        loop {
            if buffer.capacity() - buffer.len() < READ {
                buffer.reserve(READ);
            }
            if transport.read_buf(&mut buffer).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            if let Some((head, framing, length)) = parse_head(&buffer)? {
                let unread = length < buffer.len();
                let body = Body {
                    transport,
                    buffer,
                    start: length,
                    framing,
                    unread,
                };
                return Ok((head, body));
            }
        }
    }

    /// Waits for more of the body: `Ok(false)` at the connection's end. Cancel-safe: a read
    /// that did not finish read nothing.
    pub(crate) async fn fill(&mut self) -> std::io::Result<bool> {
        if std::mem::take(&mut self.unread) {
            return Ok(true);
        }
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
            // A large event grew the buffer: an idle stream keeps one read's room only.
            if self.buffer.capacity() > 4 * READ {
                self.buffer.shrink_to(READ);
            }
        }
        if self.buffer.capacity() - self.buffer.len() < READ {
            self.buffer.reserve(READ);
        }
        Ok(self.transport.read_buf(&mut self.buffer).await? > 0)
    }

    /// Hands the body's bytes read so far to `data`; `Some` when the body ended.
    pub(crate) fn decode(&mut self, data: &mut impl FnMut(&[u8])) -> Option<BodyEnd> {
        loop {
            let available = &self.buffer[self.start..];
            let (used, ended) = match self.framing {
                Framing::ToClose => {
                    if !available.is_empty() {
                        data(available);
                    }
                    (available.len(), None)
                }
                Framing::Length(left) => {
                    let take = available
                        .len()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    if take > 0 {
                        data(&available[..take]);
                    }
                    self.framing = Framing::Length(left - take as u64);
                    let ended = (left == take as u64).then_some(BodyEnd::Ended);
                    (take, ended)
                }
                Framing::Chunked(chunk) => match self.chunk(chunk, data) {
                    Ok(Some(used)) => (used, None),
                    Ok(None) => return None,
                    Err(end) => return Some(end),
                },
            };
            self.start += used;
            if ended.is_some() {
                return ended;
            }
            if used == 0 || self.start == self.buffer.len() {
                return None;
            }
        }
    }

    /// What the connection's end means for the body.
    pub(crate) fn at_close(&self) -> BodyEnd {
        match self.framing {
            Framing::ToClose => BodyEnd::Ended,
            _ => BodyEnd::Broken,
        }
    }

    /// One step of a chunked body: the bytes used (`None`: more are needed), or its end.
    fn chunk(
        &mut self,
        chunk: Chunk,
        data: &mut impl FnMut(&[u8]),
    ) -> Result<Option<usize>, BodyEnd> {
        let available = &self.buffer[self.start..];
        match chunk {
            Chunk::Size => match httparse::parse_chunk_size(available) {
                Ok(httparse::Status::Complete((used, 0))) => {
                    self.framing = Framing::Chunked(Chunk::Trailers);
                    Ok(Some(used))
                }
                Ok(httparse::Status::Complete((used, size))) => {
                    self.framing = Framing::Chunked(Chunk::Data(size));
                    Ok(Some(used))
                }
                Ok(httparse::Status::Partial) if available.len() < 1024 => Ok(None),
                _ => Err(BodyEnd::Broken),
            },
            Chunk::Data(left) => {
                let take = available
                    .len()
                    .min(usize::try_from(left).unwrap_or(usize::MAX));
                if take == 0 {
                    return Ok(None);
                }
                data(&available[..take]);
                let left = left - take as u64;
                self.framing = Framing::Chunked(if left == 0 {
                    Chunk::End
                } else {
                    Chunk::Data(left)
                });
                Ok(Some(take))
            }
            Chunk::End => match available {
                [b'\r', b'\n', ..] => {
                    self.framing = Framing::Chunked(Chunk::Size);
                    Ok(Some(2))
                }
                [] | [b'\r'] => Ok(None),
                _ => Err(BodyEnd::Broken),
            },
            Chunk::Trailers => match memchr::memmem::find(available, b"\r\n") {
                // The empty line: the body is over.
                Some(0) => Err(BodyEnd::Ended),
                Some(line) => Ok(Some(line + 2)),
                None if available.len() < MAX_HEAD => Ok(None),
                None => Err(BodyEnd::Broken),
            },
        }
    }
}

/// The head at the start of `buffer`, how its body ends and the head's length; `None` while it
/// is not whole.
fn parse_head(buffer: &[u8]) -> std::io::Result<Option<(Head, Framing, usize)>> {
    let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidData);
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buffer,
        &mut headers,
    );
    let length = match parsed {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if buffer.len() < MAX_HEAD => return Ok(None),
        _ => return Err(invalid()),
    };
    let status = response.code.ok_or_else(invalid)?;
    let mut framing = Framing::ToClose;
    let mut event_stream = false;
    for header in response.headers.iter() {
        let value = header.value.trim_ascii();
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            let last = value.rsplit(|b| *b == b',').next().unwrap_or(value);
            if last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                framing = Framing::Chunked(Chunk::Size);
            }
        } else if header.name.eq_ignore_ascii_case("content-length") {
            if matches!(framing, Framing::Chunked(_)) {
                continue;
            }
            let length = std::str::from_utf8(value)
                .ok()
                .and_then(|text| text.parse::<u64>().ok())
                .ok_or_else(invalid)?;
            framing = Framing::Length(length);
        } else if header.name.eq_ignore_ascii_case("content-type") {
            let mime = value.split(|b| *b == b';').next().unwrap_or(value);
            event_stream = mime.trim_ascii().eq_ignore_ascii_case(b"text/event-stream");
        }
    }
    Ok(Some((
        Head {
            status,
            event_stream,
        },
        framing,
        length,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body's bytes in whatever pieces: decoded to the same data and the same end.
    fn decoded(framing: Framing, pieces: &[&[u8]]) -> (Vec<u8>, Option<BodyEnd>) {
        // A transport is needed for the type only: decode never reads.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let transport = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            let address = listener.local_addr().expect("bound");
            let (transport, _) = Transport::open(address, crate::tls::Origin::default(), None)
                .await
                .expect("connected");
            transport
        });
        let mut body = Body {
            transport,
            buffer: Vec::new(),
            start: 0,
            framing,
            unread: false,
        };
        let mut out = Vec::new();
        let mut ended = None;
        for piece in pieces {
            body.buffer.extend_from_slice(piece);
            ended = body.decode(&mut |data| out.extend_from_slice(data));
            if ended.is_some() {
                break;
            }
        }
        (out, ended)
    }

    #[test]
    fn a_chunked_body_decodes_the_same_in_any_pieces() {
        let wire: &[u8] = b"5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nx-trailer: 1\r\n\r\n";
        for cut in 0..=wire.len() {
            let (data, ended) =
                decoded(Framing::Chunked(Chunk::Size), &[&wire[..cut], &wire[cut..]]);
            assert_eq!(data, b"hello world!", "cut at {cut}");
            assert_eq!(ended, Some(BodyEnd::Ended), "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = wire.chunks(1).collect();
        assert_eq!(
            decoded(Framing::Chunked(Chunk::Size), &bytes),
            (b"hello world!".to_vec(), Some(BodyEnd::Ended))
        );
    }

    #[test]
    fn a_bad_chunk_breaks_the_body_and_a_length_ends_it() {
        let (_, ended) = decoded(Framing::Chunked(Chunk::Size), &[b"zz\r\n"]);
        assert_eq!(ended, Some(BodyEnd::Broken));
        let (_, ended) = decoded(Framing::Chunked(Chunk::Size), &[b"2\r\nabX\r\n"]);
        assert_eq!(ended, Some(BodyEnd::Broken));
        let (data, ended) = decoded(Framing::Length(4), &[b"ab", b"cdef"]);
        assert_eq!(
            (data.as_slice(), ended),
            (&b"abcd"[..], Some(BodyEnd::Ended))
        );
        let (data, ended) = decoded(Framing::ToClose, &[b"ab", b"cd"]);
        assert_eq!((data.as_slice(), ended), (&b"abcd"[..], None));
    }

    #[test]
    fn the_head_says_the_status_the_type_and_the_framing() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\nrest";
        let (parsed, framing, length) = parse_head(head).expect("valid").expect("whole");
        assert_eq!(
            parsed,
            Head {
                status: 200,
                event_stream: true
            }
        );
        assert_eq!(framing, Framing::Chunked(Chunk::Size));
        assert_eq!(&head[length..], b"rest");
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n").expect("valid").is_none());
        let html =
            b"HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\ncontent-length: 3\r\n\r\n";
        let (parsed, framing, _) = parse_head(html).expect("valid").expect("whole");
        assert_eq!((parsed.status, parsed.event_stream), (404, false));
        assert_eq!(framing, Framing::Length(3));
    }
}
