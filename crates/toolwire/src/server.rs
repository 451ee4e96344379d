//! The server: configuration (`server/config.rs`), the tool registry, and
//! the entry points the transports call. A transport decodes a request and
//! decides its era at its boundary (`server/accept.rs`), hands the prepared
//! request to the one `match` over the method (`server/dispatch.rs`), and
//! gets a typed `Outcome` back (`server/outcome.rs`). `subscriptions/listen`
//! streams live in `server/listen.rs`.

mod accept;
#[cfg(feature = "auth")]
mod authz;
mod completion;
mod config;
mod dispatch;
mod era;
mod listen;
pub mod middleware;
mod notification;
mod outcome;
mod paging;
mod panics;
pub use paging::{Defined, list_fingerprint};
mod prompts;
mod resources;
mod rounds;
mod shape;
mod tasks;
#[cfg(test)]
mod tests;
mod tools;
#[cfg(feature = "otel")]
mod traced;

pub(crate) use accept::{Accepted, InitializeParams, Prepared};
pub use config::ServerConfig;
#[cfg(feature = "http")]
pub(crate) use dispatch::Running;
#[cfg(test)]
pub(crate) use dispatch::Step;
pub(crate) use dispatch::{Dispatch, Job, JobKind};
#[cfg(feature = "http")]
pub(crate) use era::Era;
pub(crate) use era::LegacySession;
pub(crate) use listen::{Subscription, SubscriptionFrame};
pub(crate) use notification::NotificationEffect;
#[cfg(feature = "http")]
pub(crate) use outcome::Retry;
pub(crate) use outcome::{Outcome, Reply, Required, RpcError};
pub(crate) use shape::Shape;

use crate::bus::{BusEvent, InMemoryBus, ListChanged, NotificationBus};
use crate::handler::{EntryKind, RegistrationError};
use crate::prompt::Prompt;
use crate::registry::{Named, Registry};
use crate::resource::{Resource, ResourceTemplate};
use crate::server::middleware::{BoxError, McpRequest, McpResponse, Stack};
use crate::tool::Tool;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::CacheScope;

impl Named for Tool {
    fn name(&self) -> &str {
        self.name()
    }
}

/// A tool server. Cheap to clone; clones share state.
///
/// Every transport hands requests to the same pipeline, so behaviour is
/// identical on stdio and HTTP. Serve it with
/// [`serve_stdio`](crate::serve_stdio), [`serve_http`](crate::serve_http),
/// an [`HttpService`](crate::HttpService) mounted in a router, or
/// [`serve_io`](crate::serve_io) on any pipe pair.
///
/// # Example
///
/// A server with one tool, answering a `tools/call` over an in-memory pipe
/// (a real server would call `toolwire::serve_stdio(server).await`):
///
/// ```
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
/// use toolwire::{Server, ServerConfig, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     /// The text to send back.
///     text: String,
/// }
///
/// #[tokio::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let server = Server::new(ServerConfig::new("demo", "1.0.0")).with_tool(
///         Tool::builder("echo")
///             .input::<Echo>()
///             .handler(|input: Echo, _cx| async move { input.text })?,
///     )?;
///     assert_eq!(server.tool_names(), ["echo"]);
///
///     let (client, end) = tokio::io::duplex(64 * 1024);
///     let (read, write) = tokio::io::split(end);
///     let serving = tokio::spawn(toolwire::serve_io(server, read, write));
///
///     let (client_read, mut client_write) = tokio::io::split(client);
///     let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
///     client_write.write_all(format!("{request}\n").as_bytes()).await?;
///     let mut line = String::new();
///     BufReader::new(client_read).read_line(&mut line).await?;
///     let response: serde_json::Value = serde_json::from_str(&line)?;
///     assert_eq!(response["result"]["content"][0]["text"], "hi");
///
///     client_write.shutdown().await?; // end of input: serve_io returns
///     serving.await??;
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

