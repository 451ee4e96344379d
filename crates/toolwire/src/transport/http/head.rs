//! The checks that need only the request head, for both eras: the path,
//! the `Host` and `Origin` allow-lists, the method (a legacy session's GET
//! and DELETE are answered here), framing and content negotiation, and the
//! era-deciding headers read once.

use super::body::HttpBody;
use super::early::Refused;
use super::found::HeadHeaders;
use super::handle::{Early, error, with_status};
use super::negotiate::{
    accepts_json_and_sse, check_transfer_coding, is_identity_coded, is_json_content_type,
};
use super::origin::Refusal;
use super::{HttpService, names};
use crate::legacy::LEGACY_PROTOCOL_VERSIONS;
use http::header::ALLOW;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use std::sync::Arc;
use toolwire_proto::ErrorObject;
use toolwire_proto::meta::PROTOCOL_VERSION;

/// Why the head checks did not pass.
pub(super) enum HeadError {
    /// Answered from the head alone (wrong path or method, a legacy
    /// session's GET or DELETE); the body is drained after the answer.
    Answered(Early),
    /// Refused; the answer may echo the body's id and drains the body.
    Refused(Box<Refused>),
}

/// What the head says about the era, read once: the `Mcp-Session-Id` a
/// request names, when legacy sessions are served and the
/// `MCP-Protocol-Version` header is not the modern one (a modern request
/// ignores `Mcp-Session-Id`). The usual modern request has no session
/// header, and costs one map lookup here.
#[derive(Debug, Default)]
pub(super) struct Head {
    pub(super) session_id: Option<String>,
    /// The authenticated caller, when the resource server is on.
    #[cfg(feature = "auth")]
    pub(super) grant: Option<Arc<crate::auth::scope::Grant>>,
}

impl Head {
    /// The authenticated principal, if any: a legacy session belongs to
    /// the principal that opened it.
    pub(super) fn principal(&self) -> Option<&Arc<str>> {
        #[cfg(feature = "auth")]
        if let Some(grant) = &self.grant {
            return Some(&grant.principal);
        }
        None
    }
}

/// The `MCP-Protocol-Version` header, if readable.
pub(super) fn version_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(names::PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
}

/// Whether the version header names a legacy revision.
pub(super) fn legacy_version(headers: &HeaderMap) -> bool {
    version_header(headers).is_some_and(|v| LEGACY_PROTOCOL_VERSIONS.contains(&v))
}

impl HttpService {
    /// The checks that need only the request head, for both eras: path,
    /// allow-lists, method, framing, content negotiation. A legacy
    /// session's GET (its standalone stream) and DELETE are answered here.
    pub(super) fn check_head(&self, parts: &http::request::Parts) -> Result<Head, HeadError> {
        let found = HeadHeaders::find(&parts.headers);
        self.check_target(parts, &found)?;
        let head = self.read_head(&found);
        self.check_method(parts, &found, head)
    }

    /// The path and the `Host` and `Origin` allow-lists.
    pub(super) fn check_target(
        &self,
        parts: &http::request::Parts,
        found: &HeadHeaders<'_>,
    ) -> Result<(), HeadError> {
        let shared = &*self.shared;
        if shared
            .config
            .path
            .as_deref()
            .is_some_and(|p| p != parts.uri.path())
        {
            return Err(HeadError::Answered(Box::new(with_status(
                StatusCode::NOT_FOUND,
                HttpBody::empty(),
            ))));
        }
        // Spec: basic/transports/streamable-http.mdx#security--endpoint;
        // (2025-11-25) basic/transports.mdx#security-warning
        if let Err(refusal) = shared
            .policy
            .check(parts.version, parts.uri.authority(), found)
        {
            let (status, why) = match refusal {
                Refusal::BadHost => (
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the Host header must appear once, as host[:port]",
                ),
                Refusal::Host => (StatusCode::FORBIDDEN, "Forbidden: Host is not allowed"),
                Refusal::Origin => (StatusCode::FORBIDDEN, "Forbidden: Origin is not allowed"),
            };
            tracing::debug!(?refusal, "refused by the host/origin check");
            return Err(HeadError::Refused(Refused::new(status, why)));
        }
        Ok(())
    }

    /// The method (a legacy session's GET and DELETE are answered here)
    /// and content negotiation.
    pub(super) fn check_method(
        &self,
        parts: &http::request::Parts,
        found: &HeadHeaders<'_>,
        head: Head,
    ) -> Result<Head, HeadError> {
        if parts.method != Method::POST {
            return Err(HeadError::Answered(Box::new(match &head.session_id {
                Some(_) if parts.method == Method::GET => self.open_stream(parts, &head),
                Some(_) if parts.method == Method::DELETE => self.delete(&head),
                // Spec: basic/transports/streamable-http.mdx#earlier-streamable-http-revisions
                // — GET and DELETE (and anything else) get 405.
                _ => not_allowed(&parts.method, head.session_id.is_some()),
            })));
        }
        if let Err(status) = check_transfer_coding(&parts.headers, found.transfer_encoding) {
            let why = if status == StatusCode::NOT_IMPLEMENTED {
                "Not Implemented: the only transfer coding served is chunked"
            } else {
                "Bad Request: chunked must be applied once"
            };
            return Err(HeadError::Refused(Refused::new(status, why).coded()));
        }
        // Spec: basic/transports/streamable-http.mdx#sending-messages
        if !accepts_json_and_sse(&parts.headers, found.accept) {
            return Err(HeadError::Refused(Refused::new(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Accept must list both application/json and text/event-stream",
            )));
        }
        if !is_json_content_type(found.content_type) {
            return Err(HeadError::Refused(Refused::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: Content-Type must be application/json",
            )));
        }
        if !is_identity_coded(&parts.headers, found.content_encoding) {
            return Err(HeadError::Refused(Refused::content_coding()));
        }
        Ok(head)
    }

    /// Reads the era-deciding headers.
    pub(super) fn read_head(&self, found: &HeadHeaders<'_>) -> Head {
        if self.shared.sessions.is_none() {
            return Head::default();
        }
        let Some(sid) = found.session_id.first() else {
            return Head::default();
        };
        // A modern request ignores `Mcp-Session-Id`.
        let version = found.version.first().and_then(|v| v.to_str().ok());
        let session_id = (version != Some(PROTOCOL_VERSION))
            .then(|| sid.to_str().unwrap_or_default().to_owned());
        Head {
            session_id,
            #[cfg(feature = "auth")]
            grant: None,
        }
    }
}

/// `405`: modern requests are POSTs only; a legacy session also has GET
/// and DELETE.
fn not_allowed(method: &Method, session: bool) -> Response<HttpBody> {
    let e = ErrorObject::invalid_request(format!(
        "Method Not Allowed: {method} is not served; send each JSON-RPC message as a POST"
    ));
    let mut res = error(StatusCode::METHOD_NOT_ALLOWED, None, &e);
    res.headers_mut().insert(
        ALLOW,
        HeaderValue::from_static(if session { "GET, POST, DELETE" } else { "POST" }),
    );
    res
}
