//! The stdio transport: newline-delimited JSON-RPC on a pair of byte streams.
//!
//! Spec: basic/transports/stdio.mdx — one message per line, no embedded
//! newlines; stdout carries protocol messages only.
//!
//! Requests run concurrently, each in its own task; every outgoing message
//! goes through one writer task, so lines never interleave.
//!
//! `subscriptions/listen` streams share stdout with everything else, told
//! apart by their subscription id (the listen request's id); a client ends
//! one with `notifications/cancelled`. Spec: basic/patterns/subscriptions.mdx
//!
//! A legacy client (2025-03-26 to 2025-11-25) opens the process's one legacy
//! session with `initialize`; from then on its requests (those without the
//! modern `_meta` version key) are served by `crate::legacy`, and its
//! responses answer the server-to-client requests of the MRTR shim.
//!
//! When the input ends, requests still running get
//! [`StdioConfig::with_end_of_input_grace`] to finish and be answered (a
//! client may write its requests and close its end at once); listen
//! streams end at once, without a response.

use crate::context::{Outbound, OutputGauge};
use crate::legacy::{self, Session};
use crate::server::{
    Accepted, Dispatch, LegacySession, NotificationEffect, Prepared, Reply, Server, Subscription,
    SubscriptionFrame,
};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::FutureExt as _;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, LockResult, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::SUBSCRIPTION_ID_KEY;
use toolwire_proto::types::{
    CancelledNotification, CancelledNotificationParams, Meta, NotificationMethod,
};
use toolwire_proto::{
    DecodeError, ErrorObject, MAX_DEPTH, Message, RequestId, encode_error, encode_notification,
};

/// Longest accepted line, in bytes. Longer lines are answered with a parse
/// error and skipped without being buffered.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// How many bytes of output may wait for a client that does not read
/// stdout. Past it, no new line is read until the writer has drained the
/// queue below it: the client's unread output bounds the server's memory,
/// and the client sees backpressure on its stdin.
pub const MAX_QUEUED_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// How long a shutdown waits for in-flight requests before cancelling them.
const SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);

mod config;
pub use config::StdioConfig;

type InFlight = Arc<InFlightTable>;

type InFlightMap = HashMap<RequestId, CancellationToken, BuildHasherDefault<FxHasher>>;

/// The requests in progress by id, and the end of input that listen
/// streams stop at.
#[derive(Default)]
struct InFlightTable {
    map: Mutex<InFlightMap>,
    /// Cancelled when the input ends: listen streams end then, while the
    /// other requests in progress get the grace period to finish.
    input_ended: CancellationToken,
}

impl InFlightTable {
    fn lock(&self) -> LockResult<MutexGuard<'_, InFlightMap>> {
        self.map.lock()
    }
}

/// The in-flight table's hasher: the Fx multiply-rotate hash, a fraction of
/// SipHash's cost. Its keys come from the one client on the other end of the
/// pipe, which gains nothing by colliding its own request ids.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0_u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0_u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// The process's legacy session, once `initialize` opened it.
type LegacySlot = OnceLock<Arc<Session>>;

/// Serves `server` on the process's stdin and stdout until stdin closes.
///
/// When stdin or stdout is a pipe (the usual case: a client spawned this
/// process) it is read or written without blocking, through the runtime's
/// event loop, and put back in blocking mode on return; files and terminals
/// go through tokio's blocking pool.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    serve_stdio_with(server, StdioConfig::default()).await
}

/// [`serve_stdio`] with `config`'s settings.
pub async fn serve_stdio_with(server: Server, config: StdioConfig) -> io::Result<()> {
    #[cfg(unix)]
    {
        let stdin = pipes::Input::open();
        let stdout = pipes::Output::open();
        let _restore = pipes::RestoreBlocking::new(stdin.is_pipe(), stdout.is_pipe());
        on_worker(serve_io_with(server, stdin, stdout, config)).await
    }
    #[cfg(not(unix))]
    on_worker(serve_io_with(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        config,
    ))
    .await
}

