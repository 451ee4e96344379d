//! `subscriptions/listen` on the client: a [`Subscription`] is a stream of
//! typed change notifications. A task reads the underlying exchange, so the
//! client's cache is invalidated as notifications arrive even when nobody
//! polls; dropping the subscription stops the task, which closes the HTTP
//! stream or sends `notifications/cancelled` on stdio.
//!
//! Spec: basic/patterns/subscriptions.mdx

use super::cache::{Cache, Invalidation};
use super::error::ClientError;
use super::method::MethodInfo;
use super::notification::ServerNotification;
use super::transport::{Exchange, Incoming};
use futures_util::Stream;
use futures_util::task::AtomicWaker;
use serde_json::Value;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use toolwire_proto::RequestId;
use toolwire_proto::types::{
    ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest,
    SubscriptionFilter,
};

/// A notification delivered on a `subscriptions/listen` stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChangeNotification {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for `uri`.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// Any other notification (from an extension, say).
    Other {
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
}

impl ChangeNotification {
    pub(crate) fn parse(method: String, params: Option<Value>) -> Self {
        match ServerNotification::of(&method) {
            ServerNotification::ToolsListChanged => Self::ToolsListChanged,
            ServerNotification::PromptsListChanged => Self::PromptsListChanged,
            ServerNotification::ResourcesListChanged => Self::ResourcesListChanged,
            ServerNotification::ResourceUpdated => {
                match params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str)
                {
                    Some(uri) => Self::ResourceUpdated {
                        uri: uri.to_owned(),
                    },
                    None => Self::Other { method, params },
                }
            }
            _ => Self::Other { method, params },
        }
    }

    /// The cached results this notification makes stale.
    // Spec: server/utilities/caching.mdx#interaction-with-notifications
    pub(crate) fn invalidations(&self) -> Vec<Invalidation> {
        match self {
            Self::ToolsListChanged => {
                vec![Invalidation::Method(MethodInfo::of::<ListToolsRequest>())]
            }
            Self::PromptsListChanged => {
                vec![Invalidation::Method(MethodInfo::of::<ListPromptsRequest>())]
            }
            Self::ResourcesListChanged => vec![
                Invalidation::Method(MethodInfo::of::<ListResourcesRequest>()),
                Invalidation::Method(MethodInfo::of::<ListResourceTemplatesRequest>()),
            ],
            Self::ResourceUpdated { uri } => vec![Invalidation::Resource(uri.clone())],
            Self::Other { .. } => Vec::new(),
        }
    }
}

/// How many distinct notifications wait for a consumer, at most. A
/// notification equal to one already waiting is not queued again; past
/// the bound the oldest waiting one is dropped (and a warning logged).
pub const MAX_PENDING_NOTIFICATIONS: usize = 256;

/// An open `subscriptions/listen` stream: yields each
/// [`ChangeNotification`], ends (`None`) when the server closes the
/// subscription gracefully, and yields one error first when the connection
/// drops. Dropping it cancels the subscription.
///
/// The stream is read as notifications arrive, whether or not anyone
/// polls the subscription, and what waits for the consumer is bounded: a
/// notification equal to one still waiting is coalesced with it (a server
/// that sends `list_changed` ten thousand times while the consumer
/// re-lists once yields it once more, not ten thousand times), and past
/// [`MAX_PENDING_NOTIFICATIONS`] distinct ones the oldest is dropped.
#[derive(Debug)]
pub struct Subscription {
    id: RequestId,
    acknowledged: SubscriptionFilter,
    queue: Arc<Pending>,
    pump: JoinHandle<()>,
}

/// Notifications waiting for the consumer, and how the stream ended.
#[derive(Debug, Default)]
struct Pending {
    state: Mutex<PendingState>,
    waker: AtomicWaker,
}

#[derive(Debug, Default)]
struct PendingState {
    notes: VecDeque<ChangeNotification>,
    /// Set once: `Some(error)` for a stream that broke, `None` for one
    /// the server closed gracefully.
    end: Option<Option<ClientError>>,
    /// Whether the consumer was given the end.
    ended: bool,
    dropped: u64,
}

