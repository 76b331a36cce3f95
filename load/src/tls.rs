//! TLS for `https://` and `wss://` load, readiness checks and scrapes: rustls on ring, trusting
//! the platform's roots or the spec's `ca`, checking the certificate against the URL's host
//! (sent as SNI when it is a name), and with `insecure_skip_verify` accepting any certificate,
//! from a loopback server only.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// ALPN for HTTP/2.
pub const ALPN_H2: &[u8] = b"h2";
/// ALPN for HTTP/1.1.
pub const ALPN_HTTP1: &[u8] = b"http/1.1";

/// What TLS trusts, from `[target]`: the `ca` file or the platform's roots, or (loopback only)
/// any certificate.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// The `ca` file resolved against the spec's folder, and as the spec wrote it.
    ca: Option<(PathBuf, String)>,
    insecure: bool,
    /// The spec's folder.
    spec_dir: PathBuf,
}

impl Trust {
    /// `ca` as written in `[target]` (relative to `spec_dir`) and `insecure_skip_verify`.
    pub fn new(ca: Option<&str>, insecure_skip_verify: bool, spec_dir: &Path) -> Trust {
        Trust {
            ca: ca.map(|written| (spec_dir.join(written), written.to_owned())),
            insecure: insecure_skip_verify,
            spec_dir: spec_dir.to_path_buf(),
        }
    }

    /// What `[target]` says TLS trusts (`ca` relative to `spec_dir`).
    pub fn of(target: &headroom_matrix::resolved::Target, spec_dir: &Path) -> Trust {
        Trust::new(target.ca.as_deref(), target.insecure_skip_verify, spec_dir)
    }

    /// TLS to `address` (`authority` as the URL `url` writes it) offering `alpn`, checked
    /// before any load: may it go unchecked, is its certificate trusted (one handshake), and
    /// does the server agree to HTTP/2 when `alpn` asks for it.
    pub async fn session_to(
        &self,
        alpn: &'static [u8],
        address: SocketAddr,
        authority: &str,
        url: &str,
        timeout: Duration,
    ) -> Result<TlsTo, String> {
        self.check(address, url)?;
        let config = self.config(&[alpn])?;
        let needs = (alpn == ALPN_H2).then_some(ALPN_H2);
        probe(&config, address, authority, needs, timeout).await?;
        Ok(TlsTo {
            connector: TlsConnector::from(config),
            name: server_name(host_of(authority))?,
        })
    }

    /// The spec's folder, which `ca` is relative to.
    pub fn spec_dir(&self) -> &Path {
        &self.spec_dir
    }

    /// A client configuration that offers `alpn` (in order of preference).
    pub fn config(&self, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?;
        let mut config = if self.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(self.roots()?)
                .with_no_client_auth()
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(config))
    }

    /// The `ca` file's certificates, or the platform's roots.
    fn roots(&self) -> Result<RootCertStore, String> {
        let mut roots = RootCertStore::empty();
        match &self.ca {
            Some((path, written)) => {
                let certificates = CertificateDer::pem_file_iter(path).map_err(|e| {
                    format!(
                        "cannot read `ca = \"{written}\"` ({}): {e}; point `ca` in [target] at a PEM file, relative to the spec",
                        path.display()
                    )
                })?;
                for certificate in certificates {
                    let certificate = certificate
                        .map_err(|e| format!("`ca = \"{written}\"` ({}): {e}", path.display()))?;
                    roots.add(certificate).map_err(|e| {
                        format!(
                            "`ca = \"{written}\"` ({}) holds a certificate rustls cannot use: {e}",
                            path.display()
                        )
                    })?;
                }
                if roots.is_empty() {
                    return Err(format!(
                        "`ca = \"{written}\"` ({}) holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)",
                        path.display()
                    ));
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(
                        "this machine has no root certificates for TLS: set `ca = \"file.pem\"` in [target] to the CA that signed the server's certificate".to_owned(),
                    );
                }
            }
        }
        Ok(roots)
    }

    /// Whether TLS to `address` may go unchecked: with `insecure_skip_verify`, loopback only.
    pub fn check(&self, address: SocketAddr, url: &str) -> Result<(), String> {
        if self.insecure && !address.ip().is_loopback() {
            return Err(format!(
                "`{url}` ({}) is not loopback: `insecure_skip_verify` accepts any certificate and is for a loopback server only; set `ca = \"file.pem\"` in [target] instead",
                address.ip()
            ));
        }
        Ok(())
    }
}

