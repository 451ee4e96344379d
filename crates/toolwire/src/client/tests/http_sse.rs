//! The 2024-11-05 HTTP+SSE transport as the last fallback over HTTP, against
//! a small server of that shape on a loopback socket: GET `/sse` opens the
//! stream and names `/messages?sessionId=…` in its `endpoint` event; every
//! POST there is answered 202 and its answer comes on the stream. A POST to
//! `/sse` itself gets 405 (or, in the second test, a JSON-RPC error). The
//! test can end every open stream (the server dropping it), and refuse
//! further GETs.

use super::server::{accept_all, text};
use crate::client::{ProtocolEra, RequestOptions, ToolCall};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

#[derive(Default)]
struct State {
    /// Every request line the server saw: `GET /sse`, `POST /messages…`.
    seen: Vec<String>,
    /// Every JSON-RPC message the client POSTed to the endpoint.
    messages: Vec<Value>,
    /// The open stream of each session.
    streams: HashMap<String, mpsc::UnboundedSender<Bytes>>,
    /// Calls of `ask` waiting for the elicitation's answer, by its id.
    asking: HashMap<String, Value>,
    /// Streams opened so far (each a session: `s1`, `s2`, …).
    opened: usize,
    /// How many GETs are answered with a stream; `None`: all.
    streams_left: Option<usize>,
}

impl State {
    /// The server drops every open stream.
    fn drop_streams(&mut self) {
        self.streams.clear();
    }
}

type Shared = Arc<Mutex<State>>;
type Body = BoxBody<Bytes, Infallible>;

fn full(status: StatusCode, content_type: &str, body: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body.to_owned())).boxed())
        .expect("response")
}

fn event(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

fn answer(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// What the server sends on the stream for one message of the client.
fn handle(state: &mut State, m: &Value) -> Vec<Value> {
    let id = &m["id"];
    match m["method"].as_str() {
        Some("initialize") => vec![answer(
            id,
            json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "sse-server", "version": "1"}
            }),
        )],
        Some("tools/list") => vec![answer(
            id,
            json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "ask", "inputSchema": {"type": "object"}}
            ]}),
        )],
        Some("tools/call") if m["params"]["name"] == "echo" => {
            let mut out = Vec::new();
            if let Some(token) = m["params"]["_meta"].get("progressToken") {
                out.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 1}}));
            }
            out.push(answer(
                id,
                json!({"content": [{"type": "text", "text": "echoed"}]}),
            ));
            out
        }
        // Never answered.
        Some("tools/call") if m["params"]["name"] == "hang" => Vec::new(),
        Some("tools/call") => {
            let ask_id = format!("ask-{id}");
            state.asking.insert(ask_id.clone(), id.clone());
            vec![
                json!({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create",
                "params": {"message": "Sure?", "requestedSchema": {"type": "object",
                    "properties": {"confirm": {"type": "boolean"}}}}}),
            ]
        }
        None if m.get("result").is_some() => {
            let call = m["id"].as_str().and_then(|a| state.asking.remove(a));
            let confirmed = m["result"]["content"]["confirm"] == true;
            call.map(|call| {
                answer(
                    &call,
                    json!({"content": [{"type": "text",
                    "text": if confirmed { "confirmed" } else { "not confirmed" }}]}),
                )
            })
            .into_iter()
            .collect()
        }
        _ => Vec::new(),
    }
}

