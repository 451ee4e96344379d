//! The `#[tool]` attribute and `tools!` end to end: every form registered on
//! a real `Server`, listed and called in process through the pipeline
//! (`toolwire::testing`; header parameters over a real HTTP server on
//! 127.0.0.1), with only `toolwire::` paths for serde and schemars.

use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolwire::proto::types::{CallToolResult, ClientCapabilities, ContentBlock};
use toolwire::schemars::JsonSchema;
use toolwire::serde::{Deserialize, Serialize};
use toolwire::testing::{TestClient, TestError};
use toolwire::{
    ElicitAnswer, HandlerOutput, HttpConfig, InputRequired, RegistrationError, RequestContext,
    Server, ServerConfig, Tool, ToolError, ToolResult, tool, tools,
};

/// Echoes the text back.
///
/// Use it to check the connection.
#[tool(title = "Echo", read_only, idempotent, open_world = false)]
async fn echo(
    /// The text to send back.
    text: String,
    /// How many times; once when left out.
    times: Option<u32>,
) -> String {
    text.repeat(times.unwrap_or(1) as usize)
}

/// A fixed greeting: no parameters, a `&'static str`, a renamed tool.
#[tool(name = "say-hello")]
async fn hello() -> &'static str {
    "hello"
}

/// Content blocks as they are.
#[tool]
async fn two_blocks(first: String, second: String) -> Vec<ContentBlock> {
    vec![
        CallToolResult::text(first).content.remove(0),
        CallToolResult::text(second).content.remove(0),
    ]
}

/// A forecast.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Forecast {
    /// Degrees Celsius.
    celsius: i32,
    /// Where.
    city: String,
}

/// The weather, as structured content.
#[tool(structured, read_only)]
async fn weather(
    /// The city.
    city: String,
) -> Forecast {
    Forecast { celsius: 21, city }
}

/// A tool's own error type, converted by `#[tool]` through `Into<ToolError>`.
struct Refused(String);

impl From<Refused> for ToolError {
    fn from(r: Refused) -> Self {
        ToolError::failed(format!("refused: {}", r.0))
    }
}

/// Fails for negative numbers.
#[tool]
async fn sqrt(x: f64) -> Result<String, Refused> {
    if x < 0.0 {
        return Err(Refused(format!("{x} is negative")));
    }
    Ok(format!("{}", x.sqrt()))
}

/// Reads a file (`?` on an `io::Error`), structured.
#[tool(structured)]
async fn file_len(path: String) -> std::io::Result<Forecast> {
    let bytes = std::fs::read(&path)?;
    Ok(Forecast {
        celsius: i32::try_from(bytes.len()).unwrap_or(i32::MAX),
        city: path,
    })
}

/// The order form the `order` tool asks for.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Quantity {
    quantity: u32,
}

/// An order, structured.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Order {
    item: String,
    quantity: u32,
}

/// Asks how many, then orders (the context in the middle, by reference).
#[tool(structured)]
async fn order(
    item: String,
    cx: &RequestContext,
    #[serde(default)] note: String,
) -> Result<HandlerOutput<Order>, ToolError> {
    let _ = note;
    Ok(match cx.input::<ElicitAnswer<Quantity>>("quantity")? {
        Some(ElicitAnswer::Accept(q)) => HandlerOutput::Complete(Order {
            item,
            quantity: q.quantity,
        }),
        Some(_) => return Err(ToolError::failed("no quantity, no order")),
        None => InputRequired::new()
            .elicit::<Quantity>("quantity", "How many?")
            .into(),
    })
}

/// Untyped MRTR with the context first, owned.
#[tool]
async fn confirm(cx: RequestContext, action: String) -> Result<ToolResult, ToolError> {
    Ok(match cx.input::<ElicitAnswer<Quantity>>("times")? {
        Some(ElicitAnswer::Accept(q)) => ToolResult::text(format!("{action} x{}", q.quantity)),
        Some(_) => ToolResult::error_text("declined"),
        None => InputRequired::new()
            .elicit::<Quantity>("times", "How often?")
            .into(),
    })
}

/// Needs sampling; the context last, `&mut`.
#[tool(requires = "sampling", destructive = false)]
async fn sampled(topic: String, cx: &mut RequestContext) -> String {
    format!("{topic} for round {}", cx.input_round())
}