impl Pending {
    /// Queues `note` unless an equal one waits already; `false` once the
    /// stream ended.
    fn push(&self, note: ChangeNotification) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.end.is_some() {
            return false;
        }
        if !s.notes.contains(&note) {
            if s.notes.len() >= MAX_PENDING_NOTIFICATIONS {
                s.notes.pop_front();
                s.dropped += 1;
                if s.dropped.is_power_of_two() {
                    tracing::warn!(
                        dropped = s.dropped,
                        "a subscription's consumer fell behind; its oldest waiting notifications were dropped"
                    );
                }
            }
            s.notes.push_back(note);
        }
        drop(s);
        self.waker.wake();
        true
    }

    /// Ends the stream: `error` for a broken one, `None` for a graceful
    /// close. What is queued is still delivered first.
    fn end(&self, error: Option<ClientError>) {
        if let Ok(mut s) = self.state.lock()
            && s.end.is_none()
        {
            s.end = Some(error);
        }
        self.waker.wake();
    }

    fn poll_next(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<ChangeNotification, ClientError>>> {
        self.waker.register(cx.waker());
        let Ok(mut s) = self.state.lock() else {
            return Poll::Ready(None);
        };
        if let Some(note) = s.notes.pop_front() {
            return Poll::Ready(Some(Ok(note)));
        }
        if s.ended {
            return Poll::Ready(None);
        }
        match s.end.take() {
            Some(end) => {
                s.ended = true;
                Poll::Ready(end.map(Err))
            }
            None => Poll::Pending,
        }
    }
}

impl Subscription {
    pub(crate) fn start(
        id: RequestId,
        acknowledged: SubscriptionFilter,
        exchange: Box<dyn Exchange>,
        cache: Arc<Cache>,
    ) -> Self {
        let queue = Arc::new(Pending::default());
        let pump = tokio::spawn(pump(exchange, cache, Arc::clone(&queue)));
        Self {
            id,
            acknowledged,
            queue,
            pump,
        }
    }

    /// A subscription in a legacy session: the session's notifications
    /// (already applied to the cache) that `filter` asks for.
    pub(crate) fn from_broadcast(
        id: RequestId,
        filter: SubscriptionFilter,
        changes: broadcast::Receiver<Result<ChangeNotification, Arc<str>>>,
    ) -> Self {
        let queue = Arc::new(Pending::default());
        let pump = tokio::spawn(relay(changes, filter.clone(), Arc::clone(&queue)));
        Self {
            id,
            acknowledged: filter,
            queue,
            pump,
        }
    }

