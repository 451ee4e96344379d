//! The Streamable HTTP transport (2026-07-28): one POST endpoint, a JSON or
//! request-scoped SSE response per request, no sessions for modern requests;
//! legacy (initialize-era) sessions on the same endpoint.
//!
//! [`HttpService`] is a `tower::Service` (and a `hyper` service) to mount in
//! axum or hyper; [`serve_http`] and [`serve_http_on`] run it on a socket
//! with graceful shutdown. [`HttpConfig`] holds the limits and allow-lists.
//!
//! [`HttpService`] documents the checks, the status codes and the response
//! modes.
//!
//! Spec: basic/transports/streamable-http.mdx

#[cfg(feature = "auth")]
mod auth;
mod body;
mod config;
mod early;
mod found;
#[cfg(feature = "tls")]
mod h2;
mod handle;
mod head;
mod head_timer;
mod legacy;
mod listen;
mod negotiate;
mod origin;
mod peers;
mod read;
mod serve;
mod sessions;
mod timed_io;
#[cfg(feature = "tls")]
mod tls;
mod validate;
// The test kit runs the same header check on requests it sends as over HTTP.
#[cfg(feature = "testing")]
pub(crate) use validate::check_metadata_headers;

/// The MCP header names, ready for lookups: `HeaderName` needs them
/// lowercase, and a `&str` key would be parsed and lowercased on every
/// lookup. `toolwire_proto::header` has their canonical spelling.
mod names {
    use http::HeaderName;

    /// `MCP-Protocol-Version`.
    pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
    /// `Mcp-Method`.
    pub(super) const METHOD: HeaderName = HeaderName::from_static("mcp-method");
    /// `Mcp-Name`.
    pub(super) const NAME: HeaderName = HeaderName::from_static("mcp-name");
    /// `Mcp-Session-Id` (legacy sessions).
    pub(super) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

    #[cfg(test)]
    #[test]
    fn names_match_the_canonical_spellings() {
        use toolwire_proto::header as h;
        for (name, canonical) in [
            (&PROTOCOL_VERSION, h::PROTOCOL_VERSION_HEADER),
            (&METHOD, h::METHOD_HEADER),
            (&NAME, h::NAME_HEADER),
            (&SESSION_ID, h::SESSION_ID_HEADER),
        ] {
            assert_eq!(name.as_str(), canonical.to_ascii_lowercase());
        }
    }
}

pub use body::HttpBody;
pub use config::HttpConfig;
pub use serve::{serve_http, serve_http_on};
#[cfg(feature = "tls")]
pub use tls::{TlsConfig, TlsError};