/// See [`Server::set_unknown_tool_reason`].
pub(crate) type UnknownToolReason = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

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
    /// Set while [`Server::set_list_failure`] holds an error: list
    /// requests read only this flag until then.
    pub(crate) list_failing: AtomicBool,
    /// `ttlMs` of cacheable results, from the config until
    /// [`Server::set_cache_hints`] changes it.
    pub(crate) ttl_ms: AtomicU64,
    /// Whether cacheable results are `private` (else `public`), likewise.
    pub(crate) private: AtomicBool,
    /// Why a tool this server lacks is missing, if it can say
    /// ([`Server::set_unknown_tool_reason`]).
    pub(crate) unknown_tool: std::sync::RwLock<Option<UnknownToolReason>>,
    pub(crate) list_failure: std::sync::RwLock<Option<ErrorObject>>,
    /// The rate limits on invocations; `None` when none is set.
    pub(crate) rate_limits: Option<Box<crate::ratelimit::RateLimits>>,
    /// Set once the stack has a layer: until then a request reads only
    /// this flag for the seam.
    pub(crate) layered: AtomicBool,
    /// The layers around the pipeline: the built-in ones, then those of
    /// [`Server::with_layer`].
    pub(crate) layers: std::sync::RwLock<Layers>,
    /// Tasks (the Tasks extension): the store and this replica's runners.
    pub(crate) tasks: tasks::Tasks,
    /// `server/discover` encoded once with the Tasks extension declared,
    /// served while some tool supports tasks.
    pub(crate) discover_tasks: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
}

/// A layer kept to build the stack again: around the built-in layers,
/// which are always innermost.
type AddLayer = Arc<dyn Fn(Stack) -> Stack + Send + Sync>;

/// The layers of a server, and the stack built from them.
#[derive(Default)]
pub(crate) struct Layers {
    /// The stack, when it has any layer.
    built: Option<Stack>,
    /// [`Server::with_layer`]'s layers, innermost first.
    added: Vec<AddLayer>,
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
        let rate_limits = crate::ratelimit::RateLimits::new(
            config.rate_limit,
            &config.tool_rate_limits,
            config.rate_limit_keys,
        );
        let (ttl_ms, private) = (config.ttl_ms(), config.cache_scope() == CacheScope::Private);
        let tasks = config.tasks.clone().unwrap_or_default();
        let server = Self {
            inner: Arc::new(ServerInner {
                rate_limits,
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
                list_failing: AtomicBool::new(false),
                ttl_ms: AtomicU64::new(ttl_ms),
                private: AtomicBool::new(private),
                unknown_tool: std::sync::RwLock::new(None),
                list_failure: std::sync::RwLock::new(None),
                layered: AtomicBool::new(false),
                layers: std::sync::RwLock::new(Layers::default()),
                tasks: tasks::Tasks::new(tasks),
                discover_tasks: std::sync::OnceLock::new(),
            }),
        };
        server.change_layers(|_| {});
        server
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Adds a [`tower::Layer`] around the pipeline: every request of
    /// every transport and both eras passes through it, between being
    /// prepared (decoded, its era and principal decided) and its outcome.
    /// Each call wraps the layers added before, so the last one added is
    /// the outermost: add an [`AuditLayer`](crate::middleware::AuditLayer)
    /// last to see every refusal. A layer added while serving applies to
    /// the requests that start after it.
    ///
    /// tower's own layers work unchanged; their errors become JSON-RPC
    /// errors (load shedding's overload is a busy refusal, `503` on HTTP).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwire::middleware::{AuditLayer, PerTool, ToolTimeoutLayer};
    /// use toolwire::{Server, ServerConfig};
    ///
    /// let server = Server::new(ServerConfig::new("demo", "1.0.0"))
    ///     .with_layer(ToolTimeoutLayer::new(PerTool::all(Duration::from_secs(30))))
    ///     .with_layer(AuditLayer::new());
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn with_layer<L>(self, layer: L) -> Self
    where
        L: tower::Layer<Stack> + Send + Sync + 'static,
        L::Service:
            tower::Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<McpRequest>>::Future: Send + 'static,
    {
        let add: AddLayer = Arc::new(move |stack: Stack| stack.wrap(&layer));
        self.change_layers(|layers| layers.added.push(add));
        self
    }

