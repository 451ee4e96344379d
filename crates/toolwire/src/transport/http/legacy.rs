//! Legacy sessions on the Streamable HTTP endpoint, in the 2025-03-26 to
//! 2025-11-25 shape, beside the stateless 2026-07-28 requests.
//!
//! - A legacy `initialize` (no `Mcp-Session-Id` needed) mints a random
//!   session id, returned in `Mcp-Session-Id`.
//! - A POST with `Mcp-Session-Id` whose `_meta` has no modern version key is
//!   served in that session: unknown or expired id `404`; JSON-RPC errors
//!   with `200`; notifications and the client's responses `202`. The
//!   response is JSON, or an SSE stream once the request emits a progress or
//!   log notification or a server-to-client request (the MRTR shim's), with
//!   the result last.
//! - `notifications/cancelled` POSTed with the id cancels the session's
//!   request it names: the handler stops, its outstanding server-to-client
//!   requests are withdrawn, and its stream ends without a response.
//!   Closing the response stream cancels the request as well.
//! - GET with the id opens the session's standalone SSE stream: list
//!   changes and updates of subscribed resources. DELETE ends the session.
//! - A modern request ignores `Mcp-Session-Id`, and a request without one
//!   that says it is legacy (`MCP-Protocol-Version` of 2025) gets `400`.
//!
//! Spec (2025-11-25): basic/transports.mdx#streamable-http,
//! #session-management, #listening-for-messages-from-the-server; (2026-07-28)
//! basic/versioning.mdx#backward-compatibility-with-initialization-based-versions

