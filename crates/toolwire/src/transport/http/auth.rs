//! The resource server on the endpoint (feature `auth`): the Protected
//! Resource Metadata, the bearer check from the request head (before the
//! body is read), the scope check once the request is parsed, and the
//! `401`/`403`/`400` answers with their `WWW-Authenticate` challenges.
//!
//! Spec: basic/authorization/index.mdx#error-handling and
//! #scope-challenge-handling; basic/authorization/authorization-server-discovery.mdx

use super::body::HttpBody;
use super::found::HeadHeaders;
use super::handle::{error, json};
use super::head::Head;
use super::{BoxError, HttpConfig, HttpResponseFuture, HttpService};
use crate::auth::scope::Grant;
use crate::auth::{AuthConfig, Check, Denied, FAILED_FETCH_RETRY, quoted};
use crate::server::Prepared;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, RETRY_AFTER, WWW_AUTHENTICATE};
use http::request::Parts;
use http::{HeaderValue, Method, Response, StatusCode};
use http_body::Body;
use std::sync::Arc;
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

impl HttpConfig {
    /// Turns on the OAuth 2.1 resource server (feature `auth`): every
    /// request needs a bearer token that `auth`'s verifier accepts, and
    /// the Protected Resource Metadata is served. See [`AuthConfig`].
    pub fn with_auth(mut self, auth: AuthConfig) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The resource server's settings, when it is on.
    pub fn auth(&self) -> Option<&AuthConfig> {
        self.auth.as_ref()
    }
}

