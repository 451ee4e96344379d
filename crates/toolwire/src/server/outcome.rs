//! What the pipeline hands back to a transport: the typed [`Outcome`] of a
//! request; the typed JSON-RPC error ([`RpcError`]) that knows its legacy
//! form; and the encoded response ([`Reply`]) a transport writes.

use super::shape::Shape;
use crate::server::Subscription;
use bytes::Bytes;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{CallToolResult, InputRequiredResult};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId, encode_error, encode_result};

mod written;

/// A JSON-RPC error from the pipeline. Most errors read the same in every
/// era; the variants below are the ones whose legacy form differs.
#[derive(Debug, Clone)]
pub(crate) enum RpcError {
    /// The same in every era.
    Plain(ErrorObject),
    /// `resources/read` of a URI nothing answers: `-32602` with `data.uri`
    /// (spec: server/resources.mdx#error-handling); `-32002` in the legacy
    /// era.
    ResourceNotFound(ErrorObject),
    /// `-32021`, which the legacy revisions do not have: `-32600` there.
    MissingCapability(ErrorObject),
    /// A shared resource is exhausted (`-32603`, the same in every era);
    /// HTTP answers it with `503` and `Retry-After`.
    Busy(ErrorObject),
    /// The caller is over its rate limit ([`ErrorCode::RATE_LIMITED`], the
    /// same in every era); HTTP answers it with `429` and `Retry-After` of
    /// this many seconds.
    RateLimited(ErrorObject, u64),
    /// The caller's access token lacks scopes the operation needs (every
    /// one of them, space-separated): `-32600` in every era; HTTP answers
    /// `403` with an `insufficient_scope` challenge that names them, so
    /// the client can step up.
    ///
    /// Spec: basic/authorization/index.mdx#scope-challenge-handling
    #[cfg(feature = "auth")]
    Forbidden(ErrorObject, std::sync::Arc<str>),
}

impl RpcError {
    /// The error in the 2026-07-28 form.
    pub(crate) fn modern(&self) -> &ErrorObject {
        match self {
            Self::Plain(e)
            | Self::ResourceNotFound(e)
            | Self::MissingCapability(e)
            | Self::Busy(e)
            | Self::RateLimited(e, _) => e,
            #[cfg(feature = "auth")]
            Self::Forbidden(e, _) => e,
        }
    }

    /// The error as `shape` writes it.
    pub(crate) fn into_shape(self, shape: Shape) -> ErrorObject {
        match (self, shape) {
            (
                Self::Plain(e) | Self::ResourceNotFound(e) | Self::MissingCapability(e),
                Shape::Modern,
            )
            | (Self::Plain(e) | Self::Busy(e), Shape::Legacy(_))
            | (Self::Busy(e) | Self::RateLimited(e, _), _) => e,
            #[cfg(feature = "auth")]
            (Self::Forbidden(e, _), _) => e,
            (Self::ResourceNotFound(mut e), Shape::Legacy(_)) => {
                e.code = ErrorCode::LEGACY_RESOURCE_NOT_FOUND;
                e
            }
            (Self::MissingCapability(mut e), Shape::Legacy(_)) => {
                e.code = ErrorCode::INVALID_REQUEST;
                e.message = format!(
                    "{}; the capabilities the client declared in initialize do not include it",
                    e.message
                );
                e
            }
        }
    }
}

#[cfg(feature = "auth")]
impl RpcError {
    /// A refusal for lacking `scopes`, all that the operation needs.
    pub(crate) fn forbidden(scopes: &[String]) -> Self {
        let joined = scopes.join(" ");
        let e = ErrorObject::invalid_request(format!(
            "Forbidden: this operation needs the scopes {scopes:?}"
        ));
        Self::Forbidden(e, joined.into())
    }
}

impl From<ErrorObject> for RpcError {
    fn from(e: ErrorObject) -> Self {
        if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
            Self::MissingCapability(e)
        } else {
            Self::Plain(e)
        }
    }
}

/// An `input_required` outcome.
#[derive(Debug)]
pub(crate) struct Required {
    /// The result a modern client gets.
    pub(crate) result: InputRequiredResult,
    /// Fired when the handler withdraws its requests before they are
    /// answered (see `InputRequired::withdrawn_by`); only the legacy shim,
    /// which waits for the answers, looks at it.
    pub(crate) withdrawn: Option<tokio_util::sync::CancellationToken>,
}