use super::Permit;
use super::body::{HttpBody, KEEP_ALIVE, KeepAlive, ReplyFuture, push_event};
use super::handle::{busy, error, json, plain, sse};
use super::head::{Head, version_header};
use super::peers::{self, Kind, Slot};
use super::{HttpService, names};
use crate::legacy::{self, MayRead, Notifier, Session, StreamQueue};
use crate::server::{InitializeParams, Prepared, Reply};
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt as _, Stream};
use http::header::ACCEPT;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use std::future::{Future as _, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use toolwire_proto::{ErrorObject, RequestId};

impl HttpService {
    /// What the session's caller may read, when the resource server is on:
    /// the grant it opened the session with (a session belongs to one
    /// principal; a grant widened later, by a step-up, counts from the
    /// next session on).
    #[cfg_attr(not(feature = "auth"), allow(clippy::unused_self))]
    fn may_read(&self, head: &Head) -> Option<MayRead> {
        #[cfg(feature = "auth")]
        if let Some(grant) = head.grant.clone() {
            let server = self.server.clone();
            return Some(Box::new(move |uri: &str| {
                server.resource_lacking(&grant, uri).is_none()
            }));
        }
        let _ = head;
        None
    }

    /// Opens a session: [`legacy::open`], under a minted id returned in
    /// `Mcp-Session-Id`. Spec (2025-11-25): basic/lifecycle.mdx#initialization
    pub(super) fn initialize(
        &self,
        headers: &HeaderMap,
        head: &Head,
        id: &RequestId,
        init: InitializeParams,
    ) -> Response<HttpBody> {
        if version_header(headers).is_some_and(|h| h != init.requested) {
            let e = ErrorObject::invalid_request(
                "Bad Request: MCP-Protocol-Version differs from params.protocolVersion",
            );
            return error(StatusCode::BAD_REQUEST, Some(id), &e);
        }
        let Some(store) = self.shared.sessions.as_ref() else {
            return plain(StatusCode::NOT_FOUND, "Not Found");
        };
        let (session, body) = legacy::open(&self.server, id, init);
        let max = self.shared.config.max_sessions_per_client;
        let slot = || match &self.peer {
            Some(peer) => peers::acquire(peer, Kind::Session, max).map(Some).ok_or(()),
            None => Ok(None),
        };
        let owner = head.principal().cloned();
        let Ok(sid) = store.create(Arc::clone(&session), slot, owner) else {
            session.close();
            return busy(
                Some(id),
                "Service Unavailable: too many sessions; retry later",
            );
        };
        session.spawn_forwarder(self.server.notification_bus(), self.may_read(head));
        let mut res = json(StatusCode::OK, body);
        if let Ok(value) = HeaderValue::from_str(&sid) {
            res.headers_mut().insert(names::SESSION_ID, value);
        }
        res
    }

    /// DELETE ends a session: `200`, empty. Spec (2025-11-25):
    /// basic/transports.mdx#session-management names no status; the
    /// Python SDK's client takes only 200 or 204 as success (and reports a
    /// failed termination otherwise), so it is 200, which any client reads
    /// as success.
    pub(super) fn delete(&self, head: &Head) -> Response<HttpBody> {
        let sid = head.session_id.as_deref().unwrap_or_default();
        let who = head.principal();
        match self
            .shared
            .sessions
            .as_ref()
            .is_some_and(|s| s.remove(sid, who))
        {
            true => super::handle::with_status(StatusCode::OK, HttpBody::empty()),
            false => plain(StatusCode::NOT_FOUND, "Not Found: Session not found"),
        }
    }

    /// Serves one request of a legacy session: JSON when the result comes
    /// first, else an SSE stream that carries the request's notifications
    /// and server-to-client requests, then its result (none if the client
    /// cancelled it). Always `200`.
    pub(super) async fn run_legacy(
        &self,
        session: Arc<Session>,
        mut p: Prepared,
        permit: Permit,
    ) -> Response<HttpBody> {
        p.peer = self.peer_ip();
        let token = CancellationToken::new();
        let Some(in_flight) = session.track(&p.id, &token) else {
            let e = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in progress",
                p.id
            ));
            return error(StatusCode::OK, Some(&p.id), &e);
        };
        let (tx, notes) = mpsc::unbounded_channel::<Bytes>();
        let server = self.server.clone();
        let child = token.clone();
        let id = p.id.clone();
        let shape = p.era.shape();
        let handler: ReplyFuture = Box::pin(async move {
            let _in_flight = in_flight;
            let run = server.dispatch(p, || child, Some(tx.into())).outcome();
            match AssertUnwindSafe(run).catch_unwind().await {
                Ok(outcome) => outcome.encode(&id, shape),
                Err(_) => Reply::panicked(&id),
            }
        });
        let keep_alive = self.shared.config.sse_keep_alive;
        let mut call = LegacyCall::new(handler, notes, token, keep_alive, permit);
        match poll_fn(|cx| call.poll_first(cx)).await {
            // The scope check's refusal is a `403` in this era too.
            #[cfg(feature = "auth")]
            Some(reply) if matches!(reply.retry(), crate::server::Retry::StepUp(_)) => {
                self.reply_of(reply)
            }
            // Spec (2025-11-25): JSON-RPC errors travel with 200.
            Some(reply) => json(StatusCode::OK, reply.into_body()),
            None => sse(HttpBody::stream(Box::pin(call))),
        }
    }

    /// The session's standalone stream. Spec (2025-11-25):
    /// basic/transports.mdx#listening-for-messages-from-the-server
    pub(super) fn open_stream(&self, parts: &Parts, head: &Head) -> Response<HttpBody> {
        let sid = head.session_id.as_deref().unwrap_or_default();
        let accepts = parts.headers.get_all(ACCEPT).iter().any(|v| {
            v.to_str()
                .is_ok_and(|s| s.contains("text/event-stream") || s.contains("*/*"))
        });
        if !accepts {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Accept must list text/event-stream",
            );
        }
        let who = head.principal();
        let Some(session) = self.shared.sessions.as_ref().and_then(|s| s.get(sid, who)) else {
            return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
        };
        let Ok(slot) = self.stream_slot() else {
            return busy(
                None,
                "Service Unavailable: too many open streams from this client; close one and retry",
            );
        };
        session.confirm();
        let queue = StreamQueue::new(self.shared.config.session_stream_queue);
        session.set_notifier(Some(Notifier::Stream(Arc::clone(&queue))));
        // Dropping the body (the client went away) closes the queue, so the
        // session stops feeding it and its memory is given back.
        let queue = CloseOnDrop { queue, _slot: slot };
        let closed = session.closed().clone();
        let shutdown = self.server.inner.closing.clone();
        let every = self.shared.config.sse_keep_alive;
        let stream = futures_util::stream::unfold(
            (queue, closed, shutdown),
            move |(queue, closed, shutdown)| async move {
                let keep_alive = async {
                    match every {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                };
                let out = tokio::select! {
                    () = closed.cancelled() => return None,
                    () = shutdown.cancelled() => return None,
                    msg = queue.queue.next() => {
                        let msg = msg?;
                        let mut buf = BytesMut::new();
                        push_event(&mut buf, &msg);
                        buf.freeze()
                    }
                    () = keep_alive => Bytes::from_static(KEEP_ALIVE),
                };
                Some((out, (queue, closed, shutdown)))
            },
        );
        sse(HttpBody::stream(Box::pin(stream)))
    }
}

