//! `subscriptions/listen` over Streamable HTTP: the response is a long-lived
//! SSE stream of the subscription's frames, with keep-alive comments while
//! it is idle.
//!
//! Spec: basic/transports/streamable-http.mdx#receiving-messages and
//! basic/patterns/subscriptions.mdx — closing the stream is the client's
//! cancellation; dropping the body drops the [`Subscription`], which frees
//! its listener slot.

use super::body::{KeepAlive, push_event};
use super::peers::Slot;
use crate::server::{Subscription, SubscriptionFrame};
use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// How many frames one poll forwards before yielding to the connection.
const MAX_FRAMES_PER_WRITE: usize = 64;

type Frames = Pin<Box<dyn Stream<Item = SubscriptionFrame> + Send>>;

/// The body of a listen response.
pub(super) struct ListenStream {
    /// `None` once the stream is over.
    frames: Option<Frames>,
    keep_alive: KeepAlive,
    /// The client's stream slot, held while the stream is open.
    _slot: Option<Slot>,
}

impl ListenStream {
    pub(super) fn new(
        subscription: Subscription,
        keep_alive: Option<Duration>,
        slot: Option<Slot>,
    ) -> Self {
        let frames = futures_util::stream::unfold(subscription, |mut sub| async move {
            let frame = sub.next().await?;
            Some((frame, sub))
        });
        Self {
            frames: Some(Box::pin(frames)),
            keep_alive: KeepAlive::new(keep_alive),
            _slot: slot,
        }
    }

    pub(super) fn is_done(&self) -> bool {
        self.frames.is_none()
    }

    pub(super) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let Some(frames) = &mut self.frames else {
            return Poll::Ready(None);
        };
        let mut out = BytesMut::new();
        // Forward what is ready in one write, a bounded amount at a time.
        for _ in 0..MAX_FRAMES_PER_WRITE {
            match frames.as_mut().poll_next(cx) {
                Poll::Ready(Some(SubscriptionFrame::Notification(note))) => {
                    push_event(&mut out, &note);
                }
                Poll::Ready(Some(SubscriptionFrame::Close(reply))) => {
                    // The graceful end: the result is the last event.
                    push_event(&mut out, reply.body());
                    self.frames = None;
                    break;
                }
                Poll::Ready(None) => {
                    self.frames = None;
                    break;
                }
                Poll::Pending => break,
            }
        }
        let done = self.frames.is_none();
        self.keep_alive.poll_emit(&mut out, done, cx)
    }
}
