//! toolwire: Model Context Protocol (2026-07-28) tool servers from typed Rust
//! functions.
//!
//! The core abstraction is the [`Tool`]: a name, an input type (its JSON
//! Schema comes from `schemars`), an optional output type, and an async
//! handler. Tools are registered into a [`Server`], which serves them over
//! stdio ([`serve_stdio`]) or Streamable HTTP.
//!
//! The protocol revision is stateless: every request carries its own `_meta`
//! (protocol version and client capabilities), so any replica can serve any
//! request.
//!
//! # Quick start
//!
//! ```no_run
//! use toolwire::{Server, ServerConfig, Tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::new(ServerConfig::new("demo", "1.0.0"));
//! server.add_tool(Tool::builder("echo").input::<Echo>().handler(|i: Echo, _| async move { i.text })?)?;
//! toolwire::serve_stdio(server).await?;
//! # Ok(())
//! # }
//! ```

mod context;
mod registry;
mod schema;
mod server;
mod tool;
mod transport;

pub use context::RequestContext;
pub use schema::SchemaError;
pub use server::{ListChanged, Reply, Server, ServerConfig};
pub use tool::{
    IntoToolResult, RegistrationError, Tool, ToolBuilder, ToolError, ToolResult, Typed, Untyped,
    structured,
};
pub use transport::stdio::{MAX_LINE_BYTES, serve_io, serve_stdio};

/// The wire types, re-exported from `toolwire-proto`.
pub use toolwire_proto as proto;
