//! The client against the real server, in process over a pipe.

use crate::client::{
    ChangeNotification, Client, ClientBuilder, ClientError, InputError, RequestOptions, ToolCall,
};
use crate::{
    ElicitAnswer, InputRequired, RequestContext, Server, ServerConfig, Tool, ToolError, ToolResult,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use toolwire_proto::types::{ElicitAction, ElicitRequestParams, ElicitResult, SubscriptionFilter};

#[derive(Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Confirmation {
    confirm: bool,
}

#[derive(Deserialize)]
struct Regional {
    region: String,
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub(super) fn server(ttl_ms: u64, cancelled: Arc<AtomicBool>) -> Server {
    let server = Server::new(
        ServerConfig::new("test-server", "1.0.0")
            .with_ttl(std::time::Duration::from_millis(ttl_ms)),
    );
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
            Tool::builder("whoami")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, cx: RequestContext| async move {
                    serde_json::to_string(cx.meta()).unwrap_or_default()
                })
                .expect("whoami"),
        )
        .expect("add whoami");
    server
        .add_tool(
            Tool::builder("confirm")
                .input::<Text>()
                .handler(|i: Text, cx: RequestContext| async move {
                    Ok::<_, ToolError>(match cx.input::<ElicitAnswer<Confirmation>>("confirm")? {
                        Some(ElicitAnswer::Accept(Confirmation { confirm: true })) => {
                            ToolResult::text(format!("confirmed: {}", i.text))
                        }
                        Some(_) => ToolResult::error_text(format!("not confirmed: {}", i.text)),
                        None => InputRequired::new()
                            .elicit::<Confirmation>("confirm", format!("Confirm {}?", i.text))
                            .into(),
                    })
                })
                .expect("confirm"),
        )
        .expect("add confirm");
    server
        .add_tool(
            Tool::builder("regional_echo")
                .input_with_schema::<Regional>(json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {"type": "integer", "x-mcp-header": "Priority"},
                        "text": {"type": "string"}
                    },
                    "required": ["region", "text"]
                }))
                .handler(|i: Regional, _| async move { format!("{}: {}", i.region, i.text) })
                .expect("regional_echo"),
        )
        .expect("add regional_echo");
    server
        .add_tool(
            Tool::builder("steps")
                .input::<Steps>()
                .handler(move |i: Steps, cx: RequestContext| {
                    // Set when the call stops early, whether the handler sees
                    // the cancellation or is dropped.
                    let guard = SetOnDrop(Arc::clone(&cancelled));
                    async move {
                        for step in 1..=i.steps {
                            tokio::select! {
                                () = tokio::time::sleep(Duration::from_millis(20)) => {}
                                () = cx.cancelled() => return "cancelled".to_owned(),
                            }
                            cx.report_progress(f64::from(step), Some(f64::from(i.steps)), None);
                        }
                        std::mem::forget(guard);
                        "done".to_owned()
                    }
                })
                .expect("steps"),
        )
        .expect("add steps");
    server
}

