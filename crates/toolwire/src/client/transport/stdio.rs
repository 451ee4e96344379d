//! The stdio client transport: newline-delimited JSON-RPC to a child
//! process (or any reader/writer pair), with a reader task that routes each
//! incoming message to the request it belongs to.
//!
//! Routing: a response by its `id`; `notifications/progress` by its
//! `progressToken`; a notification carrying
//! `_meta["io.modelcontextprotocol/subscriptionId"]` to the
//! `subscriptions/listen` request with that id; `notifications/message` to
//! the one in-flight request that asked for logs (stdio has no other way to
//! tell which request a log message is about; with several such requests it
//! goes to `tracing` instead).
//!
//! Spec: basic/transports/stdio.mdx

use super::{
    Decoded, Exchange, Inbound, InboundSink, Incoming, Outgoing, Transport, TransportKind,
    decode_any,
};
use crate::client::error::ClientError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolwire_proto::meta::SUBSCRIPTION_ID_KEY;
use toolwire_proto::types::{
    CancelledNotification, LoggingMessageNotification, NotificationMethod, ProgressNotification,
    ProgressToken,
};
use toolwire_proto::{RequestId, encode_notification};

/// Longest line read from the server, in bytes; a longer one ends the
/// connection, since the message boundary is lost.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long `close` waits for the child to exit after its stdin closed,
/// before sending SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long `close` waits after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

struct Pending {
    tx: mpsc::UnboundedSender<Result<Incoming, ClientError>>,
    progress_token: Option<ProgressToken>,
    wants_logs: bool,
}

#[derive(Default)]
struct Routes {
    pending: HashMap<RequestId, Pending>,
    /// Set when the reader has stopped: no more messages will come.
    closed: Option<String>,
    /// Requests from the server, and notifications no request waits for.
    inbound: InboundSink,
}

type Shared = Arc<Mutex<Routes>>;

pub(crate) struct StdioTransport {
    out: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
    routes: Shared,
    child: tokio::sync::Mutex<Option<Child>>,
    reader: JoinHandle<()>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl StdioTransport {
    /// Starts `command` with piped stdin and stdout; its stderr is
    /// inherited. The child is killed if the transport is dropped.
    pub(crate) fn spawn(mut command: Command) -> Result<Self, ClientError> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(ClientError::Spawn)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Spawn(std::io::Error::other(
                "the child's stdin or stdout is not piped",
            )));
        };
        let mut this = Self::from_io(stdout, stdin);
        this.child = tokio::sync::Mutex::new(Some(child));
        Ok(this)
    }

    /// Speaks over an existing reader (the server's output) and writer (its
    /// input).
    pub(crate) fn from_io<R, W>(reader: R, writer: W) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let routes: Shared = Arc::default();
        let writer = tokio::spawn(write_loop(writer, rx, Arc::clone(&routes)));
        let reader = tokio::spawn(read_loop(reader, Arc::clone(&routes)));
        Self {
            out: Mutex::new(Some(tx)),
            routes,
            child: tokio::sync::Mutex::new(None),
            reader,
            writer: Mutex::new(Some(writer)),
        }
    }

    fn sender(&self) -> Option<mpsc::UnboundedSender<Bytes>> {
        self.out.lock().ok().and_then(|o| o.clone())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn send(&self, request: Outgoing) -> BoxFuture<'_, Result<Box<dyn Exchange>, ClientError>> {
        Box::pin(async move {
            let Some(out) = self.sender() else {
                return Err(ClientError::Transport("the client is closed".into()));
            };
            let (tx, rx) = mpsc::unbounded_channel();
            {
                let mut routes = self
                    .routes
                    .lock()
                    .map_err(|_| ClientError::Transport("routing table poisoned".into()))?;
                if let Some(reason) = &routes.closed {
                    return Err(ClientError::Transport(reason.clone()));
                }
                routes.pending.insert(
                    request.id.clone(),
                    Pending {
                        tx,
                        progress_token: request.progress_token.clone(),
                        wants_logs: request.wants_logs,
                    },
                );
            }
            let exchange = StdioExchange {
                id: request.id,
                rx,
                routes: Arc::clone(&self.routes),
                out: out.clone(),
                done: false,
            };
            out.send(request.body)
                .map_err(|_| ClientError::Transport("the server's stdin is closed".into()))?;
            Ok(Box::new(exchange) as Box<dyn Exchange>)
        })
    }

    fn inbound(&self) -> Option<InboundSink> {
        self.routes.lock().ok().map(|r| r.inbound.clone())
    }

    fn lost(&self) -> Option<String> {
        self.routes.lock().ok().and_then(|r| r.closed.clone())
    }

    fn post(&self, body: Bytes) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let Some(out) = self.sender() else {
                return Err(ClientError::Transport("the client is closed".into()));
            };
            out.send(body)
                .map_err(|_| ClientError::Transport("the server's stdin is closed".into()))
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            // Spec: basic/transports/stdio.mdx#shutdown — close the input,
            // wait, then terminate.
            drop(self.out.lock().ok().and_then(|mut o| o.take()));
            let writer = self.writer.lock().ok().and_then(|mut w| w.take());
            if let Some(writer) = writer {
                let _ = writer.await;
            }
            let mut child = self.child.lock().await;
            if let Some(child) = child.as_mut() {
                shut_down(child).await;
            }
            Ok(())
        })
    }
}

