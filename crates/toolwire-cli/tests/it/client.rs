//! The client library and the `discover`/`list`/`call` commands against
//! the real `toolwire serve`, over stdio (a child process) and Streamable
//! HTTP (a socket on 127.0.0.1:0), plus a scripted HTTP server for what our
//! own server never sends (tools with invalid `x-mcp-header`).

use serde_json::{Map, Value, json};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use toolwire::proto::types::{
    CallToolResult, ElicitAction, ElicitRequestParams, ElicitResult, SubscriptionFilter,
};
use toolwire::{
    ChangeNotification, Client, ClientBuilder, ClientError, InputError, RequestOptions, ToolCall,
};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(&r.content).expect("content")[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A client that accepts every elicitation with `{confirm: true}`.
fn confirming() -> ClientBuilder {
    ClientBuilder::new().with_elicitation(|_key: String, _p: ElicitRequestParams| async {
        let mut content = Map::new();
        content.insert("confirm".into(), Value::Bool(true));
        Ok::<_, InputError>(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        })
    })
}

fn stdio_client(builder: ClientBuilder) -> Client {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve").stderr(Stdio::inherit());
    builder.spawn(cmd).expect("spawn toolwire serve")
}

/// `toolwire serve --http 127.0.0.1:0`, and its endpoint URL.
struct HttpServer {
    _child: Child,
    url: String,
}

impl HttpServer {
    async fn start() -> Self {
        let (child, url) = super::era::http_server().await;
        Self { _child: child, url }
    }

    fn client(&self, builder: ClientBuilder) -> Client {
        builder.connect_http(&self.url).expect("http client")
    }
}

/// The library checks every transport must pass.
async fn exercise(client: &Client) {
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    for expected in [
        "echo",
        "add",
        "countdown",
        "regional_echo",
        "confirm_action",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let r = client
        .call_tool("echo", json!({"text": "héllo\nworld"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "héllo\nworld");

    // structuredContent is checked against add's outputSchema.
    let r = client
        .call_tool("add", json!({"a": 2, "b": 0.5}))
        .await
        .expect("add");
    assert_eq!(r.structured_content, Some(json!({"sum": 2.5})));

    // Over HTTP the server rejects a call whose Mcp-Param-* headers do not
    // match the body, so success means they were mirrored right.
    for args in [
        json!({"region": "eu-west1", "priority": 3, "text": "a"}),
        json!({"region": " Zürich\t", "text": "b"}),
        json!({"region": "", "text": "c"}),
    ] {
        let r = client
            .call_tool("regional_echo", args.clone())
            .await
            .expect("regional_echo");
        assert!(!r.is_error(), "{args}: {r:?}");
        assert!(
            text(&r).ends_with(args["text"].as_str().expect("text")),
            "{r:?}"
        );
    }

    // MRTR: the InputHandler answers confirm_action's form.
    let r = client
        .call_tool("confirm_action", json!({"action": "deploy"}))
        .await
        .expect("confirm_action");
    assert_eq!(text(&r), "confirmed: deploy");

    // Progress on the request's own stream.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let call = ToolCall::new("countdown")
        .with_arguments(json!({"steps": 3, "interval_ms": 1}))
        .with_options(
            RequestOptions::new().with_progress(move |p| s.lock().expect("s").push(p.progress)),
        );
    let r = client.call_tool_with(call).await.expect("countdown");
    assert_eq!(text(&r), "done after 3 steps");
    assert_eq!(*seen.lock().expect("s"), [1.0, 2.0, 3.0]);

    // Cancellation: the call is dropped mid-way; the connection stays usable.
    let long = client.call_tool("countdown", json!({"steps": 1000, "interval_ms": 10}));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), long)
            .await
            .is_err()
    );
    let r = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .expect("echo after");
    assert_eq!(text(&r), "after");

    // Errors are typed.
    let err = client
        .call_tool("nope", json!({}))
        .await
        .expect_err("unknown tool");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32602), "{err}");
}

/// A listen stream reports the change define_tool makes, and the cached
/// list is refetched.
async fn listen_and_invalidate(client: &Client, tool: &str) {
    let before = client.list_tools().await.expect("list");
    assert!(before.iter().all(|t| t.name != tool));
    let mut sub = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    client
        .call_tool("define_tool", json!({"name": tool, "text": "hi"}))
        .await
        .expect("define_tool");
    let note = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("a notification in time")
        .expect("stream open")
        .expect("ok");
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    let after = client.list_tools().await.expect("list again");
    assert!(
        after.iter().any(|t| t.name == tool),
        "the cache was invalidated"
    );
    let r = client.call_tool(tool, json!({})).await.expect("new tool");
    assert_eq!(text(&r), "hi");
}

