//! HTTP/1.1 over raw TCP with hyper: one connection per virtual connection, no hidden pool.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;

/// What can go wrong with one request, by the kind results count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Connect,
    Timeout,
    Protocol,
}

/// A connection for requests with a body.
pub type Sender = SendRequest<Full<Bytes>>;

/// Opens a connection; its driver runs on its own task until the connection closes.
pub async fn connect(address: SocketAddr) -> Result<Sender, ErrorKind> {
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|_| ErrorKind::Connect)?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| ErrorKind::Connect)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// `(host:port, path)` of a readiness or metrics target: a path on the target's own address, or
/// a full `http://` URL.
pub fn split_target(path_or_url: &str, default: SocketAddr) -> (String, String) {
    match path_or_url.strip_prefix("http://") {
        Some(rest) => {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            (host.to_owned(), format!("/{path}"))
        }
        None => (default.to_string(), path_or_url.to_owned()),
    }
}

/// A single GET on a fresh connection: the status and the whole body.
pub async fn get(host: String, path: &str, timeout: Duration) -> Result<(u16, Bytes), ErrorKind> {
    let request = async {
        let stream = tokio::net::TcpStream::connect(host.as_str())
            .await
            .map_err(|_| ErrorKind::Connect)?;
        let (mut sender, connection) = http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connect)?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, host.as_str())
            .body(Empty::new())
            .map_err(|_| ErrorKind::Protocol)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| ErrorKind::Protocol)?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|_| ErrorKind::Protocol)?;
        Ok((status, body.to_bytes()))
    };
    tokio::time::timeout(timeout, request)
        .await
        .map_err(|_| ErrorKind::Timeout)?
}

/// The address of a URL's `host:port`: a literal address as is, a name through the resolver.
pub async fn resolve(authority: &str, url: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = authority.parse::<SocketAddr>() {
        return Ok(address);
    }
    tokio::net::lookup_host(authority)
        .await
        .ok()
        .and_then(|mut all| all.next())
        .ok_or_else(|| {
            format!(
                "cannot resolve `{authority}` of `{url}`: use a loopback address such as 127.0.0.1"
            )
        })
}

/// The host:port and path of a request URL of a scenario.
pub fn parse_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    Some((authority.to_owned(), path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        assert_eq!(
            parse_url("http://127.0.0.1:8080/api/notes?page=2"),
            Some(("127.0.0.1:8080".into(), "/api/notes?page=2".into()))
        );
        assert_eq!(
            parse_url("http://127.0.0.1:8080"),
            Some(("127.0.0.1:8080".into(), "/".into()))
        );
        assert_eq!(
            parse_url("http://[::1]:80?x=1"),
            Some(("[::1]:80".into(), "/?x=1".into()))
        );
        assert_eq!(parse_url("https://x/"), None);
        let default = SocketAddr::from(([127, 0, 0, 1], 9));
        assert_eq!(
            split_target("/metrics", default),
            ("127.0.0.1:9".into(), "/metrics".into())
        );
        assert_eq!(
            split_target("http://127.0.0.2:7/m", default),
            ("127.0.0.2:7".into(), "/m".into())
        );
    }
}