/// Runs the serving loop as a task of its own rather than in the caller's
/// future, which is often `block_on`'s: there, every request handed to a
/// task and every reply handed to the writer would cross threads. The task
/// is aborted if the returned future is dropped.
async fn on_worker(
    serving: impl Future<Output = io::Result<()>> + Send + 'static,
) -> io::Result<()> {
    struct AbortOnDrop(tokio::task::JoinHandle<io::Result<()>>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut task = AbortOnDrop(tokio::spawn(serving));
    match (&mut task.0).await {
        Ok(done) => done,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(io::Error::other(e)),
    }
}

#[cfg(unix)]
mod pipes;

/// Serves `server` on any reader/writer pair until the reader reaches EOF or
/// the server shuts down.
///
/// At EOF open listen streams end without a response, the other requests
/// in flight get five seconds to finish and be answered
/// ([`StdioConfig::with_end_of_input_grace`], with [`serve_io_with`]) before
/// they are cancelled, queued output is flushed, and the function returns.
/// On [`Server::shutdown`] reading stops, every listen stream gets its
/// closing result, in-flight requests get up to five seconds to finish
/// before they are cancelled, and the function returns.
pub async fn serve_io<R, W>(server: Server, reader: R, writer: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_io_with(server, reader, writer, StdioConfig::default()).await
}

/// [`serve_io`] with `config`'s settings.
pub async fn serve_io_with<R, W>(
    server: Server,
    reader: R,
    writer: W,
    config: StdioConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Bytes>();
    let gauge = Arc::new(OutputGauge::default());
    let out = Outbound::gauged(out_tx, Arc::clone(&gauge));
    let writer_task = tokio::spawn(write_loop(writer, out_rx, gauge.clone()));
    let in_flight: InFlight = Arc::default();
    let legacy_session = LegacySlot::new();
    let mut tasks = JoinSet::new();
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();

    // The reader's one sender: what it answers goes out through it.
    let mut replies = Replies::new(out);

    let closing = server.inner.closing.clone();
    let mut shutting_down = false;
    loop {
        // Replies gathered so far go to the writer before the reader can
        // wait: for the client's next line, or for the writer to drain.
        let buffered = memchr::memchr(b'\n', reader.buffer()).is_some();
        if !buffered {
            replies.flush();
        }
        // Backpressure: while the client leaves too much output unread,
        // read nothing more from it.
        while gauge.queued() > MAX_QUEUED_OUTPUT_BYTES {
            replies.flush();
            tokio::select! {
                biased;
                () = closing.cancelled() => {
                    shutting_down = true;
                    break;
                }
                () = replies.out.closed() => break,
                () = gauge.drained() => {}
            }
        }
        if shutting_down {
            break;
        }
        // A line already buffered is read without waiting: the shutdown
        // check is for when the reader has to wait.
        let read = if buffered {
            read_line(&mut reader, &mut line).await?
        } else {
            tokio::select! {
                biased;
                () = closing.cancelled() => {
                    shutting_down = true;
                    break;
                }
                read = read_line(&mut reader, &mut line) => read?,
            }
        };
        match read {
            Line::Eof => break,
            Line::TooLong => {
                let err =
                    ErrorObject::parse_error(format!("message longer than {MAX_LINE_BYTES} bytes"));
                replies.push(Bytes::from(encode_error(None, &err)));
            }
            Line::Data => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                on_line(
                    &server,
                    &line,
                    &mut replies,
                    &in_flight,
                    &legacy_session,
                    &mut tasks,
                );
            }
        }
        // Reap finished tasks so the set does not grow without bound.
        if !tasks.is_empty() {
            while tasks.try_join_next().is_some() {}
        }
    }

    replies.flush();
    if shutting_down {
        let drain = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(SHUTDOWN_DRAIN, drain).await.is_err() {
            tracing::warn!("cancelling requests still running at shutdown");
        }
    } else {
        // End of input: the client may still read stdout (it wrote its
        // requests and closed its end), so what is running is answered,
        // within the grace period. Listen streams would never finish.
        in_flight.input_ended.cancel();
        let drain = async { while tasks.join_next().await.is_some() {} };
        let grace = config.end_of_input_grace();
        tokio::select! {
            finished = tokio::time::timeout(grace, drain) => if finished.is_err() {
                tracing::debug!(?grace, "cancelling requests still running after the end of input");
            },
            // Nobody reads the answers any more: stop waiting for them.
            () = replies.out.closed() => {}
        }
    }
    if let Ok(map) = in_flight.lock() {
        for token in map.values() {
            token.cancel();
        }
    }
    while tasks.join_next().await.is_some() {}
    // The session's forwarder holds a writer handle until it closes.
    if let Some(session) = legacy_session.get() {
        session.close();
    }
    // The writer ends when the last sender is gone.
    drop(replies);
    writer_task.await.map_err(io::Error::other)?
}