#[tokio::test]
async fn library_over_stdio() {
    let client = stdio_client(confirming());
    exercise(&client).await;
    listen_and_invalidate(&client, "made_on_stdio").await;
    let d = client.discover().await.expect("discover");
    assert!(d.supported_versions.iter().any(|v| v == "2026-07-28"));
    client.close().await.expect("close");
}

#[tokio::test]
async fn library_over_http() {
    let server = HttpServer::start().await;
    let client = server.client(confirming());
    exercise(&client).await;
    listen_and_invalidate(&client, "made_on_http").await;
}

#[tokio::test]
async fn without_an_input_handler_the_input_request_comes_back() {
    let client = stdio_client(ClientBuilder::new());
    let err = client
        .call_tool("confirm_action", json!({"action": "x"}))
        .await
        .expect_err("no handler, no elicitation capability");
    // Without the elicitation capability the server refuses (-32021).
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32021), "{err}");
}

// ----- a scripted HTTP server -----

/// Serves one canned JSON-RPC answer per POST, chosen by `script`, on
/// 127.0.0.1:0; records each request body with its headers.
async fn scripted(
    script: impl Fn(&Value) -> Value + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let log: Arc<Mutex<Vec<Value>>> = Arc::default();
    let script = Arc::new(script);
    let seen = Arc::clone(&log);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (script, seen) = (Arc::clone(&script), Arc::clone(&seen));
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut headers = Map::new();
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':') {
                            let k = k.trim().to_ascii_lowercase();
                            if k == "content-length" {
                                length = v.trim().parse().unwrap_or(0);
                            }
                            headers.insert(k, Value::from(v.trim()));
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    let mut req: Value = serde_json::from_slice(&body).expect("JSON body");
                    let answer = script(&req);
                    req["headers"] = Value::Object(headers);
                    seen.lock().expect("log").push(req);
                    let body = answer.to_string();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    let stream = reader.get_mut();
                    if stream.write_all(head.as_bytes()).await.is_err()
                        || stream.write_all(body.as_bytes()).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (url, log)
}

fn invalid_tools_server(req: &Value) -> Value {
    let result = if req["method"] == "tools/list" {
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
            {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}},
            {"name": "invalid_number_header", "inputSchema": {"type": "object", "properties": {
                "score": {"type": "number", "x-mcp-header": "Score"}}}},
            {"name": "invalid_colon_in_name", "inputSchema": {"type": "object", "properties": {
                "v": {"type": "string", "x-mcp-header": "Region:Primary"}}}}
        ]})
    } else {
        json!({"resultType": "complete", "content": [{"type": "text", "text": "called"}]})
    };
    json!({"jsonrpc": "2.0", "id": req["id"], "result": result})
}

#[tokio::test]
async fn invalid_tools_are_rejected_over_http() {
    let (url, log) = scripted(invalid_tools_server).await;
    let client = ClientBuilder::new().connect_http(&url).expect("client");
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["valid_tool"]);
    let err = client
        .call_tool("invalid_number_header", json!({"score": 1.5}))
        .await
        .expect_err("rejected tool");
    assert!(matches!(err, ClientError::InvalidTool { .. }), "{err}");
    client
        .call_tool("valid_tool", json!({"region": "us-west1"}))
        .await
        .expect("valid tool");
    let log = log.lock().expect("log");
    let calls: Vec<&Value> = log.iter().filter(|r| r["method"] == "tools/call").collect();
    assert_eq!(calls.len(), 1);
    let h = &calls[0]["headers"];
    assert_eq!(h["mcp-param-region"], "us-west1");
    assert_eq!(h["mcp-name"], "valid_tool");
    assert_eq!(h["mcp-method"], "tools/call");
    assert_eq!(h["mcp-protocol-version"], "2026-07-28");
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["accept"], "application/json, text/event-stream");
}

// ----- the commands -----

async fn run(args: &[&str]) -> (bool, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(BIN).args(args).stdin(Stdio::null()).output(),
    )
    .await
    .expect("finishes in time")
    .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn serve_cmd() -> String {
    format!("'{BIN}' serve")
}

