//! `toolwire serve --otlp URL` (feature `otel`): a request's `_meta`
//! traceparent comes back as the parent of the span the real binary exports
//! to an OTLP/HTTP receiver run here on loopback, and the metrics
//! (`mcp.server.operation.duration` by method, tool and error type) arrive
//! at the same receiver.

use crate::support::Proc;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message as _;
use serde_json::json;
use std::time::Duration;
use tokio::sync::mpsc;

/// What the receiver saw: a path and its protobuf body (empty unless it
/// was sent as protobuf).
type Received = (String, Bytes);

/// A minimal OTLP/HTTP receiver on 127.0.0.1:0: passes each POSTed
/// protobuf export on and answers 200 with an empty response.
async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let tx = tx.clone();
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let tx = tx.clone();
                async move {
                    let path = req.uri().path().to_owned();
                    let is_proto = req
                        .headers()
                        .get("content-type")
                        .is_some_and(|v| v == "application/x-protobuf");
                    let body = req.into_body().collect().await?.to_bytes();
                    let _ = tx.send((path, if is_proto { body } else { Bytes::new() }));
                    Ok::<_, hyper::Error>(
                        Response::builder()
                            .header("content-type", "application/x-protobuf")
                            .body(Full::new(Bytes::new()))
                            .expect("response"),
                    )
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    (url, rx)
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => Some(s.clone()),
            other => Some(format!("{other:?}")),
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn a_traced_tools_call_is_exported_with_the_callers_trace_and_parent() {
    let (url, mut received) = receiver().await;
    let mut server = Proc::spawn_with(&["--otlp", &url], &[]);
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let parent = "00f067aa0ba902b7";
    let reply = server
        .call(
            1,
            "tools/call",
            json!({
                "name": "echo",
                "arguments": {"text": "traced"},
                "_meta": {"traceparent": format!("00-{trace}-{parent}-01")}
            }),
        )
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "traced", "{reply}");
    let reply = server
        .call(
            2,
            "tools/call",
            json!({
                "name": "no_such_tool",
                "arguments": {},
                "_meta": {"traceparent": format!("00-{trace}-{parent}-01")}
            }),
        )
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    // stdin closing ends `serve`, which flushes the batch before exiting.
    server.close_stdin();
    let status = tokio::time::timeout(Duration::from_secs(20), server.child.wait())
        .await
        .expect("serve exits within 20 s")
        .expect("wait");
    assert!(status.success(), "{status}");

    let mut spans: Vec<Span> = Vec::new();
    // Per tool: the histogram's data points' attributes and counts.
    let mut durations: Vec<(Vec<(String, String)>, u64)> = Vec::new();
    while spans.len() < 2 || durations.len() < 2 {
        let (path, body) = tokio::time::timeout(Duration::from_secs(10), received.recv())
            .await
            .expect("an export within 10 s")
            .expect("receiver running");
        match path.as_str() {
            "/v1/traces" => {
                let export = ExportTraceServiceRequest::decode(body).expect("spans");
                spans.extend(
                    export
                        .resource_spans
                        .into_iter()
                        .flat_map(|r| r.scope_spans)
                        .flat_map(|s| s.spans),
                );
            }
            "/v1/metrics" => {
                let export = ExportMetricsServiceRequest::decode(body).expect("metrics");
                let metrics = export
                    .resource_metrics
                    .into_iter()
                    .flat_map(|r| r.scope_metrics)
                    .flat_map(|s| s.metrics)
                    .filter(|m| m.name == "mcp.server.operation.duration");
                for metric in metrics {
                    assert_eq!(metric.unit, "s");
                    let Some(Data::Histogram(h)) = metric.data else {
                        panic!("not a histogram: {metric:?}");
                    };
                    for point in h.data_points {
                        let attributes = point
                            .attributes
                            .iter()
                            .map(|kv| {
                                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                                    Some(AnyValue::StringValue(s)) => s.clone(),
                                    other => format!("{other:?}"),
                                };
                                (kv.key.clone(), value)
                            })
                            .collect::<Vec<_>>();
                        durations.push((attributes, point.count));
                    }
                }
            }
            other => panic!("an export to {other}"),
        }
    }
    let point = |tool: &str| {
        durations
            .iter()
            .find(|(a, _)| a.iter().any(|(k, v)| k == "gen_ai.tool.name" && v == tool))
            .unwrap_or_else(|| panic!("no duration for {tool} in {durations:?}"))
    };
    let (echo, count) = point("echo");
    assert_eq!(*count, 1);
    assert!(
        echo.contains(&("mcp.method.name".into(), "tools/call".into())),
        "{echo:?}"
    );
    assert!(!echo.iter().any(|(k, _)| k == "error.type"), "{echo:?}");
    let (unknown, _) = point("_unknown");
    assert!(
        unknown.contains(&("error.type".into(), "-32602".into())),
        "{unknown:?}"
    );
    let echo = spans
        .iter()
        .find(|s| s.name == "tools/call echo")
        .unwrap_or_else(|| panic!("no echo span in {spans:?}"));
    assert_eq!(hex(&echo.trace_id), trace);
    assert_eq!(hex(&echo.parent_span_id), parent);
    assert_ne!(hex(&echo.span_id), parent);
    assert_eq!(
        attribute(echo, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(attribute(echo, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(echo, "jsonrpc.request.id").as_deref(), Some("1"));

    let unknown = spans
        .iter()
        .find(|s| s.name == "tools/call no_such_tool")
        .unwrap_or_else(|| panic!("no span for the unknown tool in {spans:?}"));
    assert_eq!(hex(&unknown.trace_id), trace);
    let status = unknown.status.as_ref().expect("a status");
    assert_eq!(status.code, StatusCode::Error as i32);
}
