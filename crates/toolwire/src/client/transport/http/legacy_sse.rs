//! The 2024-11-05 HTTP+SSE transport, the last fallback over HTTP: a GET to
//! the server's URL opens one SSE stream whose first event, `endpoint`,
//! names the URL to POST every message to; every response, request and
//! notification of the server comes back on that one stream, so messages
//! are routed to their requests as on stdio (`router.rs`).
//!
//! The client turns to it when an `initialize` POST gets a 400, 404 or 405
//! that carries no JSON-RPC error, and keeps it for the client's lifetime.
//! The endpoint must be on the URL's own origin, so that headers and
//! credentials never go elsewhere.
//!
//! The stream is the session: when the server closes it, every request in
//! flight fails at once with an error that says so, and the next request
//! reopens it (a new GET, a new `endpoint` event and so a new POST URL;
//! [`REOPEN_ATTEMPTS`] tries with a doubling wait from [`REOPEN_BACKOFF`]).
//! The new stream is a new session, which knows no `initialize` yet: a
//! request other than `initialize` on it fails with
//! [`ClientError::SessionExpired`], on which the client initialises again
//! and sends the request once more, as for an expired Streamable HTTP
//! session.
//!
//! Spec: basic/transports/streamable-http.mdx#http%2Bsse-transport-2024-11-05;
//! (2024-11-05) basic/transports.mdx#http-with-sse

use super::super::router::{self, RoutedExchange, Shared};
use super::super::sse::SseParser;
use super::super::{Exchange, InboundSink, Outgoing};
use super::{HttpTransport, MAX_MESSAGE_BYTES, preview, read_body};
use crate::client::error::ClientError;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::request::Parts;
use http::uri::PathAndQuery;
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long the GET may take to deliver its `endpoint` event.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);
/// How many times a stream the server closed is reopened before the
/// request that needs it fails.
const REOPEN_ATTEMPTS: u32 = 5;
/// The wait before the second attempt to reopen; doubled after each failed
/// one (the first attempt does not wait).
const REOPEN_BACKOFF: Duration = Duration::from_millis(100);

type Hyper = super::Hyper;

/// An HTTP+SSE connection: the stream open now, and what it takes to open
/// another.
pub(crate) struct SseSession {
    client: Hyper,
    /// The GET that opens a stream.
    get: Parts,
    /// The URL the GET goes to; endpoints resolve against it.
    base: Uri,
    /// Headers of the background POSTs.
    headers: Vec<(HeaderName, HeaderValue)>,
    inbound: InboundSink,
    max_event: usize,
    live: Mutex<Live>,
    /// One reopening at a time.
    reopening: tokio::sync::Mutex<()>,
    /// Set by [`close`](Self::close): nothing is reopened after it.
    closed: AtomicBool,
}

/// One open stream: a session of the server.
struct Live {
    /// Where messages are POSTed.
    endpoint: Uri,
    routes: Shared,
    /// Messages posted in the background (cancellations of dropped
    /// requests).
    background: mpsc::UnboundedSender<Bytes>,
    tasks: Vec<JoinHandle<()>>,
    /// Whether an `initialize` went out in this session.
    initialized: bool,
}

impl Live {
    fn stop(&mut self, reason: &str) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        router::close_routes(&self.routes, reason.to_owned());
    }
}

