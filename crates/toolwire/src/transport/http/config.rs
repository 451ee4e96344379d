//! [`HttpConfig`]: the settings of the Streamable HTTP transport.

use std::time::Duration;

/// The hosts a local server answers to by default, on any port.
///
/// Spec: basic/transports/streamable-http.mdx#security--endpoint — a local
/// server binds to localhost and rejects DNS-rebound requests.
pub(super) const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Settings of the Streamable HTTP transport. Build with [`HttpConfig::new`]
/// (or `Default`) and the `with_*` methods.
///
/// The defaults suit a server bound to localhost: the endpoint is `/mcp`,
/// only `localhost`, `127.0.0.1` and `[::1]` (any port) are accepted in
/// `Host` and `Origin`, bodies are limited to 4 MiB and 64 levels of JSON
/// nesting, at most 1024 requests are served at once, and requests have no
/// time limit of their own (closing the connection cancels one).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint path, such as `/mcp`. `None` serves every path,
    /// which suits a service mounted behind a router that already routes.
    /// Other paths get `404 Not Found`.
    pub path: Option<String>,
    /// Accepted `Host` values (the request's authority). Each entry is a
    /// host (`example.com`, `127.0.0.1`, `[::1]`), matching any port, or
    /// `host:port`. Hosts compare ignoring ASCII case. `None` accepts any
    /// host. A request with another host gets `403 Forbidden`.
    pub allowed_hosts: Option<Vec<String>>,
    /// Accepted `Origin` values, for requests that carry one. Each entry is
    /// a host pattern as in [`allowed_hosts`](Self::allowed_hosts) (any
    /// scheme), or a full origin `scheme://host[:port]`. A request without
    /// `Origin` is not checked; one with another origin (or `null`) gets
    /// `403 Forbidden`. `None` accepts any origin.
    pub allowed_origins: Option<Vec<String>>,
    /// The largest request body read, in bytes. Larger bodies get
    /// `413 Payload Too Large`; they are never buffered beyond this.
    pub max_body_bytes: usize,
    /// The deepest nesting of JSON arrays and objects accepted in a body.
    /// Deeper bodies get `400` with `-32700` before they are parsed. Values
    /// above about 120 have no effect: the JSON parser stops at 128.
    pub max_json_depth: usize,
    /// How many requests may be in progress at once (reading the body,
    /// running, or streaming the response). Beyond it a request is refused
    /// at once with `503 Service Unavailable`, `Retry-After: 1` and a
    /// JSON-RPC `-32603` error. `None` sets no limit.
    pub max_concurrent_requests: Option<usize>,
    /// How long one request may run. When it elapses the handler is
    /// cancelled and the client gets a JSON-RPC `-32603` error: with
    /// `504 Gateway Timeout` if nothing was sent yet, or as the last event of
    /// an SSE stream that had started. `None` sets no limit.
    pub request_timeout: Option<Duration>,
    /// How long a client may take to send the request body, and (under
    /// [`serve_http`](super::serve_http)) the request head or the next
    /// request on a kept-alive connection. A slower body gets
    /// `408 Request Timeout`; a slower head closes the connection.
    pub read_timeout: Duration,
    /// How often an SSE response stream that has nothing else to send emits
    /// a `:` comment line, so that idle-timeouts of intermediaries do not cut
    /// it. `None` sends none.
    pub sse_keep_alive: Option<Duration>,
    /// On shutdown, how long in-flight requests may take to finish before
    /// they are cancelled.
    pub shutdown_grace: Duration,
    /// Whether legacy (2025-03-26 to 2025-11-25) clients may open sessions
    /// with `initialize`. Modern requests never use a session either way.
    pub legacy_sessions: bool,
    /// How long a legacy session may stay idle (no request, no open GET
    /// stream) before it expires; later requests with its id get `404`.
    pub session_idle_timeout: Duration,
    /// How many legacy sessions may exist at once. Beyond it `initialize`
    /// gets `503 Service Unavailable` once expired sessions are swept.
    pub max_sessions: usize,
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
        }
    }

    /// Turns legacy sessions on (the default) or off. Off, `initialize` is
    /// an unknown method, as in a 2026-07-28-only server.
    #[must_use]
    pub fn with_legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy_sessions = enabled;
        self
    }

    /// Sets how long a legacy session may stay idle (default 30 minutes).
    #[must_use]
    pub fn with_session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Sets how many legacy sessions may exist at once (default 1024).
    #[must_use]
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
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

    /// Sets the body size limit in bytes.
    #[must_use]
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Sets the JSON nesting limit (at least 1).
    #[must_use]
    pub fn with_max_json_depth(mut self, depth: usize) -> Self {
        self.max_json_depth = depth.max(1);
        self
    }

    /// Sets the concurrent-request limit (at least 1); `None` removes it.
    #[must_use]
    pub fn with_max_concurrent_requests(mut self, limit: Option<usize>) -> Self {
        self.max_concurrent_requests = limit.map(|n| n.max(1));
        self
    }

    /// Sets the per-request time limit; `None` removes it.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets the request head and body read timeout (at least 1 ms).
    #[must_use]
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Sets the SSE keep-alive interval (at least 1 ms); `None` disables it.
    #[must_use]
    pub fn with_sse_keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.sse_keep_alive = interval.map(|i| i.max(Duration::from_millis(1)));
        self
    }

    /// Sets the shutdown grace period.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}
