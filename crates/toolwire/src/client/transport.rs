//! The client side of the transports: one outgoing request in, a stream of
//! the messages that belong to it out.
//!
//! On Streamable HTTP every request has its own response (one JSON body or
//! an SSE stream), so its messages are simply what that response carries. On
//! stdio all messages share one channel and a reader task routes them to the
//! request they belong to. Either way, dropping an [`Exchange`] before its
//! response arrived cancels the request: the HTTP connection is closed, or
//! `notifications/cancelled` is sent on stdio.

pub(crate) mod http;
pub(crate) mod sse;
pub(crate) mod stdio;

use super::error::ClientError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;
use toolwire_proto::types::ProgressToken;
use toolwire_proto::{ErrorObject, Message, RequestId};

/// Which transport a client speaks. Some rules apply to one only: HTTP
/// headers, and cancellation by notification on stdio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransportKind {
    Stdio,
    Http,
}

/// One request, encoded, with what the transport needs to route and carry it.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub(crate) id: RequestId,
    pub(crate) body: Bytes,
    /// HTTP headers beyond the fixed ones (`Content-Type`, `Accept`):
    /// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.
    pub(crate) headers: Vec<(String, String)>,
    /// The request's progress token, to route progress on stdio.
    pub(crate) progress_token: Option<ProgressToken>,
    /// Whether the request asked for log messages (stdio routing).
    pub(crate) wants_logs: bool,
}

/// A message received for a request.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A notification about the request, or on a listen stream.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// The response: the end of an ordinary request.
    Response(Result<Value, ErrorObject>),
}

impl Incoming {
    /// Decodes one message of a server's reply; requests are refused (the
    /// server must not send any at 2026-07-28).
    pub(crate) fn decode(bytes: &[u8]) -> Result<(Self, Option<RequestId>), ClientError> {
        match Message::from_slice(bytes) {
            Ok(Message::Notification(n)) => Ok((
                Self::Notification {
                    method: n.method,
                    params: n.params.map(|p| raw_to_value(&p)),
                },
                None,
            )),
            Ok(Message::Response(r)) => {
                let outcome = match r.outcome {
                    Ok(raw) => serde_json::from_str(raw.get())
                        .map_err(|e| ClientError::Protocol(format!("unreadable result: {e}")))
                        .map(Ok)?,
                    Err(e) => Err(e),
                };
                Ok((Self::Response(outcome), r.id))
            }
            // Spec: basic/transports/streamable-http.mdx#receiving-messages —
            // a server must not send requests; stdio likewise.
            Ok(Message::Request(r)) => Err(ClientError::Protocol(format!(
                "the server sent a request ({}), which 2026-07-28 does not allow",
                r.method
            ))),
            Err(e) => Err(ClientError::Protocol(format!("unreadable message: {e}"))),
        }
    }
}

fn raw_to_value(raw: &serde_json::value::RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The messages of one request, in order. The last is a
/// [`Incoming::Response`]; `None` means the stream ended without one.
pub(crate) trait Exchange: Send {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>>;
}

/// A client transport.
pub(crate) trait Transport: Send + Sync + 'static {
    fn kind(&self) -> TransportKind;

    /// Sends a request and returns the stream of its messages.
    fn send(&self, request: Outgoing) -> BoxFuture<'_, Result<Box<dyn Exchange>, ClientError>>;

    /// Sets the `Authorization` credentials (HTTP only; stdio ignores it).
    fn set_authorization(&self, _value: Option<String>) {}

    /// Shuts the transport down: closes the child's stdin and waits for it
    /// (stdio); nothing to do on HTTP.
    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async { Ok(()) })
    }
}