/// Mirrored into headers over HTTP.
#[tool]
async fn regional(
    /// Where to run.
    #[header("Region")]
    region: String,
    #[header("Priority")] priority: i64,
    text: String,
) -> String {
    format!("{region}/{priority}: {text}")
}

/// Parameters named like the function and like a keyword.
#[tool]
async fn kind(kind: u32, r#type: String) -> String {
    format!("{type} x{kind}")
}

/// An invalid header name: `tools!` reports it.
#[tool]
async fn bad_header(#[header("Not A Token")] region: String) -> String {
    region
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("macros-it", "1"));
    let all = tools![
        echo, hello, two_blocks, weather, sqrt, file_len, order, confirm, sampled, regional, kind
    ]
    .expect("every tool builds");
    for tool in all {
        server.add_tool(tool).expect("registered");
    }
    server
}

/// Requests to a server in process (`toolwire::testing`), answered as the
/// JSON-RPC response's `result` or `error` member.
struct Pipe {
    server: Server,
}

impl Pipe {
    fn start(server: Server) -> Self {
        Self { server }
    }

    /// Sends `method` with `params` (and a `_meta` from a client with
    /// `caps`), returning the response.
    async fn request(&mut self, method: &str, params: Value, caps: Value) -> Value {
        let caps: ClientCapabilities = serde_json::from_value(caps).expect("capabilities");
        let client = TestClient::new(&self.server).with_capabilities(caps);
        match client.request(method, params).await {
            Ok(result) => json!({ "result": result }),
            Err(TestError::Rpc(error)) => json!({ "error": error }),
            Err(e) => panic!("no answer: {e}"),
        }
    }

    async fn call(&mut self, name: &str, args: Value) -> Value {
        self.call_with(name, json!({"arguments": args}), json!({}))
            .await
    }

    async fn call_with(&mut self, name: &str, mut params: Value, caps: Value) -> Value {
        params["name"] = json!(name);
        self.request("tools/call", params, caps).await
    }

    async fn listed(&mut self, name: &str) -> Value {
        let r = self.request("tools/list", json!({}), json!({})).await;
        r["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed in {r}"))
            .clone()
    }
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

#[tokio::test]
async fn doc_comments_become_the_description_and_property_descriptions() {
    let mut c = Pipe::start(server());
    let t = c.listed("echo").await;
    assert_eq!(
        t["description"],
        "Echoes the text back.\n\nUse it to check the connection."
    );
    assert_eq!(t["title"], "Echo");
    let props = &t["inputSchema"]["properties"];
    assert_eq!(props["text"]["description"], "The text to send back.");
    assert_eq!(
        props["times"]["description"],
        "How many times; once when left out."
    );
    assert_eq!(t["inputSchema"]["required"], json!(["text"]), "{t}");
    assert_eq!(t["inputSchema"]["type"], "object");
    assert!(t["inputSchema"].get("title").is_none(), "{t}");
    assert_eq!(
        t["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false})
    );
    assert!(t.get("outputSchema").is_none(), "{t}");

    assert_eq!(text(&c.call("echo", json!({"text": "ab"})).await), "ab");
    assert_eq!(
        text(&c.call("echo", json!({"text": "ab", "times": 3})).await),
        "ababab"
    );
    // The generated schema is enforced: a missing required property.
    let r = c.call("echo", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[tokio::test]
async fn names_text_and_content_blocks() {
    let mut c = Pipe::start(server());
    let t = c.listed("say-hello").await;
    assert_eq!(
        t["description"],
        "A fixed greeting: no parameters, a `&'static str`, a renamed tool."
    );
    assert_eq!(t["inputSchema"]["type"], "object");
    assert_eq!(text(&c.call("say-hello", json!({})).await), "hello");
    let r = c.call("kind", json!({"kind": 2, "type": "tea"})).await;
    assert_eq!(text(&r), "tea x2");
    let t = c.listed("kind").await;
    assert_eq!(t["inputSchema"]["required"], json!(["kind", "type"]), "{t}");
    let r = c
        .call("two_blocks", json!({"first": "a", "second": "b"}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "a", "{r}");
    assert_eq!(r["result"]["content"][1]["text"], "b", "{r}");
}

#[tokio::test]
async fn structured_output_has_an_output_schema_and_structured_content() {
    let mut c = Pipe::start(server());
    let t = c.listed("weather").await;
    let out = &t["outputSchema"];
    assert_eq!(out["type"], "object", "{t}");
    assert_eq!(
        out["properties"]["celsius"]["description"],
        "Degrees Celsius."
    );
    assert_eq!(out["required"], json!(["celsius", "city"]));
    assert_eq!(
        t["inputSchema"]["properties"]["city"]["description"],
        "The city."
    );

    let r = c.call("weather", json!({"city": "Oslo"})).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"celsius": 21, "city": "Oslo"})
    );
    let mirrored: Value = serde_json::from_str(text(&r)).expect("JSON text");
    assert_eq!(mirrored, r["result"]["structuredContent"]);
}

#[tokio::test]
async fn an_error_becomes_an_is_error_result() {
    let mut c = Pipe::start(server());
    let r = c.call("sqrt", json!({"x": 16.0})).await;
    assert_eq!(text(&r), "4");
    assert!(r["result"].get("isError").is_none_or(|e| e == false), "{r}");

    let r = c.call("sqrt", json!({"x": -1.0})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), "refused: -1 is negative");

    // `?` on an io::Error in a structured tool: the error's message.
    let missing = std::env::temp_dir().join("toolwire-macros-it-no-such-file");
    let r = c
        .call("file_len", json!({"path": missing.to_string_lossy()}))
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r).contains("No such file"), "{r}");
    assert!(r["result"].get("structuredContent").is_none(), "{r}");

    let t = c.listed("file_len").await;
    assert_eq!(t["outputSchema"]["type"], "object", "{t}");
}

