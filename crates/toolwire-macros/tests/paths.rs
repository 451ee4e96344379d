//! The derive and macro paths through toolwire's re-exports. This crate's
//! only dependencies here are toolwire and tokio, so `serde`, `schemars` and
//! `serde_json` cannot be named directly: if this compiles, a user needs none
//! of them in their own Cargo.toml.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolwire::schemars::JsonSchema;
use toolwire::serde::{Deserialize, Serialize};
use toolwire::serde_json::{Value, json};
use toolwire::{Server, ServerConfig, tool, tools};

/// A point on the plane.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Point {
    /// Across.
    x: i32,
    /// Up.
    y: i32,
}

/// Moves a point.
#[tool(structured)]
async fn shift(
    /// The point to move.
    from: Point,
    /// How far right.
    dx: i32,
) -> Point {
    Point {
        x: from.x + dx,
        y: from.y,
    }
}

/// A move, declared with `#[toolwire::schema]` alone.
#[toolwire::schema]
struct Step {
    /// How far right.
    dx: i32,
}

/// What a step did, for structured output only.
#[toolwire::schema(output)]
struct Moved {
    /// Where it is now.
    x: i32,
}

/// Takes a step from zero.
#[tool(structured)]
async fn step(
    /// The step.
    step: Step,
) -> Moved {
    Moved { x: step.dx }
}

mod nested {
    use toolwire::tool;

    /// Lives in a module, named by path in `tools!`.
    #[tool(crate = "::toolwire")]
    pub(crate) async fn ping() -> &'static str {
        "pong"
    }
}

#[tokio::test]
async fn tools_and_derives_need_only_toolwire() {
    let server = Server::new(ServerConfig::new("paths", "1"));
    for tool in tools![shift, step, nested::ping].expect("valid") {
        server.add_tool(tool).expect("registered");
    }
    let def = server.tool("shift").expect("shift").definition().clone();
    let input = Value::Object(def.input_schema.clone());
    assert_eq!(
        input["properties"]["dx"]["description"], "How far right.",
        "{input}"
    );
    assert_eq!(
        input["properties"]["from"]["description"],
        "The point to move."
    );
    let output = Value::Object(def.output_schema.clone().expect("outputSchema"));
    assert_eq!(
        output["properties"]["x"]["description"], "Across.",
        "{output}"
    );

    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(toolwire::serve_io(server, read, write));
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (id, name, args) in [
        (1, "shift", json!({"from": {"x": 1, "y": 2}, "dx": 10})),
        (2, "ping", json!({})),
    ] {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": name, "arguments": args, "_meta": meta}});
        write
            .write_all(format!("{req}\n").as_bytes())
            .await
            .expect("write");
    }
    let mut replies = Vec::new();
    while replies.len() < 2 {
        let line = lines.next_line().await.expect("read").expect("a reply");
        let v: Value = toolwire::serde_json::from_str(&line).expect("JSON");
        if v.get("id").is_some() {
            replies.push(v);
        }
    }
    replies.sort_by_key(|v| v["id"].as_i64());
    assert_eq!(
        replies[0]["result"]["structuredContent"],
        json!({"x": 11, "y": 2})
    );
    assert_eq!(replies[1]["result"]["content"][0]["text"], "pong");
}

#[tokio::test]
async fn the_schema_attribute_derives_through_toolwire_alone() {
    let tool = step_tool().expect("valid");
    let def = tool.definition();
    let input = Value::Object(def.input_schema.clone());
    assert!(
        input.to_string().contains("How far right."),
        "the field's doc reaches the schema: {input}"
    );
    let output = Value::Object(def.output_schema.clone().expect("structured"));
    assert_eq!(output["properties"]["x"]["type"], "integer", "{output}");
}