/// Opens one stream: sends the GET and waits for the `endpoint` event.
/// `Ok(Err(why))` when the answer is no HTTP+SSE stream.
async fn connect(
    client: &Hyper,
    get: &Parts,
    base: &Uri,
    headers: &[(HeaderName, HeaderValue)],
    inbound: &InboundSink,
    max_event: usize,
) -> Result<Result<Live, String>, ClientError> {
    let request = Request::from_parts(get.clone(), Full::new(Bytes::new()));
    let response = match client.request(request).await {
        Ok(r) => r,
        Err(e) => return Ok(Err(format!("the GET failed: {e}"))),
    };
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if !response.status().is_success() || !is_sse {
        return Ok(Err(format!(
            "the GET got {} without an event stream",
            response.status()
        )));
    }
    let mut body = response.into_body();
    let mut parser = SseParser::new(max_event);
    let first = tokio::time::timeout(ENDPOINT_WAIT, async {
        loop {
            let Some(Ok(frame)) = body.frame().await else {
                return Ok(None);
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let mut events = parser
                .push_typed(&data)
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            if !events.is_empty() {
                let first = events.remove(0);
                return Ok(Some((first, events)));
            }
        }
    })
    .await;
    let (first, rest) = match first {
        Ok(Ok(Some(f))) => f,
        Ok(Ok(None)) => return Ok(Err("the stream ended without an event".into())),
        Ok(Err(e)) => return Err(e),
        Err(_) => return Ok(Err(format!("no event within {ENDPOINT_WAIT:?}"))),
    };
    if first.event.as_deref() != Some("endpoint") {
        return Ok(Err(format!(
            "the first event is {:?}, not endpoint",
            first.event.as_deref().unwrap_or("message")
        )));
    }
    let endpoint = resolve(base, String::from_utf8_lossy(&first.data).trim())?;
    let routes: Shared = Arc::default();
    if let Ok(mut r) = routes.lock() {
        r.inbound = inbound.clone();
    }
    for event in rest {
        if event.event.as_deref().is_none_or(|t| t == "message") {
            router::route(&routes, &event.data);
        }
    }
    let reader = tokio::spawn(read_stream(body, parser, Arc::clone(&routes)));
    let (background, queue) = mpsc::unbounded_channel();
    let poster = tokio::spawn(post_loop(
        client.clone(),
        endpoint.clone(),
        headers.to_vec(),
        queue,
    ));
    tracing::debug!("speaking the 2024-11-05 HTTP+SSE transport, posting to {endpoint}");
    Ok(Ok(Live {
        endpoint,
        routes,
        background,
        tasks: vec![reader, poster],
        initialized: false,
    }))
}

impl SseSession {
    /// Sends `get` (a GET of the server's URL `base`) and waits for the
    /// `endpoint` event. `headers` go on every background POST. `Ok(Err(why))`
    /// when the server is no HTTP+SSE server.
    pub(crate) async fn open(
        client: &Hyper,
        get: Parts,
        base: &Uri,
        headers: Vec<(HeaderName, HeaderValue)>,
        inbound: InboundSink,
        max_event: usize,
    ) -> Result<Result<Self, String>, ClientError> {
        let live = match connect(client, &get, base, &headers, &inbound, max_event).await? {
            Ok(live) => live,
            Err(why) => return Ok(Err(why)),
        };
        Ok(Ok(Self {
            client: client.clone(),
            get,
            base: base.clone(),
            headers,
            inbound,
            max_event,
            live: Mutex::new(live),
            reopening: tokio::sync::Mutex::new(()),
            closed: AtomicBool::new(false),
        }))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Live>, ClientError> {
        self.live
            .lock()
            .map_err(|_| ClientError::Transport("the HTTP+SSE state is poisoned".into()))
    }

    /// Whether the open stream has ended (the server closed it).
    fn ended(&self) -> Result<bool, ClientError> {
        let live = self.lock()?;
        Ok(live.routes.lock().map_or(true, |r| r.closed.is_some()))
    }

    /// Reopens the stream if the server closed it: a bounded number of
    /// attempts, with a doubling wait between them.
    async fn reopen_if_ended(&self) -> Result<(), ClientError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ClientError::Transport("the client is closed".into()));
        }
        if !self.ended()? {
            return Ok(());
        }
        let _one = self.reopening.lock().await;
        if !self.ended()? {
            // Another request reopened it meanwhile.
            return Ok(());
        }
        let mut wait = REOPEN_BACKOFF;
        let mut why = String::new();
        for attempt in 1..=REOPEN_ATTEMPTS {
            if attempt > 1 {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
            let opened = connect(
                &self.client,
                &self.get,
                &self.base,
                &self.headers,
                &self.inbound,
                self.max_event,
            )
            .await;
            match opened {
                Ok(Ok(live)) => {
                    if self.closed.load(Ordering::Acquire) {
                        let mut live = live;
                        live.stop("the client is closed");
                        return Err(ClientError::Transport("the client is closed".into()));
                    }
                    let mut old = std::mem::replace(&mut *self.lock()?, live);
                    old.stop("the HTTP+SSE stream was reopened");
                    tracing::debug!("reopened the HTTP+SSE stream (attempt {attempt})");
                    return Ok(());
                }
                Ok(Err(w)) => why = w,
                Err(e) => why = e.to_string(),
            }
            tracing::debug!("reopening the HTTP+SSE stream, attempt {attempt}: {why}");
        }
        Err(ClientError::Transport(format!(
            "the server closed the HTTP+SSE stream at {}, and {REOPEN_ATTEMPTS} attempts to reopen it failed: {why}",
            self.base
        )))
    }

    /// Registers a request about to be POSTed; returns where to POST it.
    /// A stream the server closed is reopened first; the new session knows
    /// no `initialize`, so anything else is refused with
    /// [`ClientError::SessionExpired`].
    async fn register(&self, request: &Outgoing) -> Result<(Uri, RoutedExchange), ClientError> {
        self.reopen_if_ended().await?;
        let mut live = self.lock()?;
        if request.initialize {
            live.initialized = true;
        } else if !live.initialized {
            return Err(ClientError::SessionExpired);
        }
        let exchange = router::register(&live.routes, request, live.background.clone())?;
        Ok((live.endpoint.clone(), exchange))
    }

    /// Where a message that gets no response goes: the open stream's
    /// endpoint. Nothing is reopened for it: a notification or an answer
    /// belongs to the session that ended.
    fn endpoint(&self) -> Result<Uri, ClientError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ClientError::Transport("the client is closed".into()));
        }
        let live = self.lock()?;
        if let Ok(r) = live.routes.lock()
            && let Some(reason) = &r.closed
        {
            return Err(ClientError::Transport(reason.clone()));
        }
        Ok(live.endpoint.clone())
    }

    /// Stops reading the stream, which ends the server's session.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if let Ok(mut live) = self.live.lock() {
            live.stop("the client is closed");
        }
    }
}

