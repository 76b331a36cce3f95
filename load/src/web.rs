//! Single HTTP/1.1 GETs with hyper (readiness checks, /metrics scrapes), and where load may
//! go. The load itself has a leaner client of its own (`http::wire`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;

use crate::tls::{TlsTo, Transport, Trust};

/// What can go wrong with one request, by the kind results count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// No connection (refused, reset, unreachable).
    Connect,
    /// No answer within the time allowed.
    Timeout,
    /// An answer that was not HTTP.
    Protocol,
}

/// Where a target's readiness or metrics path (`/metrics`) is read: the target's own
/// address. A target the runner starts is on loopback, over plain HTTP; a target that runs
/// already (`url`) at its URL's host and port, over its URL's scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnAddress {
    /// `host:port` to connect to (and the Host header).
    pub dial: String,
    /// `https://`.
    pub secure: bool,
}

impl OwnAddress {
    /// A target the runner started, on loopback `port`.
    pub fn loopback(port: u16) -> OwnAddress {
        OwnAddress {
            dial: format!("127.0.0.1:{port}"),
            secure: false,
        }
    }

    /// A target that runs already, at `url`.
    pub fn of_url(url: &WebUrl) -> OwnAddress {
        OwnAddress {
            dial: url.dial.clone(),
            secure: url.secure,
        }
    }
}

/// `(host:port, path, https)` of a readiness or metrics target: a path on the target's own
/// address, or a full `http://` or `https://` URL.
pub fn split_target(path_or_url: &str, own: &OwnAddress) -> (String, String, bool) {
    match parse_web_url(path_or_url) {
        Some(url) => (url.dial, url.path, url.secure),
        None => (own.dial.clone(), path_or_url.to_owned(), own.secure),
    }
}

/// A single GET on a fresh connection to an address already checked (`resolve`), over TLS
/// when `tls` says: the status and the whole body. `host` is the Host header; `authorization`
/// its Authorization header (a URL's `user:password@`, as Basic).
pub async fn get(
    address: SocketAddr,
    host: &str,
    authorization: Option<&str>,
    path: &str,
    tls: Option<&TlsTo>,
    timeout: Duration,
) -> Result<(u16, Bytes), ErrorKind> {
    let request = async {
        let (stream, _) = Transport::open(address, crate::tls::Origin::default(), tls)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        let (mut sender, connection) = http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connect)?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut request = hyper::Request::get(path).header(hyper::header::HOST, host);
        if let Some(authorization) = authorization {
            request = request.header(hyper::header::AUTHORIZATION, authorization);
        }
        let request = request
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

/// Where load may go: loopback (127.0.0.0/8, ::1) always, and the hosts `[target] allow_hosts`
/// names. The compiler checks the hosts it can see; this checks every host again after
/// substitution (`{env:NAME}`) and resolution, before any connection is made.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    hosts: Vec<String>,
}

impl Allowed {
    /// Loopback and the hosts `[target] allow_hosts` names.
    pub fn new(hosts: &[String]) -> Allowed {
        Allowed {
            hosts: hosts.to_vec(),
        }
    }

    /// Whether load may go to `address`, which `host` (as filled in) resolved to. `written`
    /// is the URL as the spec wrote it, to name the variables the host came from.
    pub fn check(&self, host: &str, address: SocketAddr, written: &str) -> Result<(), String> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if address.ip().is_loopback() || self.hosts.iter().any(|h| h == host) {
            return Ok(());
        }
        let variables: Vec<&str> = written
            .match_indices("{env:")
            .filter_map(|(at, _)| {
                let rest = &written[at..];
                rest.find('}').map(|end| &rest[..=end])
            })
            .collect();
        let from = if variables.is_empty() {
            String::new()
        } else {
            format!(", from {} in `{written}`", variables.join(", "))
        };
        let resolved = if address.ip().to_string() == host {
            String::new()
        } else {
            format!(" ({})", address.ip())
        };
        Err(format!(
            "load to `{host}`{resolved}{from} is not allowed: it is not loopback. Point it at 127.0.0.1, or add `allow_hosts = [\"{host}\"]` to [target] if this host is yours to load"
        ))
    }
}

/// The address of a URL's `host:port`: a literal address as is, a name through the resolver;
/// refused unless `allowed` lets load go there.
pub async fn resolve(
    authority: &str,
    url: &str,
    written: &str,
    allowed: &Allowed,
) -> Result<SocketAddr, String> {
    let address = match authority.parse::<SocketAddr>() {
        Ok(address) => address,
        // A name with addresses of both families (`localhost`: ::1 and 127.0.0.1) goes to its
        // IPv4 one: the servers under test and the demo target listen on 127.0.0.1 by default.
        Err(_) => tokio::net::lookup_host(authority)
            .await
            .ok()
            .and_then(|all| {
                let all: Vec<SocketAddr> = all.collect();
                all.iter().find(|a| a.is_ipv4()).or(all.first()).copied()
            })
            .ok_or_else(|| {
                format!(
                    "cannot resolve `{authority}` of `{url}`: use a loopback address such as 127.0.0.1"
                )
            })?,
    };
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host);
    allowed.check(host, address, written)?;
    Ok(address)
}