fn input_required(r: &Value) -> (Vec<String>, String) {
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let keys = r["result"]["inputRequests"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let state = r["result"]["requestState"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (keys, state)
}

#[tokio::test]
async fn input_required_round_trips_structured_and_untyped() {
    let mut c = Pipe::start(server());
    let caps = json!({"elicitation": {}});
    let args = json!({"item": "tea"});
    let r = c
        .call_with("order", json!({"arguments": args}), caps.clone())
        .await;
    let (keys, state) = input_required(&r);
    assert_eq!(keys, ["quantity"]);
    let retry = json!({
        "arguments": args,
        "requestState": state,
        "inputResponses": {"quantity": {"action": "accept", "content": {"quantity": 3}}},
    });
    let r = c.call_with("order", retry, caps.clone()).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"item": "tea", "quantity": 3}),
        "{r}"
    );
    let r = c
        .call_with(
            "order",
            json!({"arguments": args, "requestState": state,
                   "inputResponses": {"quantity": {"action": "decline"}}}),
            caps.clone(),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");

    let args = json!({"action": "pour"});
    let r = c
        .call_with("confirm", json!({"arguments": args}), caps.clone())
        .await;
    let (keys, state) = input_required(&r);
    assert_eq!(keys, ["times"]);
    let r = c
        .call_with(
            "confirm",
            json!({"arguments": args, "requestState": state,
                   "inputResponses": {"times": {"action": "accept", "content": {"quantity": 2}}}}),
            caps,
        )
        .await;
    assert_eq!(text(&r), "pour x2");
    // The context is not part of the input; `#[serde(default)]` reached the field.
    let t = c.listed("confirm").await;
    assert_eq!(t["inputSchema"]["required"], json!(["action"]), "{t}");
    let t = c.listed("order").await;
    assert_eq!(t["inputSchema"]["required"], json!(["item"]), "{t}");
    assert!(t["inputSchema"]["properties"].get("cx").is_none(), "{t}");
    assert!(t["inputSchema"]["properties"].get("note").is_some(), "{t}");
}