use crate::bounds::MAX_DURATION;
use crate::server::Server;
use http_body::Body;
use origin::OriginPolicy;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Semaphore;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The Streamable HTTP endpoint as a service. Cheap to clone; clones share
/// the server, the configuration and the concurrency limit.
///
/// A request passes these checks, in order:
///
/// | check | failure |
/// |---|---|
/// | path | `404`, empty body |
/// | `Host` present once and readable (HTTP/1.1, or to check a list) | `400` |
/// | `Host` and `Origin` allow-lists | `403` |
/// | method is `POST` | `405` with `Allow: POST` |
/// | `Transfer-Encoding` is `chunked` alone, if any | `501` (another coding), `400` (`chunked` twice) |
/// | `Accept` lists `application/json` and `text/event-stream` | `406` |
/// | `Content-Type` is `application/json` | `415` |
/// | `Content-Encoding` is absent or `identity` | `415` with `Accept-Encoding: identity` |
/// | declared body size | `413` |
/// | concurrent-request limits, the client's then the server's | `503` with `Retry-After: 1` |
/// | body size as read / body read time | `413` / `408` |
/// | JSON nesting depth, then parsing | `400` with `-32700` or `-32600` |
/// | a notification | `202`, empty body |
/// | a response (clients must not send them) | `400` with `-32600` |
/// | `_meta` members | `400` with `-32602` |
/// | `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` | `400` with `-32020` |
/// | then the server pipeline: version, method, handler | see [status mapping](#status-mapping) |
///
/// Error bodies are JSON-RPC error responses; they echo the request id when
/// the body was read far enough to know it, and have no `id` member
/// otherwise. The `400`, `403`, `406` and `415` answers of the head checks
/// read the body (within its limits) to find the id, unless it is coded.
/// (hyper itself answers `400`, without a body, to a request whose last
/// transfer coding is not `chunked`.)
///
/// After an answer that leaves the body unread (`413`, and the refusals of
/// the head checks), the rest of the body is read and thrown away, within
/// [`HttpConfig::max_drain_bytes`] and [`HttpConfig::read_timeout`], so
/// that a client that writes its whole body before reading gets the answer
/// rather than a connection reset.
///
/// # Status mapping
///
/// `-32700`, `-32600`, `-32602`, `-32020`, `-32021` and `-32022` are sent
/// with `400 Bad Request`, `-32601` with `404 Not Found`, any other error
/// code (such as `-32603`) with `500 Internal Server Error`, and results with
/// `200 OK`. A caller over its rate limit
/// ([`ServerConfig::with_rate_limit`](crate::ServerConfig::with_rate_limit))
/// gets `429 Too Many Requests` with `Retry-After` and `-31429`. A request that exceeds [`HttpConfig::request_timeout`] before
/// anything was sent gets `504 Gateway Timeout` with `-32603`; a handler
/// that panics gets `500` with `-32603` (the connection survives).
///
/// # Response mode
///
/// A response is one `application/json` message unless the handler emits a
/// notification for the request (progress, or a log message at an enabled
/// level) before its result. Then it is a `text/event-stream`: each event is
/// one `data:` line of compact JSON, notifications as they come, the final
/// response last, then the stream ends. No request is ever sent on a stream.
///
/// `subscriptions/listen` is always a long-lived `text/event-stream`: the
/// acknowledgment, then the requested change notifications, with `:`
/// keep-alive comments while idle, until the client disconnects or the
/// server shuts down (the closing result is then the last event). Listen
/// streams are bounded by [`ServerConfig::max_listeners`](crate::ServerConfig)
/// and [`HttpConfig::max_streams_per_client`], not by the request limit or
/// the request timeout; past either bound the request gets `503` with
/// `Retry-After: 1`.
///
/// Modern requests ignore `Mcp-Session-Id` and `Last-Event-ID`: no session
/// is minted for them and streams are not resumable.
///
/// # Legacy sessions
///
/// Clients of the initialize-based revisions (2025-03-26 to 2025-11-25) are
/// served on the same endpoint, in sessions that `initialize` opens (see
/// [`HttpConfig::legacy_sessions`]): a random `Mcp-Session-Id`, a standalone
/// GET stream, DELETE, and the legacy status rules (JSON-RPC errors with
/// `200`, notifications and responses `202`). A session lives in the
/// process that minted it: replicas behind a load balancer need sticky
/// routing on `Mcp-Session-Id` for legacy clients; modern requests need
/// none.
///
/// # Cancellation
///
/// A request runs inside its HTTP exchange: no task is spawned for it. When
/// the client closes the connection, the exchange is dropped, the request's
/// cancellation token fires and then its handler is dropped.
///
/// Spec: basic/transports/streamable-http.mdx
///
/// # Example
///
/// ```no_run
/// use toolwire::{HttpConfig, HttpService, Server, ServerConfig};
///
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// // Mount in any tower-based router, e.g. axum's `Router::route_service("/mcp", svc)`,
/// // which hands the service the whole path.
/// let svc = HttpService::new(server.clone(), HttpConfig::new().with_path("/mcp"));
/// // A router that strips its prefix first (axum's `nest_service("/api/mcp", nested)`)
/// // hands it the rest, so `/mcp` would never match: serve any path there.
/// let nested = HttpService::new(server, HttpConfig::new().with_any_path());
/// # drop((svc, nested));
/// ```
#[derive(Clone)]
pub struct HttpService {
    server: Server,
    shared: Arc<Shared>,
    /// The counts of the client this connection belongs to, under
    /// [`serve_http`]; `None` when mounted elsewhere (no per-client limits).
    peer: Option<Arc<peers::PeerCounts>>,
}

/// A request's places under the concurrency limits (the server's and its
/// client's), held until its response ends.
#[derive(Debug, Default)]
pub(super) struct Permit {
    _global: Option<tokio::sync::OwnedSemaphorePermit>,
    _client: Option<peers::Slot>,
}

struct Shared {
    config: HttpConfig,
    policy: OriginPolicy,
    limiter: Option<Arc<Semaphore>>,
    /// Legacy sessions, unless [`HttpConfig::legacy_sessions`] is off.
    sessions: Option<sessions::SessionStore>,
    /// The OAuth resource server, when configured.
    #[cfg(feature = "auth")]
    auth: Option<crate::auth::Authenticator>,
}

impl fmt::Debug for HttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpService")
            .field("server", &self.server)
            .field("config", &self.shared.config)
            .finish()
    }
}

