//! A tool author's test of a `#[tool]` server with the in-process test kit
//! (`toolwire::testing`), with `insta` snapshots of what the server sends.

use serde_json::json;
use toolwire::proto::types::LoggingLevel;
use toolwire::testing::{TestClient, redacted};
use toolwire::{ElicitAnswer, InputRequired, RequestContext, Server, ServerConfig, ToolError};
use toolwire::{ToolResult, tool, tools};

/// Greets someone by name.
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
    cx: &RequestContext,
) -> String {
    cx.log(LoggingLevel::Info, Some("greet"), json!({ "name": name }));
    format!("Hello, {name}!")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Quantity {
    /// How many.
    quantity: u32,
}

/// Orders tea, asking how much first.
#[tool]
async fn order(cx: RequestContext) -> Result<ToolResult, ToolError> {
    Ok(match cx.input::<ElicitAnswer<Quantity>>("quantity")? {
        Some(ElicitAnswer::Accept(q)) => ToolResult::text(format!("{} cups", q.quantity)),
        Some(_) => ToolResult::error_text("no order"),
        None => InputRequired::new()
            .elicit::<Quantity>("quantity", "How many cups?")
            .into(),
    })
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("tea", "1.0.0"));
    for tool in tools![greet, order].expect("tools build") {
        server.add_tool(tool).expect("registered");
    }
    server
}

#[tokio::test]
async fn the_tool_list_snapshot() {
    let client = TestClient::new(&server());
    let listed = client.list_tools().await.expect("tools/list");
    insta::assert_json_snapshot!(listed);
}

#[tokio::test]
async fn a_call_and_its_log_snapshot() {
    let client = TestClient::new(&server()).with_log_level(LoggingLevel::Debug);
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("tools/call");
    insta::assert_json_snapshot!(result);
    insta::assert_json_snapshot!(client.take_notifications());
}

#[tokio::test]
async fn the_question_snapshot_and_its_scripted_answer() {
    let client = TestClient::new(&server())
        .answer_elicitation(|_| json!({"action": "accept", "content": {"quantity": 2}}));
    let question = client
        .call_tool_once("order", json!({}))
        .await
        .expect("round 1");
    insta::assert_json_snapshot!(redacted(&question));
    let done = client.call_tool("order", json!({})).await.expect("call");
    assert_eq!(done.content[0].as_text(), Some("2 cups"));
}