#[tokio::test]
async fn required_capabilities_are_enforced() {
    let mut c = Pipe::start(server());
    let args = json!({"arguments": {"topic": "tides"}});
    let r = c.call_with("sampled", args.clone(), json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    let r = c.call_with("sampled", args, json!({"sampling": {}})).await;
    assert_eq!(text(&r), "tides for round 1");
    let t = c.listed("sampled").await;
    assert_eq!(t["annotations"], json!({"destructiveHint": false}));
}

#[test]
fn tools_returns_the_first_error() {
    let err = tools![echo, bad_header, hello].expect_err("an invalid header name");
    assert!(
        matches!(err, RegistrationError::Header { ref name, .. } if name == "bad_header"),
        "{err:?}"
    );
    let none = tools![].expect("nothing to build");
    assert!(none.is_empty());
    // The function is still an ordinary async fn.
    let direct = block_on(echo("x".to_owned(), Some(2)));
    assert_eq!(direct, "xx");
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// One POST to `/mcp` over a fresh connection; the status and the JSON body.
async fn post(addr: std::net::SocketAddr, args: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "regional", "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }}
    })
    .to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: regional\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    stream.write_all(body.as_bytes()).await.expect("body");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("a response within 10 s")
        .expect("read");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {raw}"));
    // The JSON object of the body (a plain JSON response or one SSE event).
    let json = match (raw.find("\r\n\r\n{"), raw.find("data: {")) {
        (Some(i), _) => &raw[i + 4..],
        (None, Some(i)) => &raw[i + 6..],
        _ => panic!("no JSON body in {raw}"),
    };
    let end = json.rfind('}').map_or(json.len(), |i| i + 1);
    (
        status,
        serde_json::from_str(&json[..end]).expect("JSON body"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn header_parameters_are_annotated_and_checked_over_http() {
    let server = server();
    let tool = server.tool("regional").expect("registered");
    let props = &tool.definition().input_schema["properties"];
    assert_eq!(props["region"]["x-mcp-header"], "Region");
    assert_eq!(props["region"]["description"], "Where to run.");
    assert_eq!(props["priority"]["x-mcp-header"], "Priority");
    assert!(props["text"].get("x-mcp-header").is_none());
    let mut headers: Vec<String> = tool
        .header_params()
        .iter()
        .map(|h| h.header_name())
        .collect();
    headers.sort();
    assert_eq!(headers, ["Mcp-Param-Priority", "Mcp-Param-Region"]);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(toolwire::serve_http_on(
        server,
        listener,
        HttpConfig::new(),
        async move {
            let _ = stopped.await;
        },
    ));
    let args = json!({"region": "eu-west", "priority": 2, "text": "hi"});
    let (status, v) = post(
        addr,
        args.clone(),
        &[("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Priority", "2")],
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(text(&v), "eu-west/2: hi");
    let (status, v) = post(
        addr,
        args,
        &[("Mcp-Param-Region", "us-east"), ("Mcp-Param-Priority", "2")],
    )
    .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["code"], -32020, "{v}");
    let _ = stop.send(());
    task.await.expect("join").expect("served");
}

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Scale {
    n: i64,
    factor: f64,
}

#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Scaled {
    value: f64,
}

/// Issue 14: an integer-valued float converts to an integer parameter
/// whose schema says `integer`, and a non-finite output is an `isError`
/// result, not a protocol error.
#[tokio::test]
async fn integer_valued_floats_convert_and_non_finite_output_is_a_tool_error() {
    let server = Server::new(ServerConfig::new("numbers", "1"));
    server
        .add_tool(
            Tool::builder("scale")
                .input::<Scale>()
                .output::<Scaled>()
                .handler(|s: Scale, _| async move {
                    #[allow(clippy::cast_precision_loss, reason = "a test value")]
                    Scaled {
                        value: s.n as f64 * s.factor,
                    }
                })
                .expect("valid tool"),
        )
        .expect("add");
    let mut c = Pipe::start(server);
    for n in [json!(42.0), json!(4.2e1), json!(42)] {
        let r = c.call("scale", json!({"n": n, "factor": 0.5})).await;
        assert_eq!(
            r["result"]["structuredContent"],
            json!({"value": 21.0}),
            "{n}: {r}"
        );
    }
    // A fraction is still refused, by the schema.
    let r = c.call("scale", json!({"n": 42.5, "factor": 1.0})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    for factor in [1e308, -1e308] {
        let r = c.call("scale", json!({"n": 1e3, "factor": factor})).await;
        assert!(r.get("error").is_none(), "a protocol error: {r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(text(&r).contains("not finite"), "{r}");
        assert!(r["result"].get("structuredContent").is_none(), "{r}");
    }
}
