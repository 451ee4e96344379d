//! An open `subscriptions/listen` stream in a test: the acknowledgment,
//! then notifications the test awaits one at a time (or takes without
//! waiting), and the closing result.

use super::exchange::read_reply;
use super::{TestError, TestNotification};
use crate::server::{Subscription, SubscriptionFrame};
use futures_util::FutureExt as _;
use std::time::Duration;
use toolwire_proto::RequestId;
use toolwire_proto::types::SubscriptionsListenResult;

/// What a listen stream delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum ListenItem {
    /// A notification, carrying the subscription id in its `_meta`.
    Notification(TestNotification),
    /// The stream's graceful end (the server shut down): its
    /// `subscriptions/listen` result.
    Closed(Box<SubscriptionsListenResult>),
}

impl ListenItem {
    /// The notification, if this is one.
    pub fn notification(self) -> Option<TestNotification> {
        match self {
            Self::Notification(n) => Some(n),
            Self::Closed(_) => None,
        }
    }
}

/// An open `subscriptions/listen` stream, from
/// [`TestClient::listen`](super::TestClient::listen). Dropping it closes
/// the stream, as a client that goes away.
pub struct TestSubscription {
    inner: Subscription,
    ack: TestNotification,
    timeout: Duration,
}

impl std::fmt::Debug for TestSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestSubscription")
            .field("id", self.inner.id())
            .finish_non_exhaustive()
    }
}

impl TestSubscription {
    /// Reads the stream's first message, its acknowledgment.
    pub(super) async fn open(
        mut inner: Subscription,
        timeout: Duration,
    ) -> Result<Self, TestError> {
        let first = tokio::time::timeout(timeout, inner.next())
            .await
            .map_err(|_| TestError::Timeout(timeout))?;
        match item(first)? {
            ListenItem::Notification(ack) => Ok(Self {
                inner,
                ack,
                timeout,
            }),
            ListenItem::Closed(_) => Err(TestError::Unexpected(
                "the listen stream closed before its acknowledgment".into(),
            )),
        }
    }

    /// The subscription id: the listen request's JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        self.inner.id()
    }

    /// The acknowledgment (`notifications/subscriptions/acknowledged`), with
    /// the notifications the server honours.
    pub fn acknowledgment(&self) -> &TestNotification {
        &self.ack
    }

    /// The next message, waiting at most the client's timeout.
    pub async fn next(&mut self) -> Result<ListenItem, TestError> {
        let next = tokio::time::timeout(self.timeout, self.inner.next())
            .await
            .map_err(|_| TestError::Timeout(self.timeout))?;
        item(next)
    }

    /// The next notification; the stream's closing result is
    /// [`TestError::StreamEnded`] here.
    pub async fn next_notification(&mut self) -> Result<TestNotification, TestError> {
        self.next()
            .await?
            .notification()
            .ok_or(TestError::StreamEnded)
    }

    /// The next message if one is ready now, without waiting: `None` tells
    /// that nothing was published for this stream (publishing reaches the
    /// in-process bus at once, so there is nothing to wait for).
    pub fn try_next(&mut self) -> Option<ListenItem> {
        self.inner.next().now_or_never().and_then(|f| item(f).ok())
    }
}

fn item(frame: Option<SubscriptionFrame>) -> Result<ListenItem, TestError> {
    match frame {
        Some(SubscriptionFrame::Notification(msg)) => TestNotification::from_message(&msg)
            .map(ListenItem::Notification)
            .ok_or_else(|| TestError::Unexpected("a stream message is not a notification".into())),
        Some(SubscriptionFrame::Close(reply)) => {
            let result = read_reply(&reply.into_body())?;
            serde_json::from_value(result)
                .map(|r| ListenItem::Closed(Box::new(r)))
                .map_err(|e| TestError::Unexpected(format!("the closing result: {e}")))
        }
        None => Err(TestError::StreamEnded),
    }
}