impl HttpService {
    /// [`handle`](Self::handle) with the resource server on: the metadata,
    /// the endpoint's path and allow-lists, then the bearer token (from the
    /// cache, or verified in the request's future), then the usual head
    /// checks.
    pub(super) fn handle_authenticated<B>(self, parts: Parts, body: B) -> HttpResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let Some(auth) = self.shared.auth.as_ref() else {
            return HttpResponseFuture::ready(super::handle::with_status(
                StatusCode::INTERNAL_SERVER_ERROR,
                HttpBody::empty(),
            ));
        };
        if let Some(doc) = auth.metadata_for(parts.uri.path()) {
            let res = metadata(&parts.method, doc);
            return HttpResponseFuture::ready(self.linger(res, &parts.headers, body));
        }
        // The head checks' headers are found again after authentication,
        // which may wait: a walk is cheaper than keeping them.
        if let Err(refused) = self.check_target(&parts, &HeadHeaders::find(&parts.headers)) {
            return self.after_head(parts, body, Err(refused));
        }
        match auth.check(parts.uri.query(), &parts.headers) {
            Check::Done(Ok(grant)) => self.after_auth(parts, body, grant),
            Check::Done(Err(denied)) => {
                // Answered before the body is read: drained after, so a
                // client that writes it all first still reads the 401.
                let res = self.denied(None, denied);
                HttpResponseFuture::ready(self.linger(res, &parts.headers, body))
            }
            Check::Verify(token, digest) => HttpResponseFuture::boxed(async move {
                let client = self.peer_ip();
                let verified = match self.shared.auth.as_ref() {
                    Some(auth) => auth.verify(token, digest, client).await,
                    None => Err(Denied::Unavailable),
                };
                let future = match verified {
                    Ok(grant) => self.after_auth(parts, body, grant),
                    Err(denied) => {
                        let res = self.denied(None, denied);
                        return self.linger(res, &parts.headers, body);
                    }
                };
                match future.await {
                    Ok(res) => res,
                    Err(never) => match never {},
                }
            }),
        }
    }

    /// The usual head checks and the request, for an authenticated caller.
    fn after_auth<B>(self, parts: Parts, body: B, grant: Arc<Grant>) -> HttpResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let found = HeadHeaders::find(&parts.headers);
        let mut head = self.read_head(&found);
        head.grant = Some(grant);
        let head = self.check_method(&parts, &found, head);
        self.after_head(parts, body, head)
    }

    /// Records the caller on a parsed request; the pipeline's scope check
    /// (`Server::step`) refuses what its grant does not allow.
    pub(super) fn authorize(head: &Head, p: &mut Prepared) {
        if let Some(grant) = &head.grant {
            p.set_grant(grant);
        }
    }

    /// `403` for a request the scope check refused, with the challenge
    /// that names every scope it needs.
    ///
    /// Spec: basic/authorization/index.mdx#scope-challenge-handling
    pub(super) fn step_up(&self, scopes: &str, body: bytes::Bytes) -> Response<HttpBody> {
        let mut res = super::handle::json(StatusCode::FORBIDDEN, body);
        if let Some(auth) = self.shared.auth.as_ref()
            && let Ok(value) =
                HeaderValue::try_from(insufficient_scope(scopes, &auth.metadata_url()))
        {
            res.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        res
    }

    /// The answer to a refused request: the status, the challenge, and a
    /// JSON-RPC error (with the request's id when it was read).
    fn denied(&self, id: Option<&RequestId>, denied: Denied) -> Response<HttpBody> {
        let Some(auth) = self.shared.auth.as_ref() else {
            return super::handle::with_status(
                StatusCode::INTERNAL_SERVER_ERROR,
                HttpBody::empty(),
            );
        };
        let (status, challenge, message) = match denied {
            // Spec (RFC 6750 §3.1): no error code when no token was sent.
            Denied::Missing => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer {}", auth.challenge()),
                "Unauthorized: send an access token in an Authorization: Bearer header".to_owned(),
            ),
            Denied::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer {}, error=\"invalid_token\", error_description=\"{}\"",
                    auth.challenge(),
                    quoted(&why)
                ),
                format!("Unauthorized: {why}"),
            ),
            Denied::Malformed(why) => (
                StatusCode::BAD_REQUEST,
                format!(
                    "Bearer {}, error=\"invalid_request\", error_description=\"{why}\"",
                    auth.challenge()
                ),
                format!("Bad Request: {why}"),
            ),
            // The server-wide scopes, checked before the body is read.
            Denied::Forbidden(scopes) => {
                let scopes = scopes.join(" ");
                (
                    StatusCode::FORBIDDEN,
                    insufficient_scope(&scopes, &auth.metadata_url()),
                    format!("Forbidden: this operation needs the scopes {scopes:?}"),
                )
            }
            Denied::Unavailable => {
                let e = ErrorObject::internal(
                    "Service Unavailable: the access token could not be checked; retry later",
                );
                let mut res = error(StatusCode::SERVICE_UNAVAILABLE, id, &e);
                res.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(FAILED_FETCH_RETRY.as_secs()));
                return res;
            }
            // Not `401`: the token was not judged, and a client that reads
            // `401` throws a good token away. The code and `data` are those
            // of an invocation over its rate limit.
            Denied::RateLimited(secs) => {
                let e = ErrorObject::new(
                    ErrorCode::RATE_LIMITED,
                    format!(
                        "Too Many Requests: too many new access tokens from this client to check; retry after {secs} s"
                    ),
                )
                .with_data(serde_json::json!({ "retryAfterMs": secs.saturating_mul(1000) }));
                let mut res = error(StatusCode::TOO_MANY_REQUESTS, id, &e);
                res.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from(secs));
                return res;
            }
        };
        let e = ErrorObject::invalid_request(message);
        let mut res = error(status, id, &e);
        if let Ok(value) = HeaderValue::try_from(challenge) {
            res.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        res
    }
}

/// The challenge of a `403`: the scopes the operation needs, and where
/// the resource's metadata is.
fn insufficient_scope(scopes: &str, metadata_url: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata_url}\", error_description=\"the access token lacks a scope this operation needs\"",
        quoted(scopes),
    )
}

/// The Protected Resource Metadata: public, cacheable, readable from any
/// origin (a browser-based client fetches it before it has a token).
fn metadata(method: &Method, doc: bytes::Bytes) -> Response<HttpBody> {
    if method != Method::GET && method != Method::HEAD {
        let e = ErrorObject::invalid_request("Method Not Allowed: the metadata is read with GET");
        let mut res = error(StatusCode::METHOD_NOT_ALLOWED, None, &e);
        res.headers_mut()
            .insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return res;
    }
    let mut res = json(StatusCode::OK, doc);
    let headers = res.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
    res
}
