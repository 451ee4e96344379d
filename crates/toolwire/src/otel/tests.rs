//! The `otel` feature end to end in process: the real server over a pipe
//! continues the caller's trace, and the client injects its own.

use crate::{Server, ServerConfig, Tool, ToolError};
use opentelemetry::Value as OtelValue;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Every span ended in this test binary. Tests run in parallel and share
/// the global provider, so each looks for its own trace id.
#[derive(Debug, Clone, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        self.0.lock().expect("not poisoned").extend(batch);
        std::future::ready(Ok(()))
    }
}

/// Installs (once) the global provider that collects, and returns it.
fn collected() -> &'static (Collected, SdkTracerProvider) {
    static ONCE: OnceLock<(Collected, SdkTracerProvider)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let spans = Collected::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        (spans, provider)
    })
}

/// The spans of trace `trace`, once `n` of them have ended.
async fn spans_of(trace: TraceId, n: usize) -> Vec<SpanData> {
    let (spans, _) = collected();
    for _ in 0..200 {
        let found: Vec<SpanData> = spans
            .0
            .lock()
            .expect("not poisoned")
            .iter()
            .filter(|s| s.span_context.trace_id() == trace)
            .cloned()
            .collect();
        if found.len() >= n {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {n} spans of trace {trace}");
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            OtelValue::String(s) => s.to_string(),
            other => other.to_string(),
        })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("otel-test", "1.0.0"));
    server
        .add_tool(
            Tool::builder("echo")
                .input::<Text>()
                .handler(|i: Text, _| async move { i.text })
                .expect("echo"),
        )
        .expect("add echo");
    server
        .add_tool(
            Tool::builder("fail")
                .input::<Text>()
                .handler(|i: Text, _| async move {
                    Err::<String, _>(ToolError::failed(format!("no: {}", i.text)))
                })
                .expect("fail"),
        )
        .expect("add fail");
    server
}

/// Sends raw JSON-RPC lines to the real server over a pipe; returns the
/// replies.
async fn exchange(lines: &[Value]) -> Vec<Value> {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(crate::serve_io(server(), read, write));
    let (read, mut write) = tokio::io::split(ours);
    let mut read = BufReader::new(read).lines();
    let mut replies = Vec::new();
    for line in lines {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
        let reply = read.next_line().await.expect("read").expect("a reply");
        replies.push(serde_json::from_str(&reply).expect("json"));
    }
    replies
}