#[tokio::test]
async fn cli_discover_and_list_over_stdio() {
    let serve = serve_cmd();
    let (ok, out, err) = run(&["discover", "--stdio", &serve]).await;
    assert!(ok, "{err}");
    assert!(out.contains("toolwire-demo"), "{out}");
    assert!(out.contains("2026-07-28"), "{out}");
    assert!(out.contains("tools"), "{out}");

    let (ok, out, err) = run(&["list", "--stdio", &serve]).await;
    assert!(ok, "{err}");
    assert!(out.contains("echo\n"), "{out}");
    assert!(out.contains("text: string (required)"), "{out}");
    assert!(out.contains("regional_echo"), "{out}");

    let (ok, out, err) = run(&["list", "--stdio", &serve, "--json"]).await;
    assert!(ok, "{err}");
    let tools: Value = serde_json::from_str(&out).expect("JSON");
    assert!(
        tools
            .as_array()
            .expect("array")
            .iter()
            .any(|t| t["name"] == "add")
    );
}

/// Where `a` comes before `b` in `out`.
fn before(out: &str, a: &str, b: &str) -> bool {
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s:?} in {out}"));
    at(a) < at(b)
}

#[tokio::test]
async fn cli_list_shows_parameters_in_declaration_order() {
    // `countdown` declares `steps`, then `interval_ms`: not the sorted order.
    let serve = serve_cmd();
    for era in [&[][..], &["--protocol", "legacy"][..]] {
        let mut args = vec!["list", "--stdio", &serve];
        args.extend(era);
        let (ok, out, err) = run(&args).await;
        assert!(ok, "{err}");
        assert!(
            before(&out, "    steps:", "    interval_ms:"),
            "{era:?}: {out}"
        );
    }
    let server = HttpServer::start().await;
    let (ok, out, err) = run(&["list", &server.url]).await;
    assert!(ok, "{err}");
    assert!(before(&out, "    steps:", "    interval_ms:"), "{out}");
    // Through the gateway, which lists the upstream with toolwire's client
    // and serves the tools again: the order survives the hop.
    let dir = super::gateway::scratch("order");
    let config = super::gateway::write_config(&dir, &super::gateway::stdio_upstream("demo"));
    let gateway = format!("'{BIN}' gateway --config '{config}'");
    let (ok, out, err) = run(&["list", "--stdio", &gateway]).await;
    assert!(ok, "{err}");
    assert!(out.contains("demo__countdown"), "{out}");
    assert!(before(&out, "    steps:", "    interval_ms:"), "{out}");
}

#[tokio::test]
async fn cli_call_types_arguments_by_schema() {
    let serve = serve_cmd();
    let (ok, out, err) = run(&["call", "--stdio", &serve, "echo", "text=hi there"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "hi there\n");

    // `a` and `b` are numbers in add's schema, so "2" is sent as 2.
    let (ok, out, err) = run(&["call", "--stdio", &serve, "add", "a=2", "b=0.5", "--json"]).await;
    assert!(ok, "{err}");
    let r: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(r["structuredContent"], json!({"sum": 2.5}));

    let (ok, out, err) = run(&[
        "call",
        "--stdio",
        &serve,
        "echo",
        "--args",
        r#"{"text": "from json"}"#,
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "from json\n");
}

#[tokio::test]
async fn cli_names_what_exists_when_a_tool_or_argument_is_misspelt() {
    let serve = serve_cmd();
    // countdown takes `steps` and `interval_ms`: `step` is a slip, said
    // with the likely name; the call goes (and the server misses `steps`).
    let (ok, out, err) = run(&["call", "--stdio", &serve, "countdown", "step=2"]).await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("toolwire: warning: the tool has no argument \"step\": did you mean steps?"),
        "{err}"
    );
    assert!(
        err.contains("interval_ms"),
        "the arguments are named: {err}"
    );
    // An undeclared name the tool would ignore gets the warning too.
    let (ok, out, err) = run(&["call", "--stdio", &serve, "echo", "text=hi", "txet=x"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "hi\n");
    assert!(err.contains("did you mean text?"), "{err}");
    // --strict refuses it before anything is sent.
    let strict = [
        "call", "--stdio", &serve, "echo", "text=hi", "txet=x", "--strict",
    ];
    let (ok, out, err) = run(&strict).await;
    assert!(!ok && out.is_empty(), "{out}");
    assert!(
        err.contains("toolwire: error: the tool has no argument \"txet\""),
        "{err}"
    );
    // A tool that is not listed: the error names those that are.
    let (ok, _, err) = run(&["call", "--stdio", &serve, "ecoh", "text=hi"]).await;
    assert!(!ok);
    assert!(
        err.contains("did you mean echo?") && err.contains("echo, add, countdown"),
        "{err}"
    );
    // With --json, a failure is JSON on stdout too, with the server's code
    // when the server refused it, and without one when refused here.
    let (ok, out, _) = run(&["call", "--stdio", &serve, "ecoh", "--json"]).await;
    assert!(!ok);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("echo")),
        "{v}"
    );
    let mut strict_json = strict.to_vec();
    strict_json.push("--json");
    let (ok, out, _) = run(&strict_json).await;
    assert!(!ok);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("txet"), "{v}");
    assert!(v["error"].get("code").is_none(), "refused here: {v}");
}

