//! toolwire-gateway: one Model Context Protocol endpoint in front of many
//! MCP servers.
//!
//! The core abstraction is the [`Gateway`]: a `toolwire` [`Server`](toolwire::Server)
//! whose tools and prompts are the merged lists of its upstreams, each name
//! namespaced as `<prefix><separator><name>` (`demo__echo`). Upstreams are
//! stdio commands or HTTP(S) URLs in either protocol era (through
//! toolwire's dual-era client), or REST APIs described by an OpenAPI
//! document, each operation a tool; the gateway itself is served like any
//! toolwire server, over stdio or Streamable HTTP, and keeps no state
//! between requests: a multi round-trip request's state travels sealed in
//! its `requestState`, so any replica sharing the keyring continues it.
//!
//! A [`GatewayConfig`] comes from TOML ([`GatewayConfig::from_file`]);
//! [`check`] reports what model providers' function-calling dialects would
//! reject in the merged list. The `toolwire gateway` command runs both.
//!
//! # Quick start
//!
//! ```no_run
//! use toolwire::ServerConfig;
//! use toolwire_gateway::{Gateway, GatewayConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = GatewayConfig::from_file("gateway.toml")?;
//! let gateway = Gateway::start(config, ServerConfig::new("gateway", "1.0.0")).await?;
//! toolwire::serve_stdio(gateway.server().clone()).await?;
//! # Ok(())
//! # }
//! ```

mod check;
mod config;
mod exchange;
mod gateway;
mod names;
mod openapi;
mod proxy;
mod upstream;

pub use check::{Dialect, DialectIssue, ToolReport, check, estimate_tokens};
pub use config::{
    DEFAULT_SEPARATOR, DEFAULT_START_WAIT, DEFAULT_UPSTREAM_TIMEOUT, GatewayConfig, Namespace,
};
pub use gateway::{Gateway, HEALTH_URI};
pub use names::{NameProblem, PROVIDER_NAME_LIMIT};
pub use upstream::{UpstreamHealth, UpstreamState};

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The configuration is unreadable or wrong; the message names the line.
    #[error("{origin}{}{message}", if origin.is_empty() { "" } else { ": " })]
    Config {
        /// The file, if read from one.
        origin: String,
        /// What is wrong, and where.
        message: String,
    },
    /// With `namespace = "never"`, two upstreams offer the same name.
    #[error(
        "{name:?} is offered by both upstreams {first:?} and {second:?}; with namespace = \"never\" names must be unique. Fix: namespace = \"always\" (the default), or rename one with [upstreams.{second}.tools.{name:?}] name = \"...\""
    )]
    Collision {
        /// The name.
        name: String,
        /// The first upstream offering it.
        first: String,
        /// The second.
        second: String,
    },
}
