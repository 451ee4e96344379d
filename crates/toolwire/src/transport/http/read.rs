//! Reading a request body within the size and time limits (answering
//! `413`, `408` or `400` when it cannot), or discarding what is left of one.

use super::body::HttpBody;
use super::handle::{Early, error};
use super::{BoxError, HttpService};
use bytes::{Buf, Bytes, BytesMut};
use http::{Response, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use toolwire_proto::ErrorObject;

/// Why a body could not be read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// It is larger than the limit (declared or actual).
    TooLarge,
    /// The transport failed, for example the client went away.
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// Reads the whole body, refusing it as soon as it exceeds `limit` bytes.
///
/// A declared length over the limit is refused before anything is read, and
/// a body is never buffered beyond the limit. A body that arrives in one
/// frame is returned without copying. The body stays with the caller, which can drain the rest after a
/// refusal.
pub(super) async fn read_limited<B>(mut body: Pin<&mut B>, limit: usize) -> Result<Bytes, ReadError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let hint = body.size_hint();
    if exceeds(hint.lower(), limit) {
        return Err(ReadError::TooLarge);
    }
    let mut first: Option<Bytes> = None;
    let mut rest: Option<BytesMut> = None;
    let mut total = 0_usize;
    while let Some(frame) = body.as_mut().frame().await {
        let frame = frame.map_err(|e| ReadError::Failed(e.into()))?;
        let Ok(mut data) = frame.into_data() else {
            // Trailers carry nothing we read.
            continue;
        };
        let len = data.remaining();
        total = total.saturating_add(len);
        if total > limit {
            return Err(ReadError::TooLarge);
        }
        if len == 0 {
            continue;
        }
        match (&mut first, &mut rest) {
            (None, _) => first = Some(data.copy_to_bytes(len)),
            (Some(head), None) => {
                let expected = usize::try_from(hint.lower())
                    .unwrap_or(0)
                    .clamp(total, limit);
                let mut buf = BytesMut::with_capacity(expected);
                buf.extend_from_slice(head);
                while data.has_remaining() {
                    let chunk = data.chunk();
                    buf.extend_from_slice(chunk);
                    let n = chunk.len();
                    data.advance(n);
                }
                rest = Some(buf);
            }
            (Some(_), Some(buf)) => {
                while data.has_remaining() {
                    let chunk = data.chunk();
                    buf.extend_from_slice(chunk);
                    let n = chunk.len();
                    data.advance(n);
                }
            }
        }
    }
    Ok(match (first, rest) {
        (_, Some(buf)) => buf.freeze(),
        (Some(one), None) => one,
        (None, None) => Bytes::new(),
    })
}

/// Why a body could not be read: too large (the rest can be drained) or
/// anything else (too slow, or the transport failed: nothing to drain).
pub(super) enum BodyError {
    TooLarge(Early),
    Failed(Early),
}

impl HttpService {
    /// `413`: the body is over the limit.
    pub(super) fn too_large(&self) -> Response<HttpBody> {
        let e = ErrorObject::invalid_request(format!(
            "Payload Too Large: the body exceeds {} bytes",
            self.shared.config.max_body_bytes
        ));
        error(StatusCode::PAYLOAD_TOO_LARGE, None, &e)
    }

    /// Reads the body within the size and time limits, answering 413, 408
    /// or 400 when it cannot. Shared by the modern and the legacy paths.
    pub(super) async fn read_body<B>(&self, body: Pin<&mut B>) -> Result<Bytes, BodyError>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        let config = &self.shared.config;
        let mut read = pin!(read_limited(body, config.max_body_bytes));
        // Small bodies usually arrive with the head: only arm the timer when
        // the first poll has to wait.
        let first = poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
        let outcome = match first {
            Poll::Ready(done) => Ok(done),
            // Boxed: the timer is large and rarely needed.
            Poll::Pending => Box::pin(tokio::time::timeout(config.read_timeout, read)).await,
        };
        let bytes = match outcome {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(ReadError::TooLarge)) => {
                return Err(BodyError::TooLarge(Box::new(self.too_large())));
            }
            Ok(Err(ReadError::Failed(why))) => {
                tracing::debug!(error = %why, "reading a request body failed");
                let e = ErrorObject::parse_error("the request body could not be read");
                return Err(BodyError::Failed(Box::new(error(
                    StatusCode::BAD_REQUEST,
                    None,
                    &e,
                ))));
            }
            Err(_) => {
                let e = ErrorObject::invalid_request(format!(
                    "Request Timeout: the body did not arrive within {} ms",
                    config.read_timeout.as_millis()
                ));
                return Err(BodyError::Failed(Box::new(error(
                    StatusCode::REQUEST_TIMEOUT,
                    None,
                    &e,
                ))));
            }
        };
        Ok(bytes)
    }
}

/// Whether a declared length is over `limit`.
pub(super) fn exceeds(declared: u64, limit: usize) -> bool {
    declared > u64::try_from(limit).unwrap_or(u64::MAX)
}

/// Reads and throws away the rest of `body`, up to `max` bytes. Returns
/// whether the body ended within them (the connection can then be kept).
pub(super) async fn discard<B: Body>(mut body: Pin<&mut B>, max: usize) -> bool {
    let mut seen = 0_usize;
    while let Some(frame) = body.as_mut().frame().await {
        let Ok(frame) = frame else {
            return false;
        };
        if let Ok(data) = frame.into_data() {
            seen = seen.saturating_add(data.remaining());
            if seen > max {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};
    use std::convert::Infallible;
    use std::pin::pin;

    #[tokio::test]
    async fn reads_one_frame_and_many_frames() {
        let one = read_limited(pin!(Full::new(Bytes::from_static(b"hello"))), 10)
            .await
            .expect("read");
        assert_eq!(&one[..], b"hello");
        let frames = futures_util::stream::iter(
            ["ab", "", "cd", "e"]
                .map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let many = read_limited(pin!(StreamBody::new(frames)), 5)
            .await
            .expect("read");
        assert_eq!(&many[..], b"abcde");
    }

    #[tokio::test]
    async fn over_the_limit_is_refused() {
        let declared = read_limited(pin!(Full::new(Bytes::from_static(b"hello"))), 4).await;
        assert!(matches!(declared, Err(ReadError::TooLarge)));
        let frames = futures_util::stream::iter(
            ["abc", "def"].map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let mut body = pin!(StreamBody::new(frames));
        let streamed = read_limited(body.as_mut(), 5).await;
        assert!(matches!(streamed, Err(ReadError::TooLarge)));
        // The rest is still there to drain.
        assert!(discard(body, 3).await);
    }

    #[tokio::test]
    async fn discard_stops_past_its_limit() {
        let frames = || {
            futures_util::stream::iter(
                ["abc", "def", "ghi"]
                    .map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
            )
        };
        assert!(discard(pin!(StreamBody::new(frames())), 9).await);
        assert!(!discard(pin!(StreamBody::new(frames())), 8).await);
    }
}