#[tokio::test]
async fn cli_errors_are_clear_and_exit_non_zero() {
    let serve = serve_cmd();
    let (ok, out, err) = run(&["call", "--stdio", &serve, "nope"]).await;
    assert!(!ok);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("nope") && err.contains("-32602"), "{err}");

    // Invalid arguments: the tool reports an error the model could read.
    let (ok, _out, err) = run(&["call", "--stdio", &serve, "add", "a=2", "b=x"]).await;
    assert!(!ok);
    assert!(err.contains("b"), "{err}");

    let (ok, _out, err) = run(&[
        "call",
        "--stdio",
        &serve,
        "countdown",
        "steps=0",
        "interval_ms=0",
    ])
    .await;
    assert!(!ok, "isError results exit non-zero");
    assert!(err.contains("reported an error"), "{err}");

    let (ok, _out, err) = run(&["list"]).await;
    assert!(!ok);
    assert!(err.contains("--stdio"), "{err}");

    let (ok, _out, err) = run(&["list", "ftp://localhost/mcp"]).await;
    assert!(!ok);
    assert!(err.contains("http:// or https://"), "{err}");

    let (ok, _out, err) = run(&["list", "--stdio", "/nonexistent/toolwire-server"]).await;
    assert!(!ok);
    assert!(err.contains("cannot start"), "{err}");
}