fn request(id: i64, method: &str, mut params: Value, trace: &str) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": trace,
        "tracestate": "vendor=x",
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_request_with_a_traceparent_continues_that_trace() {
    collected();
    // The spec's example trace context (basic/index.mdx).
    let trace = TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").expect("hex");
    let parent = SpanId::from_hex("00f067aa0ba902b7").expect("hex");
    let tp = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let replies = exchange(&[
        request(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            tp,
        ),
        request(
            2,
            "tools/call",
            json!({"name": "fail", "arguments": {"text": "x"}}),
            tp,
        ),
        request(
            3,
            "tools/call",
            json!({"name": "nope", "arguments": {}}),
            tp,
        ),
        request(4, "tools/list", json!({}), tp),
    ])
    .await;
    assert_eq!(replies[0]["result"]["content"][0]["text"], "hi");
    assert_eq!(replies[1]["result"]["isError"], true);
    assert_eq!(replies[2]["error"]["code"], -32602);
    assert!(replies[3]["result"]["tools"].is_array());

    let spans = spans_of(trace, 4).await;
    let named = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span {name:?} in {spans:?}"))
    };
    let echo = named("tools/call echo");
    assert_eq!(echo.parent_span_id, parent);
    assert!(echo.parent_span_is_remote);
    assert_ne!(echo.span_context.span_id(), parent);
    assert_eq!(echo.span_kind, SpanKind::Server);
    assert_eq!(echo.status, Status::Unset);
    assert_eq!(
        echo.span_context.trace_state().header(),
        "vendor=x",
        "tracestate travels with the trace"
    );
    assert_eq!(
        attribute(echo, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(attribute(echo, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(echo, "jsonrpc.request.id").as_deref(), Some("1"));

    // A tool's `isError` is a JSON-RPC success, but the span says it failed.
    let fail = named("tools/call fail");
    assert_eq!(fail.parent_span_id, parent);
    assert!(
        matches!(fail.status, Status::Error { .. }),
        "{:?}",
        fail.status
    );
    assert_eq!(attribute(fail, "error.type").as_deref(), Some("tool_error"));

    let unknown = named("tools/call nope");
    assert!(matches!(unknown.status, Status::Error { .. }));
    assert_eq!(attribute(unknown, "error.type").as_deref(), Some("-32602"));

    // Requests answered at once get their span too.
    let list = named("tools/list");
    assert_eq!(list.parent_span_id, parent);
    assert_eq!(attribute(list, "jsonrpc.request.id").as_deref(), Some("4"));
}

#[tokio::test]
async fn a_malformed_traceparent_starts_a_new_trace_and_is_served() {
    collected();
    let bad = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
    let replies = exchange(&[request(
        9,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still served"}}),
        bad,
    )])
    .await;
    assert_eq!(replies[0]["result"]["content"][0]["text"], "still served");
    // Its span is the root of a new trace (an all-zero trace id is invalid).
    let (spans, _) = collected();
    let mut found = None;
    for _ in 0..200 {
        found = spans
            .0
            .lock()
            .expect("not poisoned")
            .iter()
            .find(|s| {
                s.name == "tools/call echo"
                    && attribute(s, "jsonrpc.request.id").as_deref() == Some("9")
                    && !s.parent_span_is_remote
            })
            .cloned();
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let span = found.expect("a span for the request");
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_ne!(span.span_context.trace_id(), TraceId::INVALID);
}

#[cfg(feature = "client")]
#[tokio::test]
async fn the_client_injects_its_current_span_and_the_server_continues_it() {
    use opentelemetry::Context;
    use opentelemetry::trace::{FutureExt, TraceContextExt, Tracer, TracerProvider};
    let (_, provider) = collected();
    let tracer = provider.tracer("otel-test-client");
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(crate::serve_io(server(), read, write));
    let (read, write) = tokio::io::split(client_io);
    let client = crate::ClientBuilder::new().connect_io(read, write);

    let span = tracer.start("caller");
    let cx = Context::current_with_span(span);
    let ours = cx.span().span_context().clone();
    let result = client
        .call_tool("echo", json!({"text": "traced"}))
        .with_context(cx.clone())
        .await
        .expect("call");
    assert!(!result.is_error.unwrap_or(false));
    cx.span().end();

    let spans = spans_of(ours.trace_id(), 2).await;
    let served = spans
        .iter()
        .find(|s| s.name == "tools/call echo")
        .expect("the server's span");
    assert_eq!(served.parent_span_id, ours.span_id());
    assert!(served.parent_span_is_remote);
}

#[cfg(feature = "client")]
#[test]
fn the_client_meta_carries_the_current_traceparent_and_keeps_an_explicit_one() {
    use opentelemetry::Context;
    use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceState};
    let trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex");
    let span = SpanId::from_hex("00f067aa0ba902b7").expect("hex");
    let cx = Context::new().with_remote_span_context(SpanContext::new(
        trace,
        span,
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    ));
    let mut meta = serde_json::Map::new();
    {
        let _guard = cx.clone().attach();
        super::inject(&mut meta);
    }
    assert_eq!(
        meta.get("traceparent"),
        Some(&json!(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ))
    );
    // Nothing is injected without a span.
    let mut empty = serde_json::Map::new();
    super::inject(&mut empty);
    assert!(empty.is_empty(), "{empty:?}");
    // A traceparent the caller set is the caller's.
    let mut explicit = serde_json::Map::new();
    explicit.insert("traceparent".into(), json!("00-mine"));
    {
        let _guard = cx.attach();
        super::inject(&mut explicit);
    }
    assert_eq!(explicit.get("traceparent"), Some(&json!("00-mine")));
}
