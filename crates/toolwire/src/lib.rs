//! toolwire: Model Context Protocol (2026-07-28) tool servers from typed Rust
//! functions.
//!
//! The core abstraction is the [`Tool`]: a name, an input type (its JSON
//! Schema comes from `schemars`), an optional output type, and an async
//! handler. Tools are registered into a [`Server`], which serves them over
//! stdio ([`serve_stdio`]) or Streamable HTTP.
//!
//! Prompts ([`Prompt`]) and resources ([`Resource`], and
//! [`ResourceTemplate`] for families behind an RFC 6570 [`UriTemplate`]) are
//! built and registered the same way; a [`Completer`] suggests values for a
//! prompt argument or a template variable.
//!
//! With the `client` feature, a `Client` speaks to any MCP server over
//! stdio (a child process or any pipe pair) or Streamable HTTP (plain
//! `http://`; no TLS yet): typed requests, multi round-trip requests answered
//! by `InputHandler`s, a cache that honours `ttlMs` and `cacheScope`,
//! `subscriptions/listen` as a `Subscription` stream, and the
//! `x-mcp-header` rules.
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

mod bus;
#[cfg(feature = "client")]
mod client;
mod completion;
mod context;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod legacy;
mod mrtr;
mod prompt;
mod registry;
mod resource;
mod schema;
mod server;
mod tool;
mod transport;
mod uri_template;

pub use bus::{BusEvent, BusStream, InMemoryBus, ListChanged, NotificationBus};
#[cfg(feature = "client")]
pub use client::{
    ChangeNotification, Client, ClientBuilder, ClientError, InputError, InputHandler,
    RequestOptions, Subscription, ToolCall,
};
pub use completion::{Completer, CompletionRequest, IntoCompletion, MAX_COMPLETION_VALUES};
pub use context::RequestContext;
pub use legacy::LEGACY_PROTOCOL_VERSIONS;
pub use mrtr::{
    ElicitAnswer, InputRequired, STATE_KEY_LEN, STATE_KEYS_ENV, StateKeyError, StateKeys,
};
pub use prompt::{
    IntoPromptResult, Prompt, PromptArguments, PromptBuilder, PromptError, PromptProblem,
    PromptResult,
};
pub use resource::{
    IntoResourceResult, Resource, ResourceBuilder, ResourceError, ResourceProblem, ResourceResult,
    ResourceTemplate, ResourceTemplateBuilder, UriVariables,
};
pub use schema::SchemaError;
pub use server::{Reply, Server, ServerConfig};
pub use tool::{
    IntoToolResult, RegistrationError, Tool, ToolBuilder, ToolError, ToolResult, Typed, Untyped,
    structured,
};
#[cfg(feature = "http")]
pub use transport::http::{
    HttpBody, HttpConfig, HttpResponseFuture, HttpService, serve_http, serve_http_on,
};
pub use transport::stdio::{MAX_LINE_BYTES, serve_io, serve_stdio};
pub use uri_template::{UriTemplate, UriTemplateError};

/// The wire types, re-exported from `toolwire-proto`.
pub use toolwire_proto as proto;
