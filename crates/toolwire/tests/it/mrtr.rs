//! Multi round-trip requests end to end through the pipeline, with tools
//! built for the purpose: several rounds with typed state, several input
//! kinds at once and the capability gate (in process, through
//! `toolwire::testing`), and list changes and shutdown seen by open listen
//! streams (through `serve_io` over an in-memory pipe, whose shutdown it
//! also checks).

use super::duplex::Duplex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolwire::proto::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams,
    ElicitRequestUrlParams, InputRequest, ListRootsResult, SamplingContent,
    SamplingMessageContentBlock,
};
use toolwire::testing::{TestClient, TestError};
use toolwire::{
    ElicitAnswer, HandlerOutput, InputRequired, RequestContext, Server, ServerConfig, Tool,
    ToolError, ToolResult,
};

/// A client of `server` declaring `caps`, in process (`toolwire::testing`).
fn client(server: &Server, caps: Value) -> TestClient {
    let caps: ClientCapabilities = serde_json::from_value(caps).expect("capabilities");
    TestClient::new(server).with_capabilities(caps)
}

/// One round of `tools/call name` with `params` merged in, as the JSON-RPC
/// response's `result` or `error` member.
async fn call(c: &TestClient, name: &str, params: Value) -> Value {
    let mut p = json!({"name": name, "arguments": {}});
    if let (Some(obj), Value::Object(extra)) = (p.as_object_mut(), params) {
        obj.extend(extra);
    }
    match c.request("tools/call", p).await {
        Ok(result) => json!({ "result": result }),
        Err(TestError::Rpc(error)) => json!({ "error": error }),
        Err(e) => panic!("no answer: {e}"),
    }
}

fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

fn input_required(r: &Value) -> (Vec<String>, String) {
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let keys = r["result"]["inputRequests"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let state = r["result"]["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    (keys, state)
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

/// What the multi-round tool carries between rounds.
#[derive(Serialize, Deserialize)]
struct Progress {
    name: Option<String>,
}

/// Round 1 asks for a name, round 2 for a colour, round 3 answers.
async fn multi_round(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let round = cx.input_round();
    let state: Option<Progress> = cx.state()?;
    match state.and_then(|s| s.name) {
        None => match cx.input::<ElicitAnswer<Name>>("step1")? {
            Some(ElicitAnswer::Accept(n)) => Ok(InputRequired::new()
                .elicit::<Color>("step2", "Step 2: What is your favorite color?")
                .with_state(&Progress { name: Some(n.name) })
                .into()),
            Some(_) => Ok(ToolResult::error_text("no name given")),
            None => Ok(InputRequired::new()
                .elicit::<Name>("step1", "Step 1: What is your name?")
                .with_state(&Progress { name: None })
                .into()),
        },
        Some(name) => match cx.input::<ElicitAnswer<Color>>("step2")? {
            Some(ElicitAnswer::Accept(c)) => Ok(ToolResult::text(format!(
                "round {round}: Multi-round complete for {name} who likes {}",
                c.color
            ))),
            Some(_) => Ok(ToolResult::error_text("no colour given")),
            None => Ok(InputRequired::new()
                .elicit::<Color>("step2", "Step 2: What is your favorite color?")
                .with_state(&Progress { name: Some(name) })
                .into()),
        },
    }
}

fn question(text: &str) -> CreateMessageRequestParams {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 50
    }))
    .expect("sampling params")
}

/// Asks for a name (form), a completion (sampling) and the roots at once,
/// and for a URL-mode visit only if the client can do it.
async fn gather(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let name = cx.input::<ElicitAnswer<Name>>("user_name")?;
    let greeting = cx.input::<CreateMessageResult>("greeting")?;
    let roots = cx.input::<ListRootsResult>("client_roots")?;
    let visit = cx.input::<ElicitAnswer<()>>("visit")?;
    let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) else {
        return Ok(InputRequired::new()
            .elicit::<Name>("user_name", "What is your name?")
            .sample("greeting", question("Generate a greeting"))
            .list_roots("client_roots")
            .request_if_supported(
                "visit",
                InputRequest::Elicit(
                    ElicitRequestUrlParams::new("Sign in", "https://example.com/sign-in").into(),
                ),
            )
            .into());
    };
    let name = name.accepted().map_or("nobody".to_owned(), |n| n.name);
    let said = match greeting.content {
        SamplingContent::Single(SamplingMessageContentBlock::Text(t)) => t.text,
        _ => "?".to_owned(),
    };
    let visit = match visit {
        Some(v) => format!("{:?}", v.action()),
        None => "not asked".to_owned(),
    };
    Ok(ToolResult::text(format!(
        "{name}; {said}; {} root(s); visit {visit}",
        roots.roots.len()
    )))
}

