//! HTTPS and WSS for the demo target: rustls on ring, HTTP/1.1 (with WebSocket upgrades) or
//! HTTP/2 as the client's ALPN asks, so the load generator's TLS can be tested against a
//! server whose answers are known.

use std::io;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::Certificate;

/// A TLS acceptor for the certificate.
pub(crate) fn acceptor(certificate: &Certificate) -> io::Result<TlsAcceptor> {
    let (chain, key) = match certificate {
        Certificate::Files { cert, key } => from_files(cert, key)?,
        Certificate::SelfSigned => {
            let made = rcgen::generate_simple_self_signed(vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
            ])
            .map_err(io::Error::other)?;
            let key = PrivateKeyDer::try_from(made.signing_key.serialize_der())
                .map_err(io::Error::other)?;
            (vec![made.cert.der().clone()], key)
        }
    };
    let invalid = |e: &dyn std::fmt::Display| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("the certificate: {e}"))
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(&e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(&e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The chain and key in these PEM files.
fn from_files(
    cert: &Path,
    key: &Path,
) -> io::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let invalid = |what: &Path, e: &dyn std::fmt::Display| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {e}", what.display()),
        )
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| invalid(cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(cert, &e))?;
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| invalid(key, &e))?;
    Ok((chain, key_der))
}

/// Accepts TLS connections and serves `router` on each until `shutdown`.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors, say: the next accept may succeed.
                Err(_) => continue,
            },
            () = &mut shutdown => {
                println!("headroom demo target stopping");
                return Ok(());
            }
        };
        let _ = tcp.set_nodelay(true);
        let (acceptor, router) = (acceptor.clone(), router.clone());
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = TowerToHyperService::new(router);
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .await;
        });
    }
}
