//! HTTP/2 for a scenario with `http_version = "2"`: hyper's client on one connection per load
//! thread and address, every request of the thread's workers a stream multiplexed on it (over
//! TLS with ALPN `h2`, or prior knowledge on `http://`). A connection that closes is opened
//! again by the next request that finds it closed.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::recorder::Failed;
use super::wire::Sink;
use crate::tls::Transport;
use crate::web::ErrorKind;

/// A request's parts, made once per scenario.
pub(super) struct H2Request {
    method: Method,
    uri: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2); `host` becomes the `:authority`.
const CONNECTION_SPECIFIC: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

impl H2Request {
    /// The request to `scheme://authority{path}`; a `Host` header of the spec's names the
    /// `:authority` instead.
    pub(super) fn new(
        method: &str,
        secure: bool,
        authority: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<H2Request, String> {
        let authority = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("host"))
            .map_or(authority, |(_, value)| value.as_str());
        let scheme = if secure { "https" } else { "http" };
        let uri: Uri = format!("{scheme}://{authority}{path}")
            .parse()
            .map_err(|e| {
                format!("`{scheme}://{authority}{path}` is not a URI HTTP/2 can send: {e}")
            })?;
        let method =
            Method::from_bytes(method.as_bytes()).map_err(|e| format!("method `{method}`: {e}"))?;
        let mut parts = Vec::new();
        for (name, value) in headers {
            if CONNECTION_SPECIFIC
                .iter()
                .any(|forbidden| name.eq_ignore_ascii_case(forbidden))
            {
                continue;
            }
            let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|e| format!("header `{name}`: {e}"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| format!("the value of header `{name}`: {e}"))?;
            parts.push((name, value));
        }
        Ok(H2Request {
            method,
            uri,
            headers: parts,
            body: Bytes::copy_from_slice(body),
        })
    }

    fn to_request(&self) -> Result<Request<Full<Bytes>>, Failed> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(self.uri.clone());
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder
            .body(Full::new(self.body.clone()))
            .map_err(|_| Failed::Kind(ErrorKind::Protocol))
    }
}

/// A load thread's HTTP/2 connections, one per address, shared by its workers.
pub struct Streams {
    senders: Vec<tokio::sync::Mutex<Option<SendRequest<Full<Bytes>>>>>,
}

/// A sender on an open connection, and whether this request opened it (with its TLS
/// handshake's time).
pub(super) struct Ready {
    pub(super) sender: SendRequest<Full<Bytes>>,
    pub(super) opened: Option<Option<Duration>>,
}

impl Streams {
    /// No connection open yet to any of `addresses`.
    pub fn new(addresses: usize) -> Streams {
        Streams {
            senders: (0..addresses)
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
        }
    }

    /// A sender on the thread's connection to `address`: the open one, or a new one made by
    /// `open` (the other workers wait for it rather than open their own).
    pub(super) async fn ready<F>(&self, address: usize, open: F) -> Result<Ready, Failed>
    where
        F: Future<Output = Result<(Transport, Option<Duration>), Failed>>,
    {
        let mut slot = self.senders[address].lock().await;
        if let Some(sender) = slot.as_ref()
            && !sender.is_closed()
        {
            return Ok(Ready {
                sender: sender.clone(),
                opened: None,
            });
        }
        *slot = None;
        let (stream, handshake) = open.await?;
        let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|_| Failed::Kind(ErrorKind::Connect))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        *slot = Some(sender.clone());
        Ok(Ready {
            sender,
            opened: Some(handshake),
        })
    }
}

