//! One HTTP exchange after its head checks (`head.rs`, for both eras):
//! body reading and parsing, the era decided from the parsed request, header
//! validation, then the server pipeline polled inline, answered as JSON or
//! as an SSE stream. Legacy sessions' own exchanges are in `legacy.rs`.

use super::body::{HttpBody, ReplyFuture, SseStream, push_event};
use super::head::{Head, HeadError, legacy_version, version_header};
use super::listen::ListenStream;
use super::peers::{self, Kind};
use super::read::{BodyError, exceeds};
use super::validate::check_metadata_headers;
use super::{BoxError, HttpResponseFuture, HttpService, Permit};
use crate::legacy::{self, Session};
use crate::server::{
    Accepted, Dispatch, Era, NotificationEffect, Prepared, Reply, Retry, Running, Shape,
    Subscription,
};
use bytes::{Bytes, BytesMut};
use futures_util::FutureExt as _;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use serde::Serialize;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolwire_proto::{
    ErrorCode, ErrorObject, Message, Notification, RequestId, Response as RpcResponse, encode_error,
};

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// The HTTP status for a JSON-RPC reply.
///
/// Spec: basic/transports/streamable-http.mdx#protocol-version-header and
/// #server-validation (400 for version, capability and header errors; 404
/// for unknown methods); basic/index.mdx#_meta (400 for bad `_meta`).
pub(super) fn status_for(code: Option<ErrorCode>) -> StatusCode {
    match code {
        None => StatusCode::OK,
        Some(
            ErrorCode::PARSE_ERROR
            | ErrorCode::INVALID_REQUEST
            | ErrorCode::INVALID_PARAMS
            | ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub(super) fn with_status(status: StatusCode, body: HttpBody) -> Response<HttpBody> {
    let mut res = Response::new(body);
    *res.status_mut() = status;
    res
}

pub(super) fn json(status: StatusCode, body: Bytes) -> Response<HttpBody> {
    let mut res = with_status(status, HttpBody::full(body));
    res.headers_mut().insert(CONTENT_TYPE, JSON);
    res
}

/// Encodes an error response. Without an id the `id` member is left out:
/// the 2026-07-28 schema allows it to be absent but not `null`.
///
/// Spec: basic/transports/streamable-http.mdx#security--endpoint — "a
/// JSON-RPC error response that has no id".
fn error_body(id: Option<&RequestId>, error: &ErrorObject) -> Bytes {
    if id.is_some() {
        return Bytes::from(encode_error(id, error));
    }
    #[derive(Serialize)]
    struct NoId<'a> {
        jsonrpc: &'static str,
        error: &'a ErrorObject,
    }
    let out = NoId {
        jsonrpc: toolwire_proto::JSONRPC_VERSION,
        error,
    };
    serde_json::to_vec(&out)
        .map(Bytes::from)
        .unwrap_or_else(|_| Bytes::from(encode_error(None, error)))
}

pub(super) fn error(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> Response<HttpBody> {
    json(status, error_body(id, error))
}

fn reply(reply: Reply) -> Response<HttpBody> {
    match reply.retry() {
        Retry::No => {
            let status = status_for(reply.error_code());
            json(status, reply.into_body())
        }
        Retry::Busy => {
            let mut res = json(StatusCode::SERVICE_UNAVAILABLE, reply.into_body());
            res.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            res
        }
        // Spec: server/tools.mdx#security-considerations (rate limits);
        // RFC 6585 (429), RFC 9110 (Retry-After in seconds).
        Retry::Limited(secs) => {
            let secs = *secs;
            let mut res = json(StatusCode::TOO_MANY_REQUESTS, reply.into_body());
            res.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(secs));
            res
        }
        // Only an authenticating service refuses for scopes, and it answers
        // with its challenge (`HttpService::reply_of`).
        #[cfg(feature = "auth")]
        Retry::StepUp(_) => json(StatusCode::FORBIDDEN, reply.into_body()),
    }
}

/// `503 Service Unavailable` with `Retry-After: 1` and a `-32603` error.
pub(super) fn busy(id: Option<&RequestId>, message: impl Into<String>) -> Response<HttpBody> {
    let e = ErrorObject::internal(message);
    let mut res = error(StatusCode::SERVICE_UNAVAILABLE, id, &e);
    res.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

pub(super) fn timeout_error(after: std::time::Duration) -> ErrorObject {
    ErrorObject::internal(format!(
        "request timed out after {} ms and was cancelled",
        after.as_millis()
    ))
    .with_data(serde_json::json!({
        "timeoutMs": u64::try_from(after.as_millis()).unwrap_or(u64::MAX)
    }))
}

/// An early answer: the exchange ends with this response. Boxed to keep
/// the happy path's `Result`s small.
pub(super) type Early = Box<Response<HttpBody>>;

impl HttpService {
    /// Answers one request. Never fails: every problem is a response.
    ///
    /// The head checks run here, synchronously and once for both eras;
    /// what has to wait (the body, then the pipeline) is a future of its
    /// own, so the boxed future of a request holds only the headers, the
    /// body and the permit, and the pipeline's large state machine is boxed
    /// apart.
    pub(super) fn handle<B>(self, req: Request<B>) -> HttpResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = req.into_parts();
        #[cfg(feature = "auth")]
        if self.shared.auth.is_some() {
            return self.handle_authenticated(parts, body);
        }
        let head = self.check_head(&parts);
        self.after_head(parts, body, head)
    }

    /// The request after its head checks: their refusal (which may echo
    /// the body's id, and drains the body), a declared length over the
    /// limit, admission, then the POST. Every early answer drains the body
    /// it leaves unread (`early.rs`), so that a client that writes its whole
    /// body before it reads gets the answer, not a reset.
    pub(super) fn after_head<B>(
        self,
        parts: http::request::Parts,
        body: B,
        head: Result<Head, HeadError>,
    ) -> HttpResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let head = match head {
            Ok(head) => head,
            Err(HeadError::Answered(early)) => {
                return HttpResponseFuture::ready(self.linger(*early, &parts.headers, body));
            }
            Err(HeadError::Refused(refused)) => {
                return HttpResponseFuture::boxed(self.refuse(parts.headers, body, refused));
            }
        };
        // A declared length over the limit is refused before anything is
        // read, and the body drained after the answer.
        if exceeds(body.size_hint().lower(), self.shared.config.max_body_bytes) {
            let res = self.linger(self.too_large(), &parts.headers, body);
            return HttpResponseFuture::ready(res);
        }
        let permit = match self.admit() {
            Ok(permit) => permit,
            Err(early) => {
                return HttpResponseFuture::ready(self.linger(*early, &parts.headers, body));
            }
        };
        HttpResponseFuture::boxed(self.post(parts.headers, head, body, permit))
    }

    /// A POST past the head checks: read and decode the body, then run the
    /// pipeline.
    pub(super) async fn post<B>(
        self,
        headers: HeaderMap,
        head: Head,
        body: B,
        permit: Permit,
    ) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let mut body = pin!(body);
        let bytes = match self.read_body(body.as_mut()).await {
            Ok(bytes) => bytes,
            Err(BodyError::TooLarge(early)) => {
                // Over the limit while reading (the length was not
                // declared): the body stays in this future, so it is
                // drained before the answer, holding no request slot.
                drop(permit);
                self.drain_now(body).await;
                return *early;
            }
            Err(BodyError::Failed(early)) => return *early,
        };
        match self.route(&headers, &head, bytes, permit) {
            Ok(Route::Modern(run)) => run.await,
            // Boxed apart, like the modern pipeline, to keep this future small.
            Ok(Route::Legacy(legacy)) => {
                let (session, p, permit) = *legacy;
                Box::pin(self.run_legacy(session, p, permit)).await
            }
            Err(early) => *early,
        }
    }

    /// Decodes and prepares a request body, deciding its era, and checks a
    /// modern request's headers against it.
    fn route(
        &self,
        headers: &HeaderMap,
        head: &Head,
        bytes: Bytes,
        permit: Permit,
    ) -> Result<Route<impl Future<Output = Response<HttpBody>> + Send + '_>, Early> {
        // The usual request, decoded and prepared in one pass: its `_meta`
        // carries the modern version, so it is modern whatever session it
        // names.
        let bytes = match self
            .server
            .prepare_message(bytes, self.shared.config.max_json_depth)
        {
            #[cfg_attr(not(feature = "auth"), allow(unused_mut))]
            Ok(mut prepared) => {
                #[cfg(feature = "auth")]
                Self::authorize(head, &mut prepared);
                return self
                    .check_headers(headers, prepared, permit)
                    .map(Route::Modern);
            }
            Err(bytes) => bytes,
        };
        let request = match self.decode(&bytes)? {
            Message::Request(request) => request,
            Message::Notification(n) => return Err(Box::new(self.notification(head, &n))),
            Message::Response(r) => return Err(Box::new(self.response(head, r))),
        };
        let session = self.session(head);
        match self
            .server
            .accept(request, session.as_ref().map(legacy::for_pipeline))
        {
            #[cfg_attr(not(feature = "auth"), allow(unused_mut))]
            Accepted::Request(mut p) => {
                #[cfg(feature = "auth")]
                Self::authorize(head, &mut p);
                match (&p.era, session) {
                    (Era::Legacy(_), Some(session)) => {
                        // Spec (2025-11-25): basic/transports.mdx#protocol-version-header
                        if version_header(headers).is_some() && !legacy_version(headers) {
                            return Err(Box::new(plain(
                                StatusCode::BAD_REQUEST,
                                "Bad Request: Unsupported MCP-Protocol-Version",
                            )));
                        }
                        // A second request: the session is in use, and lives
                        // on the idle timeout from now on.
                        session.confirm();
                        Ok(Route::Legacy(Box::new((session, p, permit))))
                    }
                    // Modern (a legacy request is always of the session
                    // named here).
                    _ => self.check_headers(headers, p, permit).map(Route::Modern),
                }
            }
            Accepted::Initialize(id, init) => {
                Err(Box::new(self.initialize(headers, head, &id, *init)))
            }
            // Spec (2025-11-25): JSON-RPC errors of a session travel with 200.
            Accepted::Refused(r, Shape::Legacy(_)) => {
                Err(Box::new(json(StatusCode::OK, r.into_body())))
            }
            Accepted::Refused(r, Shape::Modern) => Err(Box::new(reply(r))),
            Accepted::NoSession(r) => Err(Box::new(if head.session_id.is_some() {
                plain(StatusCode::NOT_FOUND, "Not Found: Session not found")
            } else if legacy_version(headers) {
                plain(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: Mcp-Session-Id is required",
                )
            } else {
                reply(r)
            })),
        }
    }

    /// The legacy session a request names, if it is known.
    fn session(&self, head: &Head) -> Option<Arc<Session>> {
        let store = self.shared.sessions.as_ref()?;
        store.get(head.session_id.as_deref()?, head.principal())
    }

    /// A notification: `202`. In a legacy session,
    /// `notifications/cancelled` cancels the request it names; a session
    /// id that is not known is `404`.
    ///
    /// Spec: basic/transports/streamable-http.mdx#sending-messages — no
    /// client notification means anything on HTTP (cancellation is the
    /// connection closing), so none is refused. Spec (2025-11-25):
    /// basic/utilities/cancellation.mdx
    fn notification(&self, head: &Head, n: &Notification) -> Response<HttpBody> {
        if head.session_id.is_none() {
            return accepted();
        }
        let Some(session) = self.session(head) else {
            return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
        };
        match self.server.notification(n) {
            NotificationEffect::CancelLegacy(id) => session.cancel(&id),
            // A modern request is cancelled by closing its connection; the
            // GET stream, not `initialized`, carries a session's
            // notifications.
            NotificationEffect::CancelModern(_)
            | NotificationEffect::Initialized
            | NotificationEffect::Ignore => {}
        }
        accepted()
    }

    /// A response: the answer to a legacy session's server-to-client
    /// request (`202`), refused otherwise.
    ///
    /// Spec: basic/transports/streamable-http.mdx#sending-messages — the
    /// client MUST NOT send responses; this server sends no requests to
    /// answer outside legacy sessions.
    fn response(&self, head: &Head, r: RpcResponse) -> Response<HttpBody> {
        if head.session_id.is_none() {
            let e = ErrorObject::invalid_request(
                "invalid request: JSON-RPC responses are not accepted; the body must be a request or a notification",
            );
            return error(StatusCode::BAD_REQUEST, r.id.as_ref(), &e);
        }
        match self.session(head) {
            Some(session) => {
                session.resolve(r);
                accepted()
            }
            None => plain(StatusCode::NOT_FOUND, "Not Found: Session not found"),
        }
    }

    /// Checks the headers against a prepared modern request, then boxes
    /// the pipeline: its state machine is large, and boxing it on its own
    /// keeps it out of the request future, which is moved whole.
    fn check_headers(
        &self,
        headers: &HeaderMap,
        prepared: Prepared,
        permit: Permit,
    ) -> Result<Pin<Box<impl Future<Output = Response<HttpBody>> + Send + '_>>, Early> {
        if let Err(e) = check_metadata_headers(headers, &prepared, &self.server) {
            return Err(Box::new(error(
                StatusCode::BAD_REQUEST,
                Some(&prepared.id),
                &e,
            )));
        }
        Ok(Box::pin(self.run(prepared, permit)))
    }

    /// Takes a place under the concurrent-request limits, the client's and
    /// the server's, or answers 503 at once: waiting would only pile up
    /// connections.
    pub(super) fn admit(&self) -> Result<Permit, Early> {
        let client = match &self.peer {
            Some(peer) => match peers::acquire(
                peer,
                Kind::Request,
                self.shared.config.max_requests_per_client,
            ) {
                Some(slot) => Some(slot),
                None => {
                    return Err(Box::new(busy(
                        None,
                        "Service Unavailable: too many concurrent requests from this client; retry later",
                    )));
                }
            },
            None => None,
        };
        let global = match &self.shared.limiter {
            Some(limiter) => match limiter.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    return Err(Box::new(busy(
                        None,
                        "Service Unavailable: too many concurrent requests; retry later",
                    )));
                }
            },
            None => None,
        };
        Ok(Permit {
            _global: global,
            _client: client,
        })
    }

    /// Decodes a body; an undecodable one is answered here.
    fn decode(&self, bytes: &[u8]) -> Result<Message, Early> {
        let config = &self.shared.config;
        // The depth is bounded by a scan before the parser sees the bytes,
        // so no input can exhaust the parser's recursion.
        Message::from_slice_with_max_depth(bytes, config.max_json_depth).map_err(|e| {
            let object = e.to_error_object();
            Box::new(error(status_for(Some(object.code)), e.id(), &object))
        })
    }

    /// Runs a validated request and shapes the response.
    async fn run(&self, mut p: Prepared, permit: Permit) -> Response<HttpBody> {
        let config = &self.shared.config;
        let id = p.id.clone();
        p.peer = self.peer_ip();
        // Only a progress token or a log level lets the handler emit
        // anything; otherwise there is nothing to stream and no channel.
        let may_notify = p.meta.progress_token.is_some() || p.meta.log_level.is_some();
        let (tx, notes) = match may_notify {
            true => {
                let (tx, notes) = mpsc::unbounded_channel::<Bytes>();
                (Some(tx), Some(notes))
            }
            false => (None, None),
        };
        // Made only for a request that runs: one answered at once has
        // nothing to cancel.
        let mut made = None;
        let cancel = || made.insert(CancellationToken::new()).clone();
        let run = match self.server.dispatch(p, cancel, tx.map(Into::into)) {
            Dispatch::Ready(outcome) => {
                return self.answer(outcome.into_reply(&id, Shape::Modern), &id, permit);
            }
            Dispatch::Running(run) => run,
        };
        let token = made.unwrap_or_default();
        let deadline = config.request_timeout.map(|d| (Instant::now() + d, d));
        let Some(mut notes) = notes else {
            let mut handler = pin!(execute(run, &id));
            // Declared after the handler, so dropped (cancelling) before it.
            let guard = token.drop_guard();
            // Most handlers answer on their first poll: the timer (a wheel
            // entry) is made only for one that waits, with the deadline
            // taken before that poll.
            let first = poll_fn(|cx| Poll::Ready(handler.as_mut().poll(cx))).await;
            let outcome = match (first, deadline) {
                (Poll::Ready(answer), _) => Ok(answer),
                (Poll::Pending, Some((at, after))) => tokio::time::timeout_at(at, handler)
                    .await
                    .map_err(|_| after),
                (Poll::Pending, None) => Ok(handler.await),
            };
            return match outcome {
                Ok(answer) => {
                    guard.disarm();
                    self.answer(answer, &id, permit)
                }
                Err(after) => {
                    drop(guard);
                    error(
                        StatusCode::GATEWAY_TIMEOUT,
                        Some(&id),
                        &timeout_error(after),
                    )
                }
            };
        };

        let mut handler: AnswerFuture = {
            let id = id.clone();
            Box::pin(async move { execute(run, &id).await })
        };
        let guard = token.clone().drop_guard();
        let mut sleep = deadline.map(|(at, _)| Box::pin(tokio::time::sleep_until(at)));

        enum First {
            Answer(Answer),
            Note(Bytes),
            TimedOut,
        }
        let first = poll_fn(|cx| {
            if let Poll::Ready(r) = handler.as_mut().poll(cx) {
                return Poll::Ready(First::Answer(r));
            }
            if let Poll::Ready(Some(note)) = notes.poll_recv(cx) {
                return Poll::Ready(First::Note(note));
            }
            if let Some(sleep) = &mut sleep
                && sleep.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(First::TimedOut);
            }
            Poll::Pending
        })
        .await;

        match first {
            First::Answer(Err(subscription)) => {
                guard.disarm();
                self.answer(Err(subscription), &id, permit)
            }
            First::Answer(Ok(r)) => {
                guard.disarm();
                let Ok(note) = notes.try_recv() else {
                    return self.reply_of(r);
                };
                // The handler notified and finished within one poll: the
                // notifications still go first, so this is a (short) stream.
                let mut queued = BytesMut::new();
                push_event(&mut queued, &note);
                while let Ok(note) = notes.try_recv() {
                    push_event(&mut queued, &note);
                }
                push_event(&mut queued, r.body());
                let stream = SseStream::new(None, notes, queued, token, None, None, permit);
                sse(HttpBody::sse(stream))
            }
            First::TimedOut => {
                drop(guard);
                drop(handler);
                let after = deadline.map(|(_, d)| d).unwrap_or_default();
                error(
                    StatusCode::GATEWAY_TIMEOUT,
                    Some(&id),
                    &timeout_error(after),
                )
            }
            First::Note(note) => {
                let mut queued = BytesMut::new();
                push_event(&mut queued, &note);
                let on_timeout =
                    deadline.map(|(at, after)| (at, error_body(Some(&id), &timeout_error(after))));
                // A stream cannot follow notifications: only a reply can.
                let handler: ReplyFuture = {
                    let id = id.clone();
                    Box::pin(async move {
                        handler
                            .await
                            .unwrap_or_else(|_| Reply::error(Some(&id), &stream_after_notes()))
                    })
                };
                let stream = SseStream::new(
                    Some(handler),
                    notes,
                    queued,
                    token,
                    on_timeout,
                    config.sse_keep_alive,
                    permit,
                );
                // The stream owns the cancellation from here on.
                guard.disarm();
                sse(HttpBody::sse(stream))
            }
        }
    }

    /// The response for a reply of the pipeline: with the resource
    /// server's challenge when it refused for scopes.
    pub(super) fn reply_of(&self, r: Reply) -> Response<HttpBody> {
        #[cfg(feature = "auth")]
        if let Retry::StepUp(scopes) = r.retry() {
            let scopes = std::sync::Arc::clone(scopes);
            return self.step_up(&scopes, r.into_body());
        }
        reply(r)
    }

    /// The response for what the pipeline answered: a reply, or a listen
    /// stream, which is bounded by the server's listener limit rather than
    /// by the request limit or the request timeout.
    fn answer(&self, answer: Answer, id: &RequestId, permit: Permit) -> Response<HttpBody> {
        let subscription = match answer {
            Ok(r) => return self.reply_of(r),
            Err(subscription) => subscription,
        };
        drop(permit);
        let Ok(slot) = self.stream_slot() else {
            // Dropping the subscription frees its listener slot.
            drop(subscription);
            return busy(
                Some(id),
                "Service Unavailable: too many open streams from this client; close one and retry",
            );
        };
        sse(HttpBody::listen(ListenStream::new(
            subscription,
            self.shared.config.sse_keep_alive,
            slot,
        )))
    }
}

