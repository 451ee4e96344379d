//! The smallest complete tool server: two tools on stdio.
//!
//! Run it with `cargo run -p toolwire-examples --bin stdio_server`; it reads
//! newline-delimited JSON-RPC on stdin and answers on stdout. Let the
//! `toolwire` command (or `examples/client.rs`) be the client:
//!
//! ```sh
//! cargo build -p toolwire-examples
//! toolwire call --stdio target/debug/stdio_server echo text=hi
//! toolwire call --stdio target/debug/stdio_server line_count path=Cargo.toml
//! ```

use toolwire::{RequestContext, Server, ServerConfig, Tool, ToolError};

/// The arguments of `echo`. Doc comments become descriptions in the
/// generated input schema.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LineCount {
    /// Path of a text file.
    path: String,
}

/// `?` works on a `std::io::Error`: a file that cannot be read becomes an
/// `isError: true` result whose text is the error's message, which the model
/// reads (and the server keeps serving).
async fn line_count(input: LineCount, _cx: RequestContext) -> Result<String, ToolError> {
    let text = tokio::fs::read_to_string(&input.path).await?;
    Ok(format!("{} lines", text.lines().count()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new(ServerConfig::new("stdio-example", "1.0.0"));
    server.add_tool(
        Tool::builder("echo")
            .description("Sends the text back")
            .input::<Echo>()
            .handler(|input: Echo, _cx| async move { input.text })?,
    )?;
    server.add_tool(
        Tool::builder("line_count")
            .description("Counts the lines of a text file")
            .input::<LineCount>()
            .handler(line_count)?,
    )?;
    // Returns when stdin closes. Nothing else may write to stdout: it
    // carries the protocol (log to stderr instead).
    toolwire::serve_stdio(server).await?;
    Ok(())
}
