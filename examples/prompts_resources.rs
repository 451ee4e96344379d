//! Prompts, resources, a resource template and completion, on stdio.
//!
//! Run it with `cargo run -p toolwire-examples --bin prompts_resources`. The
//! client example reads them:
//!
//! ```sh
//! cargo build -p toolwire-examples
//! cargo run -p toolwire-examples --bin client -- --stdio target/debug/prompts_resources
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use toolwire::{
    Completer, HandlerError, Prompt, Resource, ResourceTemplate, Server, ServerConfig, UriVariables,
};

/// A prompt's arguments: `String` fields are required, `Option<String>`
/// fields optional; doc comments become their descriptions.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Review {
    /// The code to review.
    code: String,
    /// Its language.
    language: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reads = Arc::new(AtomicU64::new(0));
    let server = Server::new(ServerConfig::new("prompts-resources-example", "1.0.0"))
        .with_prompt(
            Prompt::builder("code_review")
                .description("Asks the model to review code")
                .arguments::<Review>()
                .complete("language", Completer::from_values(["python", "rust"]))
                // A string is one user message.
                .handler(|r: Review, _cx| async move {
                    let language = r.language.as_deref().unwrap_or("unknown");
                    format!("Review this {language} code:\n{}", r.code)
                })?,
        )?
        // Fixed contents.
        .with_resource(
            Resource::builder("config://app/settings", "settings")
                .mime_type("application/json")
                .text(r#"{"theme":"dark"}"#)?,
        )?
        // Contents computed at each read. `ttl(ZERO)` tells clients not to
        // reuse a read (the default is `ServerConfig::ttl`, 60 s).
        .with_resource(
            Resource::builder("counter://reads", "reads")
                .mime_type("text/plain")
                .ttl(Duration::ZERO)
                .handler(move |_cx| {
                    let n = reads.fetch_add(1, Ordering::Relaxed) + 1;
                    async move { n.to_string() }
                })?,
        )?
        // A family of resources behind an RFC 6570 URI template.
        .with_resource_template(
            ResourceTemplate::builder("users://{id}/profile", "user-profile")
                .mime_type("application/json")
                .complete("id", Completer::from_values(["alice", "bob"]))
                .handler(|vars: UriVariables, _cx| async move {
                    match vars.get("id") {
                        Some(id @ ("alice" | "bob")) => Ok(format!(r#"{{"id":"{id}"}}"#)),
                        // `-32602 "Resource not found"` with `data.uri`.
                        _ => Err(HandlerError::NotFound),
                    }
                })?,
        )?;
    toolwire::serve_stdio(server).await?;
    Ok(())
}
