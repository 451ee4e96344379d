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

use super::body::{HttpBody, KEEP_ALIVE, ReplyFuture, push_event};
use super::handle::{Early, MCP_SESSION_ID, error, json, sse, with_status};
use super::negotiate::{accepts_json_and_sse, is_json_content_type};
use super::sessions::SessionStore;
use super::{BoxError, HttpService};
use crate::legacy::{self, InitializeParams, LEGACY_PROTOCOL_VERSIONS, Session};
use crate::server::Reply;
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt as _, Stream};
use http::header::{ACCEPT, RETRY_AFTER};
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use http_body::Body;
use std::future::{Future as _, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use toolwire_proto::meta::PROTOCOL_VERSION;
use toolwire_proto::{ErrorObject, Message, Request, encode_result};

const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

fn version_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok())
}

fn plain(status: StatusCode, text: &'static str) -> Response<HttpBody> {
    let mut res = with_status(status, HttpBody::full(Bytes::from_static(text.as_bytes())));
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

impl HttpService {
    fn sessions(&self) -> Option<&SessionStore> {
        self.shared.sessions.as_ref()
    }

    /// A POST without `Mcp-Session-Id` that belongs to the legacy era: a
    /// legacy `initialize`, or a legacy request missing its session id.
    pub(super) fn legacy_without_session(
        &self,
        headers: &HeaderMap,
        request: &Request,
    ) -> Option<Early> {
        if let Some(init) = legacy::legacy_initialize(request) {
            return Some(Box::new(self.initialize(headers, request, init)));
        }
        let version = version_header(headers)?;
        if LEGACY_PROTOCOL_VERSIONS.contains(&version) && !legacy::has_modern_meta(request) {
            return Some(Box::new(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id is required",
            )));
        }
        None
    }

    /// Opens a session. Spec (2025-11-25): basic/lifecycle.mdx#initialization
    fn initialize(
        &self,
        headers: &HeaderMap,
        request: &Request,
        init: InitializeParams,
    ) -> Response<HttpBody> {
        if version_header(headers).is_some_and(|h| h != init.requested) {
            let e = ErrorObject::invalid_request(
                "Bad Request: MCP-Protocol-Version differs from params.protocolVersion",
            );
            return error(StatusCode::BAD_REQUEST, Some(&request.id), &e);
        }
        let Some(store) = self.sessions() else {
            return plain(StatusCode::NOT_FOUND, "Not Found");
        };
        let version = legacy::negotiate(&init.requested);
        let session = Arc::new(Session::new(version, init.capabilities, init.client_info));
        let Ok(id) = store.create(Arc::clone(&session)) else {
            let e = ErrorObject::internal("Service Unavailable: too many sessions; retry later");
            let mut res = error(StatusCode::SERVICE_UNAVAILABLE, Some(&request.id), &e);
            res.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            return res;
        };
        session.spawn_forwarder(self.server.notification_bus());
        let body = encode_result(
            &request.id,
            &legacy::initialize_result(&self.server, version),
        );
        let mut res = json(StatusCode::OK, Bytes::from(body));
        if let Ok(value) = HeaderValue::from_str(&id) {
            res.headers_mut().insert(MCP_SESSION_ID, value);
        }
        res
    }

    /// Any exchange that carries `Mcp-Session-Id`.
    pub(super) async fn handle_session<B>(self, parts: Parts, body: B) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let config = &self.shared.config;
        if config
            .path
            .as_deref()
            .is_some_and(|p| p != parts.uri.path())
        {
            return with_status(StatusCode::NOT_FOUND, HttpBody::empty());
        }
        // Spec (2025-11-25): basic/transports.mdx#security-warning
        if self
            .shared
            .policy
            .check(parts.uri.authority(), &parts.headers)
            .is_err()
        {
            let e = ErrorObject::invalid_request("Forbidden: Host or Origin is not allowed");
            return error(StatusCode::FORBIDDEN, None, &e);
        }
        let modern = version_header(&parts.headers) == Some(PROTOCOL_VERSION);
        let sid = parts
            .headers
            .get(MCP_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        match parts.method {
            Method::GET if !modern => self.open_stream(&parts, &sid),
            Method::DELETE if !modern => match self.sessions().is_some_and(|s| s.remove(&sid)) {
                true => with_status(StatusCode::ACCEPTED, HttpBody::empty()),
                false => plain(StatusCode::NOT_FOUND, "Not Found: Session not found"),
            },
            Method::POST => self.session_post(parts, body, &sid, modern).await,
            _ => {
                let mut res = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
                res.headers_mut().insert(
                    http::header::ALLOW,
                    HeaderValue::from_static(if modern { "POST" } else { "GET, POST, DELETE" }),
                );
                res
            }
        }
    }

    async fn session_post<B>(
        self,
        parts: Parts,
        body: B,
        sid: &str,
        modern: bool,
    ) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        if !accepts_json_and_sse(&parts.headers) {
            let e = ErrorObject::invalid_request(
                "Not Acceptable: Accept must list both application/json and text/event-stream",
            );
            return error(StatusCode::NOT_ACCEPTABLE, None, &e);
        }
        if !is_json_content_type(&parts.headers) {
            let e = ErrorObject::invalid_request(
                "Unsupported Media Type: Content-Type must be application/json",
            );
            return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, &e);
        }
        let permit = match self.admit() {
            Ok(permit) => permit,
            Err(early) => return *early,
        };
        let config = &self.shared.config;
        let bytes = match self.read_body(body).await {
            Ok(bytes) => bytes,
            Err(early) => return *early,
        };
        let message = match Message::from_slice_with_max_depth(&bytes, config.max_json_depth) {
            Ok(m) => m,
            Err(e) => return error(StatusCode::BAD_REQUEST, e.id(), &e.to_error_object()),
        };
        let request = match message {
            Message::Request(r) => r,
            // Spec (2025-11-25): basic/transports.mdx#sending-messages-to-the-server
            // — accepted notifications and responses get 202.
            Message::Notification(n) => {
                return match self.sessions().and_then(|s| s.get(sid)) {
                    Some(session) => {
                        // Spec (2025-11-25): basic/utilities/cancellation.mdx
                        if !modern && let Some(id) = legacy::cancelled_request_id(&n) {
                            session.cancel(&id);
                        }
                        with_status(StatusCode::ACCEPTED, HttpBody::empty())
                    }
                    None if modern => with_status(StatusCode::ACCEPTED, HttpBody::empty()),
                    None => plain(StatusCode::NOT_FOUND, "Not Found: Session not found"),
                };
            }
            Message::Response(r) => {
                return match self.sessions().and_then(|s| s.get(sid)) {
                    Some(session) => {
                        session.resolve(r);
                        with_status(StatusCode::ACCEPTED, HttpBody::empty())
                    }
                    None => plain(StatusCode::NOT_FOUND, "Not Found: Session not found"),
                };
            }
        };
        // Spec: basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
        // — a modern request is served statelessly whatever session it names.
        if modern || legacy::has_modern_meta(&request) {
            return self.serve_request(&parts.headers, request, permit).await;
        }
        if let Some(init) = legacy::legacy_initialize(&request) {
            return self.initialize(&parts.headers, &request, init);
        }
        if let Some(v) = version_header(&parts.headers)
            && !LEGACY_PROTOCOL_VERSIONS.contains(&v)
        {
            return plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: Unsupported MCP-Protocol-Version",
            );
        }
        let Some(session) = self.sessions().and_then(|s| s.get(sid)) else {
            return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
        };
        self.run_legacy(session, request, permit).await
    }

    /// Serves one legacy request: JSON when the result comes first, else an
    /// SSE stream that carries the request's notifications and
    /// server-to-client requests, then its result (none if the client
    /// cancelled it). Always `200`.
    async fn run_legacy(
        &self,
        session: Arc<Session>,
        request: Request,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Response<HttpBody> {
        let token = CancellationToken::new();
        let Some(in_flight) = session.track(&request.id, &token) else {
            let e = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in progress",
                request.id
            ));
            return error(StatusCode::OK, Some(&request.id), &e);
        };
        let (tx, notes) = mpsc::unbounded_channel::<Bytes>();
        let server = self.server.clone();
        let child = token.clone();
        let id = request.id.clone();
        let handler: ReplyFuture = Box::pin(async move {
            let _in_flight = in_flight;
            let run = legacy::serve(&server, &session, request, child, Some(tx));
            AssertUnwindSafe(run)
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Reply::panicked(&id))
        });
        let keep_alive = self.shared.config.sse_keep_alive;
        let mut call = LegacyCall::new(handler, notes, token, keep_alive, permit);
        match poll_fn(|cx| call.poll_first(cx)).await {
            // Spec (2025-11-25): JSON-RPC errors travel with 200.
            Some(reply) => json(StatusCode::OK, reply),
            None => sse(HttpBody::stream(Box::pin(call))),
        }
    }

    /// The session's standalone stream. Spec (2025-11-25):
    /// basic/transports.mdx#listening-for-messages-from-the-server
    fn open_stream(&self, parts: &Parts, sid: &str) -> Response<HttpBody> {
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
        let Some(session) = self.sessions().and_then(|s| s.get(sid)) else {
            return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
        };
        let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
        session.set_notifier(Some(tx));
        let closed = session.closed().clone();
        let shutdown = self.server.inner.closing.clone();
        let every = self.shared.config.sse_keep_alive;
        let stream = futures_util::stream::unfold(
            (rx, closed, shutdown),
            move |(mut rx, closed, shutdown)| async move {
                let keep_alive = async {
                    match every {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                };
                let out = tokio::select! {
                    () = closed.cancelled() => return None,
                    () = shutdown.cancelled() => return None,
                    msg = rx.recv() => {
                        let msg = msg?;
                        let mut buf = BytesMut::new();
                        push_event(&mut buf, &msg);
                        buf.freeze()
                    }
                    () = keep_alive => Bytes::from_static(KEEP_ALIVE),
                };
                Some((out, (rx, closed, shutdown)))
            },
        );
        sse(HttpBody::stream(Box::pin(stream)))
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
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    /// Held until the stream ends so that it counts against the limit.
    _permit: Option<OwnedSemaphorePermit>,
}

impl LegacyCall {
    fn new(
        handler: ReplyFuture,
        notes: mpsc::UnboundedReceiver<Bytes>,
        token: CancellationToken,
        keep_alive: Option<Duration>,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Self {
        Self {
            notes,
            handler: Some(handler),
            cancelled: Box::pin(token.clone().cancelled_owned()),
            token,
            queued: BytesMut::new(),
            keep_alive: keep_alive.map(|every| (every, Box::pin(tokio::time::sleep(every)))),
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
    fn poll_first(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        match self.advance(cx) {
            Some(reply) if self.queued.is_empty() => Poll::Ready(Some(reply.into_body())),
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
        if !this.queued.is_empty() {
            if let Some((every, sleep)) = &mut this.keep_alive {
                sleep.as_mut().reset(Instant::now() + *every);
            }
            return Poll::Ready(Some(this.queued.split().freeze()));
        }
        if this.handler.is_none() {
            return Poll::Ready(None);
        }
        if let Some((every, sleep)) = &mut this.keep_alive
            && sleep.as_mut().poll(cx).is_ready()
        {
            sleep.as_mut().reset(Instant::now() + *every);
            return Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)));
        }
        Poll::Pending
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
