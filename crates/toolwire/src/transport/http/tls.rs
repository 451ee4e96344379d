//! HTTPS for [`serve_http`](crate::serve_http) (feature `tls`): rustls with
//! a certificate chain and key read from PEM files and reloadable while
//! serving ([`TlsConfig::reload`]), HTTP/2 offered through ALPN beside
//! HTTP/1.1 (its settings and idle timeout in `h2.rs`), and the handshake
//! run in the connection's own task under a time limit, after the
//! connection took its places under the caps.

use super::HttpService;
use super::config::HttpConfig;
use super::h2::{Activity, Tracked};
use crate::bounds::timeout_within_bounds;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::fmt;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// The ALPN protocol ids offered, preferred first.
const H2: &[u8] = b"h2";
const HTTP_1_1: &[u8] = b"http/1.1";

/// HTTPS settings for [`HttpConfig::with_tls`]: the certificate chain and
/// private key, read from PEM files, and the handshake time limit.
///
/// Cheap to clone; clones share the certificate, so [`reload`](Self::reload)
/// on a kept clone changes what the server presents. A reload reads both
/// files again: new connections get the new certificate, open ones keep
/// theirs (nothing is dropped), and a reload that fails keeps the old one.
///
/// ```no_run
/// use toolwire::{HttpConfig, Server, ServerConfig, TlsConfig};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = TlsConfig::from_pem_files("cert.pem", "key.pem")?;
/// let config = HttpConfig::new().with_tls(tls.clone());
/// // Reload on SIGHUP, as `toolwire serve --tls-cert` does.
/// let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
/// tokio::spawn(async move {
///     while hup.recv().await.is_some() {
///         if let Err(e) = tls.reload() {
///             eprintln!("keeping the old certificate: {e}");
///         }
///     }
/// });
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// toolwire::serve_http(server, "127.0.0.1:8443", config, toolwire::shutdown_signal()).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    resolver: Arc<Reloadable>,
    acceptor: TlsAcceptor,
    handshake_timeout: Duration,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("cert", &self.resolver.cert_path)
            .field("key", &self.resolver.key_path)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

/// Why a certificate or key could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The certificate file holds no PEM `CERTIFICATE`.
    #[error("{0}: no PEM certificate found")]
    NoCertificate(PathBuf),
    /// The key file holds no PEM private key (PKCS#8, PKCS#1 or SEC1).
    #[error("{0}: no PEM private key found")]
    NoKey(PathBuf),
    /// rustls refused the key, or the key does not match the certificate.
    #[error("the certificate and key cannot be used: {0}")]
    Unusable(#[source] rustls::Error),
}

impl TlsConfig {
    /// Reads the certificate chain (PEM, the server's certificate first)
    /// and its private key (PEM: PKCS#8, PKCS#1 or SEC1), checks that they
    /// match, and offers HTTP/2 and HTTP/1.1 through ALPN.
    pub fn from_pem_files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Self, TlsError> {
        let (cert_path, key_path) = (cert.as_ref().to_owned(), key.as_ref().to_owned());
        let current = load(&cert_path, &key_path)?;
        let resolver = Arc::new(Reloadable {
            cert_path,
            key_path,
            current: RwLock::new(current),
        });
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Unusable)?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        config.alpn_protocols = vec![H2.to_vec(), HTTP_1_1.to_vec()];
        Ok(Self {
            resolver,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            handshake_timeout: Duration::from_secs(10),
        })
    }

    /// Reads the certificate and key files again and presents them to new
    /// connections; on failure the old pair stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = load(&self.resolver.cert_path, &self.resolver.key_path)?;
        *self
            .resolver
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(())
    }

    /// How long a client has to complete the TLS handshake.
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout
    }

    /// Sets how long a client has to complete the TLS handshake (default
    /// 10 s; at least 1 ms, at most a year); past it the connection is
    /// closed.
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout_within_bounds(timeout);
        self
    }
}

impl HttpConfig {
    /// The HTTPS settings, if the server speaks TLS.
    pub fn tls(&self) -> Option<&TlsConfig> {
        self.tls.as_ref()
    }

    /// Serves HTTPS (HTTP/2 or HTTP/1.1, chosen through ALPN) under
    /// [`serve_http`](crate::serve_http) and
    /// [`serve_http_on`](crate::serve_http_on); without it they serve
    /// plain HTTP/1.1. An [`HttpService`] mounted elsewhere leaves TLS to
    /// its host.
    #[must_use]
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }
}