    /// The subscription id: the JSON-RPC id of the `subscriptions/listen`
    /// request (in a legacy session, a client-side number).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The notification types the server agreed to send; it may be a subset
    /// of what was asked for.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// What waits for the consumer now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> Vec<ChangeNotification> {
        self.queue
            .state
            .lock()
            .map(|s| s.notes.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The next notification; see the type's docs for how it ends.
    pub async fn next(&mut self) -> Option<Result<ChangeNotification, ClientError>> {
        std::future::poll_fn(|cx| self.queue.poll_next(cx)).await
    }
}

impl Stream for Subscription {
    type Item = Result<ChangeNotification, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.queue.poll_next(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Dropping the task drops the exchange: the HTTP stream closes, or
        // stdio sends `notifications/cancelled`.
        self.pump.abort();
    }
}

/// Whether `filter` asks for `note`.
fn wanted(filter: &SubscriptionFilter, note: &ChangeNotification) -> bool {
    match note {
        ChangeNotification::ToolsListChanged => filter.tools_list_changed == Some(true),
        ChangeNotification::PromptsListChanged => filter.prompts_list_changed == Some(true),
        ChangeNotification::ResourcesListChanged => filter.resources_list_changed == Some(true),
        ChangeNotification::ResourceUpdated { uri } => filter
            .resource_subscriptions
            .as_ref()
            .is_some_and(|u| u.contains(uri)),
        ChangeNotification::Other { .. } => false,
    }
}

async fn relay(
    mut changes: broadcast::Receiver<Result<ChangeNotification, Arc<str>>>,
    filter: SubscriptionFilter,
    queue: Arc<Pending>,
) {
    loop {
        match changes.recv().await {
            Ok(Ok(note)) if wanted(&filter, &note) => {
                if !queue.push(note) {
                    return;
                }
            }
            Ok(Ok(_)) => {}
            // The connection that carried the notifications is gone.
            Ok(Err(reason)) => {
                queue.end(Some(ClientError::Transport(reason.to_string())));
                return;
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!("a subscription fell behind and missed {n} notifications");
            }
            Err(broadcast::error::RecvError::Closed) => {
                queue.end(Some(ClientError::Disconnected));
                return;
            }
        }
    }
}

async fn pump(mut exchange: Box<dyn Exchange>, cache: Arc<Cache>, queue: Arc<Pending>) {
    loop {
        match exchange.next().await {
            Some(Ok(Incoming::Notification { method, params })) => {
                if ServerNotification::of(&method) == ServerNotification::Cancelled {
                    // The server tore the subscription down.
                    queue.end(Some(ClientError::Disconnected));
                    return;
                }
                let note = ChangeNotification::parse(method, params);
                for what in note.invalidations() {
                    cache.invalidate(&what);
                }
                if !queue.push(note) {
                    return;
                }
            }
            // Spec: basic/patterns/subscriptions.mdx#graceful-closure — a
            // result ends the subscription cleanly.
            Some(Ok(Incoming::Response(Ok(_)))) => {
                queue.end(None);
                return;
            }
            Some(Ok(Incoming::Response(Err(e)))) => {
                queue.end(Some(ClientError::Rpc(e)));
                return;
            }
            Some(Err(e)) => {
                queue.end(Some(e));
                return;
            }
            None => {
                queue.end(Some(ClientError::Disconnected));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn other(i: usize) -> ChangeNotification {
        ChangeNotification::Other {
            method: "notifications/x".into(),
            params: Some(serde_json::json!({ "i": i })),
        }
    }

    #[tokio::test]
    async fn what_waits_is_coalesced_and_bounded_and_the_end_comes_after_it() {
        let queue = Arc::new(Pending::default());
        for _ in 0..1000 {
            assert!(queue.push(ChangeNotification::ToolsListChanged));
        }
        let extra = 44;
        for i in 0..MAX_PENDING_NOTIFICATIONS + extra {
            assert!(queue.push(other(i)));
        }
        queue.end(Some(ClientError::Disconnected));
        assert!(!queue.push(other(0)), "nothing is queued after the end");
        let mut sub = Subscription {
            id: RequestId::Number(1),
            acknowledged: SubscriptionFilter::default(),
            queue,
            pump: tokio::spawn(async {}),
        };
        // The one list change went with the oldest, past the bound.
        let mut got = Vec::new();
        // Through the `Stream` impl.
        while let Some(item) = StreamExt::next(&mut sub).await {
            got.push(item);
        }
        assert_eq!(
            got.len(),
            MAX_PENDING_NOTIFICATIONS + 1,
            "the notes, then the end"
        );
        assert_eq!(
            got[0].as_ref().ok(),
            Some(&other(extra)),
            "the list change and the oldest {extra} others were dropped"
        );
        assert!(matches!(got.last(), Some(Err(ClientError::Disconnected))));
        assert!(sub.next().await.is_none(), "ended for good");
        assert!(
            sub.queue
                .state
                .lock()
                .is_ok_and(|s| s.dropped == extra as u64 + 1)
        );
    }

    #[tokio::test]
    async fn a_graceful_close_ends_without_an_error_and_wakes_a_waiting_consumer() {
        let queue = Arc::new(Pending::default());
        let mut sub = Subscription {
            id: RequestId::Number(1),
            acknowledged: SubscriptionFilter::default(),
            queue: Arc::clone(&queue),
            pump: tokio::spawn(async {}),
        };
        let waiting = tokio::spawn(async move {
            let first = sub.next().await;
            let second = sub.next().await;
            (first, second)
        });
        tokio::task::yield_now().await;
        queue.push(ChangeNotification::PromptsListChanged);
        queue.end(None);
        let (first, second) = waiting.await.expect("joined");
        assert_eq!(
            first.and_then(Result::ok),
            Some(ChangeNotification::PromptsListChanged)
        );
        assert!(second.is_none());
    }
}