/// A readiness or metrics target resolved and checked: the address, the Host header, the
/// path, and TLS for `https://`.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Where to connect.
    pub address: SocketAddr,
    /// The `Host` header.
    pub host: String,
    /// The path to GET.
    pub path: String,
    /// TLS, for `https://`.
    pub tls: Option<Arc<TlsTo>>,
    /// The URL's `user:password@` as a Basic Authorization header, sent, never shown.
    pub authorization: Option<String>,
}

/// A path on the target's own address (`/metrics`, plain HTTP), or a full `http://` or
/// `https://` URL (filled in; `written` as the spec wrote it), resolved and checked like any
/// load; `trust` says what its certificate must be signed by.
pub async fn endpoint(
    path_or_url: &str,
    written: &str,
    own: &OwnAddress,
    allowed: &Allowed,
    trust: &Trust,
) -> Result<Endpoint, String> {
    let (host, path, secure) = split_target(path_or_url, own);
    let address = resolve(&host, path_or_url, written, allowed).await?;
    let tls = if secure {
        trust.check(address, path_or_url)?;
        Some(Arc::new(TlsTo {
            connector: tokio_rustls::TlsConnector::from(trust.config(&[crate::tls::ALPN_HTTP1])?),
            name: crate::tls::server_name(crate::tls::host_of(&host))?,
        }))
    } else {
        None
    };
    Ok(Endpoint {
        address,
        host,
        path,
        tls,
        authorization: parse_web_url(path_or_url).and_then(|url| url.basic_authorization()),
    })
}

/// An `http://` or `https://` URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebUrl {
    /// `https://`.
    pub secure: bool,
    /// `host[:port]` as written, without the userinfo: the Host header (`:authority` in
    /// HTTP/2).
    pub authority: String,
    /// `user:password` before an `@` in the authority, percent-encoded as written: sent as
    /// HTTP Basic authentication ([`WebUrl::basic_authorization`]), never dialled or shown.
    pub userinfo: Option<String>,
    /// `host:port` to connect to, the port filled in when the URL leaves it out (80, 443).
    pub dial: String,
    /// The path and query, `/` at least.
    pub path: String,
}

/// An `http://` or `https://` URL of a scenario, readiness check or scrape.
pub fn parse_web_url(url: &str) -> Option<WebUrl> {
    let (secure, rest) = match url.strip_prefix("https://") {
        Some(rest) => (true, rest),
        None => (false, url.strip_prefix("http://")?),
    };
    let (authority, path) = split_authority(rest);
    let (userinfo, authority) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo.to_owned()), host.to_owned()),
        None => (None, authority),
    };
    let dial = with_port(&authority, secure);
    Some(WebUrl {
        secure,
        authority,
        userinfo,
        dial,
        path,
    })
}

impl WebUrl {
    /// The `authorization` header's value for the URL's userinfo (`Basic` of `user:password`,
    /// percent-decoded), when it has one.
    pub fn basic_authorization(&self) -> Option<String> {
        use base64::Engine;
        let userinfo = self.userinfo.as_deref()?;
        let decoded: Vec<u8> = percent_encoding::percent_decode_str(userinfo).collect();
        Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(decoded)
        ))
    }
}

