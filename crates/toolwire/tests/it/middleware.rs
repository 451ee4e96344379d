//! The middleware seam on the stdio pipe, in both eras: a layer that
//! refuses, the audit layer seeing the refusal, tower's own layers, the
//! built-in per-tool timeout, concurrency limit and response-size cap, a
//! layer applied to chosen methods, and a listen stream through layers.

use super::duplex::Duplex;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use toolwire::middleware::{
    AuditLayer, AuditRecord, BoxError, ConcurrencyLimitLayer, McpRequest, McpResponse, PerTool,
    ResponseSizeLayer, Select, ToolTimeoutLayer,
};
use toolwire::proto::types::Method;
use toolwire::{RequestContext, Server, ServerConfig, Tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sleep {
    ms: u64,
}

/// `echo`, `secret`, `sleep` (which records whether its token fired) and
/// `big` (a result of `n` bytes of text).
fn test_server(cancelled: Arc<AtomicBool>) -> Server {
    let server = Server::new(ServerConfig::new("middleware-it", "0.0.0"));
    let echo = Tool::builder("echo")
        .input::<Text>()
        .handler(|t: Text, _| async move { t.text });
    let secret = Tool::builder("secret")
        .input::<Text>()
        .handler(|_: Text, _| async move { "the secret" });
    let sleep =
        Tool::builder("sleep")
            .input::<Sleep>()
            .handler(move |s: Sleep, cx: RequestContext| {
                // Watched from outside the handler, whose future may be dropped.
                let (cancelled, token) = (Arc::clone(&cancelled), cx.cancellation().clone());
                tokio::spawn(async move {
                    token.cancelled().await;
                    cancelled.store(true, Ordering::SeqCst);
                });
                async move {
                    tokio::time::sleep(Duration::from_millis(s.ms)).await;
                    "slept"
                }
            });
    let big = Tool::builder("big")
        .input::<Sleep>()
        .handler(|s: Sleep, _| async move { "x".repeat(usize::try_from(s.ms).unwrap_or(0)) });
    for tool in [echo, secret, sleep, big] {
        server.add_tool(tool.expect("tool")).expect("registered");
    }
    server
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":tool,"arguments":args,"_meta":meta()}})
}

/// A layer of this test: refuses calls of `secret`, passes the rest on.
#[derive(Clone)]
struct Deny<S>(S);

#[derive(Clone)]
struct DenyLayer;

impl<S> tower::Layer<S> for DenyLayer {
    type Service = Deny<S>;
    fn layer(&self, inner: S) -> Deny<S> {
        Deny(inner)
    }
}

impl<S> tower::Service<McpRequest> for Deny<S>
where
    S: tower::Service<McpRequest, Response = McpResponse, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = BoxError;
    type Future = futures_util::future::BoxFuture<'static, Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        if req.tool() == Some("secret") {
            let refusal = req.tool_error("secret is not for you");
            return Box::pin(async move { Ok(refusal) });
        }
        Box::pin(self.0.call(req))
    }
}

/// An audit layer whose records land in the returned list.
fn audit() -> (AuditLayer, Arc<Mutex<Vec<AuditRecord>>>) {
    let records = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&records);
    let layer = AuditLayer::with_sink(move |r| sink.lock().expect("lock").push(r.clone()));
    (layer, records)
}

fn taken(records: &Mutex<Vec<AuditRecord>>) -> Vec<AuditRecord> {
    std::mem::take(&mut *records.lock().expect("lock"))
}

