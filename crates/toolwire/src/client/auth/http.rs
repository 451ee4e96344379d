//! The HTTP exchanges of the OAuth flow (metadata, registration, token
//! requests) over the outbound hyper + rustls stack the client transport
//! uses (`outbound.rs`). No redirect is followed: a metadata or token
//! endpoint that redirects is refused (RFC 8414 and OAuth 2.1 give no reason to follow one, and
//! following would send client credentials elsewhere).

use super::error::AuthError;
use crate::outbound::{self, HttpClient};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use serde::de::DeserializeOwned;
use std::sync::OnceLock;
use std::time::Duration;

type Hyper = HttpClient;

/// Largest metadata, registration or token response read.
const MAX_BODY: usize = 1024 * 1024;
/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A small client for the authorization exchanges.
pub(crate) struct AuthHttp {
    extra_cas: Vec<Vec<u8>>,
    plain: OnceLock<Result<Hyper, String>>,
    tls: OnceLock<Result<Hyper, String>>,
}

impl AuthHttp {
    pub(crate) fn new(extra_cas: Vec<Vec<u8>>) -> Self {
        Self {
            extra_cas,
            plain: OnceLock::new(),
            tls: OnceLock::new(),
        }
    }

    /// The client for the scheme; root certificates load on first https use.
    fn client(&self, https: bool) -> Result<&Hyper, AuthError> {
        let slot = if https { &self.tls } else { &self.plain };
        slot.get_or_init(|| outbound::client(https, &self.extra_cas).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| AuthError::Http(e.clone()))
    }

    /// Sends one request and reads the whole (bounded) response.
    pub(crate) async fn send(
        &self,
        request: Request<Vec<u8>>,
    ) -> Result<Response<Vec<u8>>, AuthError> {
        let uri = request.uri().clone();
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(AuthError::Http(format!("{uri}: not an http(s) URL"))),
        };
        let client = self.client(https)?;
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, Full::new(Bytes::from(body)));
        let exchange = async {
            let response = client
                .request(request)
                .await
                .map_err(|e| AuthError::Http(format!("{uri}: {}", error_chain(&e))))?;
            let (parts, body) = response.into_parts();
            let bytes = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| AuthError::Http(format!("{uri}: reading the response: {e}")))?
                .to_bytes();
            Ok(Response::from_parts(parts, bytes.to_vec()))
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| AuthError::Http(format!("{uri}: no response within {TIMEOUT:?}")))?
    }

    /// GETs a JSON document: `Ok(None)` for a 4xx/5xx answer (the caller
    /// tries the next candidate), an error when unreachable or not JSON.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<Option<T>, AuthError> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(url)
            .header(ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| AuthError::Http(format!("{url}: {e}")))?;
        let response = self.send(request).await?;
        let status = response.status();
        tracing::debug!("GET {url}: {status}");
        if !status.is_success() {
            return Ok(None);
        }
        serde_json::from_slice(response.body())
            .map(Some)
            .map_err(|e| AuthError::Discovery(format!("{url}: not the expected JSON: {e}")))
    }

    /// POSTs a JSON body; returns the status and the body.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<(StatusCode, Vec<u8>), AuthError> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(url)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body).unwrap_or_default())
            .map_err(|e| AuthError::Http(format!("{url}: {e}")))?;
        let response = self.send(request).await?;
        Ok((response.status(), response.into_body()))
    }
}

/// The `oauth2` crate's token requests go through [`AuthHttp::send`].
impl<'c> oauth2::AsyncHttpClient<'c> for AuthHttp {
    type Error = AuthError;
    type Future = futures_util::future::BoxFuture<'c, Result<oauth2::HttpResponse, AuthError>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(self.send(request))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