/// Builds input requests only for what the client declared, like the
/// conformance fixture `test_input_required_result_capabilities`.
async fn optional_inputs(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    if cx.input_responses().is_some() {
        return Ok(ToolResult::text("thanks"));
    }
    Ok(InputRequired::new()
        .request_if_supported(
            "ask",
            InputRequest::Elicit(
                ElicitRequestFormParams::new(
                    "Anything?",
                    serde_json::from_value(json!({"type": "object", "properties": {}}))
                        .expect("schema"),
                )
                .into(),
            ),
        )
        .request_if_supported("sample", question("Say hi"))
        .into())
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("mrtr-it", "1"));
    for tool in [
        Tool::builder("multi_round")
            .description("Three rounds.")
            .input_schema(json!({"type": "object"}))
            .handler(multi_round),
        Tool::builder("gather")
            .description("Several input kinds at once.")
            .input_schema(json!({"type": "object"}))
            .handler(gather),
        Tool::builder("optional_inputs")
            .description("Only what the client can answer.")
            .input_schema(json!({"type": "object"}))
            .handler(optional_inputs),
    ] {
        server
            .add_tool(tool.expect("valid tool"))
            .expect("registered");
    }
    server
}

#[derive(Deserialize, JsonSchema)]
struct Quantity {
    quantity: u32,
}

/// The structured output of `order`.
#[derive(Serialize, JsonSchema)]
struct Order {
    quantity: u32,
    total_cents: u32,
}

/// A tool with a typed output that asks for the quantity first.
async fn order(_: Value, cx: RequestContext) -> Result<HandlerOutput<Order>, ToolError> {
    Ok(match cx.input::<ElicitAnswer<Quantity>>("quantity")? {
        Some(ElicitAnswer::Accept(q)) => HandlerOutput::Complete(Order {
            quantity: q.quantity,
            total_cents: q.quantity * 250,
        }),
        Some(_) => return Err(ToolError::failed("no quantity, no order")),
        None => InputRequired::new()
            .elicit::<Quantity>("quantity", "How many?")
            .into(),
    })
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn several_rounds_carry_typed_state_with_a_new_request_state_each_time() {
    let srv = server();
    let caps = json!({"elicitation": {}});
    let r = call(&client(&srv, caps.clone()), "multi_round", json!({})).await;
    let (keys, s1) = input_required(&r);
    assert_eq!(keys, ["step1"]);
    let r = call(
        &client(&srv, caps.clone()),
        "multi_round",
        json!({"requestState": s1, "inputResponses": {"step1": accept(json!({"name": "Alice"}))}}),
    )
    .await;
    let (keys, s2) = input_required(&r);
    assert_eq!(keys, ["step2"]);
    assert_ne!(s1, s2);
    let r = call(
        &client(&srv, caps.clone()),
        "multi_round",
        json!({"requestState": s2, "inputResponses": {"step2": accept(json!({"color": "blue"}))}}),
    )
    .await;
    assert_eq!(
        text(&r),
        "round 3: Multi-round complete for Alice who likes blue"
    );
    // An old state still opens (no single use), but carries the old round.
    let r = call(
        &client(&srv, caps),
        "multi_round",
        json!({"requestState": s1, "inputResponses": {"step2": accept(json!({"color": "red"}))}}),
    )
    .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["step1"], "state s1 holds no name yet");
}

/// The same three rounds run by the test kit's own MRTR driver, from
/// queued answers.
#[tokio::test]
async fn queued_answers_drive_every_round() {
    let c = client(&server(), json!({"elicitation": {}}));
    c.queue_answer(accept(json!({"name": "Alice"})));
    c.queue_answer(accept(json!({"color": "blue"})));
    let r = c.call_tool("multi_round", json!({})).await.expect("call");
    assert_eq!(
        r.content[0].as_text(),
        Some("round 3: Multi-round complete for Alice who likes blue")
    );
}