#[tokio::test]
async fn a_refusal_reaches_the_audit_layer_in_both_eras() {
    let (audit, records) = audit();
    let server = test_server(Arc::default())
        .with_layer(DenyLayer)
        .with_layer(audit);
    let mut io = Duplex::serve(server);

    // Modern: the refusal is an isError result; the audit saw it as one.
    io.send(call(1, "secret", json!({"text": "x"}))).await;
    let r = io.recv().await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "secret is not for you");
    io.send(call(2, "echo", json!({"text": "hi"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "hi");
    let seen = taken(&records);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].method, "tools/call");
    assert_eq!(seen[0].name.as_deref(), Some("secret"));
    assert_eq!(seen[0].outcome, "tool_error");
    assert!(seen[0].is_error);
    assert_eq!(seen[0].protocol_version, "2026-07-28");
    assert_eq!(seen[0].arguments, None, "arguments are left out by default");
    assert_eq!(seen[1].outcome, "complete");
    assert!(!seen[1].is_error);

    // Legacy: the same layer refuses in the session; the result has no
    // `resultType`, and the audit names the negotiated version.
    io.send(
        json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"it","version":"1"}}}),
    )
    .await;
    assert_eq!(io.recv().await["result"]["protocolVersion"], "2025-11-25");
    io.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    io.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call",
        "params":{"name":"secret","arguments":{"text":"x"}}}))
        .await;
    let r = io.recv().await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"].get("resultType").is_none(), "{r}");
    // An unknown tool is the pipeline's refusal: the audit sees its code.
    io.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"nope","arguments":{}}}))
        .await;
    assert_eq!(io.recv().await["error"]["code"], -32602);
    let seen = taken(&records);
    assert_eq!(
        seen.len(),
        2,
        "initialize is not a pipeline request: {seen:?}"
    );
    assert_eq!(seen[0].protocol_version, "2025-11-25");
    assert_eq!(seen[0].outcome, "tool_error");
    assert_eq!(seen[1].outcome, "error");
    assert_eq!(seen[1].code, Some(-32602));
    io.close().await;
}

#[tokio::test]
async fn tower_layers_work_unchanged() {
    // A concurrency limit of one, with load shedding: a second call while
    // one runs is refused at once as busy.
    let server = test_server(Arc::default())
        .with_layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .with_layer(tower::load_shed::LoadShedLayer::new());
    let mut io = Duplex::serve(server);
    io.send(call(1, "sleep", json!({"ms": 400}))).await;
    io.send(call(2, "echo", json!({"text": "hi"}))).await;
    let r = io.recv().await;
    assert_eq!(r["id"], 2, "the refusal comes first: {r}");
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("overloaded")),
        "{r}"
    );
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "slept");
    io.send(call(3, "echo", json!({"text": "again"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "again");
    io.close().await;

    // tower's timeout: its error becomes a JSON-RPC error.
    let server = test_server(Arc::default())
        .with_layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(50)));
    let mut io = Duplex::serve(server);
    io.send(call(1, "sleep", json!({"ms": 5000}))).await;
    let r = io.recv().await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("timed out")),
        "{r}"
    );
    io.close().await;
}