/// What the server made of one request.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A complete result: the encoded JSON-RPC response, already in the
    /// request's era (cached list pages are copied in, never re-encoded).
    Complete(Bytes),
    /// A complete `tools/call` result with `isError: true`, encoded like
    /// [`Complete`](Self::Complete): a JSON-RPC success that layers (the
    /// audit log, metrics, spans) count as a failed call.
    Failed(Bytes),
    /// `input_required`: the input requests the client can answer and the
    /// sealed state. A modern transport sends it as the result; the legacy
    /// shim turns it into server-to-client requests.
    InputRequired(Box<Required>),
    /// A JSON-RPC error.
    Error(Box<RpcError>),
    /// A `subscriptions/listen` stream for the transport to carry.
    Stream(Box<Subscription>),
}

impl Outcome {
    /// An error outcome.
    pub(crate) fn error(e: impl Into<RpcError>) -> Self {
        Self::Error(Box::new(e.into()))
    }

    /// The response to write for request `id` in `shape`; a stream is handed
    /// back, since it is not one response.
    pub(crate) fn into_reply(self, id: &RequestId, shape: Shape) -> Result<Reply, Subscription> {
        Ok(match self {
            Self::Complete(body) | Self::Failed(body) => Reply {
                body,
                error: None,
                retry: Retry::No,
            },
            Self::InputRequired(required) => Reply::result(id, &required.result),
            Self::Error(e) => {
                let retry = match &*e {
                    RpcError::Busy(_) => Retry::Busy,
                    RpcError::RateLimited(_, secs) => Retry::Limited(*secs),
                    #[cfg(feature = "auth")]
                    RpcError::Forbidden(_, scopes) => Retry::StepUp(std::sync::Arc::clone(scopes)),
                    _ => Retry::No,
                };
                let mut reply = Reply::error(Some(id), &e.into_shape(shape));
                reply.retry = retry;
                reply
            }
            Self::Stream(s) => return Err(*s),
        })
    }

    /// [`into_reply`](Self::into_reply) for an outcome that is never a
    /// stream (a handler's): a stream would be an internal error.
    #[cfg(feature = "http")]
    pub(crate) fn encode(self, id: &RequestId, shape: Shape) -> Reply {
        self.into_reply(id, shape).unwrap_or_else(|_| {
            Reply::error(
                Some(id),
                &ErrorObject::internal("a stream cannot be answered here"),
            )
        })
    }
}

/// The encoded response to one request, and its error code if it is an
/// error: what a transport writes.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    body: Bytes,
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // read by the HTTP transport
    error: Option<ErrorCode>,
    /// Whether, and when, the request may be retried.
    retry: Retry,
}

/// What a [`Reply`] tells a client about retrying: HTTP answers with the
/// status and the `Retry-After` or `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Not a retryable refusal.
    No,
    /// [`RpcError::Busy`]: `503`, retry in a second.
    Busy,
    /// [`RpcError::RateLimited`]: `429`, retry after this many seconds.
    Limited(u64),
    /// [`RpcError::Forbidden`]: `403`, retry with a token that holds these
    /// scopes (space-separated).
    #[cfg(feature = "auth")]
    StepUp(std::sync::Arc<str>),
}

impl Reply {
    pub(crate) fn result(id: &RequestId, result: &(impl serde::Serialize + ?Sized)) -> Self {
        Self {
            body: Bytes::from(encode_result(id, result)),
            error: None,
            retry: Retry::No,
        }
    }

    /// [`result`](Self::result) for a `result` object that has no `_meta`
    /// member: `meta_member` (from [`meta_member`]) is added as its last
    /// member, as if it had been serialised with it.
    pub(crate) fn result_with_meta(
        id: &RequestId,
        result: &(impl serde::Serialize + ?Sized),
        meta_member: &[u8],
    ) -> Self {
        Self::written_with_meta(id, |out| serde_json::to_writer(out, result), meta_member)
            .unwrap_or_else(|| Self::result(id, result))
    }

    /// [`result_with_meta`](Self::result_with_meta) for a `tools/call`
    /// result, written by hand to the same bytes.
    pub(crate) fn call_result_with_meta(
        id: &RequestId,
        result: &CallToolResult,
        meta_member: &[u8],
    ) -> Self {
        Self::written_with_meta(id, |out| written::call_result(out, result), meta_member)
            .unwrap_or_else(|| Self::result(id, result))
    }