fn on_line(
    server: &Server,
    line: &[u8],
    replies: &mut Replies,
    in_flight: &InFlight,
    legacy_session: &LegacySlot,
    tasks: &mut JoinSet<()>,
) {
    // The usual line, a modern request, is decoded and prepared in one pass;
    // anything else goes through the general decoder below.
    let message = match server.prepare_message(Bytes::copy_from_slice(line), MAX_DEPTH) {
        Ok(p) => return start(server, p, replies, in_flight, tasks),
        Err(message) => message,
    };
    let line = &message[..];
    match Message::from_slice(line) {
        Err(e) => {
            if let DecodeError::Parse(_) = e {
                tracing::debug!("unparseable line on stdin");
            }
            replies.push(Bytes::from(encode_error(e.id(), &e.to_error_object())));
        }
        // The era is decided here, from the parsed `_meta`, once.
        // Spec: basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
        Ok(Message::Request(req)) => match server.accept(req, open_session(legacy_session)) {
            Accepted::Request(p) => start(server, p, replies, in_flight, tasks),
            Accepted::Initialize(id, init) => {
                let reply = match legacy_session.get() {
                    Some(_) => Bytes::from(encode_error(
                        Some(&id),
                        &ErrorObject::invalid_request("the session is already initialized"),
                    )),
                    None => {
                        let (session, reply) = legacy::open(server, &id, *init);
                        let _ = legacy_session.set(session);
                        reply
                    }
                };
                replies.push(reply);
            }
            Accepted::Refused(reply, _) | Accepted::NoSession(reply) => {
                replies.push(reply.into_body());
            }
        },
        Ok(Message::Notification(n)) => match server.notification(&n) {
            // Spec (2025-11-25): basic/lifecycle.mdx#initialization — list
            // changes flow once the client says it is ready.
            NotificationEffect::Initialized => {
                if let Some(session) = legacy_session.get()
                    && !session.has_notifier()
                {
                    session.set_notifier(Some(legacy::Notifier::Writer(replies.out.clone())));
                    session.spawn_forwarder(server.notification_bus(), None);
                }
            }
            // One in-flight table for both eras.
            NotificationEffect::CancelModern(id) | NotificationEffect::CancelLegacy(id) => {
                if let Ok(map) = in_flight.lock()
                    && let Some(token) = map.get(&id)
                {
                    token.cancel();
                }
            }
            NotificationEffect::Ignore => {}
        },
        Ok(Message::Response(response)) => match legacy_session.get() {
            // Answers to the MRTR shim's server-to-client requests.
            Some(session) => session.resolve(response),
            // A 2026-07-28 server sends no requests over stdio.
            None => tracing::debug!("ignoring unsolicited response on stdin"),
        },
    }
}

/// The reader's replies: those it answered itself (a request that did not
/// wait, a refusal, a parse error), gathered while more whole lines are
/// buffered and handed to the writer together, in one queued message and
/// one wake-up instead of one of each per reply. Everything else goes to
/// the writer as it comes: a handler's notifications (so a request's
/// notifications still precede its response), and the responses of
/// requests that waited.
struct Replies {
    out: Outbound,
    batch: BytesMut,
}

/// Bytes of replies gathered before they go to the writer; a reply of half
/// that or more goes on its own, uncopied.
const REPLY_BATCH_BYTES: usize = 16 * 1024;

impl Replies {
    fn new(out: Outbound) -> Self {
        Self {
            out,
            batch: BytesMut::with_capacity(2 * REPLY_BATCH_BYTES),
        }
    }

    /// Gathers `reply`; the writer adds the newline after the last.
    fn push(&mut self, reply: Bytes) {
        if reply.len() >= REPLY_BATCH_BYTES / 2 {
            self.flush();
            let _ = self.out.send(reply);
            return;
        }
        if !self.batch.is_empty() {
            self.batch.put_u8(b'\n');
        }
        self.batch.extend_from_slice(&reply);
        if self.batch.len() >= REPLY_BATCH_BYTES {
            self.flush();
        }
    }

    /// Hands what is gathered to the writer.
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let _ = self.out.send(self.batch.split().freeze());
        }
    }
}

/// The process's legacy session, if one is open, as the pipeline takes it.
fn open_session(legacy_session: &LegacySlot) -> Option<Arc<dyn LegacySession>> {
    legacy_session.get().map(legacy::for_pipeline)
}

