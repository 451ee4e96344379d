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
pub(crate) mod router;
pub(crate) mod sse;
pub(crate) mod stdio;

use super::error::ClientError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
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
    pub(crate) headers: Vec<(::http::HeaderName, ::http::HeaderValue)>,
    /// The request's progress token, to route progress on stdio.
    pub(crate) progress_token: Option<ProgressToken>,
    /// Whether the request asked for log messages (stdio routing).
    pub(crate) wants_logs: bool,
    /// A legacy `initialize`: on HTTP, its reply's `Mcp-Session-Id` starts
    /// the session every later message carries.
    pub(crate) initialize: bool,
}

/// A message the server sent on its own: a request (legacy servers ask for
/// elicitation, sampling and roots this way) or a notification no request
/// is waiting for (legacy list changes and resource updates); or word from
/// the transport that the connection carrying them is gone.
#[derive(Debug)]
pub(crate) enum Inbound {
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// The connection that carried the server's own messages ended (a
    /// stdio server's output, the HTTP+SSE stream), for this reason: the
    /// legacy subscriptions waiting on it end with an error.
    Lost(String),
}

/// Where a transport delivers [`Inbound`] messages; the client installs
/// the receiving end. Before that, or after the client is gone, they are
/// dropped with a debug log.
#[derive(Clone, Default)]
pub(crate) struct InboundSink(Arc<Mutex<Option<mpsc::UnboundedSender<Inbound>>>>);

impl InboundSink {
    pub(crate) fn install(&self, tx: mpsc::UnboundedSender<Inbound>) {
        if let Ok(mut s) = self.0.lock() {
            *s = Some(tx);
        }
    }

    pub(crate) fn deliver(&self, message: Inbound) {
        let sent = self
            .0
            .lock()
            .ok()
            .and_then(|s| s.as_ref().map(|tx| tx.send(message).is_ok()));
        if sent != Some(true) {
            tracing::debug!("dropping a message from the server: nobody listens");
        }
    }
}

/// One decoded message from the server.
#[derive(Debug)]
pub(crate) enum Decoded {
    /// A notification or a response, with the response's id.
    Message(Incoming, Option<RequestId>),
    /// A request from the server (legacy era only).
    Request(Inbound),
}

/// A message received for a request.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A notification about the request, or on a listen stream.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// The response: the end of an ordinary request. The result stays
    /// raw JSON: most callers read it straight into their typed result,
    /// and a gateway passes it on as it came.
    Response(Result<Box<RawValue>, ErrorObject>),
}

impl Incoming {
    /// Decodes one message of a server's reply; a request is an error here
    /// (see [`decode_any`] for the places a request may arrive).
    pub(crate) fn decode(bytes: &[u8]) -> Result<(Self, Option<RequestId>), ClientError> {
        match decode_any(bytes)? {
            Decoded::Message(m, id) => Ok((m, id)),
            // Spec: basic/transports/streamable-http.mdx#receiving-messages —
            // a 2026-07-28 server must not send requests.
            Decoded::Request(Inbound::Request { method, .. }) => Err(ClientError::Protocol(
                format!("the server sent a request ({method}) where only a response may come"),
            )),
            // decode_any puts notifications in Decoded::Message.
            Decoded::Request(Inbound::Notification { method, params }) => {
                Ok((Self::Notification { method, params }, None))
            }
            Decoded::Request(Inbound::Lost(reason)) => Err(ClientError::Transport(reason)),
        }
    }
}

/// Decodes one message from the server: a notification, a response, or a
/// request (which only a legacy server may send).
pub(crate) fn decode_any(bytes: &[u8]) -> Result<Decoded, ClientError> {
    match Message::from_slice(bytes) {
        Ok(Message::Notification(n)) => Ok(Decoded::Message(
            Incoming::Notification {
                method: n.method,
                params: n.params.map(|p| raw_to_value(&p)),
            },
            None,
        )),
        Ok(Message::Response(r)) => Ok(Decoded::Message(Incoming::Response(r.outcome), r.id)),
        Ok(Message::Request(r)) => Ok(Decoded::Request(Inbound::Request {
            id: r.id,
            method: r.method,
            params: r.params.map(|p| raw_to_value(&p)),
        })),
        Err(e) => match null_id_error(bytes) {
            Some(error) => Ok(Decoded::Message(Incoming::Response(Err(error)), None)),
            None => Err(ClientError::Protocol(format!("unreadable message: {e}"))),
        },
    }
}

/// An error response with `"id": null`, which 2026-07-28 forbids but
/// earlier revisions (JSON-RPC 2.0 itself) use when the request's id could
/// not be read; legacy servers send it, for example with an HTTP 400.
fn null_id_error(bytes: &[u8]) -> Option<ErrorObject> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object()?;
    if o.get("jsonrpc")? != "2.0" || !o.get("id")?.is_null() || o.contains_key("method") {
        return None;
    }
    serde_json::from_value(o.get("error")?.clone()).ok()
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
    /// (stdio); ends a legacy session with DELETE (HTTP).
    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async { Ok(()) })
    }

    /// Why the connection is gone for good, once it is (a stdio server's
    /// output closed); `None` while it serves, and always on HTTP, where
    /// each request makes its own connection.
    fn lost(&self) -> Option<String> {
        None
    }

    /// Where messages the server sends on its own go.
    fn inbound(&self) -> Option<InboundSink> {
        None
    }

    /// Sends a message that gets no response: a notification, or the
    /// client's response to a server's request (legacy era).
    fn post(&self, _body: Bytes) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async {
            Err(ClientError::Transport(
                "this transport cannot send notifications".into(),
            ))
        })
    }

    /// Starts the legacy session's side channel once `initialize` is done:
    /// the HTTP GET stream of server-initiated messages, carrying
    /// `MCP-Protocol-Version: version` where that header exists. stdio
    /// needs nothing.
    fn start_legacy_session(&self, _version: Option<String>) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Forgets the legacy session (before initialising again).
    fn reset_session(&self) {}

    /// Tries the 2024-11-05 HTTP+SSE transport (HTTP only): true when the
    /// server opened it, and every later message goes that way.
    fn open_legacy_sse(&self) -> BoxFuture<'_, Result<bool, ClientError>> {
        Box::pin(async { Ok(false) })
    }

    /// The legacy HTTP session id, if there is one.
    fn session_id(&self) -> Option<String> {
        None
    }
}
