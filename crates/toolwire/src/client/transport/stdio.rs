//! The stdio client transport: newline-delimited JSON-RPC to a child
//! process (or any reader/writer pair), with a reader task that routes each
//! incoming message to the request it belongs to (see `router.rs`).
//!
//! Spec: basic/transports/stdio.mdx

use super::router::{Shared, close_routes, register, route};
use super::{Exchange, InboundSink, Outgoing, Transport, TransportKind};
use crate::client::error::ClientError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest line read from the server, in bytes; a longer one ends the
/// connection, since the message boundary is lost.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long `close` waits by default for the child to exit after its stdin
/// closed before sending SIGTERM, and again after SIGTERM before SIGKILL.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_secs(2);

pub(crate) struct StdioTransport {
    out: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
    routes: Shared,
    child: tokio::sync::Mutex<Option<Child>>,
    reader: JoinHandle<()>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// How long `close` waits at each step of the child's shutdown.
    grace: Duration,
}

impl StdioTransport {
    /// Starts `command` with piped stdin and stdout; its stderr is
    /// inherited. The child is killed if the transport is dropped. `close`
    /// waits `grace` after closing its stdin, and again after SIGTERM.
    pub(crate) fn spawn(mut command: Command, grace: Duration) -> Result<Self, ClientError> {
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
        this.grace = grace;
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
            grace: CLOSE_GRACE,
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
            let exchange = register(&self.routes, &request, out.clone())?;
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
                shut_down(child, self.grace).await;
            }
            Ok(())
        })
    }
}

/// Waits for the child after its stdin closed; then SIGTERM, a wait, and
/// SIGKILL.
// Spec: basic/transports/stdio.mdx#shutdown — forced termination escalates
// from SIGTERM to SIGKILL.
async fn shut_down(child: &mut Child, grace: Duration) {
    if exited(child, grace).await {
        return;
    }
    #[cfg(unix)]
    {
        tracing::warn!(
            "the server did not exit within {grace:?} of its stdin closing; sending SIGTERM"
        );
        // The pid is still ours: the child has not been reaped.
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid
            && rustix::process::kill_process(pid, rustix::process::Signal::TERM).is_ok()
            && exited(child, grace).await
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
        // A line that is not even JSON is most often the server (or a
        // library of its) printing to stdout: say which line, and where
        // it belongs.
        if text.first() != Some(&b'{') && text.first() != Some(&b'[') {
            crate::log_limit::warn_limited!(
                "the server wrote a line that is not an MCP message on its stdout: {:?}; \
                 a stdio server must write only MCP messages there and log to stderr",
                excerpt(text)
            );
            continue;
        }
        route(&routes, text);
    };
    tracing::debug!("stdio client reader stopped: {reason}");
    // Legacy subscriptions hear it through the inbound sink.
    let sink = routes.lock().map(|r| r.inbound.clone());
    if let Ok(sink) = sink {
        sink.deliver(super::Inbound::Lost(reason.clone()));
    }
    close_routes(&routes, reason);
}

/// The start of a line, for a message: at most 120 characters.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.into_owned(),
    }
}
