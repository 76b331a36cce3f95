//! The dashboard's listener, capped: at most [`MOST_CONNECTIONS`] connections open at once, so
//! idle clients (or, with `--dashboard-host`, anyone on the network) cannot take the file
//! descriptors the run's load needs. A connection over the cap is closed as it is accepted.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
                return (
                    CappedStream {
                        stream,
                        _permit: permit,
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

/// An accepted connection, holding its place under the cap until it closes.
pub(super) struct CappedStream {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for CappedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for CappedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
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
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
