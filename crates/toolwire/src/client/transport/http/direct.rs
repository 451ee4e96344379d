//! The POSTs of a plain-HTTP transport, on HTTP/1.1 connections it keeps
//! to its one endpoint.
//!
//! hyper_util's pooled client serves any number of hosts: each request
//! hashes its scheme and authority (byte by byte, case-folded) to find a
//! pool, takes a connection out and puts it back when the response is
//! read. A transport talks to one host, so its connections are a short
//! list here: a request takes the first that is ready for another
//! exchange, or opens one. `https://` (TLS, HTTP/2 over ALPN) stays on
//! hyper_util's client.
//!
//! A connection that the server closed while it sat idle gives the request
//! back unsent, and the request goes out on the next one. An event-stream
//! response keeps its connection for as long as it streams, so its
//! connection is not kept for reuse.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderValue, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connections kept for reuse, at most; a request past them opens one that
/// closes after its exchange.
const MAX_KEPT: usize = 128;
/// How long a kept connection may wait unused before it is closed (what
/// hyper_util's pool allows too).
const IDLE: Duration = Duration::from_secs(90);

type Sender = SendRequest<Full<Bytes>>;

/// A kept connection and when its last exchange began.
struct Kept {
    sender: Sender,
    since: Instant,
}

/// The connections of one `http://` endpoint.
pub(super) struct Direct {
    host: String,
    port: u16,
    /// The `Host` header every request carries.
    host_header: HeaderValue,
    /// The request target: the URI's path and query (origin-form).
    target: Uri,
    kept: Mutex<Vec<Kept>>,
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub(super) enum DirectError {
    #[error("tcp connect error: {0}")]
    Connect(std::io::Error),
    #[error("{}", crate::outbound::error_chain(.0))]
    Http(hyper::Error),
}

impl Direct {
    /// The connections of `uri`, when it is `http://` with a host.
    pub(super) fn for_uri(uri: &Uri) -> Option<Self> {
        if uri.scheme_str() != Some("http") {
            return None;
        }
        let authority = uri.authority()?;
        let host = authority.host();
        // `[::1]` in a URI is `::1` to connect to.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let target = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .ok()?;
        Some(Self {
            host: bare.to_owned(),
            port: authority.port_u16().unwrap_or(80),
            host_header: HeaderValue::from_str(authority.as_str()).ok()?,
            target,
            kept: Mutex::new(Vec::new()),
        })
    }

    /// Sends `req` (whose URI is the endpoint's) and returns the response
    /// once its head has arrived.
    pub(super) async fn send(
        &self,
        mut req: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, DirectError> {
        *req.uri_mut() = self.target.clone();
        req.headers_mut().insert(HOST, self.host_header.clone());
        loop {
            let sender = match self.ready() {
                Some(sender) => sender,
                // A connection whose last answer was just read may not
                // have said it is ready yet: give it one turn before
                // opening another.
                None if self.waiting() => {
                    tokio::task::yield_now().await;
                    match self.ready() {
                        Some(sender) => sender,
                        None => break,
                    }
                }
                None => break,
            };
            let mut sender = sender;
            match sender.try_send_request(req).await {
                Ok(response) => {
                    self.keep(sender, &response);
                    return Ok(response);
                }
                Err(mut e) => match e.take_message() {
                    // Closed before the request went out: the next one.
                    Some(unsent) => req = unsent,
                    None => return Err(DirectError::Http(e.into_error())),
                },
            }
        }
        let mut sender = self.connect().await?;
        let response = sender.send_request(req).await.map_err(DirectError::Http)?;
        self.keep(sender, &response);
        Ok(response)
    }

    /// A kept connection ready for an exchange, taken out of the list; the
    /// closed ones, and those unused for longer than [`IDLE`], are dropped
    /// on the way.
    fn ready(&self) -> Option<Sender> {
        let mut kept = self.kept.lock().ok()?;
        let now = Instant::now();
        kept.retain(|k| {
            let stale = k.sender.is_ready() && now - k.since > IDLE;
            !k.sender.is_closed() && !stale
        });
        let at = kept.iter().position(|k| k.sender.is_ready())?;
        Some(kept.swap_remove(at).sender)
    }

    /// Whether a kept connection is still in an exchange.
    fn waiting(&self) -> bool {
        self.kept.lock().is_ok_and(|kept| !kept.is_empty())
    }

    /// Keeps `sender` for a later exchange, unless its response streams
    /// or enough are kept. Its current exchange continues either way.
    fn keep(&self, sender: Sender, response: &Response<Incoming>) {
        let streams = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.trim_start()
                    .get(..17)
                    .is_some_and(|t| t.eq_ignore_ascii_case("text/event-stream"))
            });
        if streams {
            return;
        }
        if let Ok(mut kept) = self.kept.lock()
            && kept.len() < MAX_KEPT
        {
            kept.push(Kept {
                sender,
                since: Instant::now(),
            });
        }
    }

    async fn connect(&self) -> Result<Sender, DirectError> {
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(DirectError::Connect)?;
        // Requests are small and each waits for its answer.
        stream.set_nodelay(true).map_err(DirectError::Connect)?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(DirectError::Http)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("an upstream connection ended: {e}");
            }
        });
        Ok(sender)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_endpoints_are_served_directly() {
        let d =
            Direct::for_uri(&"http://127.0.0.1:8080/mcp?x=1".parse().expect("uri")).expect("http");
        assert_eq!((d.host.as_str(), d.port), ("127.0.0.1", 8080));
        assert_eq!(d.host_header, "127.0.0.1:8080");
        assert_eq!(d.target, "/mcp?x=1");
        let d = Direct::for_uri(&"http://[::1]/".parse().expect("uri")).expect("http");
        assert_eq!((d.host.as_str(), d.port), ("::1", 80));
        assert_eq!(d.host_header, "[::1]");
        assert!(Direct::for_uri(&"https://example.com/mcp".parse().expect("uri")).is_none());
    }
}