/// The certificate presented to new connections, swapped by a reload.
struct Reloadable {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
}

impl fmt::Debug for Reloadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reloadable")
            .field("cert", &self.cert_path)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for Reloadable {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.current.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The certificate chain and key of two PEM files, checked to match.
fn load(cert_path: &Path, key_path: &Path) -> Result<Arc<CertifiedKey>, TlsError> {
    let pem = read(cert_path)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(TlsError::NoCertificate(cert_path.to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(&read(key_path)?)
        .map_err(|_| TlsError::NoKey(key_path.to_owned()))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider)
        .map(Arc::new)
        .map_err(TlsError::Unusable)
}

/// Serves one accepted connection over TLS: the handshake (bounded by the
/// handshake timeout, abandoned at shutdown), then HTTP/2 if ALPN chose
/// it, else HTTP/1.1 with the plain server's settings. Runs in the
/// connection's task, so a slow handshake holds only its own connection.
pub(super) async fn serve<S>(
    tls: TlsConfig,
    stream: S,
    service: HttpService,
    h1: http1::Builder,
    stop: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let handshake = tokio::time::timeout(tls.handshake_timeout, tls.acceptor.accept(stream));
    let stream = tokio::select! {
        done = handshake => match done {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!("TLS handshake timed out");
                return;
            }
        },
        () = stop.cancelled() => return,
    };
    let h2 = stream.get_ref().1.alpn_protocol() == Some(H2);
    let io = TokioIo::new(stream);
    let result = if h2 {
        let idle = service.config().read_timeout;
        let activity = Activity::new();
        let builder = super::h2::builder(service.config());
        let tracked = Tracked {
            service,
            activity: Arc::clone(&activity),
        };
        let conn = builder.serve_connection(io, tracked);
        let mut conn = pin!(conn);
        tokio::select! {
            result = conn.as_mut() => result,
            // Spec: basic/transports/streamable-http.mdx — the server may
            // close a connection; an idle HTTP/2 one goes after the same
            // time an idle HTTP/1.1 one does.
            () = activity.idle_for(idle) => {
                tracing::debug!("closing an idle HTTP/2 connection");
                conn.as_mut().graceful_shutdown();
                conn.await
            }
            () = stop.cancelled() => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        }
    } else {
        let conn = h1.serve_connection(io, service);
        super::serve::until_stopped(pin!(conn), &stop, |c| c.graceful_shutdown()).await
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "HTTPS connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec![name.to_owned()])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        (cert.pem(), key.serialize_pem())
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    fn presented(tls: &TlsConfig) -> Vec<u8> {
        let current = tls.resolver.current.read().expect("lock");
        current.cert[0].to_vec()
    }

    #[test]
    fn reload_swaps_the_certificate_and_a_failed_one_keeps_it() {
        let dir = std::env::temp_dir().join(format!("toolwire-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let (cert, key) = pair("one.test");
        let cert_path = write(&dir, "cert.pem", &cert);
        let key_path = write(&dir, "key.pem", &key);
        let tls = TlsConfig::from_pem_files(&cert_path, &key_path).expect("loads");
        let first = presented(&tls);

        let (cert2, key2) = pair("two.test");
        write(&dir, "cert.pem", &cert2);
        // The new certificate with the old key: refused, the old pair stays.
        assert!(matches!(tls.reload(), Err(TlsError::Unusable(_))));
        assert_eq!(presented(&tls), first);
        write(&dir, "key.pem", &key2);
        let kept = tls.clone();
        kept.reload().expect("reloads");
        assert_ne!(presented(&tls), first, "clones share the certificate");
        drop(kept);

        write(&dir, "cert.pem", "not a certificate");
        assert!(matches!(tls.reload(), Err(TlsError::NoCertificate(_))));
        write(&dir, "cert.pem", &cert2);
        write(&dir, "key.pem", &cert2);
        assert!(matches!(tls.reload(), Err(TlsError::NoKey(_))));
        std::fs::remove_dir_all(&dir).expect("clean up");
        assert!(matches!(tls.reload(), Err(TlsError::Read { .. })));
        let err = TlsConfig::from_pem_files(dir.join("cert.pem"), dir.join("key.pem"))
            .expect_err("missing files");
        assert!(err.to_string().contains("cert.pem"), "{err}");
    }
}
