//! The Streamable HTTP client transport: every request is one POST; the
//! reply is one `application/json` message or a `text/event-stream` of
//! notifications ending with the response.
//!
//! `http://` and `https://` (rustls, see `tls.rs`; HTTP/2 when the server
//! offers it over ALPN).
//!
//! A legacy (2025) session adds state: the `Mcp-Session-Id` the
//! `initialize` reply assigns travels on every later message, a GET stream
//! carries the server's own requests and notifications (reopened with
//! `Last-Event-ID` when it ends and the server gave event ids), the server's
//! requests found on any stream go to the client's inbound sink, and `close`
//! ends the session with DELETE. Spec (2025-11-25):
//! basic/transports.mdx#session-management,
//! #listening-for-messages-from-the-server.
//!
//! Dropping an exchange drops the response body or the pending response,
//! which closes the connection; the server takes that as cancellation.
//!
//! Once the 2024-11-05 HTTP+SSE transport is open (`http/legacy_sse.rs`), every
//! message goes that way instead.
//!
//! Spec: basic/transports/streamable-http.mdx

mod direct;
mod legacy_sse;

use super::sse::SseParser;
use super::{
    Decoded, Exchange, InboundSink, Incoming, Outgoing, Transport, TransportKind, decode_any,
};
use crate::client::error::ClientError;
use crate::outbound::{self, HttpClient};
use bytes::{Bytes, BytesMut};
use direct::Direct;
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use legacy_sse::SseSession;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;
use tokio::task::JoinHandle;
use toolwire_proto::RequestId;

/// The legacy session header.
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The protocol version header (sent on legacy GET, DELETE and posts).
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// How often the legacy GET stream is reopened after it ends, at most.
const STREAM_RETRIES: u32 = 5;
/// How long the handshake waits for the legacy GET stream to open.
const STREAM_OPEN_WAIT: Duration = Duration::from_secs(5);

/// The largest single JSON reply or SSE event accepted, in bytes.
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of an unexpected HTTP error body is kept for the error message.
const ERROR_BODY_PREVIEW: usize = 512;

type Hyper = HttpClient;

pub(crate) struct HttpTransport {
    client: Hyper,
    /// The POSTs' connections, for an `http://` endpoint (`http/direct.rs`).
    direct: Option<Direct>,
    uri: Uri,
    authorization: RwLock<Option<HeaderValue>>,
    extra_headers: Vec<(HeaderName, HeaderValue)>,
    /// The legacy session id, once `initialize` assigned one.
    session: Arc<RwLock<Option<HeaderValue>>>,
    /// The legacy protocol version header, once negotiated.
    legacy_version: RwLock<Option<HeaderValue>>,
    inbound: InboundSink,
    /// The legacy GET stream's reader.
    stream: Mutex<Option<JoinHandle<()>>>,
    /// Supplies `Authorization` and handles 401/403 (feature `oauth`).
    #[cfg(feature = "oauth")]
    auth: Option<Arc<dyn crate::client::auth::AuthProvider>>,
    /// The 2024-11-05 HTTP+SSE connection, once the server turned out to
    /// speak only that; kept for the transport's lifetime.
    sse: OnceLock<SseSession>,
}