    /// The reply with the object `write` writes as its result, and
    /// `meta_member` added to it; `None` if `write` fails or writes no
    /// object.
    fn written_with_meta(
        id: &RequestId,
        write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
        meta_member: &[u8],
    ) -> Option<Self> {
        let mut out = Vec::with_capacity(RESULT_CAPACITY + meta_member.len());
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut out, id).ok()?;
        out.extend_from_slice(br#","result":"#);
        write(&mut out).ok()?;
        // The result is an object: reopen it to add `_meta` as its last
        // member (after `{` there is no member yet, so no comma).
        if out.pop() != Some(b'}') {
            return None;
        }
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(meta_member);
        out.extend_from_slice(b"}}");
        Some(Self {
            body: Bytes::from(out),
            error: None,
            retry: Retry::No,
        })
    }

    /// [`result`](Self::result) for a result already encoded, in a buffer
    /// of the exact size.
    pub(crate) fn raw_result(id: &RequestId, result: &RawValue) -> Self {
        const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
        const MID: &[u8] = br#","result":"#;
        let raw = result.get().as_bytes();
        let mut out = Vec::with_capacity(HEAD.len() + 24 + MID.len() + raw.len() + 1);
        out.extend_from_slice(HEAD);
        if serde_json::to_writer(&mut out, id).is_err() {
            return Self::result(id, result);
        }
        out.extend_from_slice(MID);
        out.extend_from_slice(raw);
        out.push(b'}');
        Self {
            body: Bytes::from(out),
            error: None,
            retry: Retry::No,
        }
    }

    /// `-32603` for a request whose handler panicked (logged here), which
    /// every transport answers instead of dropping the request.
    pub(crate) fn panicked(id: &RequestId) -> Self {
        crate::log_limit::error_limited!(id = %id, "a request handler panicked");
        Self::error(
            Some(id),
            &ErrorObject::internal("the request handler panicked"),
        )
    }

    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Self {
        Self {
            body: Bytes::from(encode_error(id, error)),
            error: Some(error.code),
            retry: Retry::No,
        }
    }

    /// The encoded JSON-RPC response.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn body(&self) -> &Bytes {
        &self.body
    }

    /// Consumes the reply, returning the encoded response.
    pub(crate) fn into_body(self) -> Bytes {
        self.body
    }

    /// Whether the error says to retry later: a shared resource is
    /// exhausted, or the caller is over its rate limit.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn retry(&self) -> &Retry {
        &self.retry
    }

    /// The error code, when the response is an error.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn error_code(&self) -> Option<ErrorCode> {
        self.error
    }
}

/// Room for the usual result (a tools/call text result with `_meta` is
/// ~150 bytes) without growing the buffer.
const RESULT_CAPACITY: usize = 256;

/// `"_meta":{"io.modelcontextprotocol/serverInfo":<server_info>}`, the member
/// [`Reply::result_with_meta`] splices into a result.
pub(crate) fn meta_member(server_info: &Value) -> Box<[u8]> {
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.to_owned(), server_info.clone());
    let mut out = br#""_meta":"#.to_vec();
    serde_json::to_writer(&mut out, &meta).unwrap_or_else(|_| unreachable!("a JSON value encodes"));
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_take_their_legacy_form_only_in_the_legacy_era() {
        let legacy = Shape::Legacy("2025-11-25");
        let missing = RpcError::from(ErrorObject::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "missing",
        ));
        assert!(matches!(missing, RpcError::MissingCapability(_)));
        assert_eq!(
            missing.clone().into_shape(Shape::Modern).code,
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        );
        assert_eq!(missing.into_shape(legacy).code, ErrorCode::INVALID_REQUEST);

        let not_found = RpcError::ResourceNotFound(
            ErrorObject::invalid_params("Resource not found")
                .with_data(serde_json::json!({"uri": "x:/y"})),
        );
        let modern = not_found.clone().into_shape(Shape::Modern);
        assert_eq!(modern.code, ErrorCode::INVALID_PARAMS);
        let old = not_found.into_shape(legacy);
        assert_eq!(old.code, ErrorCode::LEGACY_RESOURCE_NOT_FOUND);
        assert_eq!(old.data, modern.data);

        let plain = RpcError::from(ErrorObject::invalid_params("bad"));
        assert_eq!(plain.into_shape(legacy).code, ErrorCode::INVALID_PARAMS);
    }
}