/// Sends `request` as a stream on `sender` and reads its whole answer into `sink`: the
/// status and the body's size.
pub(super) async fn exchange(
    request: &H2Request,
    mut sender: SendRequest<Full<Bytes>>,
    sink: &mut Sink<'_>,
) -> Result<(u16, u64), Failed> {
    sender
        .ready()
        .await
        .map_err(|_| Failed::Kind(ErrorKind::Connect))?;
    let response = sender
        .send_request(request.to_request()?)
        .await
        .map_err(|_| Failed::Kind(ErrorKind::Protocol))?;
    let status = response.status().as_u16();
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Failed::Kind(ErrorKind::Protocol))?;
        if let Some(data) = frame.data_ref() {
            sink.take(data);
        }
    }
    Ok((status, sink.size()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_for_http_2_drops_connection_headers_and_takes_host_as_authority() {
        let headers = [
            ("Host".to_owned(), "api.local:8443".to_owned()),
            ("Connection".to_owned(), "keep-alive".to_owned()),
            ("Content-Type".to_owned(), "application/json".to_owned()),
        ];
        let request = H2Request::new(
            "POST",
            true,
            "127.0.0.1:8443",
            "/notes?x=1",
            &headers,
            b"{}",
        )
        .expect("valid");
        assert_eq!(request.uri.to_string(), "https://api.local:8443/notes?x=1");
        let names: Vec<&str> = request.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["content-type"]);
        assert_eq!(request.method, Method::POST);
        let plain = H2Request::new("GET", false, "127.0.0.1:80", "/", &[], b"").expect("valid");
        assert_eq!(plain.uri.to_string(), "http://127.0.0.1:80/");
    }
}

/// HTTP/2's connection preface (RFC 9113 §3.4) and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// Whether the server at `address` (`full`, the URL) speaks HTTP/2 with prior knowledge on
/// plain TCP (h2c), checked once before the load: the preface sent, the first bytes of its
/// answer read. A server that answers in HTTP/1.x, or closes at the preface, is refused with
/// what to do; one that says nothing within `timeout`, or cannot be reached, is left to the
/// load to measure.
pub(crate) async fn speaks_h2c(
    address: std::net::SocketAddr,
    full: &str,
    timeout: Duration,
) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let refused = |answer: &str| {
        format!(
            "`{full}` with `http_version = \"2\"`: the server {answer} to HTTP/2 with prior knowledge (h2c): it does not speak HTTP/2 over plain TCP. Set `http_version = \"1.1\"`, or load it over https:// where it negotiates h2"
        )
    };
    let attempt = async {
        let mut stream = tokio::net::TcpStream::connect(address).await.ok()?;
        stream.write_all(PREFACE).await.ok()?;
        let mut first = [0u8; 16];
        let read = stream.read(&mut first).await.ok()?;
        Some(first[..read].to_vec())
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Some(first)) if first.starts_with(b"HTTP/") => Err(refused("answered in HTTP/1.x")),
        Ok(Some(first)) if first.is_empty() => Err(refused("closed the connection")),
        // An HTTP/2 server's first frame is its SETTINGS (type 4).
        Ok(Some(first)) if first.get(3) == Some(&0x04) => Ok(()),
        Ok(Some(first)) => Err(refused(&format!(
            "answered `{}…`, not an HTTP/2 frame,",
            String::from_utf8_lossy(&first).escape_debug()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod prior_knowledge {
    use super::*;

    /// Issue 57 (N-T06): an HTTP/1 server's answer to the preface is said as such, with what
    /// to do (and an answer that is no frame, as Python's `http.server` gives, too); a server
    /// that speaks h2c (its SETTINGS frame first) passes.
    #[tokio::test]
    async fn an_http1_server_is_told_from_an_h2c_one() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let serve = |answer: &'static [u8]| async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let address = listener.local_addr().expect("address");
            tokio::spawn(async move {
                if let Ok((mut stream, _)) = listener.accept().await {
                    let mut preface = [0u8; 24];
                    let _ = stream.read_exact(&mut preface).await;
                    let _ = stream.write_all(answer).await;
                }
            });
            address
        };
        let http1 = serve(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
        let refused = speaks_h2c(http1, "http://127.0.0.1/", Duration::from_secs(2))
            .await
            .expect_err("an HTTP/1 server");
        assert!(
            refused.contains("answered in HTTP/1.x") && refused.contains("http_version = \"1.1\""),
            "{refused}"
        );
        let html = serve(b"<!DOCTYPE HTML>\n<html>").await;
        let refused = speaks_h2c(html, "http://127.0.0.1/", Duration::from_secs(2))
            .await
            .expect_err("no frame");
        assert!(refused.contains("answered `<!DOCTYPE HTML>"), "{refused}");
        let h2c = serve(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00").await;
        assert_eq!(
            speaks_h2c(h2c, "http://127.0.0.1/", Duration::from_secs(2)).await,
            Ok(())
        );
    }
}