/// The name a certificate is checked against: the URL's host (`[…]` stripped from IPv6).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_owned())
        .map_err(|e| format!("`{host}` is not a host name TLS can check: {e}"))
}

/// The host of an `authority` (`host:port`, `[v6]:port`).
pub fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
}

/// A TLS session on `tcp`, and how long its handshake took.
pub async fn handshake(
    connector: &TlsConnector,
    name: &ServerName<'static>,
    tcp: TcpStream,
) -> std::io::Result<(TlsStream<TcpStream>, Duration)> {
    let started = Instant::now();
    let stream = connector.connect(name.clone(), tcp).await?;
    Ok((stream, started.elapsed()))
}

/// One handshake before the load, so a certificate TLS does not trust fails the point with why
/// and the host, not every request as a `connect` error. `needs` is the ALPN protocol the
/// scenario cannot do without (`h2`), if any.
pub async fn probe(
    config: &Arc<ClientConfig>,
    address: SocketAddr,
    authority: &str,
    needs: Option<&[u8]>,
    timeout: Duration,
) -> Result<(), String> {
    let host = host_of(authority);
    let name = server_name(host)?;
    let attempt = async {
        let tcp = TcpStream::connect(address)
            .await
            .map_err(|e| format!("cannot connect to {authority} ({address}): {e}"))?;
        let connector = TlsConnector::from(Arc::clone(config));
        let (stream, _) = handshake(&connector, &name, tcp)
            .await
            .map_err(|e| tls_failure(authority, &e))?;
        let agreed = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        if let Some(needed) = needs
            && agreed.as_deref() != Some(needed)
        {
            return Err(format!(
                "TLS to `{authority}`: the server did not agree to {} by ALPN (it chose {}); set `http_version = \"1.1\"` or serve HTTP/2",
                String::from_utf8_lossy(needed),
                agreed.map_or("none".to_owned(), |p| format!(
                    "`{}`",
                    String::from_utf8_lossy(&p)
                )),
            ));
        }
        Ok(())
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .map_err(|_| format!("TLS to `{authority}` ({address}): no handshake within {timeout:?}"))?
}

/// Why a handshake failed, with the host and what to do about it.
fn tls_failure(authority: &str, error: &std::io::Error) -> String {
    let text = error.to_string();
    // A CA of the same name as the true issuer but another key fails its signature.
    let fix = if text.contains("UnknownIssuer") || text.contains("BadSignature") {
        ": its certificate is not signed by a CA this run trusts; set `ca = \"file.pem\"` in [target] to the CA that signed it"
    } else if text.contains("CaUsedAsEndEntity") {
        ": the server presents a CA certificate as its own; serve a certificate issued by that CA"
    } else if text.contains("NotValidForName") {
        ": its certificate is for another name; load the host the certificate names"
    } else if text.contains("Expired") {
        ": its certificate has expired"
    } else if text.contains("InvalidContentType") {
        // rustls read a plain answer (`HTTP/1.1 400 …`) where a TLS record goes.
        ": the server answered in plain text, not TLS; load it with `http://` (or `ws://`), or serve TLS on that port"
    } else {
        ""
    };
    format!("TLS to `{authority}` failed: {text}{fix}")
}

/// Accepts any certificate, yet checks the handshake's signatures (so the session is sound,
/// just not authenticated): `insecure_skip_verify` on loopback.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Where TLS goes: the session's settings and the name its certificate is checked against
/// (sent as SNI when it is a name).
#[derive(Clone)]
pub struct TlsTo {
    /// The session's settings: roots or `[target] ca`, ALPN.
    pub connector: TlsConnector,
    /// The name the certificate is checked against (and sent as SNI).
    pub name: ServerName<'static>,
}

impl TlsTo {
    /// Why a handshake with `address` fails, if it does: for a readiness check that never
    /// passed, whose GETs only say they could not connect.
    pub async fn why_not(&self, address: SocketAddr, authority: &str) -> Option<String> {
        let tcp = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(address))
            .await
            .ok()?
            .ok()?;
        match tokio::time::timeout(
            Duration::from_secs(2),
            handshake(&self.connector, &self.name, tcp),
        )
        .await
        {
            Ok(Err(error)) => Some(tls_failure(authority, &error)),
            _ => None,
        }
    }
}

