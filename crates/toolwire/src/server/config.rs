//! [`ServerConfig`]: the settings of a [`Server`](crate::Server).
//!
//! The fields are private: each value passes through a setter that keeps it
//! in the range the server can serve, so no configuration can make a
//! request panic.

use crate::bounds::timeout_within_bounds;
use crate::bus::NotificationBus;
use crate::handler::wire_millis;
use crate::mrtr::StateKeys;
use crate::ratelimit::RateLimit;
use std::sync::Arc;
use std::time::Duration;
use toolwire_proto::meta::PROTOCOL_VERSION;
use toolwire_proto::types::CacheScope;

/// Server settings. Build with [`ServerConfig::new`] (or `Default`) and the
/// `with_*` methods; read them back with the getters of the same names.
///
/// Every setter keeps its value in the range the server can serve: counts
/// are at least 1, time limits at least 1 ms and at most a year. A value
/// outside is moved to the nearest bound, so no setting can make a request
/// fail or panic.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use toolwire::{Server, ServerConfig, StateKeys};
///
/// # fn main() -> Result<(), toolwire::StateKeyError> {
/// let config = ServerConfig::new("inventory", "2.1.0")
///     .with_instructions("Look items up by SKU before changing them.")
///     .with_page_size(50)
///     .with_ttl(Duration::from_secs(30)) // results may be reused for 30 s
///     // Replicas that share keys open each other's `requestState`; in
///     // production read them with `StateKeys::from_env(STATE_KEYS_ENV)`.
///     .with_state_keys(StateKeys::random()?)
///     .with_page_size(0); // moved to the nearest bound
/// assert_eq!(config.page_size(), 1);
/// assert_eq!(config.ttl(), Duration::from_secs(30));
/// assert_eq!(config.state_ttl(), Duration::from_secs(600)); // the default
/// let server = Server::new(config);
/// assert_eq!(server.config().name(), "inventory");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) ttl: Duration,
    pub(crate) cache_scope: CacheScope,
    pub(crate) list_fingerprints: bool,
    pub(crate) supported_versions: Vec<String>,
    pub(crate) state_keys: Option<StateKeys>,
    pub(crate) state_ttl: Duration,
    pub(crate) max_listeners: usize,
    pub(crate) bus: Option<Arc<dyn NotificationBus>>,
    pub(crate) legacy_input_timeout: Duration,
    pub(crate) legacy_max_rounds: u32,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) tool_rate_limits: Vec<(String, RateLimit)>,
    pub(crate) rate_limit_keys: usize,
    pub(crate) tasks: Option<crate::task::TaskOptions>,
    pub(crate) task_forwarder: Option<Arc<dyn crate::task::TaskForwarder>>,
    pub(crate) exposed_panic_messages: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self::new("toolwire", env!("CARGO_PKG_VERSION"))
    }
}