fn connect(server: &Server, builder: ClientBuilder) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let srv = server.clone();
    tokio::spawn(async move { crate::serve_io(srv, server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    builder.connect_io(client_read, client_write)
}

pub(super) fn accept_all() -> ClientBuilder {
    ClientBuilder::new().with_elicitation(|_key: String, _p: ElicitRequestParams| async {
        let mut content = Map::new();
        content.insert("confirm".into(), Value::Bool(true));
        Ok::<_, InputError>(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        })
    })
}

pub(super) fn text(r: &toolwire_proto::types::CallToolResult) -> String {
    serde_json::to_value(&r.content).expect("content")[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn lists_calls_and_sends_meta() {
    let server = server(60_000, Arc::default());
    let client = connect(&server, accept_all());
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        ["echo", "whoami", "confirm", "regional_echo", "steps"]
    );
    let r = client
        .call_tool("echo", json!({"text": "hé"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "hé");
    let r = client.call_tool("whoami", json!({})).await.expect("whoami");
    let meta: Value = serde_json::from_str(&text(&r)).expect("meta json");
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "toolwire-client"
    );
    let d = client.discover().await.expect("discover");
    assert!(d.supported_versions.iter().any(|v| v == "2026-07-28"));
}

#[tokio::test]
async fn input_handler_completes_an_mrtr_call() {
    let server = server(60_000, Arc::default());
    let client = connect(&server, accept_all());
    let r = client
        .call_tool("confirm", json!({"text": "deploy"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "confirmed: deploy");

    let declining =
        ClientBuilder::new().with_elicitation(|_k: String, _p: ElicitRequestParams| async {
            Ok::<_, InputError>(ElicitResult {
                action: ElicitAction::Decline,
                content: None,
            })
        });
    let client = connect(&server, declining);
    let r = client
        .call_tool("confirm", json!({"text": "deploy"}))
        .await
        .expect("call");
    assert!(r.is_error());
    assert_eq!(text(&r), "not confirmed: deploy");
}

#[tokio::test]
async fn progress_reaches_the_callback() {
    let server = server(60_000, Arc::default());
    let client = connect(&server, ClientBuilder::new());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let call = ToolCall::new("steps")
        .with_argument("steps", json!(3))
        .with_options(
            RequestOptions::new().with_progress(move |p| s.lock().expect("s").push(p.progress)),
        );
    let r = client.call_tool_with(call).await.expect("call");
    assert_eq!(text(&r), "done");
    assert_eq!(*seen.lock().expect("s"), [1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let server = server(60_000, Arc::clone(&cancelled));
    let client = connect(&server, ClientBuilder::new());
    client.list_tools().await.expect("list");
    let call = client.call_tool("steps", json!({"steps": 1000}));
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the handler saw the cancellation"
    );
    // The connection is still usable.
    let r = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "after");
}

#[tokio::test]
async fn list_changes_on_a_listen_stream_invalidate_the_cached_list() {
    let server = server(600_000, Arc::default());
    let client = connect(&server, ClientBuilder::new());
    assert_eq!(client.list_tools().await.expect("list").len(), 5);
    let mut sub = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    server
        .add_tool(
            Tool::builder("late")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "late" })
                .expect("late"),
        )
        .expect("add late");
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("a notification in time")
        .expect("open")
        .expect("ok");
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.iter().any(|n| n == "late"), "{names:?}");
}

#[tokio::test(start_paused = true)]
async fn cached_list_expires_with_the_servers_ttl() {
    let server = server(1_000, Arc::default());
    let client = connect(&server, ClientBuilder::new());
    assert_eq!(client.list_tools().await.expect("list").len(), 5);
    server.remove_tool("echo");
    // Still fresh: the cached list is served.
    assert_eq!(client.list_tools().await.expect("cached").len(), 5);
    tokio::time::advance(Duration::from_millis(1_001)).await;
    assert_eq!(client.list_tools().await.expect("refetched").len(), 4);
}

#[tokio::test]
async fn progress_restarts_the_idle_timeout_and_the_maximum_holds() {
    let server = server(60_000, Arc::default());
    // Ten steps of 20 ms: 200 ms in all, never 80 ms without progress.
    let idle = ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(80)));
    let client = connect(&server, idle.clone());
    let call = || ToolCall::new("steps").with_argument("steps", json!(10));
    let with_progress = RequestOptions::new().with_progress(|_| {});
    let r = client
        .call_tool_with(call().with_options(with_progress.clone()))
        .await
        .expect("progress keeps the call alive");
    assert_eq!(text(&r), "done");
    // Without a progress token the server reports nothing: 80 ms idle.
    let err = client.call_tool_with(call()).await.expect_err("idle");
    assert!(matches!(err, ClientError::Timeout(_)), "{err}");
    // The maximum ends the call however much progress it reports.
    let client = connect(
        &server,
        idle.with_max_request_time(Some(Duration::from_millis(120))),
    );
    let err = client
        .call_tool_with(call().with_options(with_progress.clone()))
        .await
        .expect_err("past the maximum");
    assert!(matches!(err, ClientError::MaxTime(_)), "{err}");
    let err = connect(&server, ClientBuilder::new())
        .call_tool_with(
            call().with_options(with_progress.with_max_time(Duration::from_millis(120))),
        )
        .await
        .expect_err("per-request maximum");
    assert!(matches!(err, ClientError::MaxTime(_)), "{err}");
}