async fn serve(req: Request<Incoming>, state: Shared, refuse_with_jsonrpc: bool) -> Response<Body> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let method = req.method().clone();
    state.lock().expect("state").seen.push(if query.is_empty() {
        format!("{method} {path}")
    } else {
        format!("{method} {path}?{query}")
    });
    match (method, path.as_str()) {
        (Method::GET, "/sse") => {
            let mut s = state.lock().expect("state");
            if s.streams_left == Some(0) {
                return full(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "no more");
            }
            if let Some(n) = &mut s.streams_left {
                *n -= 1;
            }
            let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
            s.opened += 1;
            let session = format!("s{}", s.opened);
            let _ = tx.send(Bytes::from(format!(
                "event: endpoint\ndata: /messages?sessionId={session}\n\n"
            )));
            s.streams.insert(session, tx);
            drop(s);
            let frames = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(BodyExt::boxed(StreamBody::new(frames)))
                .expect("response")
        }
        (Method::POST, "/messages") => {
            let Ok(body) = req.into_body().collect().await else {
                return full(StatusCode::BAD_REQUEST, "text/plain", "no body");
            };
            let Ok(m) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
                return full(StatusCode::BAD_REQUEST, "text/plain", "not JSON");
            };
            let mut s = state.lock().expect("state");
            s.messages.push(m.clone());
            let Some(tx) = query
                .strip_prefix("sessionId=")
                .and_then(|id| s.streams.get(id).cloned())
            else {
                return full(StatusCode::NOT_FOUND, "text/plain", "no session");
            };
            for out in handle(&mut s, &m) {
                let _ = tx.send(event(&out));
            }
            full(StatusCode::ACCEPTED, "text/plain", "Accepted")
        }
        (Method::POST, "/sse") if refuse_with_jsonrpc => full(
            StatusCode::BAD_REQUEST,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: no session"}}"#,
        ),
        _ => full(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "Method Not Allowed",
        ),
    }
}

async fn start(refuse_with_jsonrpc: bool) -> (SocketAddr, Shared) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state: Shared = Arc::default();
    let shared = Arc::clone(&state);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let state = Arc::clone(&shared);
            let service = hyper::service::service_fn(move |req| {
                let state = Arc::clone(&state);
                async move { Ok::<_, Infallible>(serve(req, state, refuse_with_jsonrpc).await) }
            });
            tokio::spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    (addr, state)
}

#[tokio::test]
async fn auto_falls_back_to_http_sse_when_every_post_is_refused() {
    let (addr, state) = start(false).await;
    let client = accept_all()
        .connect_http(&format!("http://{addr}/sse"))
        .expect("client");
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("list over HTTP+SSE")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["echo", "ask"]);
    assert_eq!(client.era(), Some(ProtocolEra::Legacy));
    assert_eq!(client.protocol_version(), "2025-03-26");
    assert_eq!(client.session_id(), None);

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = Arc::clone(&progress);
    let options =
        RequestOptions::new().with_progress(move |n| p.lock().expect("p").push(n.progress));
    let r = client
        .call_tool_with(ToolCall::new("echo").with_options(options))
        .await
        .expect("echo");
    assert_eq!(text(&r), "echoed");
    assert_eq!(*progress.lock().expect("p"), [1.0]);
    // A real elicitation/create on the stream, answered by a POST.
    let r = client.call_tool("ask", json!({})).await.expect("ask");
    assert_eq!(text(&r), "confirmed");
    client.close().await.expect("close");

    let s = state.lock().expect("state");
    // The probe and the first initialize were refused; one GET opened the
    // stream for good; everything else went to the endpoint.
    assert_eq!(
        s.seen.iter().filter(|l| *l == "GET /sse").count(),
        1,
        "{:?}",
        s.seen
    );
    assert_eq!(
        s.seen.iter().filter(|l| *l == "POST /sse").count(),
        2,
        "{:?}",
        s.seen
    );
    let methods: Vec<&str> = s
        .messages
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "tools/call"
        ]
    );
    // The elicitation's answer went back to the endpoint.
    assert!(
        s.messages.iter().any(
            |m| m["id"].as_str().is_some_and(|id| id.starts_with("ask-"))
                && m["result"]["action"] == "accept"
        ),
        "{:?}",
        s.messages
    );
}

#[tokio::test]
async fn a_refusal_with_a_json_rpc_error_never_tries_http_sse() {
    let (addr, state) = start(true).await;
    let client = accept_all()
        .connect_http(&format!("http://{addr}/sse"))
        .expect("client");
    let err = client.list_tools().await.expect_err("no fallback");
    assert!(err.to_string().contains("no session"), "{err}");
    let s = state.lock().expect("state");
    assert!(!s.seen.iter().any(|l| l == "GET /sse"), "{:?}", s.seen);
}

