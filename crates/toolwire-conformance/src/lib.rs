//! The fixtures the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server leg, revision 2026-07-28)
//! expects of a server under test: every tool, resource, prompt and
//! completion of its scenarios, with the exact texts the scenario
//! descriptions give. The legacy leg (`--requirements 2025-11-25`) is served
//! by the same server: its own fixtures are in `legacy.rs`.
//!
//! [`server`] builds them into a [`Server`]; the `conformance-server` binary
//! serves it over Streamable HTTP (`--http 127.0.0.1:PORT`, endpoint `/mcp`)
//! or stdio (`--stdio`). `scripts/conformance` runs the suite against it.

mod legacy;
mod mrtr;
mod prompts;
mod resources;
mod tasks;
mod tools;

use toolwire::{RegistrationError, Server, ServerConfig};

/// The server's name in `serverInfo`.
pub const NAME: &str = "toolwire-conformance";

/// A 1×1 PNG, base64: the image of the image tools, prompts and resources.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A tiny WAV file, base64: the audio of `test_audio_content`.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Every fixture, registered in the order the suite's listing checks expect
/// (`test://static-text` is the first resource: `caching` reads it).
pub fn server() -> Result<Server, RegistrationError> {
    server_with(ServerConfig::new(NAME, env!("CARGO_PKG_VERSION")))
}

/// [`server`] with a custom configuration (for example shared
/// `requestState` keys).
pub fn server_with(config: ServerConfig) -> Result<Server, RegistrationError> {
    let server = Server::new(config);
    tools::register(&server)?;
    mrtr::register(&server)?;
    legacy::register(&server)?;
    resources::register(&server)?;
    prompts::register(&server)?;
    tasks::register(&server)?;
    Ok(server)
}