#[tokio::test]
async fn several_input_kinds_go_out_at_once_and_come_back_typed() {
    let srv = server();
    let r = call(&client(&srv, all_caps()), "gather", json!({})).await;
    let (keys, state) = input_required(&r);
    assert_eq!(keys, ["client_roots", "greeting", "user_name", "visit"]);
    let req = &r["result"]["inputRequests"];
    assert_eq!(req["user_name"]["method"], "elicitation/create");
    assert_eq!(req["greeting"]["method"], "sampling/createMessage");
    assert_eq!(req["greeting"]["params"]["maxTokens"], 50);
    assert_eq!(req["client_roots"]["method"], "roots/list");
    assert_eq!(req["visit"]["params"]["mode"], "url");
    let answers = json!({
        "user_name": accept(json!({"name": "Alice"})),
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello there"},
                     "model": "test-model", "stopReason": "endTurn"},
        "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
        "visit": {"action": "accept"},
    });
    let r = call(
        &client(&srv, all_caps()),
        "gather",
        json!({"requestState": state, "inputResponses": answers}),
    )
    .await;
    assert_eq!(text(&r), "Alice; Hello there; 1 root(s); visit Accept");

    // Half the answers: asked again, not an error.
    let r = call(
        &client(&srv, all_caps()),
        "gather",
        json!({"requestState": state,
                   "inputResponses": {"user_name": accept(json!({"name": "Bob"}))}}),
    )
    .await;
    input_required(&r);

    // A sampling answer that is not a CreateMessageResult is malformed.
    let r = call(
        &client(&srv, all_caps()),
        "gather",
        json!({"requestState": state, "inputResponses": {"greeting": {"action": "accept"}}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn requests_the_client_cannot_answer_are_never_sent() {
    let srv = server();
    // Form elicitation only: the optional URL visit is dropped.
    let r = call(
        &client(
            &srv,
            json!({"elicitation": {}, "sampling": {}, "roots": {}}),
        ),
        "gather",
        json!({}),
    )
    .await;
    let (keys, state) = input_required(&r);
    assert_eq!(keys, ["client_roots", "greeting", "user_name"]);
    // An answer to the request that was not sent is ignored, like any
    // member of inputResponses the round did not ask for.
    let answers = json!({
        "user_name": accept(json!({"name": "Alice"})),
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"},
                     "model": "m"},
        "client_roots": {"roots": []},
        "visit": {"action": "accept"},
    });
    let r = call(
        &client(
            &srv,
            json!({"elicitation": {}, "sampling": {}, "roots": {}}),
        ),
        "gather",
        json!({"requestState": state, "inputResponses": answers}),
    )
    .await;
    assert_eq!(text(&r), "Alice; Hi; 0 root(s); visit not asked");

    // Required requests the client cannot answer: -32021 naming them all.
    let r = call(&client(&srv, json!({"sampling": {}})), "gather", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}, "roots": {}}),
        "{r}"
    );

    // Optional requests: only the supported one goes out.
    let r = call(
        &client(&srv, json!({"sampling": {}})),
        "optional_inputs",
        json!({}),
    )
    .await;
    let (keys, _) = input_required(&r);
    assert_eq!(keys, ["sample"]);
    assert!(
        !r.to_string().contains("elicitation/create"),
        "no elicitation without the capability: {r}"
    );
    // Nothing the client can answer: the tool cannot proceed.
    let r = call(&client(&srv, json!({})), "optional_inputs", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    let required = r["error"]["data"]["requiredCapabilities"]
        .as_object()
        .expect("object");
    assert!(required.contains_key("elicitation") && required.contains_key("sampling"));
}

#[tokio::test]
async fn registering_a_tool_notifies_only_the_listeners_that_asked_and_shutdown_closes_them() {
    let server = server();
    let mut c = Duplex::serve(server.clone());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (id, filter) in [
        (json!(1), json!({"toolsListChanged": true})),
        (json!("prompts"), json!({"promptsListChanged": true})),
    ] {
        c.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                       "params": {"notifications": filter, "_meta": meta}}),
        )
        .await;
        let ack = c.recv().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    server
        .add_tool(
            Tool::builder("late")
                .description("Registered while listeners are open.")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "late" })
                .expect("valid"),
        )
        .expect("registered");
    let n = c.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert_eq!(
        c.quiet().await,
        None,
        "the prompts-only stream hears nothing"
    );

    server.shutdown();
    let mut closed = Vec::new();
    for _ in 0..2 {
        let m = c.recv().await;
        assert_eq!(m["result"]["resultType"], "complete", "{m}");
        assert_eq!(
            m["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            m["id"]
        );
        closed.push(m["id"].to_string());
    }
    closed.sort();
    assert_eq!(closed, ["\"prompts\"", "1"]);
    let served = c.served().await;
    assert!(served.is_ok(), "{served:?}");
}

#[tokio::test]
async fn a_typed_output_tool_asks_in_round_one_and_answers_structured_in_round_two() {
    let server = Server::new(ServerConfig::new("mrtr-it", "1"));
    server
        .add_tool(
            Tool::builder("order")
                .description("Typed output after one question.")
                .input_schema(json!({"type": "object"}))
                .output::<Order>()
                .handler(order)
                .expect("valid tool"),
        )
        .expect("registered");
    let caps = json!({"elicitation": {}});
    let r = call(&client(&server, caps.clone()), "order", json!({})).await;
    let (keys, state) = input_required(&r);
    assert_eq!(keys, ["quantity"]);
    let r = call(&client(&server, caps), "order", json!({"requestState": state, "inputResponses": {"quantity": accept(json!({"quantity": 3}))}}))
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    let expected = json!({"quantity": 3, "total_cents": 750});
    assert_eq!(r["result"]["structuredContent"], expected);
    let mirrored: Value = serde_json::from_str(text(&r)).expect("the text mirrors the JSON");
    assert_eq!(mirrored, expected);
}