impl HttpTransport {
    /// A transport for the MCP endpoint at `url`, sending `extra_headers`
    /// on every request.
    pub(crate) fn new(
        url: &str,
        extra_headers: &[(String, String)],
        extra_cas: &[Vec<u8>],
    ) -> Result<Self, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::InvalidUrl(format!("{url:?}: {e}")))?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => {
                return Err(ClientError::InvalidUrl(format!(
                    "{url:?}: expected an http:// or https:// URL"
                )));
            }
        }
        if uri.host().is_none() {
            return Err(ClientError::InvalidUrl(format!("{url:?}: no host")));
        }
        let extra_headers = extra_headers
            .iter()
            .map(|(k, v)| {
                let name = HeaderName::try_from(k.as_str())
                    .map_err(|e| ClientError::InvalidUrl(format!("header name {k:?}: {e}")))?;
                let value = HeaderValue::try_from(v.as_str())
                    .map_err(|e| ClientError::InvalidUrl(format!("header {k}: {e}")))?;
                Ok((name, value))
            })
            .collect::<Result<_, ClientError>>()?;
        let client = outbound::client(uri.scheme_str() == Some("https"), extra_cas)?;
        Ok(Self {
            client,
            direct: Direct::for_uri(&uri),
            uri,
            authorization: RwLock::new(None),
            extra_headers,
            session: Arc::default(),
            legacy_version: RwLock::new(None),
            inbound: InboundSink::default(),
            stream: Mutex::new(None),
            #[cfg(feature = "oauth")]
            auth: None,
            sse: OnceLock::new(),
        })
    }

    /// Authorizes every request through `auth`.
    #[cfg(feature = "oauth")]
    pub(crate) fn with_auth(
        mut self,
        auth: Option<Arc<dyn crate::client::auth::AuthProvider>>,
    ) -> Self {
        self.auth = auth;
        self
    }

    /// A request that got no response: a TLS refusal explained, or the
    /// connection error's chain.
    fn failed(&self, e: &hyper_util::client::legacy::Error) -> ClientError {
        let host = self.uri.host().unwrap_or_default();
        match outbound::tls::explain(e, host) {
            Some(why) => ClientError::Tls(why),
            None => ClientError::Transport(format!("{}: {}", self.uri, connect_error(e))),
        }
    }

    fn session(&self) -> Option<HeaderValue> {
        self.session.read().ok().and_then(|s| s.clone())
    }

    /// A request to the endpoint with the headers every message carries:
    /// the configured ones, credentials, and the legacy session's.
    fn base(&self, method: Method, accept: &'static str) -> http::request::Builder {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.uri.clone())
            .header(ACCEPT, accept);
        for (name, value) in &self.extra_headers {
            builder = builder.header(name, value);
        }
        if let Some(auth) = self.authorization.read().ok().and_then(|a| a.clone()) {
            builder = builder.header(AUTHORIZATION, auth);
        }
        if let Some(session) = self.session() {
            builder = builder.header(SESSION_HEADER, session);
        }
        builder
    }

    /// Sends the request `build` makes; with an auth provider (feature
    /// `oauth`), through its loop (`client/auth/retry.rs`), which may send
    /// it again after a 401 or 403. The provider's value is also kept for
    /// the requests [`base`](Self::base) builds (legacy GET and DELETE).
    async fn dispatch(
        &self,
        build: impl Fn() -> Result<Request<Full<Bytes>>, ClientError>,
    ) -> Result<hyper::Response<Body>, ClientError> {
        #[cfg(feature = "oauth")]
        if let Some(auth) = &self.auth {
            return crate::client::auth::send_authorized(auth.as_ref(), |value| {
                self.set_authorization(value);
                let request = build().map(|mut req| {
                    // A request with an `Authorization` of its own keeps it.
                    if !req.headers().contains_key(AUTHORIZATION)
                        && let Some(v) = self.authorization.read().ok().and_then(|a| a.clone())
                    {
                        req.headers_mut().insert(AUTHORIZATION, v);
                    }
                    req
                });
                async move { self.post(request?).await }
            })
            .await;
        }
        self.post(build()?).await
    }

    /// Sends a POST: on the transport's own connections for `http://`, on
    /// hyper_util's pooled client otherwise.
    async fn post(&self, req: Request<Full<Bytes>>) -> Result<hyper::Response<Body>, ClientError> {
        match &self.direct {
            Some(direct) => direct
                .send(req)
                .await
                .map_err(|e| ClientError::Transport(format!("{}: {e}", self.uri))),
            None => self.client.request(req).await.map_err(|e| self.failed(&e)),
        }
    }

    /// A request's POST, its headers set directly (no builder: this is
    /// every request's path).
    fn build(&self, request: &Outgoing) -> Result<Request<Full<Bytes>>, ClientError> {
        // Spec: basic/transports/streamable-http.mdx#sending-messages
        let mut req = Request::new(Full::new(request.body.clone()));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.uri.clone();
        let headers = req.headers_mut();
        headers.reserve(4 + self.extra_headers.len() + request.headers.len());
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in &self.extra_headers {
            headers.append(name, value.clone());
        }
        if let Some(auth) = self.authorization.read().ok().and_then(|a| a.clone()) {
            headers.insert(AUTHORIZATION, auth);
        }
        if let Some(session) = self.session() {
            headers.insert(SESSION_HEADER, session);
        }
        // The request's own headers replace the client's of the same name.
        for (name, value) in &request.headers {
            headers.insert(name, value.clone());
        }
        Ok(req)
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn set_authorization(&self, value: Option<String>) {
        let value = value
            .and_then(|v| HeaderValue::try_from(v).ok())
            .map(|mut v| {
                v.set_sensitive(true);
                v
            });
        if let Ok(mut a) = self.authorization.write() {
            *a = value;
        }
    }

    fn send(&self, request: Outgoing) -> BoxFuture<'_, Result<Box<dyn Exchange>, ClientError>> {
        Box::pin(async move {
            if let Some(sse) = self.sse.get() {
                return self.send_sse(sse, request).await;
            }
            let had_session = self.session().is_some();
            let response = self.dispatch(|| self.build(&request)).await?;
            let status = response.status();
            // Spec (2025-11-25): basic/transports.mdx#session-management — a
            // 404 to a request with a session id means the session is gone.
            if had_session && status == StatusCode::NOT_FOUND {
                return Err(ClientError::SessionExpired);
            }
            if request.initialize
                && status.is_success()
                && let Some(id) = response.headers().get(SESSION_HEADER)
                && let Ok(mut s) = self.session.write()
            {
                *s = Some(id.clone());
            }
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    v.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_ascii_lowercase()
                })
                .unwrap_or_default();
            let body = response.into_body();
            if status.is_success() && content_type == "text/event-stream" {
                return Ok(Box::new(SseExchange {
                    id: request.id,
                    inbound: self.inbound.clone(),
                    body,
                    parser: SseParser::new(MAX_MESSAGE_BYTES),
                    queue: VecDeque::new(),
                    done: false,
                }) as Box<dyn Exchange>);
            }
            let bytes = read_body(body).await?;
            let message = single_message(&self.uri, status, &content_type, &bytes)?;
            Ok(Box::new(OneShot(Some(message))) as Box<dyn Exchange>)
        })
    }

    fn inbound(&self) -> Option<InboundSink> {
        Some(self.inbound.clone())
    }

    fn post(&self, body: Bytes) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if let Some(sse) = self.sse.get() {
                return self.post_sse(sse, body).await;
            }
            let build = || {
                let mut builder = self
                    .base(Method::POST, "application/json, text/event-stream")
                    .header(CONTENT_TYPE, "application/json");
                if let Some(v) = self.legacy_version.read().ok().and_then(|v| v.clone()) {
                    builder = builder.header(VERSION_HEADER, v);
                }
                builder
                    .body(Full::new(body.clone()))
                    .map_err(|e| ClientError::Protocol(format!("cannot build the request: {e}")))
            };
            let had_session = self.session().is_some();
            let response = self.dispatch(build).await?;
            let status = response.status();
            if had_session && status == StatusCode::NOT_FOUND {
                return Err(ClientError::SessionExpired);
            }
            let bytes = read_body(response.into_body()).await?;
            if status.is_success() {
                return Ok(());
            }
            Err(ClientError::Http {
                url: self.uri.to_string(),
                status: status.as_u16(),
                body: preview(&bytes),
            })
        })
    }

    fn start_legacy_session(&self, version: Option<String>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.sse.get().is_some() {
                // The SSE stream is already open and carries everything.
                return;
            }
            let version = version.and_then(|v| HeaderValue::try_from(v).ok());
            if let Ok(mut v) = self.legacy_version.write() {
                v.clone_from(&version);
            }
            let mut builder = self.base(Method::GET, "text/event-stream");
            if let Some(v) = version {
                builder = builder.header(VERSION_HEADER, v);
            }
            let Ok(request) = builder.body(Full::new(Bytes::new())) else {
                return;
            };
            // Wait until the stream is open (or refused): a server may send
            // a request that is not tied to a POST (an elicitation, say) on
            // it as soon as the client calls a tool, and drop it if there
            // is no stream yet.
            let (parts, _) = request.into_parts();
            let first =
                tokio::time::timeout(STREAM_OPEN_WAIT, open_stream(&self.client, &parts, None))
                    .await
                    .unwrap_or(StreamOpen::Failed);
            if let StreamOpen::Refused = first {
                return;
            }
            let task = tokio::spawn(server_stream(
                self.client.clone(),
                parts,
                first,
                self.inbound.clone(),
            ));
            if let Ok(mut s) = self.stream.lock()
                && let Some(old) = s.replace(task)
            {
                old.abort();
            }
        })
    }

    fn open_legacy_sse(&self) -> BoxFuture<'_, Result<bool, ClientError>> {
        Box::pin(self.try_sse())
    }

    fn session_id(&self) -> Option<String> {
        self.session()
            .and_then(|s| s.to_str().ok().map(str::to_owned))
    }

    fn reset_session(&self) {
        if let Ok(mut s) = self.session.write() {
            *s = None;
        }
        if let Some(task) = self.stream.lock().ok().and_then(|mut s| s.take()) {
            task.abort();
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if let Some(task) = self.stream.lock().ok().and_then(|mut s| s.take()) {
                task.abort();
            }
            if let Some(sse) = self.sse.get() {
                // Closing the stream ends an HTTP+SSE session.
                sse.close();
            }
            if self.session().is_none() {
                return Ok(());
            }
            // Spec (2025-11-25): basic/transports.mdx#session-management —
            // a client that no longer needs the session SHOULD DELETE it.
            let mut builder = self.base(Method::DELETE, "application/json");
            if let Some(v) = self.legacy_version.read().ok().and_then(|v| v.clone()) {
                builder = builder.header(VERSION_HEADER, v);
            }
            let req = builder
                .body(Full::new(Bytes::new()))
                .map_err(|e| ClientError::Protocol(format!("cannot build the request: {e}")))?;
            if let Ok(mut s) = self.session.write() {
                *s = None;
            }
            match self.client.request(req).await {
                // 405: the server does not let clients end sessions.
                Ok(r) => tracing::debug!("DELETE of the session: {}", r.status()),
                Err(e) => tracing::debug!("DELETE of the session failed: {}", connect_error(&e)),
            }
            Ok(())
        })
    }
}

