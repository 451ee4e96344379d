//! A forwarding tool handler (`ToolBuilder::forwarding_handler`, what the
//! gateway uses): a result handed over still encoded reaches a modern
//! client byte for byte, and a legacy client as an ordinary result, read
//! and re-encoded; one that does not read as a `CallToolResult` is an
//! internal error there.

use super::duplex::Duplex;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolwire::{Forwarded, Server, ServerConfig, Tool};

/// What the forwarded server answered: a member toolwire does not know,
/// its own `serverInfo`, and structured content that the tool's own output
/// schema would refuse (the answering server's business, not ours).
const UPSTREAM: &str = r#"{"resultType":"complete","content":[{"type":"text","text":"7"}],"structuredContent":{"n":"seven"},"x-upstream":[1,2],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"upstream","version":"9"}}}"#;

fn server() -> Server {
    let server = Server::new(ServerConfig::new("forwarding-it", "0.0.0"));
    let forward = |json: &'static str| {
        move |_: Value, _| async move {
            let raw = RawValue::from_string(json.to_owned()).expect("JSON");
            Ok(Forwarded::Json(raw))
        }
    };
    let tools = [
        Tool::builder("relay")
            .input_schema(json!({"type": "object"}))
            .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .forwarding_handler(forward(UPSTREAM)),
        Tool::builder("relay_unchecked")
            .input_schema(json!({"type": "object"}))
            .forwarding_handler(forward(UPSTREAM)),
        Tool::builder("broken")
            .input_schema(json!({"type": "object"}))
            .forwarding_handler(forward(r#"{"resultType":"complete","content":"nope"}"#)),
        Tool::builder("ordinary")
            .input_schema(json!({"type": "object"}))
            .forwarding_handler(|_: Value, _| async {
                Ok(toolwire::ToolResult::text("plain").into())
            }),
    ];
    for tool in tools {
        server.add_tool(tool.expect("tool")).expect("registered");
    }
    server
}

#[tokio::test]
async fn forwarded_results_pass_through_for_modern_clients_and_are_read_for_legacy_ones() {
    let mut io = Duplex::serve(server());
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});

    io.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"relay","arguments":{},"_meta":meta}}))
        .await;
    let line = io.recv_line().await;
    assert_eq!(
        line,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{UPSTREAM}}}"#),
        "byte for byte"
    );
    io.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"ordinary","arguments":{},"_meta":meta}}))
        .await;
    let plain: Value = serde_json::from_str(&io.recv_line().await).expect("json");
    assert_eq!(plain["result"]["content"][0]["text"], "plain");
    assert_eq!(plain["result"]["resultType"], "complete");

    io.send(
        json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"it","version":"1"}}}),
    )
    .await;
    let init: Value = serde_json::from_str(&io.recv_line().await).expect("json");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    io.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;

    // The legacy client gets the result read and checked like any other:
    // the structured content breaks the tool's output schema.
    io.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"relay","arguments":{}}}))
        .await;
    let legacy: Value = serde_json::from_str(&io.recv_line().await).expect("json");
    assert_eq!(legacy["id"], 4);
    assert_eq!(legacy["error"]["code"], -32603, "{legacy}");
    io.send(json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"relay_unchecked","arguments":{}}}))
        .await;
    let read: Value = serde_json::from_str(&io.recv_line().await).expect("json");
    assert_eq!(read["result"]["content"][0]["text"], "7", "{read}");
    assert_eq!(read["result"]["structuredContent"]["n"], "seven", "{read}");
    assert!(read["result"].get("resultType").is_none(), "legacy: {read}");
    io.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"broken","arguments":{}}}))
        .await;
    let broken: Value = serde_json::from_str(&io.recv_line().await).expect("json");
    assert_eq!(broken["error"]["code"], -32603, "{broken}");
    assert!(
        broken["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a CallToolResult")),
        "{broken}"
    );

    io.close().await;
}
