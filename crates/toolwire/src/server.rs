//! The server: configuration, the tool registry, and the entry points the
//! transports call. A transport decodes a request and decides its era at
//! its boundary (`server/accept.rs`), hands the prepared request to the one
//! `match` over the method (`server/dispatch.rs`), and gets a typed
//! `Outcome` back (`server/outcome.rs`). `subscriptions/listen` streams live
//! in `server/listen.rs`.

mod accept;
mod completion;
mod dispatch;
mod listen;
mod outcome;
mod paging;
mod prompts;
mod resources;
#[cfg(test)]
mod tests;
mod tools;

pub(crate) use accept::{Accepted, Params, Prepared};
pub(crate) use dispatch::{Job, Step};
pub(crate) use listen::{Subscription, SubscriptionFrame};
pub(crate) use outcome::{Era, Outcome, Reply, Shape};

use crate::bus::{BusEvent, InMemoryBus, ListChanged, NotificationBus};
use crate::mrtr::StateKeys;
use crate::prompt::Prompt;
use crate::registry::{Named, Registry};
use crate::resource::{Resource, ResourceTemplate};
use crate::tool::{RegistrationError, Tool};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::PROTOCOL_VERSION;
use toolwire_proto::types::CacheScope;

/// Server settings. Build with [`ServerConfig::new`] and the `with_*` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Natural-language guidance returned by `server/discover`.
    pub instructions: Option<String>,
    /// Items per list page (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`).
    pub page_size: usize,
    /// `ttlMs` on cacheable results.
    pub ttl_ms: u64,
    /// `cacheScope` on cacheable results.
    pub cache_scope: CacheScope,
    /// Protocol versions served, newest first.
    pub supported_versions: Vec<String>,
    /// The keys that seal `requestState`. `None` uses a random key made once
    /// per process, so state only opens in the process that sealed it.
    pub state_keys: Option<StateKeys>,
    /// How long a sealed `requestState` stays valid.
    pub state_ttl: Duration,
    /// How many `subscriptions/listen` streams may be open at once.
    pub max_listeners: usize,
    /// Where list changes are published and listen streams subscribe.
    /// `None` gives each server its own [`InMemoryBus`].
    pub bus: Option<Arc<dyn NotificationBus>>,
    /// Legacy sessions: how long a server-to-client request (the MRTR shim's
    /// elicitation, sampling or roots request) waits for the client's answer.
    pub legacy_input_timeout: Duration,
    /// Legacy sessions: how many `input_required` rounds the MRTR shim runs
    /// for one request before giving up with `-32603`.
    pub legacy_max_rounds: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self::new("toolwire", env!("CARGO_PKG_VERSION"))
    }
}

impl ServerConfig {
    /// A configuration with the given identity and default settings.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            instructions: None,
            page_size: 100,
            ttl_ms: 60_000,
            cache_scope: CacheScope::Public,
            supported_versions: vec![PROTOCOL_VERSION.to_owned()],
            state_keys: None,
            state_ttl: Duration::from_secs(600),
            max_listeners: 1024,
            bus: None,
            legacy_input_timeout: Duration::from_secs(300),
            legacy_max_rounds: 8,
        }
    }

    /// Sets how long a server-to-client request of a legacy session waits
    /// for the client's answer (default 5 minutes).
    #[must_use]
    pub fn with_legacy_input_timeout(mut self, timeout: Duration) -> Self {
        self.legacy_input_timeout = timeout;
        self
    }

    /// Sets how many `input_required` rounds the legacy MRTR shim runs for
    /// one request (default 8, at least 1).
    #[must_use]
    pub fn with_legacy_max_rounds(mut self, rounds: u32) -> Self {
        self.legacy_max_rounds = rounds.max(1);
        self
    }

    /// Sets the keyring that seals `requestState`: the first key seals,
    /// every key opens. Replicas that share it open each other's state.
    #[must_use]
    pub fn with_state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Sets how long a sealed `requestState` stays valid (default 10 minutes).
    #[must_use]
    pub fn with_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Sets how many `subscriptions/listen` streams may be open at once
    /// (default 1024). Beyond it a listen request gets an error.
    #[must_use]
    pub fn with_max_listeners(mut self, max: usize) -> Self {
        self.max_listeners = max;
        self
    }

    /// Sets the notification bus, for example one shared by every replica.
    #[must_use]
    pub fn with_bus(mut self, bus: Arc<dyn NotificationBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Sets the instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the list page size (at least 1).
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Sets `ttlMs` for cacheable results.
    #[must_use]
    pub fn with_ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// Sets `cacheScope` for cacheable results.
    #[must_use]
    pub fn with_cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = scope;
        self
    }
}

