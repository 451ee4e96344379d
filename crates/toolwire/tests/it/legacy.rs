//! A legacy (initialize-based) client on stdio: the modern discover probe
//! first, then `initialize`, the legacy-only methods, and an MRTR tool
//! served through real server-to-client requests.

use super::duplex::Duplex;
use serde_json::{Value, json};
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
    let mut io = Duplex::serve(server());

    io.send(
        json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}),
    )
    .await;
    let probe = io.recv().await;
    assert_eq!(probe["result"]["supportedVersions"][0], "2026-07-28");

    io.send(
        json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"it","version":"1"}}}),
    )
    .await;
    let init = io.recv().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    io.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;

    io.send(json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}))
        .await;
    assert_eq!(io.recv().await["result"], json!({}));

    io.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"confirm","arguments":{}}})).await;
    let ask = io.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    io.send(json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"confirm":true}}})).await;
    let done = io.recv().await;
    assert_eq!(done["id"], 4);
    assert_eq!(done["result"]["content"][0]["text"], "confirmed");
    assert!(done["result"].get("resultType").is_none(), "{done}");

    // The era is decided by the parsed `_meta`: arguments that merely
    // mention the modern version key leave the call in the legacy session.
    let text = "io.modelcontextprotocol/protocolVersion";
    io.send(json!({"jsonrpc":"2.0","id":40,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":text}}}))
        .await;
    let echoed = io.recv().await;
    assert_eq!(echoed["id"], 40);
    assert_eq!(echoed["result"]["content"][0]["text"], text, "{echoed}");
    assert!(echoed["result"].get("resultType").is_none(), "{echoed}");

    // A modern request on the same process is still served statelessly.
    io.send(
        json!({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}),
    )
    .await;
    assert_eq!(io.recv().await["result"]["resultType"], "complete");

    io.close().await;
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
