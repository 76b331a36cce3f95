//! Server-Sent Events for rooms: a peer's stream opened by `GET` (`Accept: text/event-stream`,
//! [`body`]) and read as EventSource reads it ([`parser`]), and a sender's messages published
//! by `POST` on connections kept open (hyper's client: senders are few).

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;

use crate::fill::per_socket;
use crate::results::ErrorCounts;
use crate::tls::{TlsTo, Transport};

/// Until the server says otherwise (`retry:`), a dropped stream is opened again after this.
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(1);

pub(crate) mod body;
pub(crate) mod parser;

/// An open stream: its body, and the parser its bytes go through.
pub(crate) struct Stream {
    pub(crate) body: body::Body,
    pub(crate) parser: parser::Parser,
}

/// Why a stream did not open.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The connection failed, or the exchange broke before an answer.
    Broken,
    /// An answer other than `200` with `text/event-stream`, which EventSource does not open.
    Status,
}

/// Where a request goes: the address checked, its `Host`, its path (placeholders left for
/// each peer to fill) and TLS for `https://`.
pub(crate) struct Endpoint {
    pub(crate) address: SocketAddr,
    pub(crate) authority: String,
    pub(crate) path: String,
    pub(crate) tls: Option<TlsTo>,
    /// The URL's `user:password@` as a Basic `Authorization`, sent, never shown.
    pub(crate) authorization: Option<String>,
}

/// A header with its value still to fill for each peer (`{room}`, `{peer}`).
pub(crate) type Header = (HeaderName, String);

/// An SSE scenario's plan: where streams open and messages are published, with what headers,
/// whether dropped streams reopen; and what it measured.
pub(crate) struct Plan {
    pub(crate) stream: Endpoint,
    pub(crate) publish: Option<Endpoint>,
    pub(crate) headers: Vec<Header>,
    pub(crate) publish_headers: Vec<Header>,
    pub(crate) reconnect: bool,
    /// A publish request not answered by then failed (the scenario's `deadline`).
    pub(crate) timeout: Duration,
    pub(crate) figures: Figures,
}

/// What an SSE scenario measures beside the rooms' own figures.
pub(crate) struct Figures {
    pub(crate) published: AtomicU64,
    pub(crate) publish_errors: Mutex<ErrorCounts>,
    pub(crate) publish: Mutex<Histogram<u64>>,
    pub(crate) events: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) resumed: AtomicU64,
}

impl Figures {
    pub(crate) fn new() -> Figures {
        Figures {
            published: AtomicU64::new(0),
            publish_errors: Mutex::new(ErrorCounts::default()),
            publish: Mutex::new(crate::http::histogram()),
            events: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
        }
    }
}

impl Plan {
    /// The plan of an SSE scenario whose stream URL is `url` and publish URL `publish` (when
    /// it sends), both filled but for `{room}` and `{peer}`: both endpoints resolved and
    /// checked before any stream opens.
    pub(crate) async fn new(
        sse: &headroom_spec::scenario::Sse,
        url: &str,
        publish: Option<&str>,
        written: &headroom_matrix::resolved::RoomsScenario,
        reach: &crate::reach::Reach,
    ) -> Result<Plan, String> {
        let timeout = written.connect_timeout.as_std();
        let stream = endpoint(url, &written.url, reach, timeout).await?;
        let publish = match publish {
            Some(publish) => Some(endpoint(publish, &sse.publish, reach, timeout).await?),
            None => None,
        };
        let (headers, publish_headers) = (
            headers(&sse.headers, "headers")?,
            headers(&sse.publish_headers, "publish_headers")?,
        );
        // A value that is no header value (a newline from `{env:NAME}`) fails the run here,
        // not each stream or publish: `{room}` and `{peer}` add digits only.
        filled_headers(&headers, 0, 0)?;
        filled_headers(&publish_headers, 0, 0)?;
        Ok(Plan {
            stream,
            publish,
            headers,
            publish_headers,
            reconnect: sse.reconnect,
            timeout: written.deadline.as_std(),
            figures: Figures::new(),
        })
    }
}

/// An `http://` or `https://` URL resolved and checked (`written` as the spec wrote it), with
/// TLS for `https://`.
async fn endpoint(
    url: &str,
    written: &str,
    reach: &crate::reach::Reach,
    timeout: Duration,
) -> Result<Endpoint, String> {
    let parsed = crate::web::parse_web_url(url).ok_or_else(|| {
        format!(
            "`{url}` is not an http:// or https:// URL: write it as http://127.0.0.1:{{port}}/…"
        )
    })?;
    let example = per_socket(url, 0, 0);
    let address = crate::web::resolve(&parsed.dial, &example, written, &reach.allowed).await?;
    let tls = if parsed.secure {
        Some(
            reach
                .trust
                .session_to(
                    crate::tls::ALPN_HTTP1,
                    address,
                    &parsed.authority,
                    &example,
                    timeout,
                )
                .await?,
        )
    } else {
        None
    };
    Ok(Endpoint {
        address,
        authorization: parsed.basic_authorization(),
        authority: parsed.authority,
        path: parsed.path,
        tls,
    })
}