impl Named for Tool {
    fn name(&self) -> &str {
        self.name()
    }
}

/// A tool server. Cheap to clone; clones share state.
///
/// Every transport hands requests to the same pipeline, so behaviour is
/// identical on stdio and HTTP.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    pub(crate) config: ServerConfig,
    pub(crate) tools: Registry<Tool>,
    pub(crate) prompts: Registry<Prompt>,
    /// Fixed resources, by URI.
    pub(crate) resources: Registry<Resource>,
    /// Resource templates, by URI template, tried in order.
    pub(crate) resource_templates: Registry<ResourceTemplate>,
    pub(crate) server_info: Value,
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":…}`, encoded once:
    /// spliced into results that carry no `_meta` of their own.
    pub(crate) result_meta_member: Box<[u8]>,
    pub(crate) bus: Arc<dyn NotificationBus>,
    pub(crate) discover: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    /// Cancelled by [`Server::shutdown`].
    pub(crate) closing: CancellationToken,
    /// Open listen streams.
    pub(crate) listeners: AtomicUsize,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.config.name)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server with no tools yet.
    pub fn new(config: ServerConfig) -> Self {
        let server_info = json!({ "name": config.name, "version": config.version });
        let result_meta_member = outcome::meta_member(&server_info);
        let bus = config
            .bus
            .clone()
            .unwrap_or_else(|| Arc::new(InMemoryBus::default()));
        Self {
            inner: Arc::new(ServerInner {
                config,
                tools: Registry::default(),
                prompts: Registry::default(),
                resources: Registry::default(),
                resource_templates: Registry::default(),
                server_info,
                result_meta_member,
                bus,
                discover: std::sync::OnceLock::new(),
                closing: CancellationToken::new(),
                listeners: AtomicUsize::new(0),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Registers a tool, failing if the name is taken. Publishes
    /// [`ListChanged::Tools`].
    pub fn add_tool(&self, tool: Tool) -> Result<(), RegistrationError> {
        let name = tool.name().to_owned();
        if !self.register(&self.inner.tools, tool, ListChanged::Tools) {
            return Err(RegistrationError::Duplicate(name));
        }
        Ok(())
    }

    /// Inserts `item`, publishing `list` when it was added; `false` if the
    /// name is taken.
    fn register<T: Named + Clone>(
        &self,
        registry: &Registry<T>,
        item: T,
        list: ListChanged,
    ) -> bool {
        let added = registry.insert(item);
        if added {
            self.publish(list.into());
        }
        added
    }

    /// Removes the entry named `name`, publishing `list` when it existed.
    fn unregister<T: Named + Clone>(
        &self,
        registry: &Registry<T>,
        name: &str,
        list: ListChanged,
    ) -> bool {
        let removed = registry.remove(name);
        if removed {
            self.publish(list.into());
        }
        removed
    }

    /// Builder-style [`add_tool`](Self::add_tool).
    pub fn with_tool(self, tool: Tool) -> Result<Self, RegistrationError> {
        self.add_tool(tool)?;
        Ok(self)
    }

    /// Removes a tool; `true` if it existed. Publishes [`ListChanged::Tools`].
    pub fn remove_tool(&self, name: &str) -> bool {
        self.unregister(&self.inner.tools, name, ListChanged::Tools)
    }

    /// Names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.names()
    }

    /// A registered tool by name.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.snapshot().get(name).cloned()
    }

    /// Publishes `event` on the notification bus, to every listen stream
    /// that asked for it (on every replica, with a shared bus). Adding and
    /// removing tools publishes [`ListChanged`] by itself.
    pub fn publish(&self, event: BusEvent) {
        self.inner.bus.publish(event);
    }

    /// The notification bus.
    pub fn notification_bus(&self) -> &Arc<dyn NotificationBus> {
        &self.inner.bus
    }

    /// Starts a graceful shutdown: every open `subscriptions/listen` stream
    /// gets its closing result and ends, new listen requests are refused, and
    /// the stdio transport stops reading and returns once in-flight requests
    /// are done. Idempotent.
    pub fn shutdown(&self) {
        self.inner.closing.cancel();
    }

    /// Whether [`shutdown`](Self::shutdown) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.closing.is_cancelled()
    }
}