#[tokio::test]
async fn a_tool_timeout_cancels_the_handler_and_answers_is_error() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let limits = PerTool::none().tool("sleep", Duration::from_millis(50));
    let server = test_server(Arc::clone(&cancelled)).with_layer(ToolTimeoutLayer::new(limits));
    let mut io = Duplex::serve(server);
    io.send(call(1, "sleep", json!({"ms": 5000}))).await;
    let r = io.recv().await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("did not finish within 50 ms"), "{text}");
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the handler's token fired"
    );
    // A tool without a limit runs as long as it takes.
    io.send(call(2, "echo", json!({"text": "hi"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "hi");
    io.close().await;
}

#[tokio::test]
async fn a_tool_at_its_concurrency_limit_is_refused_while_others_run() {
    let server = test_server(Arc::default())
        .with_layer(ConcurrencyLimitLayer::new(PerTool::none().tool("sleep", 1)));
    let mut io = Duplex::serve(server);
    io.send(call(1, "sleep", json!({"ms": 300}))).await;
    io.send(call(2, "sleep", json!({"ms": 1}))).await;
    let r = io.recv().await;
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("\"sleep\"") && message.contains("limit"),
        "{message}"
    );
    io.send(call(3, "echo", json!({"text": "served"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "served");
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "slept");
    // The place is free again once the first call ended.
    io.send(call(4, "sleep", json!({"ms": 1}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "slept");
    io.close().await;
}

#[tokio::test]
async fn a_result_over_the_size_cap_is_refused_clearly() {
    let server =
        test_server(Arc::default()).with_layer(ResponseSizeLayer::new(4096).tool("big", 1000));
    let mut io = Duplex::serve(server);
    io.send(call(1, "big", json!({"ms": 500}))).await;
    let r = io.recv().await;
    assert!(r["result"].get("isError").is_none(), "under the cap: {r}");
    assert_eq!(
        r["result"]["content"][0]["text"].as_str().map(str::len),
        Some(500)
    );
    io.send(call(2, "big", json!({"ms": 2000}))).await;
    let r = io.recv().await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("over this server's limit of 1000 bytes"),
        "{text}"
    );
    io.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":meta()}}))
        .await;
    let listed = io.recv().await;
    assert!(listed.get("result").is_some(), "under the cap: {listed}");
    io.close().await;

    // Another method over the server-wide cap: -32603 with both sizes.
    let server = test_server(Arc::default()).with_layer(ResponseSizeLayer::new(64));
    let mut io = Duplex::serve(server);
    io.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta()}}))
        .await;
    let r = io.recv().await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["data"]["limit"], 64, "{r}");
    assert!(
        r["error"]["data"]["size"].as_u64().is_some_and(|s| s > 64),
        "{r}"
    );
    io.close().await;
}

#[tokio::test]
async fn a_selected_layer_sees_only_its_methods_and_a_stream_passes_through() {
    let (audit, records) = audit();
    let server = test_server(Arc::default())
        .with_layer(Select::methods([Method::CallTool], audit.with_arguments()));
    let mut io = Duplex::serve(server.clone());
    io.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta()}}))
        .await;
    assert!(io.recv().await["result"]["tools"].is_array());
    io.send(call(2, "echo", json!({"text": "hi"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "hi");
    let seen = taken(&records);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].arguments, Some(json!({"text": "hi"})));

    // A listen stream through the layers: acknowledged, then carries a change.
    io.send(
        json!({"jsonrpc":"2.0","id":3,"method":"subscriptions/listen",
        "params":{"notifications":{"toolsListChanged":true},"_meta":meta()}}),
    )
    .await;
    let ack = io.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert!(server.remove_tool("big"));
    let change = io.recv().await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    io.close().await;
}

#[tokio::test]
async fn the_rate_limit_is_a_layer_whose_refusals_the_audit_sees() {
    let limit: toolwire::RateLimit = "1/h".parse().expect("a limit");
    let server = Server::new(ServerConfig::new("limited", "0.0.0").with_rate_limit(limit));
    let echo = Tool::builder("echo")
        .input::<Text>()
        .handler(|t: Text, _| async move { t.text });
    server.add_tool(echo.expect("tool")).expect("registered");
    let (audit, records) = audit();
    let mut io = Duplex::serve(server.with_layer(audit));
    io.send(call(1, "echo", json!({"text": "first"}))).await;
    assert_eq!(io.recv().await["result"]["content"][0]["text"], "first");
    io.send(call(2, "echo", json!({"text": "second"}))).await;
    let r = io.recv().await;
    assert_eq!(r["error"]["code"], -31429, "{r}");
    // Lists are not invocations: never counted.
    io.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":meta()}}))
        .await;
    assert!(io.recv().await["result"]["tools"].is_array());
    let seen = taken(&records);
    let codes: Vec<(&str, Option<i32>)> = seen.iter().map(|r| (r.outcome, r.code)).collect();
    assert_eq!(
        codes,
        [
            ("complete", None),
            ("error", Some(-31429)),
            ("complete", None)
        ]
    );
    io.close().await;
}