/// The scenario's headers, their names checked (values are filled per peer).
pub(crate) fn headers(
    written: &std::collections::BTreeMap<String, String>,
    key: &str,
) -> Result<Vec<Header>, String> {
    written
        .iter()
        .map(|(name, value)| {
            HeaderName::from_bytes(name.as_bytes())
                .map(|name| (name, value.clone()))
                .map_err(|_| format!("`sse.{key}` names `{name}`, which is not an HTTP header name: write it as it goes on the wire (`x-api-key`)"))
        })
        .collect()
}

/// Opens peer (`room`, `peer`)'s stream on `transport`: `GET` with `Accept:
/// text/event-stream`, the scenario's headers and, when resuming, `Last-Event-ID`.
pub(crate) async fn subscribe(
    transport: Transport,
    plan: &Plan,
    seat: (u32, u32),
    last_event_id: Option<&str>,
) -> Result<Stream, Refused> {
    let (room, peer) = seat;
    let mut request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n",
        per_socket(&plan.stream.path, room, peer),
        plan.stream.authority
    )
    .into_bytes();
    if let Some(authorization) = &plan.stream.authorization {
        request.extend_from_slice(b"Authorization: ");
        request.extend_from_slice(authorization.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    for (name, value) in &plan.headers {
        let value = header_value(value, room, peer)?;
        request.extend_from_slice(name.as_str().as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    if let Some(id) = last_event_id {
        let id = HeaderValue::from_str(id).map_err(|_| Refused::Broken)?;
        request.extend_from_slice(b"Last-Event-ID: ");
        request.extend_from_slice(id.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"\r\n");
    let (head, body) = body::Body::exchange(transport, &request)
        .await
        .map_err(|_| Refused::Broken)?;
    if head.status != 200 || !head.event_stream {
        return Err(Refused::Status);
    }
    Ok(Stream {
        body,
        parser: parser::Parser::default(),
    })
}

fn header_value(value: &str, room: u32, peer: u32) -> Result<HeaderValue, Refused> {
    HeaderValue::from_str(&per_socket(value, room, peer)).map_err(|_| Refused::Broken)
}

/// A sender's publish connections: each message is posted on an idle one, or a new one when
/// every one is busy, so a slow answer never holds the next message back (the open model, as
/// the HTTP scenarios keep it). A connection that failed is dropped.
#[derive(Default)]
pub(crate) struct Publisher {
    idle: std::sync::Mutex<Vec<http1::SendRequest<Full<Bytes>>>>,
}

impl Publisher {
    /// `POST`s `body` to the publish endpoint (path and headers filled for the sender) within
    /// `timeout`: the answer's status, or why there was none.
    pub(crate) async fn post(
        &self,
        publish: &Endpoint,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: String,
        timeout: Duration,
    ) -> Result<u16, crate::web::ErrorKind> {
        let sent = tokio::time::timeout(timeout, self.exchange(publish, path, headers, body)).await;
        sent.unwrap_or(Err(crate::web::ErrorKind::Timeout))
    }

    /// An idle connection, if one is still open.
    fn idle(&self) -> Option<http1::SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().ok()?;
        while let Some(sender) = idle.pop() {
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    async fn exchange(
        &self,
        publish: &Endpoint,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: String,
    ) -> Result<u16, crate::web::ErrorKind> {
        use crate::web::ErrorKind;
        let mut sender = match self.idle() {
            Some(sender) => sender,
            None => {
                let (stream, _) = Transport::open(
                    publish.address,
                    crate::tls::Origin::default(),
                    publish.tls.as_ref(),
                )
                .await
                .map_err(|_| ErrorKind::Connect)?;
                let (sender, connection) = http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|_| ErrorKind::Connect)?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                sender
            }
        };
        sender.ready().await.map_err(|_| ErrorKind::Connect)?;
        let mut request = hyper::Request::post(path).header(header::HOST, &publish.authority);
        let has_type = headers.iter().any(|(name, _)| name == header::CONTENT_TYPE);
        if !has_type {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        if let Some(authorization) = &publish.authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| ErrorKind::Protocol)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| ErrorKind::Protocol)?;
        let status = response.status().as_u16();
        // Read to its end, so the connection can carry another message.
        response
            .into_body()
            .collect()
            .await
            .map_err(|_| ErrorKind::Protocol)?;
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(sender);
        }
        Ok(status)
    }
}

/// Headers of one stream or sender, filled; a value that is not a header value after
/// filling is said.
pub(crate) fn filled_headers(
    headers: &[Header],
    room: u32,
    peer: u32,
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let filled = per_socket(value, room, peer);
            HeaderValue::from_str(&filled)
                .map(|value| (name.clone(), value))
                .map_err(|_| format!("an SSE header `{name}` is `{filled}` for room {room}, which is not a header value: remove its line breaks and control characters (`sse.headers` or `sse.publish_headers`, or the `{{env:…}}` it reads)"))
        })
        .collect()
}

#[cfg(test)]
mod tests;
