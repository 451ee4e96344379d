//! `tools/list` writes a typed tool's input properties in the order the
//! input type declares its fields (serde_json keeps map keys sorted, so this
//! is done when the page is encoded), to clients of both eras, while the
//! definition and the validation stay as they were.

use super::duplex::Duplex;
use serde_json::{Value, json};
use toolwire::{Server, ServerConfig, Tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Move {
    /// Which piece.
    piece: String,
    to_file: u8,
    #[serde(rename = "rank")]
    to_rank: u8,
    #[serde(default)]
    comment: Option<String>,
}

/// `#[tool]`'s parameters, in the order of the function's.
#[cfg(feature = "macros")]
#[toolwire::tool]
async fn place(zeta: String, alpha: u8) -> String {
    format!("{zeta}{alpha}")
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("order-it", "0.0.0"));
    let moved = Tool::builder("move")
        .input::<Move>()
        .handler(|m: Move, _| async move { format!("{} to {}{}", m.piece, m.to_file, m.to_rank) })
        .expect("move");
    let hand = Tool::builder("hand")
        .input_schema(json!({"type": "object", "properties": {"b": {}, "a": {}, "c": {}}}))
        .property_order(["c", "a"])
        .handler(|_: Value, _| async { "ok" })
        .expect("hand");
    let sorted = Tool::builder("sorted")
        .input_schema(json!({"type": "object", "properties": {"y": {}, "x": {}}}))
        .handler(|_: Value, _| async { "ok" })
        .expect("sorted");
    for t in [moved, hand, sorted] {
        server.add_tool(t).expect("registered");
    }
    #[cfg(feature = "macros")]
    server
        .add_tool(toolwire::tools![place].expect("place").remove(0))
        .expect("registered");
    server
}

/// The property names of tool `name` in `line` (a `tools/list` response as
/// written), in the order they were written.
fn written_order(line: &str, name: &str) -> Vec<String> {
    // A Value would sort them again: walk the text's own order instead.
    #[derive(serde::Deserialize)]
    struct Response {
        result: Page,
    }
    #[derive(serde::Deserialize)]
    struct Page {
        tools: Vec<Box<serde_json::value::RawValue>>,
    }
    let page: Response = serde_json::from_str(line).expect("a tools/list response");
    let tool = page
        .result
        .tools
        .iter()
        .find(|t| serde_json::from_str::<Value>(t.get()).expect("tool")["name"] == name)
        .expect("the tool is listed");
    let schema_at = tool.get().find("\"inputSchema\"").expect("inputSchema");
    let props_at = schema_at
        + tool.get()[schema_at..]
            .find("\"properties\":{")
            .expect("properties");
    let mut names = Vec::new();
    let text = &tool.get()[props_at + "\"properties\":".len()..];
    let mut de = serde_json::Deserializer::from_str(text);
    struct Keys<'a>(&'a mut Vec<String>);
    impl<'de> serde::de::Visitor<'de> for Keys<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
            while let Some(k) = m.next_key::<String>()? {
                m.next_value::<serde::de::IgnoredAny>()?;
                self.0.push(k);
            }
            Ok(())
        }
    }
    serde::Deserializer::deserialize_map(&mut de, Keys(&mut names)).expect("properties");
    names
}

#[tokio::test]
async fn properties_are_listed_in_declaration_order_to_both_eras() {
    let mut io = Duplex::serve(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    // Twice: the second page comes from the cache of encoded pages.
    for id in [1, 2] {
        io.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta}}),
        )
        .await;
        let line = io.recv_line().await;
        assert_eq!(
            written_order(&line, "move"),
            ["piece", "to_file", "rank", "comment"],
            "{line}"
        );
        assert_eq!(written_order(&line, "hand"), ["c", "a", "b"]);
        assert_eq!(written_order(&line, "sorted"), ["x", "y"]);
        #[cfg(feature = "macros")]
        assert_eq!(written_order(&line, "place"), ["zeta", "alpha"]);
    }
    // The definition the server holds and the list's value are unchanged.
    let listed: Value = {
        io.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}}),
        )
        .await;
        io.recv().await
    };
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["required"],
        json!(["piece", "to_file", "rank"])
    );
    // Arguments are still checked and read by name.
    io.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "_meta": meta, "name": "move",
        "arguments": {"rank": 4, "piece": "knight", "to_file": 3}}}),
    )
    .await;
    assert_eq!(
        io.recv().await["result"]["content"][0]["text"],
        "knight to 34"
    );

    let mut legacy = Duplex::serve(server());
    legacy
        .send(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"it","version":"1"}}}),
        )
        .await;
    assert_eq!(
        legacy.recv().await["result"]["protocolVersion"],
        "2025-11-25"
    );
    legacy
        .send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    legacy
        .send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .await;
    let line = legacy.recv_line().await;
    assert!(!line.contains("ttlMs"), "a legacy page: {line}");
    assert_eq!(
        written_order(&line, "move"),
        ["piece", "to_file", "rank", "comment"],
        "{line}"
    );
}