/// What a modern request's pipeline ends in: a reply, or a listen stream.
type Answer = Result<Reply, Subscription>;

/// A modern pipeline that notifies, boxed to be polled beside its
/// notifications.
type AnswerFuture = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// A listen stream whose request also asked for notifications
/// (`progressToken`, a log level) and got one before the stream opened.
fn stream_after_notes() -> ErrorObject {
    ErrorObject::internal("a stream cannot be answered after notifications")
}

/// Awaits a modern request's pipeline (once: the legacy shim's rounds are
/// for legacy sessions, which `legacy.rs` serves) and encodes its outcome,
/// turning a panicking handler into `-32603` instead of a dropped
/// connection.
///
/// Not an `async fn`, which would keep `run` beside the future made of it.
fn execute(run: Running, id: &RequestId) -> impl Future<Output = Answer> + Send + '_ {
    AssertUnwindSafe(run.outcome())
        .catch_unwind()
        .map(move |caught| match caught {
            Ok(outcome) => outcome.into_reply(id, Shape::Modern),
            Err(_) => Ok(Reply::panicked(id)),
        })
}

/// What a decoded request becomes: a modern pipeline, boxed, or a request of
/// a legacy session (served by `legacy.rs`).
pub(super) enum Route<F> {
    Modern(Pin<Box<F>>),
    /// Boxed: a prepared request is large, and rare on this path.
    #[allow(clippy::type_complexity, reason = "taken apart at once")]
    Legacy(Box<(Arc<Session>, Prepared, Permit)>),
}

