//! The server: configuration, the tool registry, and the entry points the
//! transports call. Request handling itself lives in `server/dispatch.rs`.

mod dispatch;
mod paging;
mod tools;
#[cfg(test)]
mod tests;

#[allow(unused_imports, reason = "used by the HTTP transport")]
pub(crate) use dispatch::Prepared;
pub use dispatch::Reply;

use crate::registry::{Named, Registry};
use crate::tool::{RegistrationError, Tool};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::broadcast;
use toolwire_proto::meta::PROTOCOL_VERSION;
use toolwire_proto::types::CacheScope;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListChanged {
    /// The tool list.
    Tools,
}

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
    /// Items per `tools/list` page.
    pub page_size: usize,
    /// `ttlMs` on cacheable results.
    pub ttl_ms: u64,
    /// `cacheScope` on cacheable results.
    pub cache_scope: CacheScope,
    /// Protocol versions served, newest first.
    pub supported_versions: Vec<String>,
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
        }
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
    pub(crate) server_info: Value,
    pub(crate) changes: broadcast::Sender<ListChanged>,
    pub(crate) discover: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
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
        let (changes, _) = broadcast::channel(64);
        Self {
            inner: Arc::new(ServerInner {
                config,
                tools: Registry::default(),
                server_info,
                changes,
                discover: std::sync::OnceLock::new(),
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
        if !self.inner.tools.insert(tool) {
            return Err(RegistrationError::Duplicate(name));
        }
        let _ = self.inner.changes.send(ListChanged::Tools);
        Ok(())
    }

    /// Builder-style [`add_tool`](Self::add_tool).
    pub fn with_tool(self, tool: Tool) -> Result<Self, RegistrationError> {
        self.add_tool(tool)?;
        Ok(self)
    }

    /// Removes a tool; `true` if it existed. Publishes [`ListChanged::Tools`].
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.tools.remove(name);
        if removed {
            let _ = self.inner.changes.send(ListChanged::Tools);
        }
        removed
    }

    /// Names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .tools
            .snapshot()
            .items()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// A registered tool by name.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.snapshot().get(name).cloned()
    }

    /// Receives an event for every change to a list.
    pub fn list_changes(&self) -> broadcast::Receiver<ListChanged> {
        self.inner.changes.subscribe()
    }
}
