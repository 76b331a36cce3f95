//! `run --dashboard`: a page served while the run lasts (on loopback unless
//! `--dashboard-host` says otherwise), its figures pushed as server-sent events, never
//! polled. Everything it needs is in the binary. The server works on a thread and a runtime
//! of its own; the run only appends a message to a list and wakes it. `--dashboard-export`
//! writes the final dashboard as one self-contained file that replays the messages.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse};
use futures_util::stream::{self, Stream};
use headroom_runner::Event;
use tokio::sync::{broadcast, oneshot};

mod capped;
mod messages;

use messages::{Message, Messages};

/// The page: its HTML, styles and script, served as one document.
const PAGE: &str = include_str!("page.html");

/// Where the recorded messages go in an exported page (the script replays them).
const RECORDED: &str = "<!--recorded-->";

/// Messages kept for a browser that comes late, and for the export.
struct Log {
    messages: Mutex<Vec<String>>,
    news: broadcast::Sender<String>,
}

impl Log {
    /// A message as JSON, kept and pushed to every browser attached.
    fn add(&self, message: &Message) {
        let Ok(text) = serde_json::to_string(message) else {
            return;
        };
        if let Ok(mut messages) = self.messages.lock() {
            messages.push(text.clone());
            // No browser attached is no error.
            let _ = self.news.send(text);
        }
    }

    /// What a browser attaching now gets: every message so far, then the new ones.
    fn attach(&self) -> (Vec<String>, broadcast::Receiver<String>) {
        let messages = self.messages.lock().map(|m| m.clone()).unwrap_or_default();
        (messages, self.news.subscribe())
    }
}

/// The dashboard of one run: its messages, the server (if it serves) and the export.
pub(crate) struct Dashboard {
    log: Arc<Log>,
    following: Messages,
    server: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
    /// Where the server listens, as bound (the port the kernel chose for `--dashboard-port 0`).
    pub(crate) address: Option<SocketAddr>,
    export: Option<crate::outputs::Claimed>,
}

/// How the dashboard was asked for.
pub(crate) struct DashboardOptions {
    /// Serve it at this address.
    pub(crate) serve: Option<SocketAddr>,
    /// Write the final page here.
    pub(crate) export: Option<crate::outputs::Claimed>,
}

impl Dashboard {
    /// The dashboard, its server listening already (a port taken is refused here, before
    /// anything runs); `bench` and `run_id` head the page.
    pub(crate) fn start(
        options: DashboardOptions,
        bench: &str,
        run_id: &str,
    ) -> anyhow::Result<Dashboard> {
        let (news, _) = broadcast::channel(4096);
        let log = Arc::new(Log {
            messages: Mutex::new(Vec::new()),
            news,
        });
        let (server, address) = match options.serve {
            Some(address) => {
                let (server, bound) = serve(address, Arc::clone(&log))?;
                (Some(server), Some(bound))
            }
            None => (None, None),
        };
        Ok(Dashboard {
            log,
            following: Messages::new(bench, run_id),
            server,
            address,
            export: options.export,
        })
    }

    /// The runner's event, as the page's message.
    pub(crate) fn event(&mut self, event: &Event<'_>) {
        if let Some(message) = self.following.of(event) {
            self.log.add(&message);
        }
    }

    /// The run is over: its results and page (the page's Markdown shown on the dashboard);
    /// the export written, the server stopped. What went wrong with the export, if anything.
    pub(crate) fn finish(
        mut self,
        results: &std::path::Path,
        page: Option<PathBuf>,
    ) -> Option<String> {
        let page_markdown = page.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
        self.log.add(&Message::Finished {
            results: results.display().to_string(),
            page: page.map(|p| p.display().to_string()),
            page_markdown,
        });
        let failed = self.export.take().and_then(|claimed| {
            let recorded = self.log.attach().0.join(",");
            // `</` inside a script ends it: JSON may hold it in a page's text.
            let recorded = recorded.replace("</", "<\\/");
            let page = PAGE.replacen(
                RECORDED,
                &format!("<script id=\"recorded\" type=\"application/json\">[{recorded}]</script>"),
                1,
            );
            crate::outputs::write(&claimed, &page)
                .err()
                .map(|e| format!("--dashboard-export {}: {e}", claimed.path.display()))
        });
        if let Some((stop, thread)) = self.server.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        failed
    }
}

/// The server's thread, and how to tell it to stop.
type Serving = (oneshot::Sender<()>, JoinHandle<()>);

