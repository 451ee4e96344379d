//! JSON-RPC error codes and the error object carried by error responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A JSON-RPC error code.
///
/// The named constants are the codes the 2026-07-28 revision defines, the
/// legacy codes clients still meet, and toolwire's own
/// [`RATE_LIMITED`](Self::RATE_LIMITED); any other code round-trips
/// unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid method parameters, including invalid request `_meta`.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// Internal server error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// An HTTP header does not match the request body (Streamable HTTP).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// The request needs a client capability that was not declared.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// The requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
    /// Initialize-based revisions only: a request timed out (used by
    /// servers for their own server-to-client requests).
    pub const LEGACY_REQUEST_TIMEOUT: Self = Self(-32001);
    /// Initialize-based revisions only: `resources/read` of a resource that
    /// does not exist. 2026-07-28 uses [`Self::INVALID_PARAMS`] with the URI
    /// in `data`. Spec (2025-11-25): server/resources.mdx#error-handling
    pub const LEGACY_RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// toolwire's own code: the caller is over its rate limit; `data` is
    /// `{"retryAfterMs": N}`, the wait before the next invocation is
    /// allowed (HTTP also answers `429` with `Retry-After`).
    ///
    /// Outside JSON-RPC's reserved range (`-32768` to `-32000`), where
    /// applications define their own codes: MCP keeps `-32020` to `-32099`
    /// for codes the specification defines, and asks new implementations
    /// not to use `-32000` to `-32019`. Spec: basic/index.mdx#error-codes
    pub const RATE_LIMITED: Self = Self(-31429);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} ({code})")]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short, single-sentence description.
    pub message: String,
    /// Extra detail, defined by the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the bytes are not JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, message)
    }

    /// `-32600`: JSON, but not a valid request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601` for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32020`: a header disagrees with the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }
}