/// Closes a GET stream's queue when the stream's body is dropped, and
/// holds the client's stream slot until then.
struct CloseOnDrop {
    queue: Arc<StreamQueue>,
    _slot: Option<Slot>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.queue.close();
    }
}

/// One legacy request on its way to the client: the handler, polled inline,
/// and what it sends before its response.
///
/// Cancelled (by `notifications/cancelled`), the handler is dropped at once,
/// which withdraws its outstanding server-to-client requests (see
/// `legacy/session.rs`); their `notifications/cancelled` still go out, and
/// the stream ends without a response. Spec (2025-11-25):
/// basic/utilities/cancellation.mdx — no response for a cancelled request.
///
/// Dropped (the client closed the stream), the request is cancelled before
/// the handler is dropped. `notes` is declared before `handler` so that it
/// closes first: withdrawn requests are then announced on the session's
/// GET stream instead of a dead one.
struct LegacyCall {
    notes: mpsc::UnboundedReceiver<Bytes>,
    handler: Option<ReplyFuture>,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    token: CancellationToken,
    /// Framed events not yet handed to the connection.
    queued: BytesMut,
    keep_alive: KeepAlive,
    /// Held until the stream ends so that it counts against the limit.
    _permit: Permit,
}

impl LegacyCall {
    fn new(
        handler: ReplyFuture,
        notes: mpsc::UnboundedReceiver<Bytes>,
        token: CancellationToken,
        keep_alive: Option<Duration>,
        permit: Permit,
    ) -> Self {
        Self {
            notes,
            handler: Some(handler),
            cancelled: Box::pin(token.clone().cancelled_owned()),
            token,
            queued: BytesMut::new(),
            keep_alive: KeepAlive::new(keep_alive),
            _permit: permit,
        }
    }

    /// Queues what the handler sent, and returns its response once it is
    /// done; ends the handler if the request was cancelled.
    fn advance(&mut self, cx: &mut Context<'_>) -> Option<Reply> {
        let handler = self.handler.as_mut()?;
        while let Poll::Ready(Some(note)) = self.notes.poll_recv(cx) {
            push_event(&mut self.queued, &note);
        }
        let reply = if self.cancelled.as_mut().poll(cx).is_ready() {
            None
        } else {
            match handler.as_mut().poll(cx) {
                Poll::Ready(reply) => Some(reply),
                Poll::Pending => return None,
            }
        };
        self.handler = None;
        // What the handler sent last, or on its way out, goes first.
        while let Ok(note) = self.notes.try_recv() {
            push_event(&mut self.queued, &note);
        }
        reply
    }

    /// The response to send as JSON, or `None` once the exchange must be a
    /// stream (the handler sent something first, or was cancelled).
    fn poll_first(&mut self, cx: &mut Context<'_>) -> Poll<Option<Reply>> {
        match self.advance(cx) {
            Some(reply) if self.queued.is_empty() => Poll::Ready(Some(reply)),
            Some(reply) => {
                push_event(&mut self.queued, reply.body());
                Poll::Ready(None)
            }
            None if self.handler.is_none() || !self.queued.is_empty() => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

impl Stream for LegacyCall {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        if let Some(reply) = this.advance(cx) {
            push_event(&mut this.queued, reply.body());
        }
        let done = this.handler.is_none();
        this.keep_alive.poll_emit(&mut this.queued, done, cx)
    }
}

impl Drop for LegacyCall {
    fn drop(&mut self) {
        // Runs before the fields (and so the handler) are dropped.
        if self.handler.is_some() {
            self.token.cancel();
        }
    }
}
