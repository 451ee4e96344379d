//! A client (the `client` feature of `toolwire`): connects to a server over
//! Streamable HTTP or stdio, lists what it offers and tries it.
//!
//! Run it against the HTTP example (started first), or start a stdio server
//! itself:
//!
//! ```sh
//! cargo run -p toolwire-examples --bin client -- http://127.0.0.1:8080/mcp
//! cargo build -p toolwire-examples
//! cargo run -p toolwire-examples --bin client -- --stdio target/debug/mrtr
//! ```
//!
//! It prints one line per finding on stdout: the server, its tools, the
//! results of the tools it knows how to call (`echo`, `add`, `deploy`), its
//! prompts and its resources.

use serde_json::json;
use std::collections::BTreeMap;
use toolwire::proto::meta::SERVER_INFO_KEY;
use toolwire::proto::types::{
    CallToolResult, ElicitAction, ElicitRequestParams, ElicitResult, ResourceContents,
};
use toolwire::{Client, ClientBuilder, InputError};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let builder = ClientBuilder::new()
        // Declares the `elicitation` capability and answers forms: this
        // demo says yes to every form that asks `confirm`.
        .with_elicitation(|_key: String, params: ElicitRequestParams| async move {
            let ElicitRequestParams::Form(form) = params else {
                return Ok::<_, InputError>(ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                });
            };
            eprintln!("the server asks: {} (answering yes)", form.message);
            let content = json!({ "confirm": true });
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: content.as_object().cloned(),
            })
        });
    let client = match args.as_slice() {
        [flag, program, rest @ ..] if flag == "--stdio" => {
            let mut command = tokio::process::Command::new(program);
            command.args(rest);
            builder.spawn(command)?
        }
        [url] => builder.connect_http(url)?,
        _ => {
            eprintln!("usage: client URL | client --stdio PROGRAM [ARGS...]");
            std::process::exit(2);
        }
    };
    tour(&client).await?;
    client.close().await?;
    Ok(())
}

async fn tour(client: &Client) -> Result<(), toolwire::ClientError> {
    let discover = client.discover().await?;
    if let Some(info) = discover.meta.as_ref().and_then(|m| m.get(SERVER_INFO_KEY)) {
        let field = |key: &str| info[key].as_str().unwrap_or("?").to_owned();
        println!("server: {} {}", field("name"), field("version"));
    }

    let tools = client.list_tools().await?;
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or("");
        println!("tool {}: {description}", tool.name);
    }
    let has = |name: &str| tools.iter().any(|t| t.name == name);
    if has("echo") {
        let result = client.call_tool("echo", json!({"text": "hello"})).await?;
        println!("echo: {}", text_of(&result));
    }
    if has("add") {
        let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
        // A tool with an `outputSchema` answers in `structuredContent`
        // (checked against the schema by the client).
        let structured = result.structured_content.unwrap_or_default();
        println!("add: {structured}");
    }
    if has("deploy") {
        // The server asks first; the elicitation handler above answers and
        // the client retries, all inside this one call.
        let result = client
            .call_tool("deploy", json!({"service": "web"}))
            .await?;
        println!("deploy: {}", text_of(&result));
    }

    for prompt in client.list_prompts().await? {
        println!("prompt {}", prompt.name);
        if prompt.name == "code_review" {
            let arguments = BTreeMap::from([
                ("code".to_owned(), "fn main() {}".to_owned()),
                ("language".to_owned(), "rust".to_owned()),
            ]);
            let result = client.get_prompt("code_review", arguments).await?;
            for message in &result.messages {
                let text = message.content.as_text().unwrap_or("");
                println!("prompt code_review: {}", text.replace('\n', " | "));
            }
        }
    }
    for resource in client.list_resources().await? {
        let read = client.read_resource(&resource.uri).await?;
        for contents in &read.contents {
            if let ResourceContents::Text(text) = contents {
                println!("resource {}: {}", text.uri, text.text);
            }
        }
    }
    Ok(())
}

/// The text blocks of a result, joined; failures are marked.
fn text_of(result: &CallToolResult) -> String {
    let text: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
    let text = text.join(" ");
    if result.is_error == Some(true) {
        format!("error: {text}")
    } else {
        text
    }
}
