//! [`ClientError`]: everything a client call can fail with, told apart by
//! type so callers never match on message text.

use std::time::Duration;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::InputRequiredResult;

use super::input::InputError;
use crate::outbound::TlsSetupError;

/// Why a client call failed.
///
/// [`ClientError::Rpc`] is an error the server answered with; the others
/// arise on this side (transport, timeouts, malformed replies, input
/// handling).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("server error {}: {}", .0.code, .0.message)]
    Rpc(ErrorObject),
    /// The transport failed: the connection, the pipe or the child process.
    #[error("transport error: {0}")]
    Transport(String),
    /// TLS failed: the server's certificate was refused (the message says
    /// why: an unknown issuer, a name mismatch, an expiry), or a CA given
    /// to the builder is unusable.
    #[error("{0}")]
    Tls(String),
    /// An HTTP error status whose body is not a JSON-RPC error.
    #[error("{url} answered HTTP {status}{}{}", status_reason(*.status), body_preview(.body))]
    Http {
        /// The URL that answered.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body, for diagnostics.
        body: String,
    },
    /// The server no longer knows the legacy HTTP session (a 404 to a
    /// request carrying `Mcp-Session-Id`); the client initialises again
    /// once before reporting this.
    #[error("the server ended the legacy session (HTTP 404 for its Mcp-Session-Id)")]
    SessionExpired,
    /// A client in [`ProtocolMode::Modern`](super::ProtocolMode::Modern)
    /// found a server that speaks only the initialize-era revisions.
    #[error(
        "the server speaks only the initialize-era (2025) protocol ({0}); use protocol mode auto or legacy"
    )]
    LegacyServer(String),
    /// The server closed the stream or the connection before it answered.
    #[error("the server closed the connection before answering")]
    Disconnected,
    /// No answer, and no progress, within the request's idle timeout; the
    /// request was cancelled.
    #[error("no answer within {0:?}; the request was cancelled")]
    Timeout(Duration),
    /// No answer within the request's maximum time, however much progress
    /// it reported; the request was cancelled.
    #[error("no answer within the maximum time of {0:?}; the request was cancelled")]
    MaxTime(Duration),
    /// The server's reply does not follow the protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The task the call became was cancelled (by `tasks/cancel`, from
    /// this client or another) before it completed.
    ///
    /// Spec: extensions/tasks#task-cancellation
    #[error("the task {id} was cancelled{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    TaskCancelled {
        /// The task's id.
        id: String,
        /// Its last status message.
        message: Option<String>,
    },
    /// The reply's `resultType` is not one this client knows.
    ///
    /// Spec: basic/index.mdx#resulttype — an unrecognised value is invalid.
    #[error("unknown resultType {0:?}")]
    UnknownResultType(String),
    /// The server supports none of the protocol versions this client speaks.
    #[error(
        "the server supports protocol versions {supported:?}, none of which this client speaks ({ours:?})"
    )]
    UnsupportedVersion {
        /// What the server said it supports.
        supported: Vec<String>,
        /// What this client speaks.
        ours: Vec<String>,
    },
    /// The server asked for input and no handler is registered for manual
    /// mode's counterpart (or the call ran in a mode that returns it).
    #[error("the server requires input and no input handler is registered")]
    InputRequired(Box<InputRequiredResult>),
    /// The server asked for a kind of input this client has no handler for.
    #[error("the server asked for {method} (input {key:?}) and no handler for it is registered")]
    UnsupportedInputRequest {
        /// The `inputRequests` key.
        key: String,
        /// The input request's method.
        method: &'static str,
    },
    /// An input handler failed.
    #[error("input handler failed: {0}")]
    Input(#[from] InputError),
    /// The server kept asking for input past the round cap.
    #[error("the server still asked for input after {0} rounds")]
    TooManyRounds(usize),
    /// The tool's definition was rejected (for example an invalid
    /// `x-mcp-header`), so it is not called.
    #[error("tool {name:?} is not callable: {reason}")]
    InvalidTool {
        /// The tool name.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
    /// An argument breaks a rule of the tool's definition, so the call is
    /// not sent (for example an `x-mcp-header` integer outside
    /// ±(2^53 − 1)).
    #[error("tool {tool:?}: argument {parameter:?} cannot be sent: {reason}")]
    InvalidArgument {
        /// The tool name.
        tool: String,
        /// The parameter's path in the arguments, dotted.
        parameter: String,
        /// What is wrong.
        reason: String,
    },
    /// `structuredContent` does not match the tool's `outputSchema`, or the
    /// schema itself cannot be used.
    #[error("tool {tool:?} returned structured content that fails its outputSchema:{message}")]
    OutputSchema {
        /// The tool name.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// The server URL is not usable.
    #[error("invalid server URL: {0}")]
    InvalidUrl(String),
    /// Authorization failed: discovery, registration, the user's consent,
    /// a token request, or the server refusing even fresh credentials.
    #[cfg(feature = "oauth")]
    #[error(transparent)]
    Auth(#[from] super::auth::AuthError),
    /// The server process could not be started.
    #[error("cannot start the server process: {0}")]
    Spawn(#[source] std::io::Error),
}

/// " Not Found" for 404: the reason phrase, when the status has one.
fn status_reason(status: u16) -> String {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

/// ": <body>" when the body says anything; nothing for an empty body, so the
/// message never ends in a dangling colon.
fn body_preview(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

impl From<TlsSetupError> for ClientError {
    fn from(e: TlsSetupError) -> Self {
        Self::Tls(e.0)
    }
}

impl ClientError {
    /// The JSON-RPC error, when the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Self::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Whether a refetch failing this way may fall back to a stale cache
    /// entry: only when the server could not be reached or did not answer
    /// (network trouble, the server down). A JSON-RPC error, or any other
    /// answer, is definite.
    // Spec: server/utilities/caching.mdx — stale responses MAY be served if
    // errors occur during re-fetching.
    pub(crate) fn allows_stale(&self) -> bool {
        match self {
            Self::Transport(_)
            | Self::Disconnected
            | Self::Timeout(_)
            | Self::MaxTime(_)
            | Self::SessionExpired => true,
            Self::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// Whether the server answered definitely, so a cached entry for the
    /// request must go.
    pub(crate) fn is_definite(&self) -> bool {
        matches!(self, Self::Rpc(_))
    }
}