/// `authority` with its port, the scheme's default (80, or 443 for TLS) when it has none.
pub fn with_port(authority: &str, secure: bool) -> String {
    let has_port = match authority.rfind(']') {
        Some(end) => authority[end..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:{}", if secure { 443 } else { 80 })
    }
}

/// `host:port` and the path (`/` at least) of what follows a URL's `scheme://`.
fn split_authority(rest: &str) -> (String, String) {
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    (authority.to_owned(), path)
}

/// The host:port and path of a plain `http://` URL.
pub fn parse_url(url: &str) -> Option<(String, String)> {
    Some(split_authority(url.strip_prefix("http://")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metrics or readiness URL's `user:password@` is sent as Basic authentication (it was
    /// dropped): to a listener on loopback, which answers 200 and keeps what it read.
    #[tokio::test]
    async fn a_urls_userinfo_is_sent_as_basic_authentication() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let served = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("one connection");
            let mut read = Vec::new();
            let mut buffer = [0u8; 1024];
            while !read.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buffer).await.expect("the request");
                assert!(n > 0, "the request ended early");
                read.extend_from_slice(&buffer[..n]);
            }
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
            socket.write_all(answer).await.expect("the answer");
            String::from_utf8_lossy(&read).into_owned()
        });
        let url = format!("http://scraper:p%40ss@127.0.0.1:{port}/metrics");
        let trust = Trust::new(None, false, std::path::Path::new("."));
        let own = OwnAddress::loopback(port);
        let endpoint = endpoint(&url, &url, &own, &Allowed::default(), &trust)
            .await
            .expect("a loopback endpoint");
        assert_eq!(endpoint.host, format!("127.0.0.1:{port}"));
        let authorization = endpoint.authorization.as_deref();
        let got = get(
            endpoint.address,
            &endpoint.host,
            authorization,
            &endpoint.path,
            None,
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(got.map(|(status, _)| status), Ok(200));
        let request = served.await.expect("served");
        // base64 of `scraper:p@ss`, the password percent-decoded.
        assert!(
            request.contains("authorization: Basic c2NyYXBlcjpwQHNz\r\n"),
            "{request}"
        );
        assert!(request.starts_with("GET /metrics HTTP/1.1"), "{request}");
    }

    /// Issue 12: every host is checked after substitution and resolution, as data: no socket
    /// is opened here, and no test connects anywhere but loopback.
    #[test]
    fn only_loopback_and_allowed_hosts_take_load() {
        let allowed = Allowed::new(&["bench.internal".to_owned()]);
        let at = |ip: [u8; 4]| SocketAddr::from((ip, 8080));
        assert!(
            allowed
                .check("127.0.0.1", at([127, 0, 0, 1]), "http://127.0.0.1/")
                .is_ok()
        );
        assert!(
            allowed
                .check("127.0.0.5", at([127, 0, 0, 5]), "http://127.0.0.5/")
                .is_ok()
        );
        assert!(
            allowed
                .check(
                    "::1",
                    SocketAddr::from(([0u16, 0, 0, 0, 0, 0, 0, 1], 80)),
                    "http://[::1]/"
                )
                .is_ok()
        );
        // A name that resolves to loopback is loopback.
        assert!(
            allowed
                .check("localhost", at([127, 0, 0, 1]), "http://localhost/")
                .is_ok()
        );
        // An allowed name may resolve anywhere: the spec says the host is its own.
        assert!(
            allowed
                .check(
                    "bench.internal",
                    at([10, 1, 2, 3]),
                    "http://bench.internal/"
                )
                .is_ok()
        );
        // A host from an environment variable, a private address: refused, naming the variable.
        let error = allowed
            .check(
                "10.0.0.7",
                at([10, 0, 0, 7]),
                "http://{env:API_HOST}:8080/api",
            )
            .expect_err("private range");
        assert_eq!(
            error,
            "load to `10.0.0.7`, from {env:API_HOST} in `http://{env:API_HOST}:8080/api` is not allowed: it is not loopback. Point it at 127.0.0.1, or add `allow_hosts = [\"10.0.0.7\"]` to [target] if this host is yours to load"
        );
        // A name that resolves (the resolver stubbed as data) to a public address: refused.
        let error = allowed
            .check(
                "example.test",
                at([203, 0, 113, 9]),
                "ws://{env:HOST}/rooms/1",
            )
            .expect_err("public");
        assert!(
            error.starts_with("load to `example.test` (203.0.113.9), from {env:HOST}"),
            "{error}"
        );
    }

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
        let secure = parse_web_url("https://localhost/a?b").expect("https");
        assert!(secure.secure);
        assert_eq!(
            (
                secure.authority.as_str(),
                secure.dial.as_str(),
                secure.path.as_str()
            ),
            ("localhost", "localhost:443", "/a?b")
        );
        let v6 = parse_web_url("http://[::1]:8080").expect("v6");
        assert_eq!((v6.dial.as_str(), v6.path.as_str()), ("[::1]:8080", "/"));
        assert_eq!(parse_web_url("ws://x/"), None);
        let default = OwnAddress::loopback(9);
        assert_eq!(
            split_target("/metrics", &default),
            ("127.0.0.1:9".into(), "/metrics".into(), false)
        );
        assert_eq!(
            split_target("http://127.0.0.2:7/m", &default),
            ("127.0.0.2:7".into(), "/m".into(), false)
        );
        assert_eq!(
            split_target("https://localhost:8443/healthz", &default),
            ("localhost:8443".into(), "/healthz".into(), true)
        );
        // A target that runs already: its paths are read at its URL's host, port and scheme.
        let external =
            OwnAddress::of_url(&parse_web_url("https://notes.load.svc:8443/api").expect("a URL"));
        assert_eq!(
            split_target("/metrics", &external),
            ("notes.load.svc:8443".into(), "/metrics".into(), true)
        );
    }
}