/// Waits until the server has seen a `tools/call` of `name`.
async fn called(state: &Shared, name: &str) {
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !state
            .lock()
            .expect("state")
            .messages
            .iter()
            .any(|m| m["method"] == "tools/call" && m["params"]["name"] == name)
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the call reached the server");
}

#[tokio::test]
async fn a_dropped_stream_fails_the_requests_in_flight_and_is_reopened() {
    let (addr, state) = start(false).await;
    let client = accept_all()
        .connect_http(&format!("http://{addr}/sse"))
        .expect("client");
    client.list_tools().await.expect("list over HTTP+SSE");
    let hanging = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("hang", json!({})).await })
    };
    called(&state, "hang").await;
    state.lock().expect("state").drop_streams();
    // The request in flight fails at once, saying why, instead of waiting
    // for an answer that cannot come.
    let err = tokio::time::timeout(std::time::Duration::from_secs(5), hanging)
        .await
        .expect("the call in flight ends")
        .expect("join")
        .expect_err("no answer");
    assert!(
        matches!(&err, crate::client::ClientError::Transport(m)
            if m.contains("closed the HTTP+SSE stream before answering")),
        "{err}"
    );
    // The next request reopens the stream (a new endpoint, a new session)
    // and initialises it before it goes out.
    let r = client.call_tool("echo", json!({})).await.expect("echo");
    assert_eq!(text(&r), "echoed");
    assert_eq!(client.era(), Some(ProtocolEra::Legacy));
    client.close().await.expect("close");

    let s = state.lock().expect("state");
    assert_eq!(
        s.seen.iter().filter(|l| *l == "GET /sse").count(),
        2,
        "{:?}",
        s.seen
    );
    // The old session's endpoint is not used after the drop.
    let after_drop = s.seen.iter().rposition(|l| l == "GET /sse").expect("GET");
    assert!(
        s.seen[after_drop..]
            .iter()
            .all(|l| !l.starts_with("POST") || l == "POST /messages?sessionId=s2"),
        "{:?}",
        s.seen
    );
    // (The client lists the tools before calls as it sees fit.)
    let methods: Vec<&str> = s
        .messages
        .iter()
        .filter_map(|m| m["method"].as_str())
        .filter(|m| *m != "tools/list")
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
}

#[tokio::test]
async fn a_stream_that_cannot_be_reopened_fails_after_bounded_retries() {
    let (addr, state) = start(false).await;
    state.lock().expect("state").streams_left = Some(1);
    let client = accept_all()
        .connect_http(&format!("http://{addr}/sse"))
        .expect("client");
    client.list_tools().await.expect("list over HTTP+SSE");
    state.lock().expect("state").drop_streams();
    // Let the reader notice the end.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    let err = client
        .call_tool("echo", json!({}))
        .await
        .expect_err("no stream to be had");
    let text = err.to_string();
    assert!(
        text.contains("5 attempts to reopen it failed")
            && text.contains("503 Service Unavailable without an event stream"),
        "{text}"
    );
    // Four waits between five attempts: 0.1 + 0.2 + 0.4 + 0.8 s.
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(1500) && took < std::time::Duration::from_secs(10),
        "{took:?}"
    );
    let s = state.lock().expect("state");
    assert_eq!(
        s.seen.iter().filter(|l| *l == "GET /sse").count(),
        6,
        "{:?}",
        s.seen
    );
}

#[tokio::test]
async fn a_legacy_subscription_hears_that_the_stream_dropped() {
    let (addr, state) = start(false).await;
    let client = accept_all()
        .connect_http(&format!("http://{addr}/sse"))
        .expect("client");
    let mut sub = client
        .listen(toolwire_proto::types::SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .expect("listen over HTTP+SSE");
    state.lock().expect("state").drop_streams();
    let end = tokio::time::timeout(std::time::Duration::from_secs(5), sub.next())
        .await
        .expect("the subscription hears of it")
        .expect("an item");
    assert!(
        matches!(&end, Err(crate::client::ClientError::Transport(m))
            if m.contains("closed the HTTP+SSE stream")),
        "{end:?}"
    );
}
