//! The Streamable HTTP client transport: every request is one POST; the
//! reply is one `application/json` message or a `text/event-stream` of
//! notifications ending with the response.
//!
//! Plain `http://` only for now: there is no TLS connector yet, so an
//! `https://` URL is refused when the client is built.
//!
//! Dropping an exchange drops the response body or the pending response,
//! which closes the connection; the server takes that as cancellation.
//!
//! Spec: basic/transports/streamable-http.mdx

use super::sse::SseParser;
use super::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::client::error::ClientError;
use bytes::{Bytes, BytesMut};
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::collections::VecDeque;
use std::sync::RwLock;
use toolwire_proto::RequestId;

/// The largest single JSON reply or SSE event accepted, in bytes.
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of an unexpected HTTP error body is kept for the error message.
const ERROR_BODY_PREVIEW: usize = 512;

pub(crate) struct HttpTransport {
    client: HyperClient<HttpConnector, Full<Bytes>>,
    uri: Uri,
    authorization: RwLock<Option<HeaderValue>>,
    extra_headers: Vec<(HeaderName, HeaderValue)>,
}

impl HttpTransport {
    /// A transport for the MCP endpoint at `url`, sending `extra_headers`
    /// on every request.
    pub(crate) fn new(url: &str, extra_headers: &[(String, String)]) -> Result<Self, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::InvalidUrl(format!("{url:?}: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(ClientError::InvalidUrl(format!(
                    "{url:?}: https is not supported yet (toolwire's HTTP client has no TLS); use http://"
                )));
            }
            _ => {
                return Err(ClientError::InvalidUrl(format!(
                    "{url:?}: expected an http:// URL"
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
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = HyperClient::builder(TokioExecutor::new()).build(connector);
        Ok(Self {
            client,
            uri,
            authorization: RwLock::new(None),
            extra_headers,
        })
    }

    fn build(&self, request: &Outgoing) -> Result<Request<Full<Bytes>>, ClientError> {
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            // Spec: basic/transports/streamable-http.mdx#sending-messages
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        for (name, value) in &self.extra_headers {
            builder = builder.header(name, value);
        }
        if let Some(auth) = self.authorization.read().ok().and_then(|a| a.clone()) {
            builder = builder.header(AUTHORIZATION, auth);
        }
        for (name, value) in &request.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| ClientError::Protocol(format!("header name {name:?}: {e}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|e| ClientError::Protocol(format!("header {name}: {e}")))?;
            builder = builder.header(name, value);
        }
        builder
            .body(Full::new(request.body.clone()))
            .map_err(|e| ClientError::Protocol(format!("cannot build the request: {e}")))
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
            let req = self.build(&request)?;
            let response = self.client.request(req).await.map_err(|e| {
                ClientError::Transport(format!("{}: {}", self.uri, connect_error(&e)))
            })?;
            let status = response.status();
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
}

fn connect_error(e: &hyper_util::client::legacy::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
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
    if looks_json && let Ok((incoming, _)) = Incoming::decode(bytes) {
        return match incoming {
            Incoming::Response(_) => Ok(incoming),
            Incoming::Notification { method, .. } => Err(ClientError::Protocol(format!(
                "the reply is a {method} notification, not a response"
            ))),
        };
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(bytes);
        let mut body: String = text.chars().take(ERROR_BODY_PREVIEW).collect();
        if body.len() < text.len() {
            body.push('…');
        }
        return Err(ClientError::Http {
            url: uri.to_string(),
            status: status.as_u16(),
            body,
        });
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
    body: Body,
    parser: SseParser,
    queue: VecDeque<Vec<u8>>,
    done: bool,
}

impl SseExchange {
    /// Decodes one event; `None` for events to skip.
    fn decode(&mut self, data: &[u8]) -> Option<Result<Incoming, ClientError>> {
        match Incoming::decode(data) {
            Ok((Incoming::Response(outcome), id)) => {
                // Spec: basic/transports/streamable-http.mdx — the final
                // response terminates the request's stream.
                if id.is_some() && id.as_ref() != Some(&self.id) {
                    tracing::debug!("ignoring a response to {id:?} on the stream of {}", self.id);
                    return None;
                }
                self.done = true;
                Some(Ok(Incoming::Response(outcome)))
            }
            Ok((n @ Incoming::Notification { .. }, _)) => Some(Ok(n)),
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