impl ServerConfig {
    /// A configuration with the given identity (`serverInfo`) and default
    /// settings.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let ttl = Duration::from_secs(60);
        Self {
            name: name.into(),
            version: version.into(),
            instructions: None,
            page_size: 100,
            ttl,
            cache_scope: CacheScope::Public,
            list_fingerprints: false,
            supported_versions: vec![PROTOCOL_VERSION.to_owned()],
            state_keys: None,
            state_ttl: Duration::from_secs(600),
            max_listeners: 1024,
            bus: None,
            legacy_input_timeout: Duration::from_secs(300),
            legacy_max_rounds: 8,
            rate_limit: None,
            tool_rate_limits: Vec::new(),
            rate_limit_keys: 10_000,
            tasks: None,
            task_forwarder: None,
            exposed_panic_messages: false,
        }
    }

    /// `serverInfo.name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `serverInfo.version`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Natural-language guidance returned by `server/discover`.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Sets the instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Items per list page (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`).
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Sets the list page size (default 100; at least 1).
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// How long cacheable results may be reused: sent as `ttlMs`.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Sets how long cacheable results may be reused (default 60 s). Sent
    /// as `ttlMs` in whole milliseconds; zero tells clients not to reuse.
    /// Spec: server/utilities/caching.mdx
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// [`ttl`](Self::ttl) as the wire's `ttlMs`: whole milliseconds,
    /// converted where a result is built.
    pub(crate) fn ttl_ms(&self) -> u64 {
        wire_millis(self.ttl)
    }

    /// `cacheScope` on cacheable results.
    pub fn cache_scope(&self) -> CacheScope {
        self.cache_scope
    }

    /// Sets `cacheScope` for cacheable results (default `public`).
    #[must_use]
    pub fn with_cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = scope;
        self
    }

    /// Whether list results carry a fingerprint of the whole list.
    pub fn list_fingerprints(&self) -> bool {
        self.list_fingerprints
    }

    /// Puts a fingerprint of the whole list (every page) in each list
    /// result's `_meta`, under [`LIST_FINGERPRINT_KEY`](toolwire_proto::meta::LIST_FINGERPRINT_KEY)
    /// (`io.toolwire/fingerprint`): the lowercase hex SHA-256 of the
    /// entries' definitions as JSON, in list order, each followed by a
    /// newline. Two servers (or replicas) listing the same entries give the
    /// same fingerprint; any change to an entry, or to the order, changes
    /// it. Computed once per list version (default off).
    #[must_use]
    pub fn with_list_fingerprints(mut self, on: bool) -> Self {
        self.list_fingerprints = on;
        self
    }

    /// Whether a tool handler's panic message reaches the client.
    pub fn exposed_panic_messages(&self) -> bool {
        self.exposed_panic_messages
    }

    /// Sends a tool handler's panic message to the client, in the error
    /// that answers the call (default off).
    ///
    /// A handler that panics is always answered, with a `-32603` error
    /// that names the tool and a short panic id (`data.panicId`), which
    /// the server logs with the panic message (`tracing`, at `ERROR`, at
    /// most one line every 10 s, as a client can cause them; the error
    /// says when its line was held back). The default panic hook prints
    /// every message on stderr as well. The message itself stays
    /// in the server's log by default because a panic message can carry
    /// anything the code formatted into it (a token, a path, a user's
    /// data), and the client may show it to a model or a user. Turn this
    /// on where no panic message can carry a secret, such as a local
    /// server under development.
    #[must_use]
    pub fn with_exposed_panic_messages(mut self, on: bool) -> Self {
        self.exposed_panic_messages = on;
        self
    }

    /// The protocol versions served, newest first.
    pub fn supported_versions(&self) -> &[String] {
        &self.supported_versions
    }

    /// The keys that seal `requestState`. `None` uses a random key made
    /// once per process, so state only opens in the process that sealed it.
    pub fn state_keys(&self) -> Option<&StateKeys> {
        self.state_keys.as_ref()
    }

    /// Sets the keyring that seals `requestState`: the first key seals,
    /// every key opens. Replicas that share it open each other's state.
    #[must_use]
    pub fn with_state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// How long a sealed `requestState` stays valid.
    pub fn state_ttl(&self) -> Duration {
        self.state_ttl
    }

    /// Sets how long a sealed `requestState` stays valid (default 10
    /// minutes; at least 1 ms, at most a year). A retry after it gets
    /// `-32602`.
    #[must_use]
    pub fn with_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = timeout_within_bounds(ttl);
        self
    }

    /// How many `subscriptions/listen` streams may be open at once.
    pub fn max_listeners(&self) -> usize {
        self.max_listeners
    }

    /// Sets how many `subscriptions/listen` streams may be open at once
    /// (default 1024; at least 1). Beyond it a listen request gets an error.
    #[must_use]
    pub fn with_max_listeners(mut self, max: usize) -> Self {
        self.max_listeners = max.max(1);
        self
    }

    /// Where list changes are published and listen streams subscribe.
    /// `None` gives each server its own [`InMemoryBus`](crate::InMemoryBus).
    pub fn bus(&self) -> Option<&Arc<dyn NotificationBus>> {
        self.bus.as_ref()
    }

    /// Sets the notification bus, for example one shared by every replica.
    #[must_use]
    pub fn with_bus(mut self, bus: Arc<dyn NotificationBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Legacy sessions: how long a server-to-client request (the MRTR
    /// shim's elicitation, sampling or roots request) waits for the
    /// client's answer.
    pub fn legacy_input_timeout(&self) -> Duration {
        self.legacy_input_timeout
    }

    /// Sets how long a server-to-client request of a legacy session waits
    /// for the client's answer (default 5 minutes; at least 1 ms, at most a
    /// year).
    #[must_use]
    pub fn with_legacy_input_timeout(mut self, timeout: Duration) -> Self {
        self.legacy_input_timeout = timeout_within_bounds(timeout);
        self
    }

    /// Legacy sessions: how many `input_required` rounds the MRTR shim runs
    /// for one request before giving up with `-32603`.
    pub fn legacy_max_rounds(&self) -> u32 {
        self.legacy_max_rounds
    }

    /// Sets how many `input_required` rounds the legacy MRTR shim runs for
    /// one request (default 8, at least 1).
    #[must_use]
    pub fn with_legacy_max_rounds(mut self, rounds: u32) -> Self {
        self.legacy_max_rounds = rounds.max(1);
        self
    }

    /// The rate limit on each caller's invocations, if any.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
    }

    /// Limits how often each caller may invoke `tools/call`,
    /// `prompts/get`, `resources/read` and `completion/complete` (default:
    /// no limit). Every request counts, each MRTR retry included; a caller
    /// is the authenticated principal, else the client's IP address (HTTP
    /// under [`serve_http`](crate::serve_http)), else the process (stdio).
    /// Over it, a request gets [`ErrorCode::RATE_LIMITED`] with
    /// `data.retryAfterMs` (on HTTP, `429` with `Retry-After`).
    ///
    /// Spec: server/tools.mdx#security-considerations
    ///
    /// ```
    /// use toolwire::{RateLimit, ServerConfig};
    ///
    /// let config = ServerConfig::new("demo", "1.0.0")
    ///     .with_rate_limit(RateLimit::per_second(10).with_burst(20))
    ///     .with_tool_rate_limit("search", RateLimit::per_minute(30));
    /// assert_eq!(config.tool_rate_limit("search"), Some(RateLimit::per_minute(30)));
    /// assert_eq!(config.tool_rate_limit("echo"), config.rate_limit());
    /// ```
    ///
    /// [`ErrorCode::RATE_LIMITED`]: toolwire_proto::ErrorCode::RATE_LIMITED
    #[must_use]
    pub fn with_rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// The limit `tools/call` of `tool` is counted against: its own, or
    /// else the server-wide one.
    pub fn tool_rate_limit(&self, tool: &str) -> Option<RateLimit> {
        self.tool_rate_limits
            .iter()
            .find(|(name, _)| name == tool)
            .map(|(_, limit)| *limit)
            .or(self.rate_limit)
    }

    /// Gives `tool` its own limit, counted instead of the server-wide one
    /// (set again, the last one holds).
    #[must_use]
    pub fn with_tool_rate_limit(mut self, tool: impl Into<String>, limit: RateLimit) -> Self {
        let tool = tool.into();
        self.tool_rate_limits.retain(|(name, _)| *name != tool);
        self.tool_rate_limits.push((tool, limit));
        self
    }

    /// How many callers each rate limit tracks at once.
    pub fn rate_limit_keys(&self) -> usize {
        self.rate_limit_keys
    }

    /// Sets how many callers each rate limit tracks at once (default
    /// 10,000; at least 1). Idle callers are forgotten when it fills; while
    /// it is full of active ones, new callers share one bucket.
    #[must_use]
    pub fn with_rate_limit_keys(mut self, max: usize) -> Self {
        self.rate_limit_keys = max.max(1);
        self
    }

    /// How tasks (the Tasks extension) are kept: the store, time to live,
    /// polling interval and bounds. By default in memory, with
    /// [`TaskOptions::new`](crate::task::TaskOptions::new)'s settings.
    /// Only tools that support tasks ([`ToolBuilder::task`](crate::ToolBuilder::task))
    /// create any.
    #[must_use]
    pub fn with_tasks(mut self, options: crate::task::TaskOptions) -> Self {
        self.tasks = Some(options);
        self
    }

    /// Who answers for the tasks that forwarding tools pass through from
    /// another server ([`Forwarded::Task`](crate::Forwarded::Task)): a
    /// gateway. Their ids are sealed with the [`state_keys`](Self::with_state_keys)
    /// keyring, so give replicas one keyring.
    #[must_use]
    pub fn with_task_forwarder(mut self, forwarder: Arc<dyn crate::task::TaskForwarder>) -> Self {
        self.task_forwarder = Some(forwarder);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{MAX_DURATION, MIN_TIMEOUT};

    #[test]
    fn setters_keep_every_value_in_the_range_that_serves() {
        let c = ServerConfig::new("n", "v")
            .with_page_size(0)
            .with_state_ttl(Duration::ZERO)
            .with_max_listeners(0)
            .with_legacy_input_timeout(Duration::ZERO)
            .with_legacy_max_rounds(0)
            .with_rate_limit_keys(0)
            .with_ttl(Duration::ZERO);
        assert_eq!(c.page_size(), 1);
        assert_eq!(c.state_ttl(), MIN_TIMEOUT);
        assert_eq!(c.max_listeners(), 1);
        assert_eq!(c.legacy_input_timeout(), MIN_TIMEOUT);
        assert_eq!(c.legacy_max_rounds(), 1);
        assert_eq!(c.rate_limit_keys(), 1);
        assert_eq!((c.ttl(), c.ttl_ms()), (Duration::ZERO, 0));

        let c = ServerConfig::default()
            .with_state_ttl(Duration::MAX)
            .with_legacy_input_timeout(Duration::MAX)
            .with_ttl(Duration::MAX)
            .with_page_size(usize::MAX);
        assert_eq!(c.state_ttl(), MAX_DURATION);
        assert_eq!(c.legacy_input_timeout(), MAX_DURATION);
        assert_eq!(c.ttl(), Duration::MAX);
        assert_eq!(c.ttl_ms(), u64::MAX, "saturates rather than wraps");
        assert_eq!(c.page_size(), usize::MAX);
    }

    #[test]
    fn ttl_is_sent_in_whole_milliseconds() {
        let c = ServerConfig::default().with_ttl(Duration::from_micros(2_999));
        assert_eq!(c.ttl_ms(), 2);
        assert_eq!(ServerConfig::default().ttl_ms(), 60_000);
    }
}
