//! A legacy (initialize-based) client: the modern discover probe first,
//! then `initialize`, the legacy-only methods, and an MRTR tool served
//! through real server-to-client requests (in process, through
//! `toolwire::testing`); and on stdio, a cancelled call withdrawing its
//! server-to-client request.

use super::duplex::Duplex;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use toolwire::testing::TestClient;
use toolwire::{
    ElicitAnswer, InputRequired, RequestContext, Server, ServerConfig, Tool, ToolResult,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    confirm: bool,
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("legacy-it", "0.0.0"));
    let tool = Tool::builder("confirm")
        .input_schema(json!({"type":"object"}))
        .handler(|_: Value, cx: RequestContext| async move {
            Ok::<ToolResult, toolwire::ToolError>(
                match cx.input::<ElicitAnswer<Confirm>>("ok")? {
                    Some(ElicitAnswer::Accept(c)) if c.confirm => ToolResult::text("confirmed"),
                    Some(_) => ToolResult::text("declined"),
                    None => InputRequired::new().elicit::<Confirm>("ok", "Sure?").into(),
                },
            )
        })
        .expect("tool");
    server.add_tool(tool).expect("registered");
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Echo {
        text: String,
    }
    let echo = Tool::builder("echo")
        .input::<Echo>()
        .handler(|e: Echo, _| async move { e.text })
        .expect("echo");
    server.add_tool(echo).expect("registered");
    server
}

#[tokio::test]
async fn discover_probe_then_initialize_then_the_elicitation_shim() {
    let server = server();

    let probe = TestClient::new(&server).discover().await.expect("discover");
    assert_eq!(probe.supported_versions[0], "2026-07-28");

    let asked = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&asked);
    let io = TestClient::new(&server)
        .answer_elicitation(move |_| {
            seen.store(true, Ordering::SeqCst);
            json!({"action": "accept", "content": {"confirm": true}})
        })
        .into_legacy("2025-11-25")
        .await
        .expect("initialize");
    let init = io.initialize_result().expect("a legacy session");
    assert_eq!(init["protocolVersion"], "2025-11-25");

    let level = io.request("logging/setLevel", json!({"level": "info"}));
    assert_eq!(level.await.expect("setLevel"), json!({}));

    let done = io
        .request("tools/call", json!({"name": "confirm", "arguments": {}}))
        .await
        .expect("call");
    assert!(asked.load(Ordering::SeqCst), "elicitation/create was sent");
    assert_eq!(done["content"][0]["text"], "confirmed");
    assert!(done.get("resultType").is_none(), "{done}");

    // The era is decided by the parsed `_meta`: arguments that merely
    // mention the modern version key leave the call in the legacy session.
    let text = "io.modelcontextprotocol/protocolVersion";
    let echoed = io
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": text}}),
        )
        .await
        .expect("echo");
    assert_eq!(echoed["content"][0]["text"], text, "{echoed}");
    assert!(echoed.get("resultType").is_none(), "{echoed}");

    // A modern request from the same client is still served statelessly.
    let modern = io
        .request(
            "tools/list",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await
        .expect("tools/list");
    assert_eq!(modern["resultType"], "complete");
}

/// Cancelling a call while the MRTR shim waits for the client's answer
/// withdraws the server's own request: `notifications/cancelled` naming it,
/// and no response to the call. Each round used to race the transport's
/// cancellation against the shim (about half lost the notification and left
/// the waiter behind), so the round is repeated.
#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_withdraws_its_elicitation() {
    let mut io = Duplex::serve(server());

    io.send(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"it","version":"1"}}}),
    )
    .await;
    assert_eq!(io.recv().await["result"]["protocolVersion"], "2025-11-25");
    io.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;

    for round in 1..=16 {
        io.send(json!({"jsonrpc":"2.0","id":round,"method":"tools/call",
            "params":{"name":"confirm","arguments":{}}}))
            .await;
        let ask = io.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        io.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":round,"reason":"never mind"}}))
            .await;
        let withdrawn = io.recv().await;
        assert_eq!(
            withdrawn,
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{
                "requestId":ask["id"],"reason":"the request that needed it was cancelled"}}),
            "round {round}"
        );
    }
    // Nothing else was sent: the next line answers the next request.
    io.send(json!({"jsonrpc":"2.0","id":"last","method":"ping"}))
        .await;
    assert_eq!(
        io.recv().await,
        json!({"jsonrpc":"2.0","id":"last","result":{}})
    );

    io.close().await;
}