/// Starts serving a prepared request, of either era.
///
/// What needs no handler (lists, discovery, refusals) is answered at once,
/// with no future at all. A handler's pipeline is polled once right here:
/// when it completes at once (a handler that does not wait, the usual case)
/// the reply is queued with no task spawned and no entry in the in-flight
/// table. A pipeline that has to wait continues in a task of its own, where
/// it can be cancelled. Handlers that compute for long should not block the
/// reader: that is `spawn_blocking`'s job, as anywhere in async code.
fn start(
    server: &Server,
    p: Prepared,
    replies: &mut Replies,
    in_flight: &InFlight,
    tasks: &mut JoinSet<()>,
) {
    let out = &replies.out;
    let id = p.id.clone();
    let shape = p.era.shape();
    let Ok(map) = in_flight.lock() else {
        return;
    };
    // Cancellation and subscriptions are addressed by id, so two requests in
    // flight must not share one.
    if map.get(&id).is_some_and(|t| !t.is_cancelled()) {
        drop(map);
        let err = ErrorObject::invalid_request(format!(
            "request id {id} is already in use by a request in progress"
        ));
        replies.push(Bytes::from(encode_error(Some(&id), &err)));
        return;
    }
    // Made only for a request that runs: one answered at once has nothing
    // to cancel.
    let mut made = None;
    let cancel = || made.insert(CancellationToken::new()).clone();
    let dispatched = match server.dispatch(p, cancel, Some(out.clone())) {
        Dispatch::Ready(outcome) => Ok(outcome.into_reply(&id, shape)),
        Dispatch::Running(run) => {
            let id = id.clone();
            let pipeline: Pipeline = Box::pin(
                run.outcome()
                    .map(move |outcome| outcome.into_reply(&id, shape)),
            );
            Err(pipeline)
        }
    };
    drop(map);
    let answered = match dispatched {
        Ok(answer) => Ok(answer),
        Err(pipeline) => poll_once(pipeline, &id),
    };
    let waiting = match answered {
        Ok(Ok(reply)) => {
            replies.push(reply.into_body());
            return;
        }
        Ok(Err(subscription)) => Err(subscription),
        Err(pending) => Ok(pending),
    };
    // What waits can be cancelled: a pipeline's token was made, and a
    // stream answered at once gets one here.
    let token = made.unwrap_or_default();
    if !track(in_flight, &id, &token) {
        return;
    }
    let pipeline = match waiting {
        Ok(pending) => pending,
        Err(subscription) => {
            tasks.spawn(listen(
                subscription,
                id,
                token,
                out.clone(),
                Arc::clone(in_flight),
            ));
            return;
        }
    };
    let out = out.clone();
    let in_flight = Arc::clone(in_flight);
    tasks.spawn(async move {
        let handled = AssertUnwindSafe(pipeline).catch_unwind();
        let answer = tokio::select! {
            answer = handled => Some(answer.unwrap_or_else(|_| Ok(Reply::panicked(&id)))),
            () = token.cancelled() => None,
        };
        let reply = match answer {
            Some(Err(subscription)) => {
                return listen(subscription, id, token, out, in_flight).await;
            }
            Some(Ok(reply)) => Some(reply),
            None => None,
        };
        // Free the id before answering, so the client may reuse it as soon
        // as it has the response.
        release(&in_flight, &id, &token);
        // Spec: basic/patterns/cancellation.mdx — no response for a
        // cancelled request.
        if let Some(reply) = reply
            && !token.is_cancelled()
        {
            let _ = out.send(reply.into_body());
        }
    });
}

/// A request's pipeline, boxed: its state machine is large, and boxed it is
/// built once in place instead of being moved into a task cell.
type Pipeline = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// What a pipeline ends in: a reply to write, or a stream to carry.
type Answer = Result<Reply, Subscription>;

/// Polls `pipeline` once: its reply if it is done, the pipeline otherwise.
/// A panicking handler is answered with `-32603`, like one that panics in a
/// task.
fn poll_once(mut pipeline: Pipeline, id: &RequestId) -> Result<Answer, Pipeline> {
    // The waker is never woken: a pipeline that is not done is moved into a
    // task, whose first poll registers the task's own waker.
    let mut cx = Context::from_waker(Waker::noop());
    match std::panic::catch_unwind(AssertUnwindSafe(|| pipeline.as_mut().poll(&mut cx))) {
        Ok(Poll::Ready(answer)) => Ok(answer),
        Ok(Poll::Pending) => Err(pipeline),
        Err(_) => Ok(Ok(Reply::panicked(id))),
    }
}

/// Enters a request that waits in the in-flight table, where it can be
/// cancelled; `false` if the table is poisoned.
fn track(in_flight: &InFlight, id: &RequestId, token: &CancellationToken) -> bool {
    let Ok(mut map) = in_flight.lock() else {
        return false;
    };
    map.insert(id.clone(), token.clone());
    true
}

