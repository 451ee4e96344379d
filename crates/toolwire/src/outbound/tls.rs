//! TLS for outbound HTTP: rustls (the `ring` provider) with the platform's
//! root certificates (or, with the `webpki-roots` feature, the Mozilla roots
//! compiled in), plus any CA the caller adds; HTTP/2 when the server offers
//! it over ALPN; and refusals explained in plain words.
//!
//! No cryptography is written here: rustls verifies the chain, the name
//! and the validity period.

use super::TlsSetupError;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
#[cfg(feature = "client")]
use rustls::CertificateError;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::sync::Arc;

/// The connector: `http://` as is, `https://` over rustls.
pub(crate) type Connector = HttpsConnector<HttpConnector>;

/// Builds the connector. Root certificates are loaded only when `https`:
/// a plain-HTTP client needs none. `extra_cas` are PEM documents, each
/// holding one or more CA certificates.
pub(crate) fn connector(https: bool, extra_cas: &[Vec<u8>]) -> Result<Connector, TlsSetupError> {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    // The scheme decides, not the connector: https URLs need TLS.
    http.enforce_http(false);
    let mut roots = RootCertStore::empty();
    if https {
        add_default_roots(&mut roots);
    }
    for pem in extra_cas {
        add_pem(&mut roots, pem)?;
    }
    if https && roots.is_empty() {
        return Err(TlsSetupError(
            "no trusted root certificates: the platform store is empty; add a CA with --cacert or the builder's with_ca_pem".into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError(format!("cannot configure TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // ALPN offers h2 and http/1.1; the server's choice decides.
    Ok(HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http))
}

#[cfg(feature = "webpki-roots")]
fn add_default_roots(roots: &mut RootCertStore) {
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
}

#[cfg(not(feature = "webpki-roots"))]
fn add_default_roots(roots: &mut RootCertStore) {
    let found = rustls_native_certs::load_native_certs();
    for e in &found.errors {
        tracing::debug!("loading a platform root certificate failed: {e}");
    }
    let (added, ignored) = roots.add_parsable_certificates(found.certs);
    tracing::debug!("{added} platform root certificates ({ignored} unusable)");
}

fn add_pem(roots: &mut RootCertStore, pem: &[u8]) -> Result<(), TlsSetupError> {
    let mut count = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| TlsSetupError(format!("unreadable CA certificate: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| TlsSetupError(format!("unusable CA certificate: {e}")))?;
        count += 1;
    }
    if count == 0 {
        return Err(TlsSetupError(
            "the CA file holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(())
}

/// Why a TLS handshake failed, in words, if the error chain holds a
/// rustls error.
#[cfg(feature = "client")]
pub(crate) fn explain(e: &(dyn std::error::Error + 'static), host: &str) -> Option<String> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(r) = rustls_error(e) {
            return Some(describe(r, host));
        }
        next = e.source();
    }
    None
}

/// `e` as a rustls error, looking through io::Errors that wrap one (an
/// io::Error's `source` skips the error it wraps, and the connector wraps
/// twice).
#[cfg(feature = "client")]
fn rustls_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(r) = e.downcast_ref::<rustls::Error>() {
        return Some(r);
    }
    let inner = e.downcast_ref::<std::io::Error>()?.get_ref()?;
    rustls_error(inner)
}

#[cfg(feature = "client")]
fn describe(e: &rustls::Error, host: &str) -> String {
    let why = match e {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => format!(
                "the certificate of {host} is signed by an unknown issuer (a CA this client does not trust; add it with --cacert FILE)"
            ),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!("the certificate is not valid for the name {host:?} (name mismatch)")
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("the certificate of {host} has expired")
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!("the certificate of {host} is not valid yet")
            }
            CertificateError::Revoked => format!("the certificate of {host} is revoked"),
            other => format!("the certificate of {host} is invalid: {other:?}"),
        },
        other => format!("the TLS handshake with {host} failed: {other}"),
    };
    format!("TLS refused: {why}")
}
