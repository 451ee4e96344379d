//! Reading a request body within the size limit, and the nesting pre-scan
//! that runs before the JSON parser sees the bytes.

use bytes::{Buf, Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt;
use std::pin::pin;

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
/// frame is returned without copying.
pub(super) async fn read_limited<B>(body: B, limit: usize) -> Result<Bytes, ReadError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limit64 = u64::try_from(limit).unwrap_or(u64::MAX);
    let hint = body.size_hint();
    if hint.lower() > limit64 {
        return Err(ReadError::TooLarge);
    }
    let mut body = pin!(body);
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

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};
    use std::convert::Infallible;

    #[tokio::test]
    async fn reads_one_frame_and_many_frames() {
        let one = read_limited(Full::new(Bytes::from_static(b"hello")), 10)
            .await
            .expect("read");
        assert_eq!(&one[..], b"hello");
        let frames = futures_util::stream::iter(
            ["ab", "", "cd", "e"]
                .map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let many = read_limited(StreamBody::new(frames), 5)
            .await
            .expect("read");
        assert_eq!(&many[..], b"abcde");
    }

    #[tokio::test]
    async fn over_the_limit_is_refused() {
        let declared = read_limited(Full::new(Bytes::from_static(b"hello")), 4).await;
        assert!(matches!(declared, Err(ReadError::TooLarge)));
        let frames = futures_util::stream::iter(
            ["abc", "def"].map(|s| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))),
        );
        let streamed = read_limited(StreamBody::new(frames), 5).await;
        assert!(matches!(streamed, Err(ReadError::TooLarge)));
    }
}