impl HttpService {
    /// Serves `server` with `config`.
    pub fn new(server: Server, mut config: HttpConfig) -> Self {
        // Deadlines are computed as `now + duration`; keep that addition
        // from overflowing whatever the configuration says.
        let cap = |d: Duration| d.min(MAX_DURATION);
        config.request_timeout = config.request_timeout.map(cap);
        config.read_timeout = cap(config.read_timeout).max(Duration::from_millis(1));
        config.sse_keep_alive = config
            .sse_keep_alive
            .map(|d| cap(d).max(Duration::from_millis(1)));
        config.shutdown_grace = cap(config.shutdown_grace);
        let policy = OriginPolicy::new(
            config.allowed_hosts.as_deref(),
            config.allowed_origins.as_deref(),
        );
        let sessions = config.legacy_sessions.then(|| {
            sessions::SessionStore::new(
                cap(config.session_idle_timeout),
                cap(config.session_init_timeout),
                config.max_sessions,
            )
        });
        let limiter = config
            .max_concurrent_requests
            .map(|n| Arc::new(Semaphore::new(n.min(Semaphore::MAX_PERMITS))));
        #[cfg(feature = "auth")]
        let auth = config
            .auth
            .clone()
            .map(|a| crate::auth::Authenticator::new(a, config.path.as_deref()));
        Self {
            server,
            shared: Arc::new(Shared {
                config,
                policy,
                limiter,
                sessions,
                #[cfg(feature = "auth")]
                auth,
            }),
            peer: None,
        }
    }

    /// This service for one connection of the client `peer`.
    fn for_peer(&self, peer: Arc<peers::PeerCounts>) -> Self {
        Self {
            server: self.server.clone(),
            shared: Arc::clone(&self.shared),
            peer: Some(peer),
        }
    }

    /// The client's address, under [`serve_http`].
    fn peer_ip(&self) -> Option<std::net::IpAddr> {
        self.peer.as_ref().map(|peer| peer.ip)
    }

    /// Takes one of the client's stream slots; `None` at its limit.
    fn stream_slot(&self) -> Result<Option<peers::Slot>, ()> {
        match &self.peer {
            Some(peer) => peers::acquire(
                peer,
                peers::Kind::Stream,
                self.shared.config.max_streams_per_client,
            )
            .map(Some)
            .ok_or(()),
            None => Ok(None),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.shared.config
    }

    /// The server behind the endpoint.
    pub fn server(&self) -> &Server {
        &self.server
    }

    fn respond<B>(&self, req: http::Request<B>) -> HttpResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        self.clone().handle(req)
    }
}

/// The future of one [`HttpService`] response. It never fails: every
/// problem is an HTTP response.
pub struct HttpResponseFuture {
    inner: Inner,
}

enum Inner {
    /// Answered from the head alone (taken on completion).
    Ready(Option<http::Response<HttpBody>>),
    Pending(Pin<Box<dyn Future<Output = http::Response<HttpBody>> + Send>>),
}

impl HttpResponseFuture {
    fn ready(res: http::Response<HttpBody>) -> Self {
        Self {
            inner: Inner::Ready(Some(res)),
        }
    }

    fn boxed(fut: impl Future<Output = http::Response<HttpBody>> + Send + 'static) -> Self {
        Self {
            inner: Inner::Pending(Box::pin(fut)),
        }
    }
}

impl fmt::Debug for HttpResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpResponseFuture").finish_non_exhaustive()
    }
}

impl Future for HttpResponseFuture {
    type Output = Result<http::Response<HttpBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.inner {
            Inner::Ready(res) => Poll::Ready(Ok(res.take().expect("polled after completion"))),
            Inner::Pending(fut) => fut.as_mut().poll(cx).map(Ok),
        }
    }
}

impl<B> tower_service::Service<http::Request<B>> for HttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<HttpBody>;
    type Error = Infallible;
    type Future = HttpResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The concurrency limit answers 503 rather than applying
        // backpressure, so the service is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> HttpResponseFuture {
        self.respond(req)
    }
}

impl<B> hyper::service::Service<http::Request<B>> for HttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<HttpBody>;
    type Error = Infallible;
    type Future = HttpResponseFuture;

    fn call(&self, req: http::Request<B>) -> HttpResponseFuture {
        self.respond(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ServerConfig;
    use bytes::Bytes;

    /// The request future is boxed once per request and its construction
    /// copies it whole: keep it small by boxing the pipeline and the legacy
    /// path instead of inlining them.
    #[test]
    fn request_future_stays_small() {
        let server = Server::new(ServerConfig::new("size", "0"));
        let svc = HttpService::new(server, HttpConfig::new());
        let body = http_body_util::Full::new(Bytes::new());
        let fut = svc.post(
            http::HeaderMap::new(),
            Default::default(),
            body,
            Permit::default(),
        );
        let size = std::mem::size_of_val(&fut);
        eprintln!("request future: {size} bytes");
        assert!(size < 1024, "the request future is {size} bytes");
    }
}
