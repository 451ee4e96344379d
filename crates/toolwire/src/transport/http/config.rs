//! [`HttpConfig`]: the settings of the Streamable HTTP transport.

use crate::bounds::{MAX_DURATION, timeout_within_bounds};
use std::time::Duration;

/// The hosts a local server answers to by default, on any port.
///
/// Spec: basic/transports/streamable-http.mdx#security--endpoint — a local
/// server binds to localhost and rejects DNS-rebound requests.
pub(super) const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Settings of the Streamable HTTP transport. Build with [`HttpConfig::new`]
/// (or `Default`) and the `with_*` methods; read them back with the getters
/// of the same names.
///
/// The defaults suit a server bound to localhost: the endpoint is `/mcp`,
/// only `localhost`, `127.0.0.1` and `[::1]` (any port) are accepted in
/// `Host` and `Origin`, bodies are limited to 4 MiB and 64 levels of JSON
/// nesting, at most 1024 requests are served at once (256 per client), and
/// requests have no time limit of their own (closing the connection cancels
/// one). The book's "Security and limits" chapter
/// (`docs/src/serving/security.md`) lists every limit.
///
/// Every setter keeps its value in the range the transport can serve:
/// limits and counts are at least 1 (the drain limit may be zero), time
/// limits at least 1 ms (the shutdown grace may be zero) and at most a
/// year. A value outside is moved to the nearest bound, so no setting can
/// make a request panic.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use toolwire::HttpConfig;
///
/// let local = HttpConfig::new();
/// assert_eq!(local.path(), Some("/mcp"));
/// assert_eq!(
///     local.allowed_hosts(),
///     Some(&["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()][..])
/// );
///
/// // Reached as mcp.example.com from a web app: list both, or every
/// // request gets 403.
/// let public = HttpConfig::new()
///     .with_allowed_hosts(["mcp.example.com"])
///     .with_allowed_origins(["https://app.example.com"])
///     .with_request_timeout(Some(Duration::from_secs(120)))
///     .with_max_body_bytes(1024 * 1024);
/// assert_eq!(public.request_timeout(), Some(Duration::from_secs(120)));
///
/// // Mounted under a router that strips its prefix (axum's `nest_service`):
/// // the router has chosen the service, so it serves every path.
/// let nested = HttpConfig::new().with_any_path();
/// assert_eq!(nested.path(), None);
/// ```
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub(crate) path: Option<String>,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_json_depth: usize,
    pub(crate) max_concurrent_requests: Option<usize>,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) read_timeout: Duration,
    pub(crate) sse_keep_alive: Option<Duration>,
    pub(crate) shutdown_grace: Duration,
    pub(crate) legacy_sessions: bool,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_sessions: usize,
    pub(crate) max_requests_per_client: usize,
    pub(crate) max_streams_per_client: usize,
    pub(crate) max_sessions_per_client: usize,
    pub(crate) session_init_timeout: Duration,
    pub(crate) session_stream_queue: usize,
    pub(crate) max_connections: Option<usize>,
    pub(crate) max_connections_per_client: usize,
    pub(crate) write_timeout: Duration,
    /// The OAuth resource server, when on (see `with_auth`, in `auth.rs`).
    #[cfg(feature = "auth")]
    pub(crate) auth: Option<crate::auth::AuthConfig>,
    pub(crate) max_drain_bytes: usize,
    /// HTTPS (`tls.rs`).
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<super::TlsConfig>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpConfig {
    /// The default settings.
    pub fn new() -> Self {
        let local = || Some(LOCAL_HOSTS.iter().map(|h| (*h).to_owned()).collect());
        Self {
            path: Some("/mcp".to_owned()),
            allowed_hosts: local(),
            allowed_origins: local(),
            max_body_bytes: 4 * 1024 * 1024,
            max_json_depth: 64,
            max_concurrent_requests: Some(1024),
            request_timeout: None,
            read_timeout: Duration::from_secs(30),
            sse_keep_alive: Some(Duration::from_secs(15)),
            shutdown_grace: Duration::from_secs(10),
            legacy_sessions: true,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 1024,
            max_requests_per_client: 256,
            max_streams_per_client: 64,
            max_sessions_per_client: 64,
            session_init_timeout: Duration::from_secs(10),
            session_stream_queue: 64,
            max_connections: None,
            max_connections_per_client: 256,
            write_timeout: Duration::from_secs(30),
            #[cfg(feature = "auth")]
            auth: None,
            max_drain_bytes: 16 * 1024 * 1024,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// The MCP endpoint path, such as `/mcp`. `None` serves every path,
    /// which suits a service mounted behind a router that already routes.
    /// Other paths get `404 Not Found`.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Sets the endpoint path. A path without a leading `/` gets one.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = Some(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
        self
    }

    /// Serves every path (for a service mounted behind a router).
    #[must_use]
    pub fn with_any_path(mut self) -> Self {
        self.path = None;
        self
    }

    /// Accepted `Host` values (the request's authority). Each entry is a
    /// host (`example.com`, `127.0.0.1`, `[::1]`), matching any port, or
    /// `host:port`. Hosts compare ignoring ASCII case. `None` accepts any
    /// host. A request with another host gets `403 Forbidden`.
    pub fn allowed_hosts(&self) -> Option<&[String]> {
        self.allowed_hosts.as_deref()
    }

    /// Sets the accepted hosts; see [`allowed_hosts`](Self::allowed_hosts).
    #[must_use]
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Host`. Only for servers behind something that checks it.
    #[must_use]
    pub fn with_any_host(mut self) -> Self {
        self.allowed_hosts = None;
        self
    }

    /// Accepted `Origin` values, for requests that carry one. Each entry is
    /// a host pattern as in [`allowed_hosts`](Self::allowed_hosts) (any
    /// scheme), or a full origin `scheme://host[:port]`. A request without
    /// `Origin` is not checked; one with another origin (or `null`) gets
    /// `403 Forbidden`. `None` accepts any origin.
    pub fn allowed_origins(&self) -> Option<&[String]> {
        self.allowed_origins.as_deref()
    }

    /// Sets the accepted origins; see [`allowed_origins`](Self::allowed_origins).
    #[must_use]
    pub fn with_allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Origin`. This disables the DNS-rebinding defence.
    #[must_use]
    pub fn with_any_origin(mut self) -> Self {
        self.allowed_origins = None;
        self
    }

    /// The largest request body read, in bytes. Larger bodies get
    /// `413 Payload Too Large`; they are never buffered beyond this.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// Sets the body size limit in bytes (default 4 MiB; at least 1).
    #[must_use]
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes.max(1);
        self
    }

    /// The deepest nesting of JSON arrays and objects accepted in a body.
    /// Deeper bodies get `400` with `-32700` before they are parsed. Values
    /// above about 120 have no effect: the JSON parser stops at 128.
    pub fn max_json_depth(&self) -> usize {
        self.max_json_depth
    }

    /// Sets the JSON nesting limit (default 64; at least 1).
    #[must_use]
    pub fn with_max_json_depth(mut self, depth: usize) -> Self {
        self.max_json_depth = depth.max(1);
        self
    }

    /// How many requests may be in progress at once (reading the body,
    /// running, or streaming the response). Beyond it a request is refused
    /// at once with `503 Service Unavailable`, `Retry-After: 1` and a
    /// JSON-RPC `-32603` error. `None` sets no limit.
    pub fn max_concurrent_requests(&self) -> Option<usize> {
        self.max_concurrent_requests
    }

    /// Sets the concurrent-request limit (default 1024; at least 1, at most
    /// `tokio::sync::Semaphore::MAX_PERMITS`); `None` removes it.
    #[must_use]
    pub fn with_max_concurrent_requests(mut self, limit: Option<usize>) -> Self {
        self.max_concurrent_requests =
            limit.map(|n| n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS));
        self
    }

    /// How long one request may run. When it elapses the handler is
    /// cancelled and the client gets a JSON-RPC `-32603` error: with
    /// `504 Gateway Timeout` if nothing was sent yet, or as the last event of
    /// an SSE stream that had started. `None` sets no limit.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }

    /// Sets the per-request time limit (default none; at least 1 ms, at
    /// most a year); `None` removes it.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout.map(timeout_within_bounds);
        self
    }

    /// How long a client may take to send the request body, and (under
    /// [`serve_http`](super::serve_http)) the request head or the next
    /// request on a kept-alive connection. A slower body gets
    /// `408 Request Timeout`; a slower head closes the connection.
    pub fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// Sets the request head and body read timeout (default 30 s; at least
    /// 1 ms, at most a year).
    #[must_use]
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout_within_bounds(timeout);
        self
    }

    /// How often an SSE response stream that has nothing else to send emits
    /// a `:` comment line, so that idle-timeouts of intermediaries do not cut
    /// it. `None` sends none.
    pub fn sse_keep_alive(&self) -> Option<Duration> {
        self.sse_keep_alive
    }

    /// Sets the SSE keep-alive interval (default 15 s; at least 1 ms, at
    /// most a year); `None` disables it.
    #[must_use]
    pub fn with_sse_keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.sse_keep_alive = interval.map(timeout_within_bounds);
        self
    }

    /// On shutdown, how long in-flight requests may take to finish before
    /// they are cancelled.
    pub fn shutdown_grace(&self) -> Duration {
        self.shutdown_grace
    }

    /// Sets the shutdown grace period (default 10 s; zero cancels at once;
    /// at most a year).
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace.min(MAX_DURATION);
        self
    }

    /// Whether legacy (2025-03-26 to 2025-11-25) clients may open sessions
    /// with `initialize`. Modern requests never use a session either way.
    pub fn legacy_sessions(&self) -> bool {
        self.legacy_sessions
    }

    /// Turns legacy sessions on (the default) or off. Off, `initialize` is
    /// an unknown method, as in a 2026-07-28-only server.
    #[must_use]
    pub fn with_legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy_sessions = enabled;
        self
    }

    /// How long a legacy session may stay idle (no request, no open GET
    /// stream) before it expires; later requests with its id get `404`.
    pub fn session_idle_timeout(&self) -> Duration {
        self.session_idle_timeout
    }

    /// Sets how long a legacy session may stay idle (default 30 minutes; at
    /// least 1 ms, at most a year).
    #[must_use]
    pub fn with_session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = timeout_within_bounds(idle);
        self
    }

    /// How many legacy sessions may exist at once. Beyond it `initialize`
    /// gets `503 Service Unavailable` once expired sessions are swept.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Sets how many legacy sessions may exist at once (default 1024; at
    /// least 1). To have none, turn legacy sessions off with
    /// [`with_legacy_sessions(false)`](Self::with_legacy_sessions).
    #[must_use]
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// How many requests one client (one peer IP address under
    /// [`serve_http`](super::serve_http)) may have in progress at once,
    /// within [`max_concurrent_requests`](Self::max_concurrent_requests).
    /// Beyond it the client's request gets `503 Service Unavailable` with
    /// `Retry-After: 1`, while other clients are still served. A request
    /// counts from its head to its response's end, so a slow body counts too.
    pub fn max_requests_per_client(&self) -> usize {
        self.max_requests_per_client
    }

    /// Sets the per-client request limit (default 256; at least 1).
    #[must_use]
    pub fn with_max_requests_per_client(mut self, max: usize) -> Self {
        self.max_requests_per_client = max.max(1);
        self
    }

    /// How many long-lived streams (`subscriptions/listen` responses and
    /// legacy GET streams) one client may hold open. Beyond it, and beyond
    /// the server-wide [`ServerConfig::max_listeners`](crate::ServerConfig),
    /// the request gets `503 Service Unavailable` with `Retry-After: 1`.
    pub fn max_streams_per_client(&self) -> usize {
        self.max_streams_per_client
    }

    /// Sets the per-client stream limit (default 64; at least 1).
    #[must_use]
    pub fn with_max_streams_per_client(mut self, max: usize) -> Self {
        self.max_streams_per_client = max.max(1);
        self
    }

    /// How many legacy sessions one client may hold, within
    /// [`max_sessions`](Self::max_sessions). Beyond it (once expired
    /// sessions are swept) its `initialize` gets `503` with `Retry-After`.
    pub fn max_sessions_per_client(&self) -> usize {
        self.max_sessions_per_client
    }

    /// Sets the per-client session limit (default 64; at least 1).
    #[must_use]
    pub fn with_max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = max.max(1);
        self
    }

    /// How long a legacy session lives before its client has used it: a
    /// session that saw no request and no GET stream after `initialize`
    /// expires after this, not after
    /// [`session_idle_timeout`](Self::session_idle_timeout).
    pub fn session_init_timeout(&self) -> Duration {
        self.session_init_timeout
    }

    /// Sets the unused-session lifetime (default 10 s; at least 1 ms, at
    /// most a year).
    #[must_use]
    pub fn with_session_init_timeout(mut self, timeout: Duration) -> Self {
        self.session_init_timeout = timeout_within_bounds(timeout);
        self
    }

    /// How many notifications (besides list changes, which coalesce to one
    /// per list) a legacy GET stream may have waiting for its client. A
    /// stream that falls further behind is closed.
    pub fn session_stream_queue(&self) -> usize {
        self.session_stream_queue
    }

    /// Sets the GET stream queue bound (default 64; at least 1).
    #[must_use]
    pub fn with_session_stream_queue(mut self, max: usize) -> Self {
        self.session_stream_queue = max.max(1);
        self
    }

    /// How many connections [`serve_http`](super::serve_http) keeps open at
    /// once. At the limit it stops accepting until one closes. `None` (the
    /// default) derives it at start-up from the file-descriptor limit: three
    /// quarters of the soft `RLIMIT_NOFILE`, at most 65,536 (4,096 where the
    /// limit cannot be read).
    pub fn max_connections(&self) -> Option<usize> {
        self.max_connections
    }

    /// Sets the connection limit (at least 1); `None` derives it from the
    /// file-descriptor limit.
    #[must_use]
    pub fn with_max_connections(mut self, max: Option<usize>) -> Self {
        self.max_connections = max.map(|n| n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS));
        self
    }

    /// How many connections one peer IP address may hold open under
    /// [`serve_http`](super::serve_http). Beyond it a new connection is
    /// closed at once.
    pub fn max_connections_per_client(&self) -> usize {
        self.max_connections_per_client
    }

    /// Sets the per-address connection limit (default 256; at least 1).
    #[must_use]
    pub fn with_max_connections_per_client(mut self, max: usize) -> Self {
        self.max_connections_per_client = max.max(1);
        self
    }

    /// Under [`serve_http`](super::serve_http), how long a write may wait
    /// for a client that does not read: after this the connection is
    /// closed, with whatever response or stream it carried.
    pub fn write_timeout(&self) -> Duration {
        self.write_timeout
    }

    /// Sets the write timeout (default 30 s; at least 1 ms, at most a year).
    #[must_use]
    pub fn with_write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout_within_bounds(timeout);
        self
    }

    /// How much of a request body an early answer left unread (`413`,
    /// `403`, `415`, ...) is still read and thrown away beside it, within
    /// [`read_timeout`](Self::read_timeout) ("lingering close"). A client
    /// that sends its whole body before it reads, as Python's `http.client`
    /// does, then reads the answer instead of a connection reset. A body
    /// with more left than this, or slower, is cut off by closing the
    /// connection. Not done for a request that sent `Expect: 100-continue`:
    /// its body never comes.
    pub fn max_drain_bytes(&self) -> usize {
        self.max_drain_bytes
    }

    /// Sets how much of an unread body is drained after an early answer
    /// (default 16 MiB; 0 drains nothing and closes at once).
    #[must_use]
    pub fn with_max_drain_bytes(mut self, bytes: usize) -> Self {
        self.max_drain_bytes = bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN_TIMEOUT: Duration = Duration::from_millis(1);

    #[test]
    fn setters_keep_every_value_in_the_range_that_serves() {
        let zero = Duration::ZERO;
        let c = HttpConfig::new()
            .with_max_body_bytes(0)
            .with_max_json_depth(0)
            .with_max_concurrent_requests(Some(0))
            .with_request_timeout(Some(zero))
            .with_read_timeout(zero)
            .with_sse_keep_alive(Some(zero))
            .with_shutdown_grace(zero)
            .with_session_idle_timeout(zero)
            .with_max_sessions(0)
            .with_max_requests_per_client(0)
            .with_max_streams_per_client(0)
            .with_max_sessions_per_client(0)
            .with_session_init_timeout(zero)
            .with_session_stream_queue(0)
            .with_max_connections(Some(0))
            .with_max_connections_per_client(0)
            .with_write_timeout(zero)
            .with_path("");
        assert_eq!(c.max_body_bytes(), 1);
        assert_eq!(c.max_json_depth(), 1);
        assert_eq!(c.max_concurrent_requests(), Some(1));
        assert_eq!(c.request_timeout(), Some(MIN_TIMEOUT));
        assert_eq!(c.read_timeout(), MIN_TIMEOUT);
        assert_eq!(c.sse_keep_alive(), Some(MIN_TIMEOUT));
        assert_eq!(c.shutdown_grace(), zero);
        assert_eq!(c.session_idle_timeout(), MIN_TIMEOUT);
        assert_eq!(c.max_sessions(), 1);
        assert_eq!(c.max_requests_per_client(), 1);
        assert_eq!(c.max_streams_per_client(), 1);
        assert_eq!(c.max_sessions_per_client(), 1);
        assert_eq!(c.session_init_timeout(), MIN_TIMEOUT);
        assert_eq!(c.session_stream_queue(), 1);
        assert_eq!(c.max_connections(), Some(1));
        assert_eq!(c.max_connections_per_client(), 1);
        assert_eq!(c.write_timeout(), MIN_TIMEOUT);
        assert_eq!(c.path(), Some("/"));

        let max = Duration::MAX;
        let c = HttpConfig::new()
            .with_max_body_bytes(usize::MAX)
            .with_max_concurrent_requests(Some(usize::MAX))
            .with_request_timeout(Some(max))
            .with_read_timeout(max)
            .with_sse_keep_alive(Some(max))
            .with_shutdown_grace(max)
            .with_session_idle_timeout(max)
            .with_session_init_timeout(max)
            .with_write_timeout(max);
        assert_eq!(c.max_body_bytes(), usize::MAX);
        assert_eq!(
            c.max_concurrent_requests(),
            Some(tokio::sync::Semaphore::MAX_PERMITS)
        );
        for d in [
            c.request_timeout(),
            Some(c.read_timeout()),
            c.sse_keep_alive(),
            Some(c.shutdown_grace()),
            Some(c.session_idle_timeout()),
            Some(c.session_init_timeout()),
            Some(c.write_timeout()),
        ] {
            assert_eq!(d, Some(MAX_DURATION));
        }
    }
}