fn accepted() -> Response<HttpBody> {
    with_status(StatusCode::ACCEPTED, HttpBody::empty())
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<HttpBody> {
    let mut res = with_status(status, HttpBody::full(Bytes::from_static(text.as_bytes())));
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

pub(super) fn sse(body: HttpBody) -> Response<HttpBody> {
    let mut res = with_status(StatusCode::OK, body);
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, EVENT_STREAM);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Spec: basic/transports/streamable-http.mdx#receiving-messages
    headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_map_to_400_and_unknown_method_to_404() {
        for code in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(
                status_for(Some(ErrorCode(code))),
                StatusCode::BAD_REQUEST,
                "{code}"
            );
        }
        assert_eq!(status_for(Some(ErrorCode(-32601))), StatusCode::NOT_FOUND);
    }

    #[test]
    fn other_errors_are_500_and_results_200() {
        for code in [-32603, -32000, 1, -1] {
            assert_eq!(
                status_for(Some(ErrorCode(code))),
                StatusCode::INTERNAL_SERVER_ERROR,
                "{code}"
            );
        }
        assert_eq!(status_for(None), StatusCode::OK);
    }

    #[test]
    fn error_without_id_has_no_id_member() {
        let body = error_body(None, &ErrorObject::parse_error("bad"));
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert!(v.get("id").is_none(), "{v}");
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["error"]["code"], -32700);
        let body = error_body(
            Some(&RequestId::Number(7)),
            &ErrorObject::parse_error("bad"),
        );
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["id"], 7);
    }
}
