//! Plain outbound HTTP(S) requests for code beside the MCP client: a
//! gateway calling a REST API it exposes as tools. The same pooled hyper
//! client over rustls as the client transport, with the two bounds every
//! outbound exchange needs, a time limit and a response size limit.

use super::{HttpClient, TlsSetupError};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt as _, Full, Limited};
use std::time::Duration;

/// An HTTP(S) client for requests that are not MCP: no redirect is
/// followed, every answer is read whole up to a size limit, and every
/// exchange has a time limit. Cheap to clone (one connection pool).
#[derive(Clone)]
pub struct OutboundHttp {
    client: HttpClient,
}

impl std::fmt::Debug for OutboundHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundHttp").finish_non_exhaustive()
    }
}

/// Why an outbound exchange gave no response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutboundError {
    /// TLS could not be set up (no root certificate, a bad CA).
    #[error("{0}")]
    Setup(String),
    /// Connecting, sending or reading failed.
    #[error("{0}")]
    Transport(String),
    /// No whole response within the time limit.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The response body is larger than the limit.
    #[error("the response is larger than {0} bytes")]
    TooLarge(usize),
}

impl From<TlsSetupError> for OutboundError {
    fn from(e: TlsSetupError) -> Self {
        Self::Setup(e.0)
    }
}

impl OutboundHttp {
    /// A client for plain-HTTP URLs and, when `https`, for `https://` ones
    /// (the platform's root certificates, plus `extra_cas`, PEM documents
    /// of CAs trusted besides).
    ///
    /// # Errors
    ///
    /// [`OutboundError::Setup`] when TLS cannot be set up.
    pub fn new(https: bool, extra_cas: &[Vec<u8>]) -> Result<Self, OutboundError> {
        Ok(Self {
            client: super::client(https, extra_cas)?,
        })
    }

    /// Sends `request` and reads its whole response, of at most
    /// `max_body` bytes, within `timeout` (connection included).
    ///
    /// # Errors
    ///
    /// [`OutboundError`]: a transport failure, the time limit, or a body
    /// over `max_body`. Any status is a response, not an error.
    pub async fn send(
        &self,
        request: Request<Bytes>,
        max_body: usize,
        timeout: Duration,
    ) -> Result<Response<Bytes>, OutboundError> {
        let exchange = async {
            let response = self
                .client
                .request(request.map(Full::new))
                .await
                .map_err(|e| OutboundError::Transport(super::error_chain(&e)))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, max_body)
                .collect()
                .await
                .map_err(|e| {
                    if e.is::<http_body_util::LengthLimitError>() {
                        OutboundError::TooLarge(max_body)
                    } else {
                        OutboundError::Transport(format!("reading the response: {e}"))
                    }
                })?
                .to_bytes();
            Ok(Response::from_parts(parts, body))
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| OutboundError::Timeout(timeout))?
    }
}