    /// Changes the layers and builds the stack again: the rate limit
    /// innermost, then the added layers in order.
    fn change_layers(&self, change: impl FnOnce(&mut Layers)) {
        let Ok(mut layers) = self.inner.layers.write() else {
            return;
        };
        change(&mut layers);
        let mut stack = None;
        let mut wrap = |add: &dyn Fn(Stack) -> Stack| {
            stack = Some(add(stack.take().unwrap_or_else(Stack::pipeline)));
        };
        if self.inner.rate_limits.is_some() {
            wrap(&|s: Stack| s.wrap(&middleware::RateLimitLayer));
        }
        for add in &layers.added {
            wrap(add.as_ref());
        }
        self.inner.layered.store(stack.is_some(), Ordering::Release);
        layers.built = stack;
    }

    /// The layers, when there is any.
    fn layers(&self) -> Option<Stack> {
        if !self.inner.layered.load(Ordering::Acquire) {
            return None;
        }
        self.inner.layers.read().ok()?.built.clone()
    }

    /// Whether a tool named `name` is registered.
    pub(crate) fn has_tool(&self, name: &str) -> bool {
        self.inner.tools.snapshot().get(name).is_some()
    }

    /// Registers a tool, failing if the name is taken. Publishes
    /// [`ListChanged::Tools`].
    ///
    /// A tool with an app interface (`_meta.ui.resourceUri`) needs that
    /// `ui://` resource registered first ([`Resource::app`](crate::Resource::app)).
    pub fn add_tool(&self, tool: Tool) -> Result<(), RegistrationError> {
        let name = tool.name().to_owned();
        self.check_tool_ui(&tool)?;
        if !self.register(&self.inner.tools, tool, ListChanged::Tools) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::Tool,
                name,
            });
        }
        Ok(())
    }

    /// Refuses a tool whose interface names no registered app resource.
    /// Spec (ext-apps): apps.mdx#behavior — the resource must exist on the
    /// server.
    fn check_tool_ui(&self, tool: &Tool) -> Result<(), RegistrationError> {
        let Some(uri) =
            crate::apps::ToolUi::of(tool.definition().meta.as_ref()).and_then(|ui| ui.resource_uri)
        else {
            return Ok(());
        };
        let registered = self
            .inner
            .resources
            .snapshot()
            .get(&uri)
            .map(|r| r.definition().mime_type.as_deref() == Some(crate::apps::APP_MIME_TYPE));
        let problem = match registered {
            Some(true) => return Ok(()),
            Some(false) => "is a resource of another MIME type than text/html;profile=mcp-app",
            None => "is not a registered resource",
        };
        Err(RegistrationError::ToolUi {
            tool: tool.name().to_owned(),
            uri,
            problem,
        })
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

    /// Replaces every tool with `tools`, in their order, at once: requests
    /// see the old set or the new one, never a mix. Publishes
    /// [`ListChanged::Tools`] once. On a duplicate name nothing changes.
    ///
    /// For a server whose tools come from elsewhere (a gateway rebuilding
    /// its merged list); [`add_tool`](Self::add_tool) and
    /// [`remove_tool`](Self::remove_tool) suit everything else.
    pub fn replace_tools(&self, tools: Vec<Tool>) -> Result<(), RegistrationError> {
        self.replace(
            &self.inner.tools,
            tools,
            ListChanged::Tools,
            EntryKind::Tool,
        )
    }

    /// Replaces `registry`'s entries, publishing `list` once.
    fn replace<T: Named + Clone>(
        &self,
        registry: &Registry<T>,
        items: Vec<T>,
        list: ListChanged,
        kind: EntryKind,
    ) -> Result<(), RegistrationError> {
        registry
            .replace(items)
            .map_err(|name| RegistrationError::Duplicate { kind, name })?;
        self.publish(list.into());
        Ok(())
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

    /// [`add_tool`](Self::add_tool) without publishing anything: for a
    /// replica applying a change that another replica made and announced
    /// on the shared bus itself (the `toolwire-replica` crate), so that
    /// listeners hear of it once, not once per replica.
    pub fn add_tool_unannounced(&self, tool: Tool) -> Result<(), RegistrationError> {
        let name = tool.name().to_owned();
        if !self.inner.tools.insert(tool) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::Tool,
                name,
            });
        }
        Ok(())
    }

    /// [`remove_tool`](Self::remove_tool) without publishing anything; see
    /// [`add_tool_unannounced`](Self::add_tool_unannounced).
    pub fn remove_tool_unannounced(&self, name: &str) -> bool {
        self.inner.tools.remove(name)
    }

    /// Names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.names()
    }

    /// The fingerprint of the tool list as served now (see
    /// [`list_fingerprint`]).
    pub fn tools_fingerprint(&self) -> String {
        list_fingerprint(self.inner.tools.snapshot().items())
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

    /// Makes every list request (`tools/list`, `prompts/list`,
    /// `resources/list`, `resources/templates/list`) fail with `error`
    /// until called again with `None`. For a server that knows its lists
    /// are incomplete and must not serve them so: a fail-closed gateway
    /// with an upstream down.
    pub fn set_list_failure(&self, error: Option<ErrorObject>) {
        let failing = error.is_some();
        match self.inner.list_failure.write() {
            Ok(mut e) => *e = error,
            Err(p) => *p.into_inner() = error,
        }
        self.inner.list_failing.store(failing, Ordering::Release);
    }

    /// Changes the cache hints of the results built from now on (`ttlMs`
    /// and `cacheScope` of the lists and of resource reads without their
    /// own), which [`ServerConfig::with_ttl`] and
    /// [`ServerConfig::with_cache_scope`] set at start: for a server whose
    /// contents change where they come from, such as a gateway whose
    /// upstreams' hints change. List pages already built are dropped.
    /// `server/discover` keeps the configured hints. Setting the hints the
    /// server already has changes nothing.
    /// Spec: server/utilities/caching.mdx
    pub fn set_cache_hints(&self, ttl: std::time::Duration, scope: CacheScope) {
        let ttl_ms = crate::handler::wire_millis(ttl);
        let old_ttl = self.inner.ttl_ms.swap(ttl_ms, Ordering::AcqRel);
        let was_private = self
            .inner
            .private
            .swap(scope == CacheScope::Private, Ordering::AcqRel);
        if old_ttl == ttl_ms && was_private == (scope == CacheScope::Private) {
            return;
        }
        self.inner.tools.rebuild_pages();
        self.inner.prompts.rebuild_pages();
        self.inner.resources.rebuild_pages();
        self.inner.resource_templates.rebuild_pages();
    }

    /// Gives the `-32602` error of a call to a tool this server does not
    /// have a reason, when `reason(name)` knows one: for a server whose
    /// tools come from elsewhere, such as a gateway whose upstream serving
    /// `name` is down ("upstream \"db\" is unavailable: …"). The reason
    /// is added to the message and, as `reason`, to the error's `data`.
    pub fn set_unknown_tool_reason(
        &self,
        reason: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) {
        let reason: UnknownToolReason = Arc::new(reason);
        match self.inner.unknown_tool.write() {
            Ok(mut r) => *r = Some(reason),
            Err(p) => *p.into_inner() = Some(reason),
        }
    }

    /// Why `name` is not a tool here, if the server was told how to say.
    pub(crate) fn unknown_tool_reason(&self, name: &str) -> Option<String> {
        let reason = match self.inner.unknown_tool.read() {
            Ok(r) => r.clone(),
            Err(p) => p.into_inner().clone(),
        };
        reason.and_then(|r| r(name))
    }

    /// `ttlMs` of cacheable results now.
    pub(crate) fn ttl_ms(&self) -> u64 {
        self.inner.ttl_ms.load(Ordering::Acquire)
    }

    /// `cacheScope` of cacheable results now.
    pub(crate) fn cache_scope(&self) -> CacheScope {
        if self.inner.private.load(Ordering::Acquire) {
            CacheScope::Private
        } else {
            CacheScope::Public
        }
    }

    /// The error list requests fail with, while one is set.
    pub(crate) fn list_failure(&self) -> Option<ErrorObject> {
        if !self.inner.list_failing.load(Ordering::Acquire) {
            return None;
        }
        match self.inner.list_failure.read() {
            Ok(e) => e.clone(),
            Err(p) => p.into_inner().clone(),
        }
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
