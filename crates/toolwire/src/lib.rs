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
//! Every handler (tool, prompt, resource read) finishes with the same
//! shape, a [`HandlerOutput`] (complete, or [`InputRequired`] to ask the
//! client first), and fails with the same [`HandlerError`].
//!
//! With the `client` feature, a `Client` speaks to any MCP server over
//! stdio (a child process or any pipe pair) or Streamable HTTP (`http://`
//! or `https://` over rustls), in either era (the 2026-07-28 stateless
//! revision, or an `initialize`-based session with a legacy server, chosen by
//! a `server/discover` probe): typed requests, multi round-trip requests answered
//! by `InputHandler`s, a cache that honours `ttlMs` and `cacheScope`,
//! `subscriptions/listen` as a `Subscription` stream, and the
//! `x-mcp-header` rules.
//!
//! With the `auth` feature, the Streamable HTTP endpoint is an OAuth 2.1
//! resource server (`AuthConfig`, `HttpConfig::with_auth`): Protected
//! Resource Metadata, bearer tokens checked by a `TokenVerifier` (JWTs
//! against the issuer's keys, or introspection), and per-entry scopes
//! (`ToolBuilder::scopes`).
//!
//! With the `testing` feature, `testing::TestClient` drives a server in
//! process, through the pipeline the transports use, for tool authors'
//! tests: typed calls, scripted MRTR answers, listen streams, both eras.
//!
//! The protocol revision is stateless: every request carries its own `_meta`
//! (protocol version and client capabilities), so any replica can serve any
//! request.
//!
//! The repository's book (`docs/`) walks through a first server (stdio,
//! HTTP, axum) and everything after it, and its `examples/` directory holds runnable programs: stdio and HTTP
//! servers, axum embedding, typed output, a tool that asks the user first,
//! prompts and resources, and a client. Every main type below has an example.
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

pub mod apps;
#[cfg(feature = "auth")]
mod auth;
mod bounds;
mod bus;
#[cfg(feature = "client")]
mod client;
mod completion;
mod context;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod legacy;
mod log_limit;
mod mrtr;
#[cfg(feature = "otel")]
mod otel;
#[cfg(any(feature = "client", feature = "auth"))]
mod outbound;
mod prompt;
mod ratelimit;
mod registry;
mod resource;
mod schema;
mod server;
mod signal;
pub mod task;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;
mod transport;
mod uri_template;
mod watch;

#[cfg(feature = "auth")]
pub use auth::{
    AuthConfig, AuthSetupError, ExchangedToken, IntrospectionVerifier, JwtVerifier, TokenError,
    TokenExchange, TokenVerifier, VerifiedToken, VerifyFuture,
};
pub use bus::{BusEvent, BusStream, InMemoryBus, ListChanged, NotificationBus};
/// OAuth 2.1 for the HTTP client: [`oauth::OAuthProvider`] and its parts.
#[cfg(feature = "oauth")]
pub use client::auth as oauth;
#[cfg(feature = "client")]
pub use client::{
    ChangeNotification, Client, ClientBuilder, ClientError, InputError, InputHandler,
    MAX_PENDING_NOTIFICATIONS, ProtocolEra, ProtocolMode, Relayed, RequestOptions, Started,
    Subscription, TaskHandle, ToolCall,
};
pub use completion::{Completer, CompletionRequest, IntoCompletion, MAX_COMPLETION_VALUES};
pub use context::{CallerToken, RequestContext};
pub use handler::{
    EntryKind, HandlerError, HandlerOutput, IntoHandlerOutput, IntoTypedOutput, PromptProblem,
    RegistrationError, ResourceProblem, ToolError,
};
pub use legacy::LEGACY_PROTOCOL_VERSIONS;
pub use mrtr::{
    ElicitAnswer, InputRequired, STATE_KEY_LEN, STATE_KEYS_ENV, StateKeyError, StateKeys,
};
/// Plain outbound HTTP(S), for requests beside MCP (a gateway's REST upstreams).
#[cfg(feature = "client")]
pub use outbound::{OutboundError, OutboundHttp};
pub use prompt::{Prompt, PromptArguments, PromptBuilder, PromptResult};
pub use ratelimit::{RateLimit, RateLimitParseError};
pub use resource::{
    Resource, ResourceBuilder, ResourceResult, ResourceTemplate, ResourceTemplateBuilder,
    UriVariables,
};
pub use schema::SchemaError;
pub use server::middleware;
pub use server::{Defined, Server, ServerConfig, list_fingerprint};
pub use signal::shutdown_signal;
pub use tool::{Forwarded, Tool, ToolBuilder, ToolResult, Typed, Untyped, structured};
#[cfg(feature = "http")]
pub use transport::http::{
    HttpBody, HttpConfig, HttpResponseFuture, HttpService, serve_http, serve_http_on,
};
#[cfg(feature = "tls")]
pub use transport::http::{TlsConfig, TlsError};
pub use transport::stdio::{
    MAX_LINE_BYTES, MAX_QUEUED_OUTPUT_BYTES, StdioConfig, serve_io, serve_io_with, serve_stdio,
    serve_stdio_with,
};
pub use uri_template::{UriTemplate, UriTemplateError};

/// The wire types, re-exported from `toolwire-proto`.
pub use toolwire_proto as proto;

/// `#[tool]`: an `async fn` with typed parameters becomes a [`Tool`];
/// `tools![a, b]`: several at once; and `#[schema]`: the serde and
/// schemars derives a tool's own types need, through toolwire (feature
/// `macros`, on by default).
#[cfg(feature = "macros")]
pub use toolwire_macros::{schema, tool, tools};

// The crates tool code derives with, so a user needs no `serde`, `schemars`
// or `serde_json` of their own: `#[toolwire::schema]` derives through them
// (or, by hand, `#[derive(toolwire::serde::Deserialize,
// toolwire::schemars::JsonSchema)]` with `#[serde(crate =
// "toolwire::serde")]` and `#[schemars(crate = "toolwire::schemars")]`).
#[doc(no_inline)]
pub use schemars;
#[doc(no_inline)]
pub use serde;
#[doc(no_inline)]
pub use serde_json;