/// Waits for the child after its stdin closed; then SIGTERM, a wait, and
/// SIGKILL.
// Spec: basic/transports/stdio.mdx#shutdown — forced termination escalates
// from SIGTERM to SIGKILL.
async fn shut_down(child: &mut Child) {
    if exited(child, EXIT_GRACE).await {
        return;
    }
    #[cfg(unix)]
    {
        tracing::warn!(
            "the server did not exit within {EXIT_GRACE:?} of its stdin closing; sending SIGTERM"
        );
        // The pid is still ours: the child has not been reaped.
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid
            && rustix::process::kill_process(pid, rustix::process::Signal::TERM).is_ok()
            && exited(child, TERM_GRACE).await
        {
            return;
        }
    }
    tracing::warn!("the server is still running; killing it");
    let _ = child.kill().await;
}

/// Whether the child exits within `grace`.
async fn exited(child: &mut Child, grace: Duration) -> bool {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => {
            report_exit(status.map_err(|e| e.to_string()));
            true
        }
        Err(_) => false,
    }
}

fn report_exit(status: Result<ExitStatus, String>) {
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => tracing::debug!("the server exited with {s}"),
        Err(e) => tracing::debug!("waiting for the server failed: {e}"),
    }
}

struct StdioExchange {
    id: RequestId,
    rx: mpsc::UnboundedReceiver<Result<Incoming, ClientError>>,
    routes: Shared,
    out: mpsc::UnboundedSender<Bytes>,
    done: bool,
}

impl Exchange for StdioExchange {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>> {
        Box::pin(async move {
            if self.done {
                return None;
            }
            let item = self.rx.recv().await;
            match &item {
                Some(Ok(Incoming::Response(_))) | Some(Err(_)) | None => self.done = true,
                Some(Ok(Incoming::Notification { .. })) => {}
            }
            item
        })
    }
}

impl Drop for StdioExchange {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.pending.remove(&self.id);
        }
        if !self.done {
            // Spec: basic/patterns/cancellation.mdx — on stdio the client
            // cancels by notification.
            let params = json!({ "requestId": self.id, "reason": "cancelled by the client" });
            let msg = encode_notification(CancelledNotification::METHOD, Some(&params));
            let _ = self.out.send(Bytes::from(msg));
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Bytes>,
    routes: Shared,
) {
    let mut w = tokio::io::BufWriter::new(writer);
    let result: std::io::Result<()> = async {
        while let Some(msg) = rx.recv().await {
            w.write_all(&msg).await?;
            w.write_all(b"\n").await?;
            while let Ok(msg) = rx.try_recv() {
                w.write_all(&msg).await?;
                w.write_all(b"\n").await?;
            }
            w.flush().await?;
        }
        w.shutdown().await
    }
    .await;
    if let Err(e) = result {
        close_routes(&routes, format!("writing to the server failed: {e}"));
    }
}

