//! Early answers: requests refused before their body is used. The answer
//! to a refusal echoes the JSON-RPC id when the body shows one, as the
//! later errors do. After every early answer (those refusals, `401`, `413`,
//! and the `404`, `405` and `503` answered from the head or at admission)
//! the rest of the body is read and thrown away, bounded in bytes
//! and time ("lingering close"), so that a client that writes its whole
//! body before it reads (Python's `http.client`, many others) reads the
//! answer instead of a connection reset.
//!
//! Closing a connection with unread bytes in its receive buffer makes the
//! kernel send a reset, which can destroy an answer the client has not read
//! yet (RFC 9112 §9.6). So the answer is sent whole, at once, and the body
//! is drained beside it, in a task of its own that holds nothing but the
//! body: the connection then serves its next request (once the body has
//! ended), or closes when [`HttpConfig::max_drain_bytes`] have been thrown
//! away or [`HttpConfig::read_timeout`] has passed, whichever comes first.
//! A client that stops sending when it sees an early answer (curl does) has
//! its answer at once; no request slot is held meanwhile, and the head and
//! body timeouts still hold, so lingering keeps a connection no longer than
//! a slow body could.
//!
//! [`HttpConfig::max_drain_bytes`]: super::HttpConfig::max_drain_bytes
//! [`HttpConfig::read_timeout`]: super::HttpConfig::read_timeout

use super::body::HttpBody;
use super::handle::error;
use super::read::{BodyError, discard};
use super::{BoxError, HttpService};
use http::header::{ACCEPT_ENCODING, EXPECT};
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode};
use http_body::Body;
use std::pin::{Pin, pin};
use toolwire_proto::{ErrorObject, Message, RequestId};

/// A request refused from its head; answered by [`HttpService::refuse`].
#[derive(Debug)]
pub(super) struct Refused {
    status: StatusCode,
    error: ErrorObject,
    /// Whether the body can show the id: not when it is coded.
    read_id: bool,
    /// A header the answer carries.
    header: Option<(HeaderName, HeaderValue)>,
}

impl Refused {
    /// Refused with `status` and a `-32600` error saying `why`.
    pub(super) fn new(status: StatusCode, why: &'static str) -> Box<Self> {
        Box::new(Self {
            status,
            error: ErrorObject::invalid_request(why),
            read_id: true,
            header: None,
        })
    }

    /// The body is coded in a way toolwire does not undo: no id is read.
    pub(super) fn coded(mut self: Box<Self>) -> Box<Self> {
        self.read_id = false;
        self
    }

    /// A content coding toolwire does not decode: `415` saying, in
    /// `Accept-Encoding`, that only `identity` is accepted.
    ///
    /// Spec: RFC 9110 §15.5.16.
    pub(super) fn content_coding() -> Box<Self> {
        let mut refused = Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: the body must not be compressed (Content-Encoding: identity only)",
        )
        .coded();
        refused.header = Some((ACCEPT_ENCODING, HeaderValue::from_static("identity")));
        refused
    }
}

/// Whether the client waits for `100 Continue` before it sends its body:
/// then the body is neither read for an id nor drained after a refusal.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers.contains_key(EXPECT)
}

/// The id a request body shows, if it can be read (on the error path only:
/// the body is parsed just for this).
fn id_of(bytes: &[u8], max_depth: usize) -> Option<RequestId> {
    match Message::from_slice_with_max_depth(bytes, max_depth) {
        Ok(Message::Request(request)) => Some(request.id),
        Ok(Message::Response(response)) => response.id,
        Ok(Message::Notification(_)) => None,
        Err(e) => e.id().cloned(),
    }
}

impl HttpService {
    /// Answers a refused request: with the id its body shows (read within
    /// the body limits, under a request slot: without one, no id), then
    /// drains what is left of the body.
    pub(super) async fn refuse<B>(
        self,
        headers: HeaderMap,
        body: B,
        refused: Box<Refused>,
    ) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let Refused {
            status,
            error: e,
            read_id,
            header,
        } = *refused;
        // Boxed on this rare path, so that the body can move into the
        // drain after being read from.
        let mut body = Box::pin(body);
        let mut id = None;
        let mut drain = true;
        if read_id
            && !expects_continue(&headers)
            && !body.is_end_stream()
            && let Ok(permit) = self.admit()
        {
            match self.read_body(body.as_mut()).await {
                Ok(bytes) => id = id_of(&bytes, self.shared.config.max_json_depth),
                Err(BodyError::TooLarge(_)) => {}
                Err(BodyError::Failed(_)) => drain = false,
            }
            drop(permit);
        }
        let mut res = error(status, id.as_ref(), &e);
        if let Some((name, value)) = header {
            res.headers_mut().insert(name, value);
        }
        if drain {
            res = self.linger(res, &headers, body);
        }
        res
    }

    /// `res`, with what is left of `body` drained beside it, unless there
    /// is nothing to drain (or the client waits for `100 Continue`, or
    /// draining is off, or there is no runtime to drain on).
    pub(super) fn linger<B>(
        &self,
        res: Response<HttpBody>,
        headers: &HeaderMap,
        body: B,
    ) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        let config = &self.shared.config;
        let (max, within) = (config.max_drain_bytes, config.read_timeout);
        if max == 0 || body.is_end_stream() || expects_continue(headers) {
            return res;
        }
        // A task of its own: the connection keeps reading the body for it
        // after the answer is written, and dropping the body at the end
        // (whole or not) lets the connection go on or close.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(within, discard(pin!(body), max)).await;
            });
        }
        res
    }

    /// Drains the rest of `body` before answering, for a refusal found
    /// while reading it (an undeclared body over the limit): that body is
    /// pinned in the request's future and cannot move to a task. The
    /// client is still sending (it has no answer yet), so the body ends.
    pub(super) async fn drain_now<B: Body>(&self, body: Pin<&mut B>) {
        let config = &self.shared.config;
        if config.max_drain_bytes > 0 {
            let within = config.read_timeout;
            let _ = tokio::time::timeout(within, discard(body, config.max_drain_bytes)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_any_message_that_has_one() {
        let id = |s: &str| id_of(s.as_bytes(), 64);
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#),
            Some(RequestId::Number(7))
        );
        assert_eq!(
            id(r#"{"jsonrpc":"1.0","id":"x","method":"tools/list"}"#),
            Some(RequestId::String("x".into()))
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#), None);
        assert_eq!(id("not json"), None);
        assert_eq!(
            id(&format!("{}1{}", "[".repeat(100), "]".repeat(100))),
            None
        );
    }
}