/// How one attempt to open the legacy GET stream went.
enum StreamOpen {
    Open(Body),
    /// The server offers no stream (405, or another refusal).
    Refused,
    /// The connection failed; worth another try.
    Failed,
}

async fn open_stream(
    client: &Hyper,
    parts: &http::request::Parts,
    last_event_id: Option<&str>,
) -> StreamOpen {
    let mut req = Request::from_parts(parts.clone(), Full::new(Bytes::new()));
    // Spec (2025-11-25): basic/transports.mdx#resumability-and-redelivery —
    // resume after the last event the server gave an id.
    if let Some(v) = last_event_id.and_then(|id| HeaderValue::try_from(id).ok()) {
        req.headers_mut()
            .insert(HeaderName::from_static("last-event-id"), v);
    }
    match client.request(req).await {
        Ok(r) if r.status().is_success() => StreamOpen::Open(r.into_body()),
        Ok(r) => {
            tracing::debug!("no legacy GET stream: {}", r.status());
            StreamOpen::Refused
        }
        Err(e) => {
            tracing::debug!("the legacy GET stream failed: {}", connect_error(&e));
            StreamOpen::Failed
        }
    }
}

/// Reads the legacy GET stream into the inbound sink, reopening it a few
/// times when it ends; a 405 (or any refusal) means the server offers none.
// Spec (2025-11-25): basic/transports.mdx#listening-for-messages-from-the-server
async fn server_stream(
    client: Hyper,
    parts: http::request::Parts,
    first: StreamOpen,
    inbound: InboundSink,
) {
    let mut next = Some(first);
    let mut last_event_id: Option<String> = None;
    for attempt in 0..=STREAM_RETRIES {
        let opened = match next.take() {
            Some(o) => o,
            None => {
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
                open_stream(&client, &parts, last_event_id.as_deref()).await
            }
        };
        let mut body = match opened {
            StreamOpen::Open(body) => body,
            StreamOpen::Refused => return,
            StreamOpen::Failed => continue,
        };
        let mut parser = SseParser::new(MAX_MESSAGE_BYTES);
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let Ok(events) = parser.push(&data) else {
                break;
            };
            for event in events {
                match decode_any(&event) {
                    Ok(Decoded::Request(r)) => inbound.deliver(r),
                    Ok(Decoded::Message(Incoming::Notification { method, params }, _)) => {
                        inbound.deliver(super::Inbound::Notification { method, params });
                    }
                    Ok(Decoded::Message(Incoming::Response(_), id)) => {
                        tracing::debug!("ignoring a response to {id:?} on the GET stream");
                    }
                    Err(e) => tracing::warn!("ignoring an event on the GET stream: {e}"),
                }
            }
            if let Some(id) = parser.last_event_id() {
                last_event_id = Some(id.to_owned());
            }
        }
    }
    // Given up: a legacy `listen` must not wait for what can no longer come.
    inbound.deliver(super::Inbound::Lost(format!(
        "the session's GET stream ended and could not be reopened ({} attempts)",
        STREAM_RETRIES + 1
    )));
}

fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut body: String = text.chars().take(ERROR_BODY_PREVIEW).collect();
    if body.len() < text.len() {
        body.push('…');
    }
    body
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some(task) = self.stream.get_mut().ok().and_then(Option::take) {
            task.abort();
        }
    }
}

fn connect_error(e: &hyper_util::client::legacy::Error) -> String {
    crate::outbound::error_chain(e)
}

async fn read_body(mut body: Body) -> Result<Bytes, ClientError> {
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ClientError::Transport(format!("reading the reply: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > MAX_MESSAGE_BYTES {
                return Err(ClientError::Protocol(format!(
                    "the reply is larger than {MAX_MESSAGE_BYTES} bytes"
                )));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

/// Reads a non-streaming reply: a JSON-RPC message (result, or error with
/// any status), or an HTTP error.
fn single_message(
    uri: &Uri,
    status: StatusCode,
    content_type: &str,
    bytes: &[u8],
) -> Result<Incoming, ClientError> {
    let looks_json = content_type == "application/json"
        || (content_type.is_empty() && bytes.trim_ascii_start().first() == Some(&b'{'));
    let decoded = looks_json.then(|| Incoming::decode(bytes));
    if let Some(Ok((incoming, _))) = decoded {
        return match incoming {
            Incoming::Response(_) => Ok(incoming),
            Incoming::Notification { method, .. } => Err(ClientError::Protocol(format!(
                "the reply is a {method} notification, not a response"
            ))),
        };
    }
    if !status.is_success() {
        return Err(ClientError::Http {
            url: uri.to_string(),
            status: status.as_u16(),
            body: preview(bytes),
        });
    }
    if content_type == "application/json"
        && let Some(Err(e)) = decoded
    {
        // The type is right; the body is what is wrong.
        return Err(ClientError::Protocol(format!(
            "the reply is not a JSON-RPC message: {e}"
        )));
    }
    if status == StatusCode::ACCEPTED {
        return Err(ClientError::Protocol(
            "the server answered a request with 202 Accepted and no response".into(),
        ));
    }
    Err(ClientError::Protocol(format!(
        "the reply has content type {content_type:?}, expected application/json or text/event-stream"
    )))
}

struct OneShot(Option<Incoming>);

impl Exchange for OneShot {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>> {
        Box::pin(async move { self.0.take().map(Ok) })
    }
}

struct SseExchange {
    id: RequestId,
    inbound: InboundSink,
    body: Body,
    parser: SseParser,
    queue: VecDeque<Vec<u8>>,
    done: bool,
}

impl SseExchange {
    /// Decodes one event; `None` for events to skip.
    fn decode(&mut self, data: &[u8]) -> Option<Result<Incoming, ClientError>> {
        match decode_any(data) {
            // A legacy server asks its questions on the request's stream.
            Ok(Decoded::Request(r)) => {
                self.inbound.deliver(r);
                None
            }
            Ok(Decoded::Message(Incoming::Response(outcome), id)) => {
                // Spec: basic/transports/streamable-http.mdx — the final
                // response terminates the request's stream.
                if id.is_some() && id.as_ref() != Some(&self.id) {
                    tracing::debug!("ignoring a response to {id:?} on the stream of {}", self.id);
                    return None;
                }
                self.done = true;
                Some(Ok(Incoming::Response(outcome)))
            }
            Ok(Decoded::Message(n @ Incoming::Notification { .. }, _)) => Some(Ok(n)),
            Err(e) => {
                tracing::warn!("ignoring an event on the stream of {}: {e}", self.id);
                None
            }
        }
    }
}

impl Exchange for SseExchange {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>> {
        Box::pin(async move {
            loop {
                if self.done {
                    return None;
                }
                if let Some(data) = self.queue.pop_front() {
                    match self.decode(&data) {
                        Some(item) => return Some(item),
                        None => continue,
                    }
                }
                match self.body.frame().await {
                    None => {
                        self.done = true;
                        return None;
                    }
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(ClientError::Transport(format!(
                            "reading the event stream: {e}"
                        ))));
                    }
                    Some(Ok(frame)) => {
                        let Ok(data) = frame.into_data() else {
                            continue;
                        };
                        match self.parser.push(&data) {
                            Ok(events) => self.queue.extend(events),
                            Err(e) => {
                                self.done = true;
                                return Some(Err(ClientError::Protocol(e.to_string())));
                            }
                        }
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests;
