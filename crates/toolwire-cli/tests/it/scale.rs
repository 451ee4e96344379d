//! Scale-out (issue 18): three `toolwire serve --http --bus` replicas behind
//! haproxy with `deploy/haproxy.cfg` (round-robin, no stickiness), one
//! keyring, and a real Redis, then a real NATS (the Debian packages,
//! installed by `scripts/scale-install`), all on loopback ports.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolwire::proto::types::SubscriptionFilter;
use toolwire::{ChangeNotification, Client, Subscription as ClientSubscription};

#[path = "../../../toolwire-replica/tests/it/servers.rs"]
pub(crate) mod servers;

use servers::{BusServer, Engine, free_port, wait_for_port};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");
const KEYRING: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
/// Within how long a change must reach every replica (the bus round trip is
/// milliseconds; this is slack for a loaded CI machine).
const SOON: Duration = Duration::from_secs(10);

/// One `toolwire serve --http 127.0.0.1:0 --bus URL`, with what it logs.
pub(crate) struct Replica {
    pub(crate) child: Child,
    pub(crate) url: String,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Replica {
    async fn start(bus: &str) -> Self {
        Self::start_with(bus, &[]).await
    }

    /// A replica on `bus`, with `extra` arguments.
    pub(crate) async fn start_with(bus: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--allow-define",
                "--bus",
                bus,
            ])
            .args(extra)
            .env("TOOLWIRE_STATE_KEYS", KEYRING)
            .env_remove("TOOLWIRE_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn toolwire serve --bus");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.expect("stderr line") {
                if let Some(i) = line.find("http://") {
                    return line[i..].trim().to_owned();
                }
                eprintln!("replica: {line}");
            }
            panic!("the replica exited before printing its URL")
        })
        .await
        .expect("the replica starts in time");
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().expect("log").push(line);
            }
        });
        let port = url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/mcp")
            .parse()
            .expect("port in the URL");
        Self {
            child,
            url,
            port,
            log,
        }
    }

    fn logged(&self, needle: &str) -> bool {
        self.log
            .lock()
            .expect("log")
            .iter()
            .any(|l| l.contains(needle))
    }
}

