//! Fault knobs: stalls, early exits, ignored signals, log floods. Each exists so a test can
//! show that headroom measures and survives what real servers do.

use std::io::Write;
use std::sync::Arc;

use tokio::sync::{RwLock, RwLockReadGuard};

use axum::response::IntoResponse;

use crate::App;

/// A gate every request passes; a stall holds it shut.
#[derive(Default)]
pub struct Stall {
    gate: RwLock<()>,
    /// Requests counted for `stall_one_in`.
    requests: std::sync::atomic::AtomicU64,
}

impl Stall {
    /// Whether this request is the one in `n` to hold (the `n`th, the `2n`th, …).
    fn one_in(&self, n: u64) -> bool {
        let k = self
            .requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        n > 0 && k % n == n - 1
    }

    /// Waits while a stall is on; the guard keeps the next stall from starting mid-request.
    pub async fn pass(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read().await
    }
}

/// Every request waits while a stall is on; its time in the server, up to the last of its
/// answer handed to the connection, is recorded.
pub async fn gate(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let path = request.uri().path();
    let counted = path != "/metrics";
    if counted
        && path != "/healthz"
        && let Some(ration) = &app.ration
        && !ration
            .lock()
            .map_or(true, |mut ration| ration.take(started))
    {
        return axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    if counted
        && path != "/healthz"
        && let Some(n) = app.options.stall_one_in
        && app.stall.one_in(n)
    {
        tokio::time::sleep(app.options.stall_one_for.as_std()).await;
    }
    let response = {
        let _open = app.stall.pass().await;
        next.run(request).await
    };
    if !counted {
        return response;
    }
    response.map(|body| {
        axum::body::Body::new(Answered {
            body,
            started,
            app: Arc::clone(&app),
        })
    })
}

/// An answer's body that records the request's time in the server when the connection has
/// taken all of it (hyper drops a body once written): a burst of answers after a stall counts
/// its wait to be written, as the client sees it.
struct Answered {
    body: axum::body::Body,
    started: std::time::Instant,
    app: Arc<App>,
}

impl axum::body::HttpBody for Answered {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Answered {
    fn drop(&mut self) {
        self.app.metrics.answered(self.started.elapsed());
    }
}

/// Starts the background faults the options ask for.
pub fn start(app: &Arc<App>) {
    let options = &app.options;
    for _ in 0..options.busy_threads {
        // Plain threads, off the runtime: they never yield, and never end before the process.
        std::thread::spawn(|| {
            loop {
                crate::busy(std::time::Duration::from_secs(1));
            }
        });
    }
    if let Some(every) = options.stall_every {
        let app = Arc::clone(app);
        let stall_for = options.stall_for.as_std();
        let gap = every.as_std().saturating_sub(stall_for);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(gap).await;
                let _closed = app.stall.gate.write().await;
                app.metrics
                    .stalls
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(stall_for).await;
            }
        });
    }
    if let Some(after) = options.exit_after {
        tokio::spawn(async move {
            tokio::time::sleep(after.as_std()).await;
            eprintln!("headroom demo target: exiting after {after} as asked (--exit-after)");
            std::process::exit(3);
        });
    }
    let spam = options.log_spam.bytes();
    if spam > 0 {
        tokio::task::spawn_blocking(move || {
            let line =
                "headroom demo target: a log line that is here to fill the disk ..........\n";
            let mut stdout = std::io::stdout().lock();
            let mut written = 0u64;
            while written < spam {
                if stdout.write_all(line.as_bytes()).is_err() {
                    break;
                }
                written += line.len() as u64;
            }
            // Said once the flood is out, so a test can wait for it instead of guessing.
            let _ = writeln!(
                stdout,
                "headroom demo target: log flood of {written} bytes done"
            );
            let _ = stdout.flush();
        });
    }
}

/// Resolves on SIGINT, or on SIGTERM unless it is to be ignored.
pub async fn shutdown_signal(ignore_sigterm: bool) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without signal handlers the default disposition ends the process: nothing to wait for.
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = terminate.recv() => {
                if ignore_sigterm {
                    eprintln!("headroom demo target: ignoring SIGTERM as asked (--ignore-sigterm)");
                    continue;
                }
                return;
            }
            _ = interrupt.recv() => return,
        }
    }
}
