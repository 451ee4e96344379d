//! Outbound HTTP(S), for the client transport and the resource server's
//! fetches alike: hyper's pooled client over the rustls connector of
//! `outbound/tls.rs`, and the error of setting it up.
//!
//! Below both users, so that the `auth` feature needs the HTTP stack and
//! not the client.

#[cfg(feature = "client")]
mod plain;
pub(crate) mod tls;

#[cfg(feature = "client")]
pub use plain::{OutboundError, OutboundHttp};

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;

/// The HTTP client: `http://` as is, `https://` over rustls, HTTP/2 when
/// the server offers it.
pub(crate) type HttpClient = HyperClient<tls::Connector, Full<Bytes>>;

/// TLS could not be set up: no root certificate to trust, an unusable CA,
/// or a configuration rustls refused. The message says which.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TlsSetupError(pub(crate) String);

/// A client for `https` or plain-HTTP URLs. Root certificates are loaded
/// only when `https`; `extra_cas` are PEM documents of CAs trusted besides.
pub(crate) fn client(https: bool, extra_cas: &[Vec<u8>]) -> Result<HttpClient, TlsSetupError> {
    let connector = tls::connector(https, extra_cas)?;
    Ok(HyperClient::builder(TokioExecutor::new()).build(connector))
}

/// An error with its causes, each once (hyper's own message alone is often
/// just "client error (Connect)").
#[cfg(feature = "client")]
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}