#[tokio::test]
async fn cli_answers_elicitation_from_input() {
    let serve = serve_cmd();
    let (ok, out, err) = run(&[
        "call",
        "--stdio",
        &serve,
        "confirm_action",
        "action=deploy",
        "--input",
        r#"confirm={"confirm": true}"#,
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "confirmed: deploy\n");

    let (ok, _out, err) = run(&[
        "call",
        "--stdio",
        &serve,
        "confirm_action",
        "action=deploy",
        "--input",
        "confirm=decline",
    ])
    .await;
    assert!(!ok);
    assert!(err.contains("not confirmed: deploy"), "{err}");

    // Not a terminal and no --input: say how to answer.
    let (ok, _out, err) =
        run(&["call", "--stdio", &serve, "confirm_action", "action=deploy"]).await;
    assert!(!ok);
    assert!(err.contains("--input confirm="), "{err}");
}

#[tokio::test]
async fn cli_over_http() {
    let server = HttpServer::start().await;
    let url = server.url.as_str();
    let (ok, out, err) = run(&[
        "call",
        url,
        "regional_echo",
        "region=eu-west1",
        "priority=3",
        "text=hi",
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "eu-west1: hi\n");
    let (ok, out, err) = run(&["discover", url, "--json"]).await;
    assert!(ok, "{err}");
    let d: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(d["resultType"], "complete");
    let (ok, out, err) = run(&[
        "call",
        url,
        "confirm_action",
        "action=x",
        "--input",
        r#"confirm={"confirm":true}"#,
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "confirmed: x\n");
}

#[tokio::test]
async fn cli_list_warns_about_and_hides_invalid_tools() {
    let (url, _log) = scripted(invalid_tools_server).await;
    let (ok, out, err) = run(&["list", &url]).await;
    assert!(ok, "{err}");
    assert!(out.contains("valid_tool"), "{out}");
    assert!(!out.contains("invalid_"), "{out}");
    assert!(
        err.contains("invalid_number_header") && err.contains("invalid_colon_in_name"),
        "{err}"
    );
}

/// A client declaring the Tasks extension that answers every elicitation
/// with `{publish: true}`, counting them.
fn publishing(asked: Arc<Mutex<u32>>) -> ClientBuilder {
    ClientBuilder::new().with_tasks().with_elicitation(
        move |_key: String, _p: ElicitRequestParams| {
            let asked = Arc::clone(&asked);
            async move {
                *asked.lock().expect("count") += 1;
                let mut content = Map::new();
                content.insert("publish".into(), Value::Bool(true));
                Ok::<_, InputError>(ElicitResult {
                    action: ElicitAction::Accept,
                    content: Some(content),
                })
            }
        },
    )
}

/// Spec: extensions/tasks — `call_tool` follows a task to its end over
/// both transports: polled, its confirmation asked once through the input
/// handler and answered with `tasks/update`, its result returned.
#[tokio::test]
async fn call_tool_follows_a_task_to_its_result_on_both_transports() {
    let http = HttpServer::start().await;
    for transport in ["stdio", "http"] {
        let asked = Arc::new(Mutex::new(0));
        let client = match transport {
            "stdio" => stdio_client(publishing(Arc::clone(&asked))),
            _ => http.client(publishing(Arc::clone(&asked))),
        };
        let r = client
            .call_tool("report", json!({"pages": 2, "publish": true}))
            .await
            .unwrap_or_else(|e| panic!("{transport}: {e}"));
        assert_eq!(
            text(&r),
            "report of 2 pages written and published, as a task",
            "{transport}"
        );
        assert_eq!(*asked.lock().expect("count"), 1, "{transport}: asked once");
        // Without the extension the same tool answers synchronously, the
        // confirmation through MRTR.
        let plain = match transport {
            "stdio" => stdio_client(confirming()),
            _ => http.client(confirming()),
        };
        let r = plain
            .call_tool("report", json!({"pages": 1}))
            .await
            .expect("plain call");
        assert_eq!(text(&r), "report of 1 pages written", "{transport}");
    }
}

/// `toolwire call --task`: the call runs as a task, its confirmation
/// answered from `--input`.
#[tokio::test]
async fn cli_call_with_task_runs_the_tool_as_a_task() {
    let server = HttpServer::start().await;
    let url = server.url.as_str();
    let (ok, out, err) = run(&[
        "call",
        url,
        "report",
        "pages=1",
        "publish=true",
        "--task",
        "--input",
        r#"publish={"publish": true}"#,
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "report of 1 pages written and published, as a task\n");
    let (ok, out, err) = run(&["call", url, "report", "pages=1"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "report of 1 pages written\n");
}

/// `call --task --progress` (stderr not a terminal): a line per change of
/// the task's status and statusMessage, where the tool's progress lands.
#[tokio::test]
async fn cli_call_with_task_shows_the_task_status_as_it_changes() {
    let server = HttpServer::start().await;
    let (ok, out, err) = run(&[
        "call",
        &server.url,
        "report",
        "pages=3",
        "--task",
        "--progress",
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "report of 3 pages written, as a task\n");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("task ")).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("task working: page ")),
        "{err}"
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("task completed")),
        "{err}"
    );
    // A line per change, not per poll.
    let mut deduped = lines.clone();
    deduped.dedup();
    assert_eq!(deduped, lines, "{err}");
}

#[tokio::test]
async fn a_detached_task_is_followed_by_id_from_another_process() {
    let server = HttpServer::start().await;
    let url = server.url.as_str();
    let (ok, out, err) = run(&[
        "call",
        url,
        "report",
        "pages=2",
        "publish=true",
        "--task",
        "--detach",
    ])
    .await;
    assert!(ok, "{err}");
    let id = out.trim().to_owned();
    assert!(
        id.len() == 23 && id.starts_with('t'),
        "a task id, not {out:?}"
    );
    let (ok, out, err) = run(&["task", "get", url, &id, "--json"]).await;
    assert!(ok, "{err}");
    let task: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(task["taskId"], id.as_str(), "{task}");
    // A new process answers the confirmation and waits for the result.
    let (ok, out, err) = run(&[
        "task",
        "wait",
        url,
        &id,
        "--input",
        r#"publish={"publish": true}"#,
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out, "report of 2 pages written and published, as a task\n");
    let (ok, out, err) = run(&["task", "get", url, &id]).await;
    assert!(ok, "{err}");
    assert_eq!(out, format!("{id}: completed\n"));

    // Cancelled by id: the task ends cancelled.
    let (ok, out, err) = run(&["call", url, "report", "pages=100", "--task", "--detach"]).await;
    assert!(ok, "{err}");
    let id = out.trim().to_owned();
    let (ok, out, err) = run(&["task", "cancel", url, &id]).await;
    assert!(ok, "{err}");
    assert_eq!(out, format!("{id}: cancel requested\n"));
    let (ok, _, err) = run(&["task", "wait", url, &id]).await;
    assert!(!ok, "waiting on a cancelled task fails");
    assert!(
        err.contains(&format!("the task {id} was cancelled")) && !err.contains("protocol"),
        "{err}"
    );
    // An unknown id is the server's -32602, said clearly.
    let (ok, _, err) = run(&["task", "get", url, "AAAAAAAAAAAAAAAAAAAAAA"]).await;
    assert!(!ok);
    assert!(err.contains("Task not found"), "{err}");
    // Another server's id may start with `-` (fastmcp's do, one in 64): it
    // reaches the server as an id, before or after an option, and over
    // --stdio too, instead of being refused as an unknown option.
    for args in [
        ["task", "get", url, "-4kZZqPCOwBVGKiztiFkXGN", "--json"],
        ["task", "get", "--json", url, "-4kZZqPCOwBVGKiztiFkXGN"],
    ] {
        let (ok, _, err) = run(&args).await;
        assert!(!ok);
        assert!(err.contains("Task not found"), "{args:?}: {err}");
    }
    let serve = serve_cmd();
    let (ok, _, err) = run(&["task", "cancel", "--stdio", &serve, "-xyz"]).await;
    assert!(!ok);
    assert!(err.contains("Task not found"), "{err}");
}

#[tokio::test]
async fn ctrl_c_while_following_a_task_cancels_it() {
    use tokio::io::AsyncBufReadExt as _;
    let server = HttpServer::start().await;
    let url = server.url.as_str();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["call", url, "report", "pages=100", "--task"])
        .env("RUST_BACKTRACE", "0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire call");
    // Polled once at least: the task runs.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pid = child.id().expect("still running").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("run kill");
    assert!(sent.success());
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut id = None;
    let mut said = Vec::new();
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("stderr in time")
    {
        if let Some(rest) = line.strip_prefix("toolwire: cancelling task ") {
            id = Some(rest.trim().to_owned());
        }
        said.push(line);
    }
    let status = child.wait().await.expect("exits");
    assert!(!status.success(), "an interrupted call fails: {said:?}");
    let id = id.unwrap_or_else(|| panic!("no task cancelled: {said:?}"));
    let cancelled = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (ok, out, err) = run(&["task", "get", url, &id]).await;
            assert!(ok, "{err}");
            if out.contains(": cancelled") {
                return out;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the task ends cancelled");
    assert!(cancelled.starts_with(&id), "{cancelled}");
}

#[tokio::test]
async fn a_server_that_prints_to_stdout_is_told_which_line_and_where_logs_go() {
    let noisy = format!("sh -c 'echo debug: starting up; exec \"{BIN}\" serve'");
    let (ok, out, err) = run(&["list", "--stdio", &noisy]).await;
    assert!(ok, "the stray line is skipped: {err}");
    assert!(out.contains("echo\n"), "{out}");
    assert!(
        err.contains("toolwire: warning: the server wrote a line that is not an MCP message")
            && err.contains("\"debug: starting up\"")
            && err.contains("log to stderr"),
        "{err}"
    );
}

#[tokio::test]
async fn a_probed_legacy_stdio_server_gets_the_hint_to_skip_the_probe() {
    use super::auth::harness::{node, repo_root};
    let script = repo_root().join("tests/interop/legacy-server.mjs");
    let server = format!("'{}' '{}' stdio", node().display(), script.display());
    let (ok, out, err) = run(&["list", "--stdio", &server]).await;
    assert!(ok, "{err}");
    assert!(!out.is_empty());
    assert!(
        err.contains("toolwire: hint:") && err.contains("--protocol legacy"),
        "{err}"
    );
    let (ok, _, err) = run(&["list", "--stdio", &server, "--protocol", "legacy"]).await;
    assert!(ok, "{err}");
    assert!(!err.contains("toolwire: hint:"), "asked for legacy: {err}");
    // A modern server gets no hint.
    let (ok, _, err) = run(&["list", "--stdio", &serve_cmd()]).await;
    assert!(ok && !err.contains("hint"), "{err}");
}
