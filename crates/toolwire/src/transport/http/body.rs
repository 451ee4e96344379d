//! The response body: empty, one JSON message, or an SSE stream that owns the
//! still-running handler.
//!
//! An SSE response is chosen only once the handler has emitted a
//! notification. From then on the body polls the handler inline (no task is
//! spawned): each poll forwards the queued notifications, then the final
//! response, and ends the stream. Dropping the body (the client went away)
//! cancels the request's token before the handler is dropped.
//!
//! Spec: basic/transports/streamable-http.mdx#receiving-messages

use super::Permit;
use super::listen::ListenStream;
use crate::server::Reply;
use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

/// The handler's future, boxed so that it can move from the service future
/// into the body when the response turns into a stream.
pub(super) type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// The body of every response of [`HttpService`](super::HttpService).
pub struct HttpBody {
    kind: Kind,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    Sse(Box<SseStream>),
    Listen(Box<ListenStream>),
    /// Framed SSE bytes from any stream (a legacy session's GET stream).
    Stream(futures_util::stream::BoxStream<'static, Bytes>),
}

impl fmt::Debug for HttpBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Empty => "empty",
            Kind::Full(_) => "full",
            Kind::Sse(_) => "sse",
            Kind::Listen(_) => "listen",
            Kind::Stream(_) => "stream",
        };
        f.debug_struct("HttpBody").field("kind", &kind).finish()
    }
}

impl HttpBody {
    pub(super) fn empty() -> Self {
        Self { kind: Kind::Empty }
    }

    pub(super) fn full(bytes: Bytes) -> Self {
        Self {
            kind: Kind::Full(Some(bytes)),
        }
    }

    pub(super) fn sse(stream: SseStream) -> Self {
        Self {
            kind: Kind::Sse(Box::new(stream)),
        }
    }

    pub(super) fn listen(stream: ListenStream) -> Self {
        Self {
            kind: Kind::Listen(Box::new(stream)),
        }
    }

    pub(super) fn stream(stream: futures_util::stream::BoxStream<'static, Bytes>) -> Self {
        Self {
            kind: Kind::Stream(stream),
        }
    }
}

impl Body for HttpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(stream) => stream.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            Kind::Listen(stream) => stream.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            Kind::Stream(stream) => stream
                .as_mut()
                .poll_next(cx)
                .map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => true,
            Kind::Full(Some(_)) => false,
            Kind::Sse(stream) => stream.is_done(),
            Kind::Listen(stream) => stream.is_done(),
            Kind::Stream(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Sse(_) | Kind::Listen(_) | Kind::Stream(_) => SizeHint::default(),
        }
    }
}

/// Appends one SSE event carrying `message` (compact JSON, so one line).
pub(super) fn push_event(buf: &mut BytesMut, message: &[u8]) {
    buf.reserve(message.len() + 8);
    buf.extend_from_slice(b"data: ");
    buf.extend_from_slice(message);
    buf.extend_from_slice(b"\n\n");
}

/// An SSE comment line: a keep-alive that carries no event.
pub(super) const KEEP_ALIVE: &[u8] = b":\n\n";

/// The keep-alive timer of an SSE body, and the step every SSE body ends its
/// poll with: queued events first (which restart the timer), then the end
/// of the stream, then a keep-alive comment when the timer fires.
pub(super) struct KeepAlive(Option<(Duration, Pin<Box<Sleep>>)>);

impl KeepAlive {
    /// A timer firing `every` idle interval; never with `None`.
    pub(super) fn new(every: Option<Duration>) -> Self {
        Self(every.map(|every| (every, Box::pin(tokio::time::sleep(every)))))
    }

    /// What the body yields once it has queued what was ready; `done` when
    /// nothing more will be queued.
    pub(super) fn poll_emit(
        &mut self,
        queued: &mut BytesMut,
        done: bool,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Bytes>> {
        if !queued.is_empty() {
            if let Some((every, sleep)) = &mut self.0 {
                sleep.as_mut().reset(Instant::now() + *every);
            }
            return Poll::Ready(Some(queued.split().freeze()));
        }
        if done {
            return Poll::Ready(None);
        }
        if let Some((every, sleep)) = &mut self.0
            && sleep.as_mut().poll(cx).is_ready()
        {
            sleep.as_mut().reset(Instant::now() + *every);
            return Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)));
        }
        Poll::Pending
    }
}

/// A request-scoped SSE stream.
pub(super) struct SseStream {
    /// The handler, until it finishes. `None` afterwards.
    handler: Option<ReplyFuture>,
    /// Notifications the handler emits for this request.
    notes: UnboundedReceiver<Bytes>,
    /// Framed events not yet handed to the connection.
    queued: BytesMut,
    /// The request's cancellation token.
    token: CancellationToken,
    /// When the request times out, and the reply to send then.
    deadline: Option<(Pin<Box<Sleep>>, Bytes)>,
    keep_alive: KeepAlive,
    /// Held until the stream ends so that it counts against the limit.
    _permit: Permit,
}

impl SseStream {
    /// A stream whose first events are already in `queued`.
    pub(super) fn new(
        handler: Option<ReplyFuture>,
        notes: UnboundedReceiver<Bytes>,
        queued: BytesMut,
        token: CancellationToken,
        deadline: Option<(Instant, Bytes)>,
        keep_alive: Option<Duration>,
        permit: Permit,
    ) -> Self {
        Self {
            handler,
            notes,
            queued,
            token,
            deadline: deadline.map(|(at, reply)| (Box::pin(tokio::time::sleep_until(at)), reply)),
            keep_alive: KeepAlive::new(keep_alive),
            _permit: permit,
        }
    }

    fn is_done(&self) -> bool {
        self.handler.is_none() && self.queued.is_empty()
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(handler) = &mut self.handler {
            while let Poll::Ready(Some(note)) = self.notes.poll_recv(cx) {
                push_event(&mut self.queued, &note);
            }
            if let Poll::Ready(reply) = handler.as_mut().poll(cx) {
                self.handler = None;
                // Notifications sent just before the result go first.
                while let Ok(note) = self.notes.try_recv() {
                    push_event(&mut self.queued, &note);
                }
                push_event(&mut self.queued, reply.body());
            } else if let Some((sleep, reply)) = &mut self.deadline
                && sleep.as_mut().poll(cx).is_ready()
            {
                // Cancel first, so the handler sees it while being dropped.
                self.token.cancel();
                self.handler = None;
                let reply = std::mem::take(reply);
                push_event(&mut self.queued, &reply);
            }
        }
        let done = self.handler.is_none();
        self.keep_alive.poll_emit(&mut self.queued, done, cx)
    }
}

impl Drop for SseStream {
    fn drop(&mut self) {
        // Spec: basic/transports/streamable-http.mdx#cancellation — closing
        // the stream cancels the request. Runs before the fields (and so the
        // handler) are dropped.
        if self.handler.is_some() {
            self.token.cancel();
        }
    }
}
