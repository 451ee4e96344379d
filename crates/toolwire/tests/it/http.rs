//! End-to-end tests of the Streamable HTTP transport on a real socket: the
//! real `serve_http_on` on `127.0.0.1:0`, driven by a raw HTTP/1.1 client.

mod abuse;
#[cfg(feature = "auth")]
mod auth;
mod bounds;
mod client;
mod config;
mod early;
mod headers;
#[cfg(feature = "auth")]
mod introspect;
mod legacy;
mod listen;
mod middleware;
mod ratelimit;
mod resources;
mod status;
mod stream;
#[cfg(feature = "tls")]
mod tls;

use serde::Deserialize;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;
use toolwire::proto::types::LoggingLevel;
use toolwire::{
    ElicitAnswer, HttpConfig, InputRequired, RequestContext, Server, ServerConfig, Tool, ToolError,
    ToolResult,
};

/// A running server and what its tools report.
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    pub(crate) server: Server,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    drops: Mutex<mpsc::UnboundedReceiver<(String, bool)>>,
}

impl TestServer {
    /// Serves the test tools with the default configuration.
    pub(crate) async fn start() -> Self {
        Self::with(HttpConfig::new()).await
    }

    /// Serves the test tools with `config`.
    pub(crate) async fn with(config: HttpConfig) -> Self {
        Self::with_server(ServerConfig::new("toolwire-it", "0.0.0"), config).await
    }

    /// Serves the test tools with both configurations.
    pub(crate) async fn with_server(server_config: ServerConfig, config: HttpConfig) -> Self {
        let (drop_tx, drop_rx) = mpsc::unbounded_channel();
        let server = Server::new(server_config);
        register(&server, drop_tx);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(toolwire::serve_http_on(
            server.clone(),
            listener,
            config,
            async move {
                let _ = stopped.await;
            },
        ));
        Self {
            addr,
            server,
            stop: Some(stop),
            task: Some(task),
            drops: Mutex::new(drop_rx),
        }
    }

    /// Waits for the `hold` call tagged `tag` to be dropped; returns whether
    /// its cancellation token had fired by then.
    pub(crate) async fn dropped(&self, tag: &str, within: Duration) -> bool {
        let mut rx = self.drops.lock().await;
        let found = tokio::time::timeout(within, async {
            while let Some((t, cancelled)) = rx.recv().await {
                if t == tag {
                    return Some(cancelled);
                }
            }
            None
        })
        .await;
        match found {
            Ok(Some(cancelled)) => cancelled,
            _ => panic!("the `hold` call {tag:?} was not dropped within {within:?}"),
        }
    }

    /// Triggers shutdown and waits for `serve_http_on` to return.
    pub(crate) async fn shutdown(&mut self, within: Duration) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let done = tokio::time::timeout(within, task).await;
            let result = done.unwrap_or_else(|_| panic!("serve did not return within {within:?}"));
            result.expect("serve task").expect("serve result");
        }
    }

    /// Asserts that the server still answers a plain call.
    pub(crate) async fn assert_healthy(&self) {
        let resp = client::Req::call("echo", json!({ "text": "still here" }))
            .send(self.addr)
            .await;
        assert_eq!(resp.status, 200, "{}", resp.text());
        assert_eq!(resp.json()["result"]["content"][0]["text"], "still here");
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoInput {
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct CountdownInput {
    steps: u32,
    interval_ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct HoldInput {
    /// Names the call in the drop report.
    tag: String,
    /// Report progress once before waiting.
    #[serde(default)]
    notify: bool,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SleepInput {
    ms: u64,
    /// Report progress once before sleeping.
    #[serde(default)]
    notify: bool,
}

/// The form the `confirm` tool asks for.
#[derive(Deserialize, schemars::JsonSchema)]
struct Confirmation {
    confirm: bool,
}

/// Reports, when dropped, whether the request had been cancelled by then.
struct DropProbe {
    tag: String,
    cx: RequestContext,
    tx: mpsc::UnboundedSender<(String, bool)>,
}

impl Drop for DropProbe {
    fn drop(&mut self) {
        let _ = self.tx.send((self.tag.clone(), self.cx.is_cancelled()));
    }
}

fn register(server: &Server, drops: mpsc::UnboundedSender<(String, bool)>) {
    let tools = [
        Tool::builder("echo")
            .input::<EchoInput>()
            .handler(|i: EchoInput, _| async move { i.text }),
        Tool::builder("countdown")
            .input::<CountdownInput>()
            .handler(|i: CountdownInput, cx: RequestContext| async move {
                for step in 1..=i.steps {
                    tokio::time::sleep(Duration::from_millis(i.interval_ms)).await;
                    cx.report_progress(f64::from(step), Some(f64::from(i.steps)), None);
                    cx.log(
                        LoggingLevel::Debug,
                        Some("countdown"),
                        json!({ "step": step }),
                    );
                }
                format!("done after {} steps", i.steps)
            }),
        Tool::builder("regional_echo")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "priority": { "type": "integer", "x-mcp-header": "Priority" },
                    "urgent": { "type": "boolean", "x-mcp-header": "Urgent" },
                    "target": {
                        "type": "object",
                        "properties": { "tenant": { "type": "string", "x-mcp-header": "Tenant" } }
                    },
                    "text": { "type": "string" }
                },
                "required": ["text"]
            }))
            .handler(|v: Value, _| async move {
                format!(
                    "{}: {}",
                    v["region"].as_str().unwrap_or("-"),
                    v["text"].as_str().unwrap_or("")
                )
            }),
        Tool::builder("hold").input::<HoldInput>().handler({
            move |i: HoldInput, cx: RequestContext| {
                let probe = DropProbe {
                    tag: i.tag,
                    cx: cx.clone(),
                    tx: drops.clone(),
                };
                async move {
                    let _probe = probe;
                    if i.notify {
                        cx.report_progress(1.0, None, Some("holding"));
                    }
                    std::future::pending::<()>().await;
                    "unreachable"
                }
            }
        }),
        // MRTR: asks for a confirmation (a legacy session gets a real
        // elicitation/create), then answers.
        Tool::builder("confirm")
            .input_schema(json!({ "type": "object" }))
            .handler(|_: Value, cx: RequestContext| async move {
                Ok::<ToolResult, ToolError>(match cx.input::<ElicitAnswer<Confirmation>>("ok")? {
                    Some(ElicitAnswer::Accept(c)) if c.confirm => ToolResult::text("confirmed"),
                    Some(_) => ToolResult::error_text("not confirmed"),
                    None => InputRequired::new()
                        .elicit::<Confirmation>("ok", "Sure?")
                        .into(),
                })
            }),
        Tool::builder("explode")
            .input_schema(json!({ "type": "object" }))
            .handler(|_: Value, _| async move {
                if std::hint::black_box(true) {
                    panic!("the explode tool always panics");
                }
                "unreachable"
            }),
        // Declares structured output and returns none: a server bug that
        // each call reveals (and logs).
        Tool::builder("misfit")
            .input_schema(json!({ "type": "object" }))
            .output_schema(json!({
                "type": "object",
                "properties": { "n": { "type": "integer" } },
                "required": ["n"]
            }))
            .handler(|_: Value, _| async move { "no structured content" }),
        Tool::builder("sleep").input::<SleepInput>().handler(
            |i: SleepInput, cx: RequestContext| async move {
                if i.notify {
                    cx.report_progress(1.0, None, None);
                }
                tokio::time::sleep(Duration::from_millis(i.ms)).await;
                "slept"
            },
        ),
    ];
    for tool in tools {
        server
            .add_tool(tool.expect("valid tool"))
            .expect("registered");
    }
}