impl std::fmt::Debug for TlsTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTo").field("name", &self.name).finish()
    }
}

/// Where a connection comes from: client `client`'s source address, or the kernel's choice.
#[derive(Clone, Copy, Default)]
pub struct Origin<'a> {
    /// The source addresses of `[generator] source_addresses`, when given.
    pub sources: Option<&'a crate::source::Sources>,
    /// Which client connects (a virtual user, a connection worker, a socket).
    pub client: u64,
}

/// A connection's bytes: plain TCP, or TLS over it.
pub enum Transport {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Transport {
    /// A TCP connection to `address` from `origin` (no Nagle: a request is one write), with
    /// TLS on it when `tls` says, and how long the TLS handshake took.
    pub async fn open(
        address: SocketAddr,
        origin: Origin<'_>,
        tls: Option<&TlsTo>,
    ) -> io::Result<(Transport, Option<Duration>)> {
        let tcp = match origin.sources {
            Some(sources) => sources.connect(origin.client, address).await?,
            None => TcpStream::connect(address).await?,
        };
        tcp.set_nodelay(true)?;
        match tls {
            None => Ok((Transport::Plain(tcp), None)),
            Some(tls) => {
                let (stream, took) = handshake(&tls.connector, &tls.name, tcp).await?;
                Ok((Transport::Tls(Box::new(stream)), Some(took)))
            }
        }
    }
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Transport::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Transport::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Transport::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Transport::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insecure_is_refused_past_loopback_at_the_check() {
        let trust = Trust::new(None, true, Path::new("."));
        let loopback = SocketAddr::from(([127, 0, 0, 1], 443));
        let v6 = SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 443));
        let elsewhere = SocketAddr::from(([10, 0, 0, 7], 443));
        assert!(trust.check(loopback, "https://localhost/").is_ok());
        assert!(trust.check(v6, "https://[::1]/").is_ok());
        let refused = trust
            .check(elsewhere, "https://api.internal/")
            .expect_err("not loopback");
        assert!(
            refused.contains("10.0.0.7") && refused.contains("ca ="),
            "{refused}"
        );
        // Checked certificates may go anywhere load may.
        let checked = Trust::new(None, false, Path::new("."));
        assert!(checked.check(elsewhere, "https://api.internal/").is_ok());
    }

    #[test]
    fn hosts_and_names_come_from_the_authority() {
        assert_eq!(host_of("localhost:8443"), "localhost");
        assert_eq!(host_of("[::1]:8443"), "[::1]");
        assert_eq!(host_of("example.com"), "example.com");
        assert!(matches!(
            server_name("localhost"),
            Ok(ServerName::DnsName(_))
        ));
        assert!(matches!(server_name("[::1]"), Ok(ServerName::IpAddress(_))));
        assert!(matches!(
            server_name("127.0.0.1"),
            Ok(ServerName::IpAddress(_))
        ));
    }

    #[test]
    fn a_missing_or_empty_ca_file_says_which() {
        let dir = std::env::temp_dir().join(format!("headroom-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let missing = Trust::new(Some("nope.pem"), false, &dir)
            .config(&[ALPN_HTTP1])
            .expect_err("no file");
        assert!(missing.contains("`ca = \"nope.pem\"`"), "{missing}");
        std::fs::write(dir.join("empty.pem"), "not a certificate\n").expect("write");
        let empty = Trust::new(Some("empty.pem"), false, &dir)
            .config(&[ALPN_HTTP1])
            .expect_err("no certificate");
        assert!(empty.contains("holds no PEM certificate"), "{empty}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod handshake_tests {
    use super::*;

    /// A loopback TLS server with a self-signed certificate for `localhost` and 127.0.0.1,
    /// accepting (and completing handshakes) until the test ends; its certificate's PEM.
    async fn server() -> (SocketAddr, String) {
        let certified = rcgen::generate_simple_self_signed(vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
        ])
        .expect("certificate");
        let pem = certified.cert.pem();
        let chain = vec![certified.cert.der().clone()];
        let key = rustls_pki_types::PrivateKeyDer::try_from(certified.signing_key.serialize_der())
            .expect("key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server config");
        config.alpn_protocols = vec![ALPN_HTTP1.to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    if let Ok(mut stream) = acceptor.accept(tcp).await {
                        let mut byte = [0u8; 1];
                        let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut byte).await;
                    }
                });
            }
        });
        (address, pem)
    }

    #[tokio::test]
    async fn the_ca_file_decides_whom_tls_trusts_and_a_stranger_is_named() {
        let (address, pem) = server().await;
        let dir = std::env::temp_dir().join(format!("headroom-tls-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("right.pem"), &pem).expect("write");
        let stranger = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
            .expect("another certificate");
        std::fs::write(dir.join("wrong.pem"), stranger.cert.pem()).expect("write");
        let timeout = Duration::from_secs(5);
        let authority = format!("localhost:{}", address.port());
        let trusted = Trust::new(Some("right.pem"), false, &dir)
            .config(&[ALPN_HTTP1])
            .expect("config");
        // By name (SNI and the DNS name) and by address (the IP name).
        probe(&trusted, address, &authority, None, timeout)
            .await
            .expect("trusted by name");
        probe(&trusted, address, &address.to_string(), None, timeout)
            .await
            .expect("trusted by address");
        // HTTP/2 asked of a server that speaks only HTTP/1.1: refused with why.
        let h2 = probe(&trusted, address, &authority, Some(ALPN_H2), timeout)
            .await
            .expect_err("no h2");
        assert!(h2.contains("did not agree to h2"), "{h2}");
        let wrong = Trust::new(Some("wrong.pem"), false, &dir)
            .config(&[ALPN_HTTP1])
            .expect("config");
        let refused = probe(&wrong, address, &authority, None, timeout)
            .await
            .expect_err("not trusted");
        assert!(
            refused.contains(&format!("TLS to `{authority}`")) && refused.contains("ca ="),
            "{refused}"
        );
        // Unchecked, on loopback: accepted.
        let any = Trust::new(None, true, &dir)
            .config(&[ALPN_HTTP1])
            .expect("config");
        probe(&any, address, &authority, None, timeout)
            .await
            .expect("insecure on loopback");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// N-T01: `https://` to a plain HTTP server read "received corrupt message of type
    /// InvalidContentType"; it says the server answered in plain text, and what to do.
    #[tokio::test]
    async fn tls_to_a_plain_server_says_so() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            if let Ok((mut tcp, _)) = listener.accept().await {
                let mut hello = [0u8; 512];
                let _ = tcp.read(&mut hello).await;
                let answer = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
                let _ = tcp.write_all(answer).await;
            }
        });
        let any = Trust::new(None, true, Path::new("."))
            .config(&[ALPN_HTTP1])
            .expect("config");
        let authority = address.to_string();
        let refused = probe(&any, address, &authority, None, Duration::from_secs(5))
            .await
            .expect_err("no TLS there");
        assert!(
            refused.contains("answered in plain text, not TLS") && refused.contains("`http://`"),
            "{refused}"
        );
    }
}
