//! Scripted servers: a closure answers each request; every message the
//! client sent is recorded.

use crate::client::era::EraState;
use crate::client::error::ClientError;
use crate::client::transport::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::client::{Client, ClientBuilder, ProtocolMode};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub(super) type Log = Arc<Mutex<Vec<Value>>>;
type Script = Arc<dyn Fn(&Value) -> Vec<Value> + Send + Sync>;

/// A server on the other end of an in-process pipe.
pub(super) struct FakeStdio {
    pub(super) client: Client,
    pub(super) log: Log,
    /// Sends a message to the client unprompted.
    pub(super) inject: mpsc::UnboundedSender<Value>,
}

/// The answer `result` to `req`.
pub(super) fn result(req: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req["id"], "result": result})
}

/// The error answer to `req`.
pub(super) fn error(req: &Value, code: i32, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": req["id"], "error": e})
}

/// A `tools/list` result with the given tools and cache hints.
pub(super) fn tools_page(tools: Value, ttl_ms: u64) -> Value {
    json!({"resultType": "complete", "tools": tools, "ttlMs": ttl_ms, "cacheScope": "public"})
}

/// A tool without parameters.
pub(super) fn plain_tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

pub(super) fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}

impl FakeStdio {
    /// A modern client that already settled its era (no probe), so scripts
    /// see only the requests the test makes.
    pub(super) fn start(
        builder: ClientBuilder,
        script: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static,
    ) -> Self {
        let fake = Self::start_in_mode(builder.with_protocol_mode(ProtocolMode::Modern), script);
        fake.client.set_era(EraState::Modern);
        fake
    }

    /// A client in the builder's own mode.
    pub(super) fn start_in_mode(
        builder: ClientBuilder,
        script: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static,
    ) -> Self {
        let script: Script = Arc::new(script);
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (client_read, client_write) = tokio::io::split(client_io);
        let (server_read, mut server_write) = tokio::io::split(server_io);
        let log: Log = Arc::default();
        let (inject, mut injected) = mpsc::unbounded_channel::<Value>();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            loop {
                let msg = tokio::select! {
                    m = out_rx.recv() => m,
                    m = injected.recv() => m,
                };
                let Some(msg) = msg else { break };
                let line = format!("{msg}\n");
                if server_write.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
            // Dropping `inject` closes the server's output.
            let _ = server_write.shutdown().await;
        });
        let reader_log = Arc::clone(&log);
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let msg: Value = serde_json::from_str(&line).expect("client sent JSON");
                reader_log.lock().expect("log").push(msg.clone());
                if msg.get("id").is_some() && msg.get("method").is_some() {
                    for reply in script(&msg) {
                        let _ = out_tx.send(reply);
                    }
                }
            }
        });
        Self {
            client: builder.connect_io(client_read, client_write),
            log,
            inject,
        }
    }

    /// The requests (not notifications) the client sent with `method`.
    pub(super) fn requests(&self, method: &str) -> Vec<Value> {
        requests(&self.log, method)
    }

    /// Every message the client sent.
    pub(super) fn all(&self) -> Vec<Value> {
        self.log.lock().expect("log").clone()
    }
}

pub(super) fn requests(log: &Log, method: &str) -> Vec<Value> {
    log.lock()
        .expect("log")
        .iter()
        .filter(|m| m["method"] == method && m.get("id").is_some())
        .cloned()
        .collect()
}

/// An HTTP-kind transport that records each request with its headers and
/// answers from a script: exercises the HTTP-only rules without a socket.
pub(super) struct FakeHttp {
    script: Script,
    pub(super) log: Log,
}

impl FakeHttp {
    /// A client on a fake HTTP transport. Each logged message gets a
    /// `headers` member holding the request's headers.
    pub(super) fn client(
        builder: ClientBuilder,
        script: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static,
    ) -> (Client, Log) {
        let log: Log = Arc::default();
        let transport = Self {
            script: Arc::new(script),
            log: Arc::clone(&log),
        };
        let builder = builder.with_protocol_mode(ProtocolMode::Modern);
        (Client::new(builder, Arc::new(transport)), log)
    }
}

struct Replies(std::vec::IntoIter<Value>);

impl Exchange for Replies {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>> {
        Box::pin(async move {
            let v = self.0.next()?;
            Some(Incoming::decode(v.to_string().as_bytes()).map(|(i, _)| i))
        })
    }
}

impl Transport for FakeHttp {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn send(&self, request: Outgoing) -> BoxFuture<'_, Result<Box<dyn Exchange>, ClientError>> {
        Box::pin(async move {
            let mut msg: Value = serde_json::from_slice(&request.body).expect("JSON body");
            let headers: serde_json::Map<String, Value> = request
                .headers
                .iter()
                .map(|(k, v)| {
                    let v = v.to_str().expect("a visible ASCII header value");
                    (k.as_str().to_owned(), Value::String(v.to_owned()))
                })
                .collect();
            msg["headers"] = Value::Object(headers);
            self.log.lock().expect("log").push(msg.clone());
            let replies = (self.script)(&msg);
            Ok(Box::new(Replies(replies.into_iter())) as Box<dyn Exchange>)
        })
    }
}