/// Listens on `address` and serves the page and its events on a thread of its own until
/// told to stop, [`capped::MOST_CONNECTIONS`] connections at most: the thread and where it
/// listens, as bound.
fn serve(address: SocketAddr, log: Arc<Log>) -> anyhow::Result<(Serving, SocketAddr)> {
    let listener = std::net::TcpListener::bind(address).map_err(|e| {
        anyhow::anyhow!(
            "--dashboard: cannot listen on {address}: {e} ({})",
            bind_hint(&e)
        )
    })?;
    let bound = listener
        .local_addr()
        .context("--dashboard: where it listens")?;
    listener.set_nonblocking(true)?;
    let (stop, stopped) = oneshot::channel::<()>();
    let thread =
        std::thread::Builder::new()
            .name("headroom-dashboard".to_owned())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let app = axum::Router::new()
                    .route("/", axum::routing::get(|| async { Html(PAGE) }))
                    .route("/events", axum::routing::get(move || events(Arc::clone(&log))));
                // A browser's event stream stays open: once told to stop, the server waits
                // a moment for it, then the runtime ends and drops it.
                let server = axum::serve(capped::Capped::new(listener), app).into_future();
                tokio::select! {
                    _ = server => {}
                    _ = stopped => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
                }
            });
            })?;
    Ok(((stop, thread), bound))
}

/// What to do about an address the dashboard cannot listen on, by why.
fn bind_hint(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::AddrInUse => {
            "the port is taken: --dashboard-port chooses another, 0 any free one"
        }
        std::io::ErrorKind::AddrNotAvailable => {
            "no interface of this machine has that address: --dashboard-host takes one of its own, or 0.0.0.0 for all"
        }
        std::io::ErrorKind::PermissionDenied => {
            "a port under 1024 needs privileges: --dashboard-port chooses another"
        }
        _ => "--dashboard-host and --dashboard-port choose where it listens",
    }
}

/// The page's event stream: every message so far, then each new one as it comes.
async fn events(log: Arc<Log>) -> impl IntoResponse {
    let (backlog, news) = log.attach();
    let backlog = stream::iter(
        backlog
            .into_iter()
            .map(|text| Ok(SseEvent::default().data(text))),
    );
    Sse::new(futures_util::StreamExt::chain(backlog, news_stream(news)))
        .keep_alive(KeepAlive::default())
}

/// New messages as they come; a browser too slow to take them all skips the ones it missed.
fn news_stream(
    news: broadcast::Receiver<String>,
) -> impl Stream<Item = Result<SseEvent, std::convert::Infallible>> {
    stream::unfold(news, |mut news| async move {
        loop {
            match news.recv().await {
                Ok(text) => return Some((Ok(SseEvent::default().data(text)), news)),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: an address the dashboard cannot listen on gets the hint for why: a taken
    /// port, or an address no interface of this machine has (binding only: nothing connects).
    #[test]
    fn a_dashboard_that_cannot_listen_says_why() {
        let log = || {
            Arc::new(Log {
                messages: Mutex::new(Vec::new()),
                news: broadcast::channel(4).0,
            })
        };
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let address = taken.local_addr().expect("its address");
        let error = serve(address, log()).expect_err("the port is taken");
        assert!(
            error
                .to_string()
                .contains("the port is taken: --dashboard-port chooses another"),
            "{error}"
        );
        // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine's interface has it.
        let elsewhere = SocketAddr::from(([192, 0, 2, 1], 0));
        let error = serve(elsewhere, log()).expect_err("not this machine's");
        assert!(
            error
                .to_string()
                .contains("no interface of this machine has that address"),
            "{error}"
        );
        // Port 0: the port the kernel chose is the one said.
        let ((stop, thread), bound) =
            serve(SocketAddr::from(([127, 0, 0, 1], 0)), log()).expect("any free port");
        assert_ne!(bound.port(), 0);
        let _ = stop.send(());
        let _ = thread.join();
    }

    /// Issue 57: the cap filled by half-requests (a request line and no end of headers, held
    /// open) does not lock a browser out: each is closed once its first answer is overdue,
    /// and the page is served again.
    #[test]
    fn half_requests_do_not_hold_the_cap() {
        use std::io::{Read, Write};
        use std::time::Duration;
        let log = Arc::new(Log {
            messages: Mutex::new(Vec::new()),
            news: broadcast::channel(4).0,
        });
        let ((stop, thread), bound) =
            serve(SocketAddr::from(([127, 0, 0, 1], 0)), log).expect("a dashboard");
        let half: Vec<std::net::TcpStream> = (0..capped::MOST_CONNECTIONS)
            .map(|_| {
                let mut stream = std::net::TcpStream::connect(bound).expect("loopback");
                stream
                    .write_all(b"GET / HTTP/1.1\r\n")
                    .expect("half a request");
                stream
            })
            .collect();
        let page = |timeout: Duration| -> Option<String> {
            let mut stream = std::net::TcpStream::connect(bound).ok()?;
            stream.set_read_timeout(Some(timeout)).ok()?;
            stream
                .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                .ok()?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer).ok()?;
            Some(answer)
        };
        // The cap is full: a browser's request is closed unanswered.
        let refused = page(Duration::from_secs(2)).unwrap_or_default();
        assert!(!refused.starts_with("HTTP/1.1 200"), "{refused}");
        // Past the first answer's deadline the half-requests gave their places up.
        std::thread::sleep(capped::FIRST_ANSWER + Duration::from_millis(500));
        let served = page(Duration::from_secs(5)).expect("an answer");
        assert!(served.starts_with("HTTP/1.1 200"), "{served}");
        drop(half);
        let _ = stop.send(());
        let _ = thread.join();
    }
}
