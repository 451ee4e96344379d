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
use serde_json::Value;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{broadcast, mpsc};
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

/// An open `subscriptions/listen` stream: yields each
/// [`ChangeNotification`], ends (`None`) when the server closes the
/// subscription gracefully, and yields one error first when the connection
/// drops. Dropping it cancels the subscription.
#[derive(Debug)]
pub struct Subscription {
    id: RequestId,
    acknowledged: SubscriptionFilter,
    rx: mpsc::UnboundedReceiver<Result<ChangeNotification, ClientError>>,
    pump: JoinHandle<()>,
}

impl Subscription {
    pub(crate) fn start(
        id: RequestId,
        acknowledged: SubscriptionFilter,
        exchange: Box<dyn Exchange>,
        cache: Arc<Cache>,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let pump = tokio::spawn(pump(exchange, cache, tx));
        Self {
            id,
            acknowledged,
            rx,
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
        let (tx, rx) = mpsc::unbounded_channel();
        let pump = tokio::spawn(relay(changes, filter.clone(), tx));
        Self {
            id,
            acknowledged: filter,
            rx,
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

    /// The next notification; see the type's docs for how it ends.
    pub async fn next(&mut self) -> Option<Result<ChangeNotification, ClientError>> {
        self.rx.recv().await
    }
}

impl Stream for Subscription {
    type Item = Result<ChangeNotification, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
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
    tx: mpsc::UnboundedSender<Result<ChangeNotification, ClientError>>,
) {
    loop {
        match changes.recv().await {
            Ok(Ok(note)) if wanted(&filter, &note) => {
                if tx.send(Ok(note)).is_err() {
                    return;
                }
            }
            Ok(Ok(_)) => {}
            // The connection that carried the notifications is gone.
            Ok(Err(reason)) => {
                let _ = tx.send(Err(ClientError::Transport(reason.to_string())));
                return;
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!("a subscription fell behind and missed {n} notifications");
            }
            Err(broadcast::error::RecvError::Closed) => {
                let _ = tx.send(Err(ClientError::Disconnected));
                return;
            }
        }
    }
}

async fn pump(
    mut exchange: Box<dyn Exchange>,
    cache: Arc<Cache>,
    tx: mpsc::UnboundedSender<Result<ChangeNotification, ClientError>>,
) {
    loop {
        match exchange.next().await {
            Some(Ok(Incoming::Notification { method, params })) => {
                if ServerNotification::of(&method) == ServerNotification::Cancelled {
                    // The server tore the subscription down.
                    let _ = tx.send(Err(ClientError::Disconnected));
                    return;
                }
                let note = ChangeNotification::parse(method, params);
                for what in note.invalidations() {
                    cache.invalidate(&what);
                }
                if tx.send(Ok(note)).is_err() {
                    return;
                }
            }
            // Spec: basic/patterns/subscriptions.mdx#graceful-closure — a
            // result ends the subscription cleanly.
            Some(Ok(Incoming::Response(Ok(_)))) => return,
            Some(Ok(Incoming::Response(Err(e)))) => {
                let _ = tx.send(Err(ClientError::Rpc(e)));
                return;
            }
            Some(Err(e)) => {
                let _ = tx.send(Err(e));
                return;
            }
            None => {
                let _ = tx.send(Err(ClientError::Disconnected));
                return;
            }
        }
    }
}
