//! The dashboard's listener, capped: at most [`MOST_CONNECTIONS`] connections open at once, so
//! idle clients (or, with `--dashboard-host`, anyone on the network) cannot take the file
//! descriptors the run's load needs. A connection over the cap is closed as it is accepted,
//! and a place is never held for nothing: a connection not answered within
//! [`FIRST_ANSWER`] (a request that never came whole: a half-request held open) or idle for
//! [`IDLE`] is closed, so idle clients cannot lock a browser out for the whole run.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// The longest a connection waits for its first answer: its request must come whole first.
#[cfg(not(test))]
pub(super) const FIRST_ANSWER: Duration = Duration::from_secs(10);
/// The same, short, so a test fills the cap and sees it freed in a moment.
#[cfg(test)]
pub(super) const FIRST_ANSWER: Duration = Duration::from_millis(500);
/// The longest a connection is kept with nothing read or written (the event stream sends a
/// keep-alive every 15 s).
pub(super) const IDLE: Duration = Duration::from_secs(60);

/// Connections the dashboard holds open at most (a browser holds one or two: the page and its
/// event stream). docs/live.md says it.
pub(super) const MOST_CONNECTIONS: usize = 64;

/// A listener that holds at most [`MOST_CONNECTIONS`] connections at once.
pub(super) struct Capped {
    listener: TcpListener,
    open: Arc<Semaphore>,
}

impl Capped {
    pub(super) fn new(listener: TcpListener) -> Capped {
        Capped {
            listener,
            open: Arc::new(Semaphore::new(MOST_CONNECTIONS)),
        }
    }
}

impl axum::serve::Listener for Capped {
    type Io = CappedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (CappedStream, SocketAddr) {
        loop {
            let (stream, address) = axum::serve::Listener::accept(&mut self.listener).await;
            // Over the cap: dropped, so closed, at once; it holds nothing.
            if let Ok(permit) = Arc::clone(&self.open).try_acquire_owned() {
                let now = Instant::now();
                return (
                    CappedStream {
                        stream,
                        _permit: permit,
                        answered: false,
                        last: now,
                        deadline: Box::pin(tokio::time::sleep_until(now + FIRST_ANSWER)),
                    },
                    address,
                );
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// An accepted connection, holding its place under the cap until it closes or times out.
pub(super) struct CappedStream {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    /// Whether anything was written to it yet (its first request answered).
    answered: bool,
    /// When it last read or wrote.
    last: Instant,
    /// When it is closed if nothing happens before.
    deadline: Pin<Box<Sleep>>,
}

impl CappedStream {
    /// The deadline from now: the first answer's, or the idle one's.
    fn moved(&mut self) {
        self.last = Instant::now();
        let until = if self.answered {
            self.last + IDLE
        } else {
            self.deadline.deadline()
        };
        self.deadline.as_mut().reset(until);
    }
}

impl AsyncRead for CappedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(read) => {
                if buf.filled().len() > before {
                    this.moved();
                }
                Poll::Ready(read)
            }
            // Waiting for bytes: past its deadline, the connection gives its place up.
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    if this.answered {
                        "idle"
                    } else {
                        "no whole request"
                    },
                ))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for CappedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.answered = true;
            this.moved();
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.answered = true;
            this.moved();
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