impl Drop for SseSession {
    fn drop(&mut self) {
        self.close();
    }
}

impl HttpTransport {
    /// A POST of `body` to the HTTP+SSE endpoint; its answer comes on the
    /// stream, so any success status will do.
    async fn post_to(&self, endpoint: &Uri, body: Bytes) -> Result<(), ClientError> {
        let request = self
            .base(Method::POST, "application/json, text/event-stream")
            .uri(endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))
            .map_err(|e| ClientError::Protocol(format!("cannot build the request: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| self.failed(&e))?;
        let status = response.status();
        let bytes = read_body(response.into_body()).await?;
        if status.is_success() {
            return Ok(());
        }
        Err(ClientError::Http {
            url: endpoint.to_string(),
            status: status.as_u16(),
            body: preview(&bytes),
        })
    }

    pub(super) async fn send_sse(
        &self,
        sse: &SseSession,
        request: Outgoing,
    ) -> Result<Box<dyn Exchange>, ClientError> {
        let (endpoint, mut exchange) = sse.register(&request).await?;
        match self.post_to(&endpoint, request.body).await {
            Ok(()) => Ok(Box::new(exchange) as Box<dyn Exchange>),
            Err(e) => Err(exchange.fail(e)),
        }
    }

    pub(super) async fn post_sse(&self, sse: &SseSession, body: Bytes) -> Result<(), ClientError> {
        let endpoint = sse.endpoint()?;
        self.post_to(&endpoint, body).await
    }

    /// GETs the URL; an `endpoint` event as the first event means a
    /// 2024-11-05 server, whose transport is then used from here on.
    // Spec: basic/transports/streamable-http.mdx#http%2Bsse-transport-2024-11-05
    pub(super) async fn try_sse(&self) -> Result<bool, ClientError> {
        if self.sse.get().is_some() {
            return Ok(true);
        }
        let (get, _) = self
            .base(Method::GET, "text/event-stream")
            .body(())
            .map_err(|e| ClientError::Protocol(format!("cannot build the request: {e}")))?
            .into_parts();
        // The background POSTs (cancellations) carry the headers of now.
        let mut headers = self.extra_headers.clone();
        if let Some(auth) = self.authorization.read().ok().and_then(|a| a.clone()) {
            headers.push((AUTHORIZATION, auth));
        }
        let opened = SseSession::open(
            &self.client,
            get,
            &self.uri,
            headers,
            self.inbound.clone(),
            MAX_MESSAGE_BYTES,
        )
        .await?;
        match opened {
            Ok(session) => {
                // Another caller may have won the race: its session stays.
                let _ = self.sse.set(session);
                Ok(true)
            }
            Err(why) => {
                tracing::debug!("no HTTP+SSE transport at {}: {why}", self.uri);
                Ok(false)
            }
        }
    }
}

/// The `endpoint` event's URI reference, resolved against the URL the GET
/// went to; it must stay on that URL's origin.
fn resolve(base: &Uri, reference: &str) -> Result<Uri, ClientError> {
    let refused =
        |why: &str| ClientError::Protocol(format!("the endpoint event {reference:?} {why}"));
    let has_scheme = reference
        .split_once(':')
        .is_some_and(|(scheme, _)| !scheme.is_empty() && !scheme.contains(['/', '?', '#']));
    if has_scheme || reference.starts_with("//") {
        // A network-path reference (`//host/path`) keeps the base's scheme.
        let absolute = if has_scheme {
            reference.to_owned()
        } else {
            format!("{}:{reference}", base.scheme_str().unwrap_or("http"))
        };
        let parsed: Uri = absolute.parse().map_err(|_| refused("is not a URI"))?;
        let same = parsed.scheme() == base.scheme() && parsed.authority() == base.authority();
        if !same {
            return Err(refused("names another origin"));
        }
        let path = parsed
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"));
        return with_path(base, path.as_str()).map_err(|_| refused("is not a URI"));
    }
    let path = if reference.starts_with('/') {
        reference.to_owned()
    } else if reference.starts_with('?') {
        format!("{}{reference}", base.path())
    } else {
        let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
        format!("{dir}/{reference}")
    };
    with_path(base, &path).map_err(|_| refused("is not a URI"))
}

fn with_path(base: &Uri, path: &str) -> Result<Uri, http::Error> {
    let mut parts = base.clone().into_parts();
    parts.path_and_query = Some(path.parse()?);
    Ok(Uri::from_parts(parts)?)
}

/// Routes every `message` event of the stream; when it ends, every pending
/// request fails, saying why.
async fn read_stream(mut body: Body, mut parser: SseParser, routes: Shared) {
    let reason = loop {
        match body.frame().await {
            None => break "the server closed the HTTP+SSE stream".to_owned(),
            Some(Err(e)) => break format!("reading the HTTP+SSE stream failed: {e}"),
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                match parser.push(&data) {
                    Ok(events) => {
                        for event in events {
                            router::route(&routes, &event);
                        }
                    }
                    Err(e) => break e.to_string(),
                }
            }
        }
    };
    tracing::debug!("HTTP+SSE stream stopped: {reason}");
    router::fail_routes(
        &routes,
        format!("{reason} before answering (the session ended; the next request reopens it)"),
    );
}

/// POSTs the queued background messages, in order.
async fn post_loop(
    client: Hyper,
    endpoint: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    mut queue: mpsc::UnboundedReceiver<Bytes>,
) {
    while let Some(body) = queue.recv().await {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(endpoint.clone())
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in &headers {
            builder = builder.header(name, value);
        }
        let Ok(request) = builder.body(Full::new(body)) else {
            continue;
        };
        match client.request(request).await {
            Ok(r) => tracing::debug!("background POST: {}", r.status()),
            Err(e) => tracing::debug!("background POST failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn endpoints_resolve_on_the_urls_origin_only() {
        let base: http::Uri = "http://127.0.0.1:8080/mcp/sse".parse().expect("uri");
        for (reference, resolved) in [
            (
                "/messages?sessionId=1",
                "http://127.0.0.1:8080/messages?sessionId=1",
            ),
            (
                "messages?sessionId=1",
                "http://127.0.0.1:8080/mcp/messages?sessionId=1",
            ),
            ("?sessionId=1", "http://127.0.0.1:8080/mcp/sse?sessionId=1"),
            ("http://127.0.0.1:8080/m?s=1", "http://127.0.0.1:8080/m?s=1"),
            ("//127.0.0.1:8080/m", "http://127.0.0.1:8080/m"),
        ] {
            assert_eq!(
                resolve(&base, reference).expect(reference).to_string(),
                resolved
            );
        }
        for elsewhere in [
            "http://evil.example/messages",
            "https://127.0.0.1:8080/messages",
            "http://127.0.0.1:9999/messages",
            "//evil.example/m",
        ] {
            let err = resolve(&base, elsewhere).expect_err(elsewhere);
            assert!(err.to_string().contains("another origin"), "{err}");
        }
    }
}