/// haproxy with `deploy/haproxy.cfg` in front of `replicas`.
pub(crate) async fn haproxy(replicas: &[Replica]) -> (Child, u16) {
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/haproxy.cfg");
    let port = free_port();
    let mut cmd = Command::new("haproxy");
    cmd.args(["-f", cfg, "-db"])
        .env("TOOLWIRE_LB_ADDR", format!("127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (i, r) in replicas.iter().enumerate() {
        cmd.env(
            format!("TOOLWIRE_R{}", i + 1),
            format!("127.0.0.1:{}", r.port),
        );
    }
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run haproxy ({e}); scripts/scale-install installs it"));
    wait_for_port(port, "haproxy").await;
    (child, port)
}

/// One JSON-RPC request through haproxy: which replica answered, and the
/// response.
pub(crate) async fn post(lb: u16, method: &str, params: Value) -> (String, Value) {
    let (replica, status, json) = post_any(lb, method, params).await;
    assert!(status.is_success(), "{status}: {json}");
    (replica, json)
}

/// [`post`], whatever the HTTP status: the answering replica, the status
/// and the JSON-RPC response.
pub(crate) async fn post_any(
    lb: u16,
    method: &str,
    params: Value,
) -> (String, hyper::StatusCode, Value) {
    let mut params = params;
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    if params["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_null() {
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut req = hyper::Request::post(format!("http://127.0.0.1:{lb}/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        req = req.header("Mcp-Name", name);
    }
    let req = req
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let resp = tokio::time::timeout(SOON, client.request(req))
        .await
        .expect("answered in time")
        .expect("haproxy answers");
    let replica = resp
        .headers()
        .get("x-toolwire-replica")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    // JSON, or an event stream whose last `data:` line is the response.
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .next_back()
        .unwrap_or(&text);
    let json = serde_json::from_str(json.trim())
        .unwrap_or_else(|e| panic!("{status}: not a JSON response ({e}): {text}"));
    (replica, status, json)
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

/// `echo` through haproxy, `n` times: every one answered.
async fn calls_succeed(lb: u16, n: usize, tag: &str) {
    for i in 0..n {
        let word = format!("{tag}-{i}");
        let (_, r) = post(
            lb,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": word}}),
        )
        .await;
        assert_eq!(text(&r), word, "{r}");
    }
}

/// A `tools/list_changed` listener pinned to one replica.
async fn listen(replica: &Replica) -> ClientSubscription {
    let client = Client::connect_http(&replica.url).expect("client");
    client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .expect("listen opens")
}

async fn hears_tools_changed(sub: &mut ClientSubscription, what: &str) {
    let heard = tokio::time::timeout(SOON, async {
        loop {
            match sub.next().await {
                Some(Ok(ChangeNotification::ToolsListChanged)) => return,
                Some(Ok(_)) => {}
                other => panic!("{what}: the stream ended: {other:?}"),
            }
        }
    })
    .await;
    assert!(
        heard.is_ok(),
        "{what}: no tools/list_changed within {SOON:?}"
    );
}

/// Whatever the listener has already received, dropped.
async fn drain(sub: &mut ClientSubscription) {
    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(300), sub.next()).await {}
}

/// `name` is listed on `replica` and answers `answer` there.
async fn served_on(replica: &Replica, name: &str, answer: &str) {
    let client = Client::connect_http(&replica.url).expect("client");
    let tools = client.list_tools().await.expect("tools/list");
    assert!(
        tools.iter().any(|t| t.name == name),
        "{name} is not listed on {}",
        replica.url
    );
    let result = client.call_tool(name, json!({})).await.expect("tools/call");
    let v = serde_json::to_value(&result).expect("result");
    assert_eq!(v["content"][0]["text"], answer, "{v}");
}

/// `define_tool` through haproxy; then every listener hears of it and every
/// replica lists and serves the tool.
async fn define_everywhere(
    lb: u16,
    replicas: &[&Replica],
    listeners: &mut [&mut ClientSubscription],
    name: &str,
) {
    let (_, r) = post(
        lb,
        "tools/call",
        json!({"name": "define_tool", "arguments": {"name": name, "text": format!("{name}!")}}),
    )
    .await;
    assert_eq!(text(&r), format!("defined {name}"), "{r}");
    for (i, sub) in listeners.iter_mut().enumerate() {
        hears_tools_changed(sub, &format!("listener {i} after defining {name}")).await;
    }
    for replica in replicas {
        served_on(replica, name, &format!("{name}!")).await;
    }
}

async fn scenario(engine: Engine) {
    let mut bus = BusServer::start(engine).await;
    let url = bus.url();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&url).await);
    }
    let (_lb_child, lb) = haproxy(&replicas).await;

    // MRTR across replicas: round 1 on one, the retry on another.
    let confirm = |extra: Value| {
        let mut p = json!({
            "name": "confirm_action",
            "arguments": {"action": "ship"},
            "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
        });
        if let (Some(p), Value::Object(extra)) = (p.as_object_mut(), extra) {
            p.extend(extra);
        }
        p
    };
    let (first, r1) = post(lb, "tools/call", confirm(json!({}))).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = r1["result"]["requestState"].as_str().expect("requestState");
    let (second, r2) = post(
        lb,
        "tools/call",
        confirm(
            json!({"requestState": state, "inputResponses": {"confirm": {
            "action": "accept", "content": {"confirm": true}}}}),
        ),
    )
    .await;
    assert_ne!(first, second, "round-robin sent both rounds to one replica");
    assert!(!first.is_empty(), "haproxy names the replica");
    assert_eq!(text(&r2), "confirmed: ship", "{r2}");

    // Listeners on every replica hear a define_tool made through haproxy,
    // and every replica lists and serves the new tool.
    let mut subs = Vec::new();
    for r in &replicas {
        subs.push(listen(r).await);
    }
    let all: Vec<&Replica> = replicas.iter().collect();
    {
        let mut ls: Vec<&mut ClientSubscription> = subs.iter_mut().collect();
        define_everywhere(lb, &all, &mut ls, "greet_one").await;
    }

    // Bus outage: calls go on; the restart resyncs every listener, and a
    // later change reaches every replica.
    bus.stop().await;
    calls_succeed(lb, 6, "outage").await;
    let (_, r) = post(
        lb,
        "tools/call",
        json!({"name": "define_tool", "arguments": {"name": "lost", "text": "x"}}),
    )
    .await;
    assert_eq!(
        r["result"]["isError"], true,
        "no define without the bus: {r}"
    );
    for sub in &mut subs {
        drain(sub).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    bus.restart().await;
    for (i, sub) in subs.iter_mut().enumerate() {
        hears_tools_changed(sub, &format!("listener {i} after the bus came back")).await;
    }
    assert!(
        replicas.iter().all(|r| r.logged("lost the")),
        "every replica logs the lost bus"
    );
    {
        let mut ls: Vec<&mut ClientSubscription> = subs.iter_mut().collect();
        define_everywhere(lb, &all, &mut ls, "greet_two").await;
    }
    // The tool defined before the outage survived it.
    for r in &replicas {
        served_on(r, "greet_one", "greet_one!").await;
    }

    // Replica loss: calls through haproxy go on, and a listener on a
    // survivor still hears changes.
    let mut lost = replicas.pop().expect("three replicas");
    let _ = lost.child.kill().await;
    let _ = subs.pop();
    calls_succeed(lb, 6, "replica-lost").await;
    let survivors: Vec<&Replica> = replicas.iter().collect();
    let mut ls: Vec<&mut ClientSubscription> = subs.iter_mut().collect();
    define_everywhere(lb, &survivors, &mut ls, "greet_three").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_behind_haproxy_share_the_redis_bus() {
    scenario(Engine::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_behind_haproxy_share_the_nats_bus() {
    scenario(Engine::Nats).await;
}

#[tokio::test]
async fn an_unreachable_bus_stops_serve_with_a_clear_error() {
    for url in [
        format!("redis://:secret@127.0.0.1:{}", free_port()),
        format!("nats://127.0.0.1:{}", free_port()),
    ] {
        let out = tokio::time::timeout(
            Duration::from_secs(30),
            Command::new(BIN)
                .args(["serve", "--http", "127.0.0.1:0", "--bus", &url])
                .stdin(Stdio::null())
                .output(),
        )
        .await
        .expect("exits in time")
        .expect("runs");
        assert!(!out.status.success(), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("connecting to the bus at"), "{err}");
        assert!(!err.contains("secret"), "the password is not shown: {err}");
        assert!(!err.contains("serving MCP"), "{err}");
    }
}