async fn read_loop<R: AsyncRead + Unpin>(reader: R, routes: Shared) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let reason = loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) => break "the server closed its output".to_owned(),
            Ok(_) if line.last() != Some(&b'\n') && line.len() > MAX_LINE_BYTES => {
                break format!("the server sent a line longer than {MAX_LINE_BYTES} bytes");
            }
            Ok(_) => {}
            Err(e) => break format!("reading from the server failed: {e}"),
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        route(&routes, text);
    };
    tracing::debug!("stdio client reader stopped: {reason}");
    close_routes(&routes, reason);
}

fn close_routes(routes: &Shared, reason: String) {
    if let Ok(mut r) = routes.lock() {
        // Dropping the senders ends every exchange with `None`.
        r.pending.clear();
        r.closed.get_or_insert(reason);
    }
}

fn route(routes: &Shared, line: &[u8]) {
    let (incoming, id) = match decode_any(line) {
        Ok(Decoded::Message(incoming, id)) => (incoming, id),
        Ok(Decoded::Request(request)) => {
            let sink = routes.lock().map(|r| r.inbound.clone());
            if let Ok(sink) = sink {
                sink.deliver(request);
            }
            return;
        }
        Err(e) => {
            tracing::warn!("ignoring a message from the server: {e}");
            return;
        }
    };
    let Ok(mut r) = routes.lock() else {
        return;
    };
    match &incoming {
        Incoming::Response(_) => {
            let Some(id) = id else {
                tracing::warn!("the server sent an error without an id: {incoming:?}");
                return;
            };
            match r.pending.remove(&id) {
                Some(p) => {
                    let _ = p.tx.send(Ok(incoming));
                }
                None => tracing::debug!("dropping a response to {id}, which is not pending"),
            }
        }
        Incoming::Notification { method, params } => {
            let target = notification_target(&r, method, params.as_ref());
            match target.and_then(|id| r.pending.get(&id)) {
                Some(p) => {
                    let _ = p.tx.send(Ok(incoming));
                }
                None if method == LoggingMessageNotification::METHOD => {
                    tracing::info!(target: "toolwire::client::server_log", params = ?params, "server log message");
                }
                None => {
                    let Incoming::Notification { method, params } = incoming else {
                        return;
                    };
                    r.inbound.deliver(Inbound::Notification { method, params });
                }
            }
        }
    }
}

/// Which pending request a notification belongs to.
fn notification_target(r: &Routes, method: &str, params: Option<&Value>) -> Option<RequestId> {
    if let Some(sub) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
    {
        return serde_json::from_value(sub.clone()).ok();
    }
    if method == CancelledNotification::METHOD {
        // The server ends a subscription this way.
        return params
            .and_then(|p| p.get("requestId"))
            .and_then(|id| serde_json::from_value(id.clone()).ok());
    }
    if method == ProgressNotification::METHOD {
        let token: ProgressToken =
            serde_json::from_value(params?.get("progressToken")?.clone()).ok()?;
        return r
            .pending
            .iter()
            .find(|(_, p)| p.progress_token.as_ref() == Some(&token))
            .map(|(id, _)| id.clone());
    }
    if method == LoggingMessageNotification::METHOD {
        let mut logging = r.pending.iter().filter(|(_, p)| p.wants_logs);
        let first = logging.next()?;
        return logging.next().is_none().then(|| first.0.clone());
    }
    None
}