/// Forgets `id` if it still belongs to the request holding `token`.
fn release(in_flight: &InFlight, id: &RequestId, token: &CancellationToken) {
    if let Ok(mut map) = in_flight.lock()
        && map.get(id).is_some_and(|t| t.is_cancelled() || t == token)
    {
        map.remove(id);
    }
}

/// Serves one `subscriptions/listen` stream until the client cancels it,
/// the server shuts down, or the input ends.
async fn listen(
    mut sub: Subscription,
    id: RequestId,
    token: CancellationToken,
    out: Outbound,
    in_flight: InFlight,
) {
    loop {
        tokio::select! {
            biased;
            // The client cancelled, or the input ended: no response.
            () = token.cancelled() => break,
            () = in_flight.input_ended.cancelled() => break,
            frame = sub.next() => match frame {
                Some(SubscriptionFrame::Notification(msg)) => {
                    let _ = out.send(msg);
                }
                Some(SubscriptionFrame::Close(reply)) => {
                    release(&in_flight, &id, &token);
                    let _ = out.send(reply.into_body());
                    break;
                }
                None => {
                    // Spec: basic/patterns/cancellation.mdx — a server that
                    // tears a subscription down on stdio says so with
                    // notifications/cancelled naming the listen request.
                    release(&in_flight, &id, &token);
                    let mut meta = Meta::new();
                    meta.insert(
                        SUBSCRIPTION_ID_KEY.to_owned(),
                        serde_json::to_value(sub.id()).unwrap_or_default(),
                    );
                    let params = CancelledNotificationParams {
                        request_id: sub.id().clone(),
                        reason: Some("the subscription ended".to_owned()),
                        meta: Some(meta),
                    };
                    let msg = encode_notification(CancelledNotification::METHOD, Some(&params));
                    let _ = out.send(Bytes::from(msg));
                    break;
                }
            },
        }
    }
    release(&in_flight, &id, &token);
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Bytes>,
    gauge: Arc<OutputGauge>,
) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    while let Some(msg) = rx.recv().await {
        let alone = rx.is_empty();
        write_one(&mut w, msg, alone, &gauge).await?;
        // Batch whatever is already queued, then flush once.
        while let Ok(msg) = rx.try_recv() {
            let alone = rx.is_empty();
            write_one(&mut w, msg, alone, &gauge).await?;
        }
        w.flush().await?;
    }
    w.flush().await
}

/// Writes `msg` and its newline. `alone`: nothing is queued after it.
async fn write_one<W: AsyncWrite + Unpin>(
    w: &mut BufWriter<W>,
    msg: Bytes,
    alone: bool,
    gauge: &OutputGauge,
) -> io::Result<()> {
    let len = msg.len();
    let written = async {
        if alone && len >= DIRECT_WRITE_BYTES && w.buffer().is_empty() {
            return write_direct(w, &msg).await;
        }
        w.write_all(&msg).await?;
        w.write_all(b"\n").await
    }
    .await;
    // Dropped here, written or not: no longer queued memory.
    drop(msg);
    // Wake the reader when the queue crosses back under the bound (a
    // permit is kept if it is not waiting yet, and it checks again).
    let before = gauge.taken(len);
    if before > MAX_QUEUED_OUTPUT_BYTES && before - len <= MAX_QUEUED_OUTPUT_BYTES {
        gauge.wake();
    }
    written
}

/// A message this long (a batch of replies, or one large reply) that is
/// the only one to write is written from its own buffer rather than copied
/// into the writer's: the same one system call, without the copy. With
/// others queued or held, the buffer gathers them into fewer calls.
const DIRECT_WRITE_BYTES: usize = 4 * 1024;

/// `msg` and its newline, written past `w`'s buffer (what the buffer holds
/// goes first): one vectored write where the output takes it, no copy.
async fn write_direct<W: AsyncWrite + Unpin>(w: &mut BufWriter<W>, msg: &[u8]) -> io::Result<()> {
    w.flush().await?;
    let out = w.get_mut();
    let mut done = 0;
    while done <= msg.len() {
        let n = match msg.get(done..) {
            Some(rest) if !rest.is_empty() => {
                out.write_vectored(&[io::IoSlice::new(rest), io::IoSlice::new(b"\n")])
                    .await?
            }
            _ => out.write(b"\n").await?,
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        done += n;
    }
    Ok(())
}

enum Line {
    Data,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (without the newline), never
/// buffering more than [`MAX_LINE_BYTES`].
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Data
            });
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE_BYTES {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(if done { take + 1 } else { take });
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(if too_long { Line::TooLong } else { Line::Data });
        }
    }
}

#[cfg(test)]
mod tests;
