//! Single HTTP/1.1 GETs with hyper (readiness checks, /metrics scrapes), and where load may
//! go. The load itself has a leaner client of its own (`load::wire`).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;

/// What can go wrong with one request, by the kind results count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Connect,
    Timeout,
    Protocol,
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

/// A single GET on a fresh connection to an address already checked (`resolve`): the status
/// and the whole body. `host` is the Host header.
pub async fn get(
    address: SocketAddr,
    host: &str,
    path: &str,
    timeout: Duration,
) -> Result<(u16, Bytes), ErrorKind> {
    let request = async {
        let stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        let (mut sender, connection) = http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connect)?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, host)
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
        Err(_) => tokio::net::lookup_host(authority)
            .await
            .ok()
            .and_then(|mut all| all.next())
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

/// A readiness or metrics target resolved and checked: the address, the Host header, the path.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub address: SocketAddr,
    pub host: String,
    pub path: String,
}

/// A path on the target's own address (`/metrics`), or a full `http://` URL (filled in;
/// `written` as the spec wrote it), resolved and checked like any load.
pub async fn endpoint(
    path_or_url: &str,
    written: &str,
    own: SocketAddr,
    allowed: &Allowed,
) -> Result<Endpoint, String> {
    let (host, path) = split_target(path_or_url, own);
    let address = resolve(&host, path_or_url, written, allowed).await?;
    Ok(Endpoint {
        address,
        host,
        path,
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
