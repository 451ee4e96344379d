//! The engine-independent half of a networked toolwire notification bus.
//!
//! toolwire replicas behind a load balancer share two things at run time:
//! the change notifications their `subscriptions/listen` streams carry, and
//! the tools defined while they run. This crate does both over any message
//! engine that offers a broadcast channel plus a small key-value store, a
//! [`Backend`]; `toolwire-redis` and `toolwire-nats` are the two that ship.
//!
//! - [`Relay`] is the [`NotificationBus`](toolwire::NotificationBus): every
//!   [`BusEvent`](toolwire::BusEvent) goes to this replica's listeners at
//!   once and, as an [`Envelope`] tagged with the publishing replica, to
//!   every other replica. Publishing never waits: events go through a
//!   bounded queue to a background task, and when that queue is full the
//!   event is dropped and a [`Body::Resync`] follows instead.
//! - [`SharedTools`] keeps a set of runtime-defined tools identical on every
//!   replica: definitions live in the engine's store, and each change is
//!   announced on the bus so the others apply it before they pass the
//!   `list_changed` on.
//!
//! # Delivery guarantee
//!
//! At-least-once for "something changed", never silently lost across a bus
//! outage. An event can be lost in transit only while a replica is cut off
//! from the engine or when its publish queue overflows; in both cases every
//! listener concerned is told that every list it subscribed to changed
//! (a `list_changed` is only a prompt to list again), and [`SharedTools`]
//! reloads its definitions from the store. A listener may hear of one change
//! more than once. `resources/updated` events lost in a gap are not
//! replayed: the resync covers lists, not individual resources.
//!
//! # Example
//!
//! ```no_run
//! # async fn run(backend: std::sync::Arc<dyn toolwire_replica::Backend>) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolwire::{Server, ServerConfig, Tool};
//! use toolwire_replica::{Relay, SharedTools};
//!
//! // `backend` comes from toolwire_redis::RedisBackend::connect(…) or
//! // toolwire_nats::NatsBackend::connect(…).
//! let relay = Arc::new(Relay::start(backend));
//! let server = Server::new(ServerConfig::new("svc", "1.0").with_bus(relay.clone()));
//! // How a stored definition becomes a tool, on every replica.
//! let factory: toolwire_replica::ToolFactory = Arc::new(|name, definition| {
//!     let text = definition["text"].as_str().unwrap_or_default().to_owned();
//!     Tool::builder(name)
//!         .input_schema(serde_json::json!({"type": "object"}))
//!         .handler(move |_: serde_json::Value, _| {
//!             let text = text.clone();
//!             async move { text }
//!         })
//!         .map_err(|e| e.to_string())
//! });
//! let tools = SharedTools::attach(&relay, server.clone(), factory, 32).await?;
//! tools.define("greet", serde_json::json!({"text": "hello"})).await?;
//! # Ok(()) }
//! ```

mod backend;
mod envelope;
mod relay;
mod shared;
mod warn;

pub use backend::{Backend, Backoff, BoxFuture, BusError, Definitions, Incoming};
pub use envelope::{Body, Envelope};
pub use relay::{MAX_MESSAGE_BYTES, Relay};
pub use shared::{MAX_DEFINITION_BYTES, SharedError, SharedTools, ToolFactory};
pub use warn::Warner;
